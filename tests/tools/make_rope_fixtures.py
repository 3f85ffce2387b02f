"""PyTorch reference for RoPE scaling (issue #17), SmolLM3's NoPE layers, Phi-3's LongRoPE
with fused qkv_proj / gate_up_proj and Gemma 3's and Gemma 2's layers (issue #34):
random-weight fp32 checkpoints, one per rope type,
and the logits a plain-torch forward gives for a fixed 200-token sequence, for
tests/model/rope_reference_test.cpp to compare pagedserve's naive oracle and ModelRunner with.

transformers is not installed here, so the rope parameters are HF's formulas written in torch,
each function named after the transformers/modeling_rope_utils.py function it follows, and the
forward follows HF's LlamaModel / Qwen3Model in fp32 (RMSNorm, rotate_half rotary embedding with
cos/sin multiplied by the attention scaling, GQA, causal softmax attention, SiLU-gated MLP).
One deliberate difference: `dynamic` uses the base HF's _compute_dynamic_ntk_parameters gives for
seq_len = max_position_embeddings * factor at every length (vLLM's fixed choice), not the base HF
recomputes from the current length. Partial rotary (partial_rotary_factor) rotates the first
int(head_dim * factor) dims of each head and passes the rest through, as HF's families that use
it (e.g. Phi-3, StableLM, GLM) split q/k into q_rot and q_pass.

LongRoPE follows _compute_longrope_parameters with HF's choice for one 200-token forward: the
long factors when 200 passes original_max_position_embeddings (phi3_longrope, original 64),
the short ones when it does not (phi3_short, original 256, with a stated factor). The phi3 cases'
checkpoints store q/k/v and gate/up fused, as Phi-3's do, and the forward splits them as
transformers' Phi3Attention / Phi3MLP do.

The original context of every other case is 64 positions, so 200 tokens reach well past it.

usage: /usr/bin/python3 make_rope_fixtures.py OUT_DIR
writes OUT_DIR/<case>/{config.json, model.safetensors, reference.json, logits.f32}
"""
import json
import math
import os
import sys

import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_f32 import write_safetensors  # noqa: E402

T, VOCAB = 200, 256
BASE = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            head_dim=32, intermediate_size=128, vocab_size=VOCAB, rope_theta=10000.0,
            rms_norm_eps=1e-6, hidden_act="silu", tie_word_embeddings=False,
            bos_token_id=1, eos_token_id=2, torch_dtype="float32")

