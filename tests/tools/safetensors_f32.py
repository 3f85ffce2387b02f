"""A safetensors file of fp32 tensors, written by hand (the fixture scripts run under Debian's
python3-torch, which has no `safetensors` package): 8-byte little-endian header length, the JSON
header padded with spaces to 8 bytes, then each tensor's bytes in order."""
import json
import struct


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for k, v in tensors.items():
        b = v.float().contiguous().numpy().tobytes()
        header[k] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
