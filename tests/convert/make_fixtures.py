"""PyTorch-made fixtures for tests/e2e/convert_pytorch.sh.

Saves MiniMind-style and Hugging Face-style state_dicts and LoRA adapters with torch.save, and the
logits a plain-torch decoder forward (written here, no transformers) gives for them, so pagedserve's
converted checkpoints can be compared against PyTorch itself. Also writes malformed inputs.

usage: /usr/bin/python3 make_fixtures.py OUT_DIR VOCAB_SIZE
"""
import json
import math
import os
import sys

import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from safetensors_f32 import write_safetensors  # noqa: E402

OUT, VOCAB = sys.argv[1], int(sys.argv[2])
TOKENS = [5, 17, 300 % VOCAB, 42, 8, 99, 250 % VOCAB, 3, 77, 120, 64, 11]
torch.manual_seed(1234)


def rms(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope(x, theta):  # x [T, H, D]; neox style: the two halves of each head form the pairs
    t, d = x.shape[0], x.shape[-1]
    inv = 1.0 / theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    ang = torch.arange(t, dtype=torch.float64)[:, None] * inv[None, :]
    cos = torch.cat([ang.cos(), ang.cos()], -1)[:, None, :]
    sin = torch.cat([ang.sin(), ang.sin()], -1)[:, None, :]
    rot = torch.cat([-x[..., d // 2:], x[..., : d // 2]], -1)
    return x * cos + rot * sin


def forward(w, c, tokens, lora=None):
    """Logits [T, V] in float64. lora: {hf_weight_name: (A, B, scale)}, applied unmerged."""
    w = {k: v.double() for k, v in w.items()}
    lora = lora or {}

    def lin(name, x):
        y = x @ w[name].T
        if name in lora:
            a, b, s = lora[name]
            y = y + s * ((x @ a.double().T) @ b.double().T)
        return y

    h_, kv, d, eps = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["rms_norm_eps"]
    t = len(tokens)
    h = w["model.embed_tokens.weight"][torch.tensor(tokens)]
    mask = torch.full((t, t), float("-inf"), dtype=torch.float64).triu(1)
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        x = rms(h, w[p + "input_layernorm.weight"], eps)
        q = lin(p + "self_attn.q_proj.weight", x).view(t, h_, d)
        k = lin(p + "self_attn.k_proj.weight", x).view(t, kv, d)
        v = lin(p + "self_attn.v_proj.weight", x).view(t, kv, d)
        if c["model_type"] == "qwen3":
            q = rms(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms(k, w[p + "self_attn.k_norm.weight"], eps)
        q, k = rope(q, c["rope_theta"]), rope(k, c["rope_theta"])
        k = k.repeat_interleave(h_ // kv, dim=1)
        v = v.repeat_interleave(h_ // kv, dim=1)
        att = torch.einsum("thd,shd->hts", q, k) / math.sqrt(d) + mask
        o = torch.einsum("hts,shd->thd", att.softmax(-1), v).reshape(t, h_ * d)
        h = h + lin(p + "self_attn.o_proj.weight", o)
        x = rms(h, w[p + "post_attention_layernorm.weight"], eps)
        g = torch.nn.functional.silu(lin(p + "mlp.gate_proj.weight", x))
        h = h + lin(p + "mlp.down_proj.weight", g * lin(p + "mlp.up_proj.weight", x))
    h = rms(h, w["model.norm.weight"], eps)
    head = w["lm_head.weight"] if "lm_head.weight" in w else w["model.embed_tokens.weight"]
    return h @ head.T


def random_weights(c, tied):
    hid, inter, d = c["hidden_size"], c["intermediate_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * d, c["num_key_value_heads"] * d
    w = {"model.embed_tokens.weight": torch.randn(c["vocab_size"], hid) * 0.5}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = 1 + 0.1 * torch.randn(hid)
        w[p + "self_attn.q_proj.weight"] = torch.randn(q, hid) * 0.15
        w[p + "self_attn.k_proj.weight"] = torch.randn(kv, hid) * 0.15
        w[p + "self_attn.v_proj.weight"] = torch.randn(kv, hid) * 0.15
        if c["model_type"] == "qwen3":
            w[p + "self_attn.q_norm.weight"] = 1 + 0.1 * torch.randn(d)
            w[p + "self_attn.k_norm.weight"] = 1 + 0.1 * torch.randn(d)
        w[p + "self_attn.o_proj.weight"] = torch.randn(hid, q) * 0.15
        w[p + "post_attention_layernorm.weight"] = 1 + 0.1 * torch.randn(hid)
        w[p + "mlp.gate_proj.weight"] = torch.randn(inter, hid) * 0.15
        w[p + "mlp.up_proj.weight"] = torch.randn(inter, hid) * 0.15
        w[p + "mlp.down_proj.weight"] = torch.randn(hid, inter) * 0.15
    w["model.norm.weight"] = 1 + 0.1 * torch.randn(hid)
    if not tied:
        w["lm_head.weight"] = torch.randn(c["vocab_size"], hid) * 0.5
    return w


MINIMIND = {
    "self_attn.q_proj.weight": "attention.wq.weight", "self_attn.k_proj.weight": "attention.wk.weight",
    "self_attn.v_proj.weight": "attention.wv.weight", "self_attn.o_proj.weight": "attention.wo.weight",
    "self_attn.q_norm.weight": "attention.q_norm.weight", "self_attn.k_norm.weight": "attention.k_norm.weight",
    "input_layernorm.weight": "attention_norm.weight", "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "feed_forward.w1.weight", "mlp.down_proj.weight": "feed_forward.w2.weight",
    "mlp.up_proj.weight": "feed_forward.w3.weight",
}


def minimind_name(hf):
    if hf == "model.embed_tokens.weight":
        return "tok_embeddings.weight"
    if hf == "model.norm.weight":
        return "norm.weight"
    _, _, i, rest = hf.split(".", 3)
    return f"layers.{i}.{MINIMIND[rest]}"


def save_expected(name, logits, tol=1e-4):
    logits.float().contiguous().numpy().tofile(os.path.join(OUT, name + ".f32"))
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump({"tokens": TOKENS, "shape": list(logits.shape), "tol": tol}, f)


def mkdir(*parts):
    p = os.path.join(OUT, *parts)
    os.makedirs(p, exist_ok=True)
    return p


# 1. Qwen3 in MiniMind names, tied like MiniMind (output.weight is tok_embeddings.weight), fp32,
#    plus a RoPE buffer the converter must skip. Shape comes from flags (no config.json).
QWEN3 = dict(model_type="qwen3", hidden_size=48, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, head_dim=16, intermediate_size=96, vocab_size=VOCAB,
             rope_theta=10000.0, rms_norm_eps=1e-5)
wq = random_weights(QWEN3, tied=True)
sd = {minimind_name(k): v for k, v in wq.items()}
sd["output.weight"] = sd["tok_embeddings.weight"]
sd["freqs_cos"] = torch.randn(64, 8)
d = mkdir("qwen3")
torch.save(sd, os.path.join(d, "model.pth"))
save_expected("qwen3_base", forward(wq, QWEN3, TOKENS))

# 2. Llama in Hugging Face names, bf16, untied, wrapped as {"model": sd, ...}, config.json beside.
LLAMA = dict(model_type="llama", hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=1, head_dim=16, intermediate_size=80, vocab_size=VOCAB,
             rope_theta=500000.0, rms_norm_eps=1e-6)
wl = {k: v.to(torch.bfloat16) for k, v in random_weights(LLAMA, tied=False).items()}
d = mkdir("llama")
sdl = dict(wl)
sdl["model.layers.0.self_attn.rotary_emb.inv_freq"] = torch.ones(8)
torch.save({"model": sdl, "step": 7, "args": {"lr": 1e-3}}, os.path.join(d, "ckpt.pth"))
with open(os.path.join(d, "config.json"), "w") as f:
    json.dump(dict(LLAMA, tie_word_embeddings=False, max_position_embeddings=512), f)
save_expected("llama_base", forward(wl, LLAMA, TOKENS))

# 3. LoRA on the Qwen3 model: a PEFT directory (alpha / r = 2) and a MiniMind-style .pth (scale 1).
def lora_pair(name, r):
    out_f, in_f = wq[name].shape
    return torch.randn(r, in_f) * 0.2, torch.randn(out_f, r) * 0.2


peft = {}
for name in ["model.layers.0.self_attn.q_proj.weight", "model.layers.1.self_attn.v_proj.weight",
             "model.layers.1.mlp.down_proj.weight"]:
    peft[name] = lora_pair(name, 4) + (8 / 4,)
d = mkdir("lora_peft")
with open(os.path.join(d, "adapter_config.json"), "w") as f:
    json.dump({"peft_type": "LORA", "r": 4, "lora_alpha": 8, "bias": "none",
               "target_modules": ["q_proj", "v_proj", "down_proj"]}, f)
tensors = {}
for name, (a, b, _) in peft.items():
    base = "base_model.model." + name[: -len(".weight")]
    tensors[base + ".lora_A.weight"] = a
    tensors[base + ".lora_B.weight"] = b
write_safetensors(os.path.join(d, "adapter_model.safetensors"), tensors)
save_expected("qwen3_lora_peft", forward(wq, QWEN3, TOKENS, peft))

mini = {}
for name in ["model.layers.0.self_attn.k_proj.weight", "model.layers.0.mlp.gate_proj.weight"]:
    mini[name] = lora_pair(name, 2) + (1.0,)
d = mkdir("lora_pth")
torch.save({minimind_name(n)[: -len(".weight")] + ".lora." + ab + ".weight": t
            for n, (a, b, _) in mini.items() for ab, t in (("A", a), ("B", b))},
           os.path.join(d, "lora.pth"))
save_expected("qwen3_lora_pth", forward(wq, QWEN3, TOKENS, mini))

# 4. Malformed inputs, next to the Qwen3 tokenizer so only the tensors are at fault.
d = os.path.join(OUT, "qwen3")
bad = dict(sd)
bad["layers.1.attention.wk.weight"] = bad["layers.1.attention.wk.weight"].T.contiguous()
torch.save(bad, os.path.join(d, "bad_shape.pth"))
bad = dict(sd)
del bad["layers.1.feed_forward.w2.weight"]
torch.save(bad, os.path.join(d, "missing.pth"))
bad = dict(sd)
bad["layers.0.moe.gate.weight"] = torch.zeros(4, 48)
torch.save(bad, os.path.join(d, "unknown.pth"))
torch.save([1, 2, 3], os.path.join(d, "list.pth"))
torch.save(torch.nn.Linear(2, 2), os.path.join(d, "module.pth"))
with open(os.path.join(d, "text.pth"), "w") as f:
    f.write("not a checkpoint\n")
d = mkdir("lora_bad_rank")
with open(os.path.join(d, "adapter_config.json"), "w") as f:
    json.dump({"r": 4, "lora_alpha": 8}, f)
write_safetensors(os.path.join(d, "adapter_model.safetensors"), {
    "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight": torch.zeros(4, 48),
    "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight": torch.zeros(64, 3)})
print("fixtures written to", OUT)
