"""A safetensors file of fp32 tensors, written by hand (the fixture scripts run under Debian's
python3-torch, which has no `safetensors` package): 8-byte little-endian header length, the JSON
header padded with spaces to 8 bytes, then each tensor's bytes in order.

torch.uint8 tensors (MXFP4 blocks and scales) are stored as they are, dtype "U8"; every other
tensor is converted to "F32". The U8 tensors go after all the F32 ones (in their own order), so
every F32 tensor starts 4-byte aligned whatever the U8 sizes; a file of F32 tensors only is
byte-for-byte what it was before U8 existed."""
import json
import struct

import torch


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    ordered = sorted(tensors.items(), key=lambda kv: kv[1].dtype == torch.uint8)  # stable
    for k, v in ordered:
        raw = v.dtype == torch.uint8
        b = (v if raw else v.float()).contiguous().numpy().tobytes()
        header[k] = {"dtype": "U8" if raw else "F32", "shape": list(v.shape),
                     "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