CASES = {
    "linear": dict(model_type="llama", max_position_embeddings=64,
                   rope_scaling={"type": "linear", "factor": 4.0}),
    "dynamic": dict(model_type="llama", max_position_embeddings=64,
                    rope_scaling={"rope_type": "dynamic", "factor": 4.0}),
    "llama3": dict(model_type="llama", max_position_embeddings=256,
                   rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                 "high_freq_factor": 4.0, "original_max_position_embeddings": 64}),
    "yarn": dict(model_type="qwen3", max_position_embeddings=64,
                 rope_scaling={"rope_type": "yarn", "factor": 4.0,
                               "original_max_position_embeddings": 64}),
    # DeepSeek-style fields: the attention factor from the mscale ratio, no truncation.
    "yarn_mscale": dict(model_type="qwen3", max_position_embeddings=256,
                        rope_scaling={"type": "yarn", "factor": 4.0,
                                      "original_max_position_embeddings": 64, "beta_fast": 16,
                                      "beta_slow": 2, "mscale": 1.0, "mscale_all_dim": 0.5,
                                      "truncate": False}),
    "partial": dict(model_type="llama", max_position_embeddings=256, rope_scaling=None,
                    partial_rotary_factor=0.5),
    "llama3_partial": dict(model_type="qwen3", max_position_embeddings=256,
                           partial_rotary_factor=0.5,
                           rope_scaling={"rope_type": "llama3", "factor": 4.0,
                                         "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                         "original_max_position_embeddings": 64}),
    # SmolLM3 (issue #34): layer 1 is a NoPE layer (transformers' SmolLM3Attention skips
    # apply_rotary_pos_emb where no_rope_layers holds 0); otherwise Llama's forward.
    "smollm3_nope": dict(model_type="smollm3", max_position_embeddings=256, rope_scaling=None,
                         no_rope_layers=[1, 0]),
    # Phi-4-mini's layout (issue #34): 3/4 of each head rotates, LongRoPE, original context at
    # the top level (factor = 256 / 64), fused projections.
    "phi3_longrope": dict(model_type="phi3", max_position_embeddings=256,
                          original_max_position_embeddings=64, partial_rotary_factor=0.75,
                          sliding_window=262144,
                          rope_scaling={"type": "longrope",
                                        "short_factor": [1.0 + 0.02 * i for i in range(12)],
                                        "long_factor": [1.0 + 0.25 * i * i for i in range(12)]}),
    "phi3_short": dict(model_type="phi3", max_position_embeddings=256, partial_rotary_factor=0.75,
                       rope_scaling={"rope_type": "longrope", "factor": 4.0,
                                     "original_max_position_embeddings": 256,
                                     "short_factor": [1.0 + 0.1 * i for i in range(12)],
                                     "long_factor": [2.0 + i for i in range(12)]}),
}
# Gemma 3 (issue #34), as transformers' Gemma3TextModel computes it: layers 0 and 2 slide over
# the last 24 positions with their own RoPE base (rope_local_base_freq, unscaled), layer 1 is
# global with rope_theta and linear scaling; (1 + w) norms before and after each branch, q/k
# norms, GELU-tanh, embeddings times sqrt(hidden), scores times query_pre_attn_scalar^-0.5.
CASES["gemma3"] = dict(model_type="gemma3_text", max_position_embeddings=256, num_hidden_layers=3,
                       hidden_act="gelu_pytorch_tanh", hidden_activation="gelu_pytorch_tanh",
                       query_pre_attn_scalar=48, sliding_window=24, rope_theta=1e6,
                       rope_local_base_freq=10000.0,
                       rope_scaling={"rope_type": "linear", "factor": 8.0},
                       layer_types=["sliding_attention", "full_attention", "sliding_attention"])
# Gemma 2: the same layer without q/k norms, one RoPE base, alternating sliding and global layers
# (sliding_window_pattern 2 by default: layers 0 and 2 slide), scores soft-capped before the mask
# and final logits soft-capped (small caps, so that random weights reach them).
CASES["gemma2"] = dict(model_type="gemma2", max_position_embeddings=256, num_hidden_layers=3,
                       hidden_act="gelu_pytorch_tanh", hidden_activation="gelu_pytorch_tanh",
                       query_pre_attn_scalar=48, sliding_window=24, rope_scaling=None,
                       attn_logit_softcapping=3.0, final_logit_softcapping=5.0)
SEQ_LEN = T  # the one forward's length, which picks LongRoPE's factors as HF does


def rotary_dim(c):
    return int(c["head_dim"] * c.get("partial_rotary_factor", 1.0))


def _compute_default_rope_parameters(c):
    base, dim = c["rope_theta"], rotary_dim(c)
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    return inv_freq, 1.0


def _compute_linear_scaling_rope_parameters(c):
    inv_freq, attention_factor = _compute_default_rope_parameters(c)
    return inv_freq / c["rope_scaling"]["factor"], attention_factor


def _compute_dynamic_ntk_parameters(c):
    base, dim = c["rope_theta"], rotary_dim(c)
    max_pos, factor = c["max_position_embeddings"], c["rope_scaling"]["factor"]
    seq_len = max_pos * factor  # vLLM's fixed length; HF would pass the current one
    base = base * ((factor * seq_len / max_pos) - (factor - 1)) ** (dim / (dim - 2))
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    return inv_freq, 1.0


def _compute_yarn_parameters(c):
    rs = c["rope_scaling"]
    base, dim, factor = c["rope_theta"], rotary_dim(c), rs["factor"]
    attention_factor = rs.get("attention_factor")
    mscale, mscale_all_dim = rs.get("mscale"), rs.get("mscale_all_dim")
    original = rs.get("original_max_position_embeddings") or c["max_position_embeddings"]

    def get_mscale(scale, m=1):
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))
        else:
            attention_factor = get_mscale(factor)
    beta_fast = rs.get("beta_fast") or 32
    beta_slow = rs.get("beta_slow") or 1

    def find_correction_dim(num_rotations):
        return (dim * math.log(original / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = find_correction_dim(beta_fast), find_correction_dim(beta_slow)
    if rs.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)

    pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
    extrapolation_factor = 1 - ramp
    inv_freq = (1.0 / (factor * pos_freqs)) * (1 - extrapolation_factor) + (
        1.0 / pos_freqs) * extrapolation_factor
    return inv_freq, attention_factor


def _compute_llama3_parameters(c):
    inv_freq, attention_factor = _compute_default_rope_parameters(c)
    rs = c["rope_scaling"]
    factor, low_ff, high_ff = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old_context_len = rs["original_max_position_embeddings"]
    low_freq_wavelen, high_freq_wavelen = old_context_len / low_ff, old_context_len / high_ff
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth = (old_context_len / wavelen - low_ff) / (high_ff - low_ff)
    smoothed = (1 - smooth) * inv_freq_llama / factor + smooth * inv_freq_llama
    is_medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium, smoothed, inv_freq_llama), attention_factor


