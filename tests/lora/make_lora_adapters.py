"""PyTorch-made LoRA adapters for the multi-LoRA serving tests (issue #22).

Writes, for a base model of the given shape, adapters in the layouts `merge-lora` and
`--lora-modules` read: PEFT directories (adapter_config.json + adapter_model.safetensors, or
adapter_model.bin from torch.save), and a bare torch.save .pth with PEFT's ".default" names.
B is random (PEFT initialises it to zero, which would make every adapter the base model).
Also writes adapters that must be refused at load: a rank over the test's --max-lora-rank, a
shape that does not fit the base, and another architecture's module names (GPT-2).

usage: /usr/bin/python3 make_lora_adapters.py OUT_DIR HIDDEN Q_SIZE KV_SIZE INTER LAYERS VOCAB
"""
import json
import os
import struct
import sys

import torch

OUT = sys.argv[1]
HIDDEN, Q, KV, INTER, LAYERS, VOCAB = (int(a) for a in sys.argv[2:8])
torch.manual_seed(2222)

# [out_features, in_features] of each adaptable linear, by PEFT's module suffix.
SHAPES = {
    "self_attn.q_proj": (Q, HIDDEN), "self_attn.k_proj": (KV, HIDDEN),
    "self_attn.v_proj": (KV, HIDDEN), "self_attn.o_proj": (HIDDEN, Q),
    "mlp.gate_proj": (INTER, HIDDEN), "mlp.up_proj": (INTER, HIDDEN),
    "mlp.down_proj": (HIDDEN, INTER),
}


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        data = t.contiguous().to(torch.float32).numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for b in blobs:
            f.write(b)


def factors(modules, r, layers=range(LAYERS), head=False, std=0.15):
    """{peft module path: (A [r, in], B [out, r])}."""
    out = {}
    for layer in layers:
        for m in modules:
            o, i = SHAPES[m]
            out["model.layers.%d.%s" % (layer, m)] = (torch.randn(r, i) * std, torch.randn(o, r) * std)
    if head:
        out["lm_head"] = (torch.randn(r, HIDDEN) * std, torch.randn(VOCAB, r) * std)
    return out


def peft_names(fs, default=False):
    tag = ".default" if default else ""
    sd = {}
    for path, (a, b) in fs.items():
        sd["base_model.model.%s.lora_A%s.weight" % (path, tag)] = a
        sd["base_model.model.%s.lora_B%s.weight" % (path, tag)] = b
    return sd


def peft_dir(name, fs, r, alpha, fmt="safetensors", **extra):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    targets = sorted({p.split(".")[-1] for p in fs})
    with open(os.path.join(d, "adapter_config.json"), "w") as f:
        json.dump(dict({"peft_type": "LORA", "r": r, "lora_alpha": alpha, "bias": "none",
                        "target_modules": targets, "task_type": "CAUSAL_LM"}, **extra), f)
    if fmt == "safetensors":
        write_safetensors(os.path.join(d, "adapter_model.safetensors"), peft_names(fs))
    else:
        torch.save(peft_names(fs), os.path.join(d, "adapter_model.bin"))


ATTN = ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"]
MLP = ["mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"]

# alpha: attention only, scale 16 / 8 = 2.
peft_dir("alpha", factors(ATTN, 8), 8, 16)
# beta: MLP only, rsLoRA scale 8 / sqrt(4) = 4, tensors pickled by torch.save (adapter_model.bin).
peft_dir("beta", factors(MLP, 4, std=0.1), 4, 8, fmt="bin", use_rslora=True)
# gamma: a bare .pth with ".default" names, no config (alpha = r: scale 1), some layers only,
# plus the head.
os.makedirs(os.path.join(OUT, "gamma"), exist_ok=True)
torch.save(peft_names(factors(["self_attn.v_proj", "mlp.down_proj"], 6, layers=[0], head=True),
                      default=True),
           os.path.join(OUT, "gamma", "gamma.pth"))
# delta: every module, rank 16.
peft_dir("delta", factors(ATTN + MLP, 16, std=0.08), 16, 16)

# Refused at load.
peft_dir("rank32", factors(["self_attn.q_proj"], 32, layers=[0]), 32, 32)
bad = factors(["self_attn.q_proj"], 4, layers=[0])
a, b = bad["model.layers.0.self_attn.q_proj"]
bad["model.layers.0.self_attn.q_proj"] = (torch.randn(4, HIDDEN + 8), b)
peft_dir("badshape", bad, 4, 8)
d = os.path.join(OUT, "gpt2")
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, "adapter_config.json"), "w") as f:
    json.dump({"peft_type": "LORA", "r": 4, "lora_alpha": 8, "target_modules": ["c_attn"]}, f)
write_safetensors(os.path.join(d, "adapter_model.safetensors"), {
    "base_model.model.transformer.h.0.attn.c_attn.lora_A.weight": torch.randn(4, HIDDEN),
    "base_model.model.transformer.h.0.attn.c_attn.lora_B.weight": torch.randn(3 * HIDDEN, 4)})
print("wrote adapters to", OUT)
