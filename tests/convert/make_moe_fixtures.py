"""PyTorch-made MoE and MiniMind fixtures for tests/e2e/moe_pytorch.sh (issue #17).

Writes random-weight fp32 checkpoints (config.json + model.safetensors) for qwen3_moe, MiniMind 3
dense, MiniMind 3 MoE and MiniMind 2 MoE (routed + shared experts), MiniMind MoE state_dicts
saved with torch.save as MiniMind's trainer saves them, and the logits a plain-torch forward
gives for each. The forwards follow the module code they name, op for op where the order
matters (no transformers import: it is not installed here):
  - HF transformers models/qwen3_moe/modeling_qwen3_moe.py: Qwen3MoeSparseMoeBlock (fp32 softmax
    over all experts, topk, optional renormalisation, index_add_ over the experts hit),
    Qwen3MoeDecoderLayer (sparse when layer not in mlp_only_layers and
    (layer + 1) % decoder_sparse_step == 0), q/k RMSNorm per head, rotate_half RoPE.
  - jingyaogong/minimind model/model_minimind.py, MiniMind 3 (101d7df and later): MOEFeedForward
    (softmax, topk sorted=False, / (sum + 1e-20) when norm_topk_prob, index_add_ per expert).
  - the same file in MiniMind 2 (c090b69 and before): MoEGate (renormalises only when top_k > 1),
    MOEFeedForward.moe_infer (argsort + scatter_add_) plus shared experts added unweighted, and
    an Attention without q/k norms.

usage: /usr/bin/python3 make_moe_fixtures.py OUT_DIR VOCAB_SIZE
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from safetensors_f32 import write_safetensors  # noqa: E402

OUT, VOCAB = sys.argv[1], int(sys.argv[2])
TOKENS = [5, 17, 300 % VOCAB, 42, 8, 99, 250 % VOCAB, 3, 77, 120, 64, 11, 7, 200 % VOCAB]
torch.manual_seed(4321)


def rms(x, w, eps):  # HF / MiniMind RMSNorm in fp32
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rope_tables(t, d, theta):
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    freqs = torch.outer(torch.arange(t).float(), inv)
    emb = torch.cat([freqs, freqs], -1)
    return emb.cos()[:, None, :], emb.sin()[:, None, :]


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], -1)


def attention(w, p, c, x, qk_norm):
    t, heads, kv, d = x.shape[0], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    q = (x @ w[p + "self_attn.q_proj.weight"].T).view(t, heads, d)
    k = (x @ w[p + "self_attn.k_proj.weight"].T).view(t, kv, d)
    v = (x @ w[p + "self_attn.v_proj.weight"].T).view(t, kv, d)
    if qk_norm:
        q = rms(q, w[p + "self_attn.q_norm.weight"], c["rms_norm_eps"])
        k = rms(k, w[p + "self_attn.k_norm.weight"], c["rms_norm_eps"])
    cos, sin = rope_tables(t, d, c["rope_theta"])
    q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
    k = k.repeat_interleave(heads // kv, dim=1).transpose(0, 1)
    v = v.repeat_interleave(heads // kv, dim=1).transpose(0, 1)
    q = q.transpose(0, 1)
    scores = (q @ k.transpose(1, 2)) / math.sqrt(d)
    scores = scores + torch.full((t, t), float("-inf")).triu(1)
    out = F.softmax(scores, dim=-1, dtype=torch.float32) @ v
    return out.transpose(0, 1).reshape(t, heads * d) @ w[p + "self_attn.o_proj.weight"].T


def mlp(w, name, x):
    g = F.silu(x @ w[name + "gate_proj.weight"].T)
    return (g * (x @ w[name + "up_proj.weight"].T)) @ w[name + "down_proj.weight"].T


def qwen3_moe_block(w, p, c, x):  # Qwen3MoeSparseMoeBlock.forward
    router_logits = x @ w[p + "mlp.gate.weight"].T
    routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
    routing_weights, selected = torch.topk(routing_weights, c["num_experts_per_tok"], dim=-1)
    if c["norm_topk_prob"]:
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
    final = torch.zeros_like(x)
    expert_mask = F.one_hot(selected, num_classes=c["num_experts"]).permute(2, 1, 0)
    for e in range(c["num_experts"]):
        idx, top_x = torch.where(expert_mask[e])
        if top_x.numel() == 0:
            continue
        out = mlp(w, f"{p}mlp.experts.{e}.", x[top_x]) * routing_weights[top_x, idx, None]
        final.index_add_(0, top_x, out)
    return final


def minimind3_moe(w, p, c, x):  # MiniMind 3 MOEFeedForward.forward (eval)
    scores = F.softmax(x @ w[p + "mlp.gate.weight"].T, dim=-1)
    topk_weight, topk_idx = torch.topk(scores, k=c["num_experts_per_tok"], dim=-1, sorted=False)
    if c["norm_topk_prob"]:
        topk_weight = topk_weight / (topk_weight.sum(dim=-1, keepdim=True) + 1e-20)
    y = torch.zeros_like(x)
    for i in range(c["num_experts"]):
        mask = topk_idx == i
        if mask.any():
            token_idx = mask.any(dim=-1).nonzero().flatten()
            weight = topk_weight[mask].view(-1, 1)
            y.index_add_(0, token_idx, mlp(w, f"{p}mlp.experts.{i}.", x[token_idx]) * weight)
    return y


def minimind2_moe(w, p, c, x):  # MiniMind 2 MoEGate + MOEFeedForward.moe_infer + shared experts
    k = c["num_experts_per_tok"]
    scores = (x @ w[p + "mlp.gate.weight"].T).softmax(dim=-1)
    topk_weight, topk_idx = torch.topk(scores, k=k, dim=-1, sorted=False)
    if k > 1 and c["norm_topk_prob"]:
        topk_weight = topk_weight / (topk_weight.sum(dim=-1, keepdim=True) + 1e-20)
    flat_idx, flat_w = topk_idx.view(-1), topk_weight.view(-1, 1)
    cache = torch.zeros_like(x)
    idxs = flat_idx.argsort()
    ends = flat_idx.bincount().cpu().numpy().cumsum(0)
    token_idxs = idxs // k
    for i, end in enumerate(ends):
        start = 0 if i == 0 else ends[i - 1]
        if start == end:
            continue
        tok = token_idxs[start:end]
        out = mlp(w, f"{p}mlp.experts.{i}.", x[tok])
        out.mul_(flat_w[idxs[start:end]])
        cache.scatter_add_(0, tok.view(-1, 1).repeat(1, x.shape[-1]), out)
    for s in range(c["n_shared_experts"]):
        cache = cache + mlp(w, f"{p}mlp.shared_experts.{s}.", x)
    return cache


def family(c):
    if c["model_type"] == "qwen3_moe":
        return "qwen3_moe"
    return "minimind2" if "n_routed_experts" in c else "minimind3"


def sparse(c, layer):
    if c["model_type"] == "qwen3_moe":
        return layer not in c["mlp_only_layers"] and (layer + 1) % c["decoder_sparse_step"] == 0
    return c["use_moe"]


def forward(w, c, tokens):
    fam = family(c)
    eps = c["rms_norm_eps"]
    h = w["model.embed_tokens.weight"][torch.tensor(tokens)]
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = h + attention(w, p, c, rms(h, w[p + "input_layernorm.weight"], eps), fam != "minimind2")
        x = rms(h, w[p + "post_attention_layernorm.weight"], eps)
        if not sparse(c, i):
            h = h + mlp(w, p + "mlp.", x)
        elif fam == "qwen3_moe":
            h = h + qwen3_moe_block(w, p, c, x)
        elif fam == "minimind3":
            h = h + minimind3_moe(w, p, c, x)
        else:
            h = h + minimind2_moe(w, p, c, x)
    h = rms(h, w["model.norm.weight"], eps)
    head = w["lm_head.weight"] if "lm_head.weight" in w else w["model.embed_tokens.weight"]
    return h @ head.T


def random_weights(c):
    fam = family(c)
    hid, d = c["hidden_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * d, c["num_key_value_heads"] * d
    w = {"model.embed_tokens.weight": torch.randn(c["vocab_size"], hid) * 0.5}

    def ffn(name, width):
        w[name + "gate_proj.weight"] = torch.randn(width, hid) * 0.15
        w[name + "up_proj.weight"] = torch.randn(width, hid) * 0.15
        w[name + "down_proj.weight"] = torch.randn(hid, width) * 0.15

    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = 1 + 0.1 * torch.randn(hid)
        w[p + "self_attn.q_proj.weight"] = torch.randn(q, hid) * 0.15
        w[p + "self_attn.k_proj.weight"] = torch.randn(kv, hid) * 0.15
        w[p + "self_attn.v_proj.weight"] = torch.randn(kv, hid) * 0.15
        if fam != "minimind2":
            w[p + "self_attn.q_norm.weight"] = 1 + 0.1 * torch.randn(d)
            w[p + "self_attn.k_norm.weight"] = 1 + 0.1 * torch.randn(d)
        w[p + "self_attn.o_proj.weight"] = torch.randn(hid, q) * 0.15
        w[p + "post_attention_layernorm.weight"] = 1 + 0.1 * torch.randn(hid)
        if not sparse(c, i):
            ffn(p + "mlp.", c["intermediate_size"])
            continue
        experts = c.get("num_experts", c.get("n_routed_experts"))
        # A router spread wide enough that each token's top-k is clear of ties.
        w[p + "mlp.gate.weight"] = torch.randn(experts, hid) * 0.6
        width = c["intermediate_size"] if fam == "minimind2" else c["moe_intermediate_size"]
        for e in range(experts):
            ffn(f"{p}mlp.experts.{e}.", width)
        for s in range(c.get("n_shared_experts", 0)):
            ffn(f"{p}mlp.shared_experts.{s}.", c["intermediate_size"])
    w["model.norm.weight"] = 1 + 0.1 * torch.randn(hid)
    if not c["tie_word_embeddings"]:
        w["lm_head.weight"] = torch.randn(c["vocab_size"], hid) * 0.5
    return w


def save_expected(name, logits, tol=1e-4):
    logits.float().contiguous().numpy().tofile(os.path.join(OUT, name + ".f32"))
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump({"tokens": TOKENS, "shape": list(logits.shape), "tol": tol}, f)


BASE = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
            vocab_size=VOCAB, max_position_embeddings=512, rope_theta=1e6, hidden_act="silu",
            bos_token_id=1, eos_token_id=2)
CONFIGS = {
    # Qwen3-MoE: layer 1 is forced dense by mlp_only_layers, k = 2 of 8, renormalised, untied.
    "qwen3_moe": dict(BASE, model_type="qwen3_moe", architectures=["Qwen3MoeForCausalLM"],
                      num_hidden_layers=3, intermediate_size=96, num_experts=8,
                      num_experts_per_tok=2, moe_intermediate_size=32, norm_topk_prob=True,
                      decoder_sparse_step=1, mlp_only_layers=[1], rms_norm_eps=1e-6,
                      tie_word_embeddings=False, use_sliding_window=False, rope_scaling=None),
    # MiniMind 3 as save_pretrained writes it: dense, then use_moe with k = 2 of 4.
    "minimind3_dense": dict(BASE, model_type="minimind", architectures=["MiniMindForCausalLM"],
                            num_hidden_layers=2, intermediate_size=192, use_moe=False,
                            num_experts=4, num_experts_per_tok=1, moe_intermediate_size=192,
                            norm_topk_prob=True, rms_norm_eps=1e-6, tie_word_embeddings=True,
                            dropout=0.0, flash_attn=True, rope_scaling=None),
    "minimind3_moe": dict(BASE, model_type="minimind", architectures=["MiniMindForCausalLM"],
                          num_hidden_layers=2, intermediate_size=192, use_moe=True, num_experts=4,
                          num_experts_per_tok=2, moe_intermediate_size=48, norm_topk_prob=True,
                          rms_norm_eps=1e-6, tie_word_embeddings=True, dropout=0.0,
                          flash_attn=True, rope_scaling=None),
    # MiniMind 2: n_routed_experts spelling, one shared expert, k = 2 of 4, no q/k norms.
    "minimind2_moe": dict(BASE, model_type="minimind", architectures=["MiniMindForCausalLM"],
                          num_hidden_layers=2, intermediate_size=192, use_moe=True,
                          n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2,
                          scoring_func="softmax", aux_loss_alpha=0.01, seq_aux=True,
                          norm_topk_prob=True, rms_norm_eps=1e-5, tie_word_embeddings=True,
                          dropout=0.0, flash_attn=True, rope_scaling=None),
}
del CONFIGS["minimind2_moe"]["head_dim"]  # MiniMind 2 derives it: hidden / heads

os.makedirs(OUT, exist_ok=True)
weights = {}
for name, cfg in CONFIGS.items():
    c = dict(cfg)
    c.setdefault("head_dim", c["hidden_size"] // c["num_attention_heads"])
    w = random_weights(c)
    weights[name] = (w, c)
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    write_safetensors(os.path.join(d, "model.safetensors"), w)
    with torch.no_grad():
        save_expected(name, forward(w, c, TOKENS))

# MiniMind MoE state_dicts as its trainer saves them: torch.save of model.state_dict() (Hugging
# Face-style names, lm_head.weight tied to the embedding). MiniMind 2's in fp16 (the trainer's
# `v.half()`), MiniMind 3's in fp32; the references use exactly the stored values.
for name, dtype in (("minimind2_moe", torch.float16), ("minimind3_moe", torch.float32)):
    w, c = weights[name]
    sd = {k: v.to(dtype) for k, v in w.items()}
    sd["lm_head.weight"] = sd["model.embed_tokens.weight"]
    d = os.path.join(OUT, name + "_pth")
    os.makedirs(d, exist_ok=True)
    torch.save(sd, os.path.join(d, "model.pth"))
    stored = {k: v.float() for k, v in sd.items() if k != "lm_head.weight"}
    with torch.no_grad():
        save_expected(name + "_pth", forward(stored, c, TOKENS))
print("wrote", ", ".join(list(CONFIGS) + ["minimind2_moe_pth", "minimind3_moe_pth"]))