def _compute_longrope_parameters(c):
    rs = c["rope_scaling"]
    base, dim = c["rope_theta"], rotary_dim(c)
    original = rs.get("original_max_position_embeddings") or c.get(
        "original_max_position_embeddings") or c["max_position_embeddings"]
    factor = rs.get("factor") or c["max_position_embeddings"] / original
    attention_factor = rs.get("attention_factor")
    if attention_factor is None:
        attention_factor = 1.0 if factor <= 1.0 else math.sqrt(
            1 + math.log(factor) / math.log(original))
    ext = rs["long_factor"] if SEQ_LEN > original else rs["short_factor"]
    ext = torch.tensor(ext, dtype=torch.float32)
    shape = torch.arange(0, dim, 2, dtype=torch.int64).float() / dim
    return 1.0 / (ext * base ** shape), attention_factor


ROPE_INIT_FUNCTIONS = {
    "default": _compute_default_rope_parameters,
    "linear": _compute_linear_scaling_rope_parameters,
    "dynamic": _compute_dynamic_ntk_parameters,
    "yarn": _compute_yarn_parameters,
    "llama3": _compute_llama3_parameters,
    "longrope": _compute_longrope_parameters,
}


def rope_parameters(c):
    rs = c.get("rope_scaling")
    kind = "default" if rs is None else rs.get("rope_type", rs.get("type"))
    return ROPE_INIT_FUNCTIONS[kind](c)


def rms(x, w, eps):  # LlamaRMSNorm / Qwen3RMSNorm in fp32
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(x, cos, sin):  # x [T, H, D]; cos/sin [T, 1, rot]
    rot = cos.shape[-1]
    x_rot, x_pass = x[..., :rot], x[..., rot:]
    return torch.cat((x_rot * cos + rotate_half(x_rot) * sin, x_pass), dim=-1)


def rope_cos_sin(inv_freq, attention_scaling, t):
    freqs = torch.arange(t, dtype=torch.float32)[:, None] * inv_freq[None, :].float()
    emb = torch.cat((freqs, freqs), dim=-1)
    return (emb.cos() * attention_scaling)[:, None, :], (emb.sin() * attention_scaling)[:, None, :]


def gemma_forward(w, c, tokens):
    """Gemma3TextModel / Gemma2Model in fp32: their RMSNorm scales by (1 + w)."""
    gemma3 = c["model_type"] == "gemma3_text"
    layer_types = c.get("layer_types") or [
        "sliding_attention" if (i + 1) % 2 else "full_attention"
        for i in range(c["num_hidden_layers"])]  # Gemma2Config's default
    h_, kv, d, eps = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["rms_norm_eps"]
    t = len(tokens)

    def norm(x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (1.0 + weight)

    glob = rope_cos_sin(*rope_parameters(c), t)
    local = rope_cos_sin(*_compute_default_rope_parameters(
        dict(c, rope_theta=c["rope_local_base_freq"])), t) if gemma3 else glob
    x = w["model.embed_tokens.weight"][torch.tensor(tokens)] * torch.tensor(c["hidden_size"] ** 0.5)
    causal = torch.full((t, t), float("-inf")).triu(1)
    window = causal + torch.full((t, t), float("-inf")).tril(-c["sliding_window"])
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        sliding = layer_types[i] == "sliding_attention"
        cos, sin = local if sliding else glob
        n = norm(x, w[p + "input_layernorm.weight"])
        q = (n @ w[p + "self_attn.q_proj.weight"].T).view(t, h_, d)
        k = (n @ w[p + "self_attn.k_proj.weight"].T).view(t, kv, d)
        if gemma3:
            q, k = norm(q, w[p + "self_attn.q_norm.weight"]), norm(k, w[p + "self_attn.k_norm.weight"])
        v = (n @ w[p + "self_attn.v_proj.weight"].T).view(t, kv, d)
        q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        k = k.repeat_interleave(h_ // kv, dim=1)
        v = v.repeat_interleave(h_ // kv, dim=1)
        att = torch.einsum("thd,shd->hts", q, k) * c["query_pre_attn_scalar"] ** -0.5
        if c.get("attn_logit_softcapping"):
            cap = c["attn_logit_softcapping"]
            att = torch.tanh(att / cap) * cap
        att = att + (window if sliding else causal)
        o = torch.einsum("hts,shd->thd", att.softmax(-1), v).reshape(t, h_ * d)
        x = x + norm(o @ w[p + "self_attn.o_proj.weight"].T, w[p + "post_attention_layernorm.weight"])
        n = norm(x, w[p + "pre_feedforward_layernorm.weight"])
        g = torch.nn.functional.gelu(n @ w[p + "mlp.gate_proj.weight"].T, approximate="tanh")
        mlp = (g * (n @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
        x = x + norm(mlp, w[p + "post_feedforward_layernorm.weight"])
    logits = norm(x, w["model.norm.weight"]) @ w["lm_head.weight"].T
    if c.get("final_logit_softcapping"):
        cap = c["final_logit_softcapping"]
        logits = torch.tanh(logits / cap) * cap
    return logits


def forward(w, c, tokens):
    """Logits [T, V] in fp32, as HF runs an fp32 checkpoint."""
    if c["model_type"] in ("gemma3_text", "gemma2"):
        return gemma_forward(w, c, tokens)
    h_, kv, d, eps = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["rms_norm_eps"]
    t = len(tokens)
    inv_freq, attention_scaling = rope_parameters(c)
    # LlamaRotaryEmbedding.forward: fp32 angles, cos/sin times attention_scaling.
    freqs = torch.arange(t, dtype=torch.float32)[:, None] * inv_freq[None, :].float()
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = (emb.cos() * attention_scaling)[:, None, :]
    sin = (emb.sin() * attention_scaling)[:, None, :]
    mask = torch.full((t, t), float("-inf")).triu(1)
    x = w["model.embed_tokens.weight"][torch.tensor(tokens)]
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        n = rms(x, w[p + "input_layernorm.weight"], eps)
        if c["model_type"] == "phi3":  # Phi3Attention: one qkv_proj, sliced q | k | v
            qkv = n @ w[p + "self_attn.qkv_proj.weight"].T
            q = qkv[..., : h_ * d].reshape(t, h_, d)
            k = qkv[..., h_ * d: (h_ + kv) * d].reshape(t, kv, d)
            v = qkv[..., (h_ + kv) * d:].reshape(t, kv, d)
        else:
            q = (n @ w[p + "self_attn.q_proj.weight"].T).view(t, h_, d)
            k = (n @ w[p + "self_attn.k_proj.weight"].T).view(t, kv, d)
            v = (n @ w[p + "self_attn.v_proj.weight"].T).view(t, kv, d)
        if c["model_type"] == "qwen3":
            q = rms(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms(k, w[p + "self_attn.k_norm.weight"], eps)
        if c.get("no_rope_layers", [1] * c["num_hidden_layers"])[i]:
            q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        k = k.repeat_interleave(h_ // kv, dim=1)
        v = v.repeat_interleave(h_ // kv, dim=1)
        att = torch.einsum("thd,shd->hts", q, k) * d ** -0.5 + mask
        o = torch.einsum("hts,shd->thd", att.softmax(-1), v).reshape(t, h_ * d)
        x = x + o @ w[p + "self_attn.o_proj.weight"].T
        n = rms(x, w[p + "post_attention_layernorm.weight"], eps)
        if c["model_type"] == "phi3":  # Phi3MLP: gate_up_proj, chunked gate | up
            gate, up = (n @ w[p + "mlp.gate_up_proj.weight"].T).chunk(2, dim=-1)
            x = x + (up * torch.nn.functional.silu(gate)) @ w[p + "mlp.down_proj.weight"].T
            continue
        g = torch.nn.functional.silu(n @ w[p + "mlp.gate_proj.weight"].T)
        x = x + (g * (n @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
    return rms(x, w["model.norm.weight"], eps) @ w["lm_head.weight"].T


def random_weights(c, gen):
    """Weights that keep activations and logits O(1), with norms away from 1 (a skipped multiply
    shows) and projections large enough that attention, hence RoPE, moves the logits."""
    hid, inter, d = c["hidden_size"], c["intermediate_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * d, c["num_key_value_heads"] * d

    def randn(*shape, std=1.0):
        return torch.randn(*shape, generator=gen) * std

    gemma = c["model_type"] in ("gemma3_text", "gemma2")

    def norm(n):  # Gemma's weights are the w of (1 + w)
        return randn(n, std=0.3) if gemma else 1.0 + randn(n, std=0.3)

    w = {"model.embed_tokens.weight": randn(VOCAB, hid, std=1.0),
         "lm_head.weight": randn(VOCAB, hid, std=0.2), "model.norm.weight": norm(hid)}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = norm(hid)
        w[p + "post_attention_layernorm.weight"] = norm(hid)
        w[p + "self_attn.q_proj.weight"] = randn(q, hid, std=0.3)
        w[p + "self_attn.k_proj.weight"] = randn(kv, hid, std=0.3)
        w[p + "self_attn.v_proj.weight"] = randn(kv, hid, std=0.15)
        w[p + "self_attn.o_proj.weight"] = randn(hid, q, std=0.1)
        w[p + "mlp.gate_proj.weight"] = randn(inter, hid, std=0.15)
        w[p + "mlp.up_proj.weight"] = randn(inter, hid, std=0.15)
        w[p + "mlp.down_proj.weight"] = randn(hid, inter, std=0.1)
        if c["model_type"] in ("qwen3", "gemma3_text"):
            w[p + "self_attn.q_norm.weight"] = norm(d)
            w[p + "self_attn.k_norm.weight"] = norm(d)
        if gemma:
            w[p + "pre_feedforward_layernorm.weight"] = norm(hid)
            w[p + "post_feedforward_layernorm.weight"] = norm(hid)
        if c["model_type"] == "phi3":  # stored fused, as Phi-3 checkpoints are
            w[p + "self_attn.qkv_proj.weight"] = torch.cat(
                [w.pop(p + f"self_attn.{x}_proj.weight") for x in "qkv"])
            w[p + "mlp.gate_up_proj.weight"] = torch.cat(
                [w.pop(p + "mlp.gate_proj.weight"), w.pop(p + "mlp.up_proj.weight")])
    return w


def main():
    out = sys.argv[1]
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(17)
    tokens = torch.randint(3, VOCAB, (T,), generator=gen).tolist()
    for name, extra in CASES.items():
        c = dict(BASE, **extra)
        w = random_weights(c, gen)
        with torch.no_grad():
            logits = forward(w, c, tokens)
            inv_freq, attention_scaling = rope_parameters(c)
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(c, f, indent=2)
        write_safetensors(os.path.join(d, "model.safetensors"), w)
        with open(os.path.join(d, "logits.f32"), "wb") as f:
            f.write(logits.contiguous().numpy().astype("<f4").tobytes())
        with open(os.path.join(d, "reference.json"), "w") as f:
            json.dump({"tokens": tokens, "shape": list(logits.shape),
                       "inv_freq": inv_freq.tolist(), "attention_factor": attention_scaling,
                       "rotary_dim": rotary_dim(c)}, f)
    print(f"wrote {len(CASES)} cases to {out}")


if __name__ == "__main__":
    main()
