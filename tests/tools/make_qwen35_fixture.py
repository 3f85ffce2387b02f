"""PyTorch-made Qwen3.5 text fixture (HF model_type "qwen3_5_text") for tests/tools/convert_logits.

Writes a random-weight fp32 checkpoint (config.json + model.safetensors) laid out as Qwen3.5's
hybrid text model is (three Gated DeltaNet linear-attention layers, then one gated full-attention
layer), plus the logits of every position that a plain-torch float64 forward gives for a
300-token sequence, stored as float32. The forward follows the math of HF transformers'
models/qwen3_next/modeling_qwen3_next.py as Qwen3.5 uses it, written independently here from
that description (no transformers import: it is not installed here):
  - Qwen3NextRMSNorm: x * rsqrt(mean(x^2) + eps) * (1 + w), for input_layernorm,
    post_attention_layernorm, q_norm, k_norm and model.norm (zero-centred weights).
  - Gated full attention: q_proj gives 2 * head_dim per head, the first half the query, the
    second a gate; q_norm / k_norm per head; rotate_half RoPE on the first
    int(head_dim * partial_rotary_factor) = 8 dims of each head (mrope with text-only input:
    the three position axes are all the token index, so sections and interleaving do not
    matter), the rest passed through; GQA (query head h reads kv head h // 2); causal softmax of
    q.k * head_dim^-0.5; the heads' output times sigmoid(gate), then o_proj.
  - Gated DeltaNet: in_proj_qkv (rows q, k, v) -> causal depthwise conv1d (kernel 4, left zero
    padding) -> SiLU -> split; beta = sigmoid(in_proj_b), g = -exp(A_log) softplus(in_proj_a +
    dt_bias); q, k repeat_interleave'd to the value heads, L2-normalised (eps 1e-6 inside the
    sqrt), q scaled by key_head_dim^-0.5; the delta rule S = e^g S; S += k (beta (v - S^T k))^T;
    o = S^T q; Qwen3NextRMSNormGated (plain weight, times silu(z)); out_proj. The recurrence is
    computed token by token and again in 64-token chunks (the WY/UT form: cumulative log-decays
    within a chunk, (I + A)^-1 of the strictly lower-triangular A by forward substitution, the
    state carried from chunk to chunk); the two must agree to 1e-9, and the logits use the
    token-by-token result.
  - SiLU-gated MLP, pre-norm residual blocks, untied lm_head.

The script asserts, and prints, that the logits change by more than 10x tol (1e-4) when the
output gate is removed, the (1 + w) norms are applied as w, the conv1d is skipped, the decay g
is forced to 0, RoPE is applied to the whole head, or the gated norm leaves out silu(z), so each
feature is one the check can see. What it prints for vocab 6400 (seed 20260301): logits std
1.2 (max |logit| 6.6); chunked vs token-by-token DeltaNet max |diff| 6e-16; per-token decay e^g
from 4e-6 to 0.98 (mostly 0.25..0.9, so the state reaches across chunk boundaries and across the
prefill/decode split convert_logits makes); max |diff| vs the real logits without the output gate
1.6, with w for (1 + w) 6.6, without the conv1d 8.4, with g = 0 8.2, with full rotary 0.58,
without silu(z) 8.4. (lm_head's std 0.15 keeps the logits O(1): fp32's rounding then leaves the
engine 2x inside tol over 300 tokens.)

usage: /usr/bin/python3 make_qwen35_fixture.py OUT_DIR VOCAB_SIZE
writes OUT_DIR/qwen3_5/{config.json, model.safetensors, reference.json, logits.f32} and, for
convert_logits' PREFIX argument, OUT_DIR/qwen3_5.json and OUT_DIR/qwen3_5.f32 (the same
reference): convert_logits OUT_DIR/qwen3_5 OUT_DIR/qwen3_5
"""
import json
import os
import sys

import torch
import torch.nn.functional as F
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_f32 import write_safetensors  # noqa: E402

OUT, VOCAB = sys.argv[1], int(sys.argv[2])
T, TOL, CHUNK = 300, 1e-4, 64
gen = torch.Generator().manual_seed(20260301)
TOKENS = torch.randint(3, VOCAB, (T,), generator=gen).tolist()

CONFIG = dict(
    model_type="qwen3_5_text", architectures=["Qwen3_5ForCausalLM"], vocab_size=VOCAB,
    hidden_size=64, num_hidden_layers=4,
    layer_types=["linear_attention", "linear_attention", "linear_attention", "full_attention"],
    num_attention_heads=4, num_key_value_heads=2, head_dim=32, intermediate_size=96,
    linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=16,
    linear_value_head_dim=24, linear_conv_kernel_dim=4, hidden_act="silu", rms_norm_eps=1e-6,
    max_position_embeddings=4096,
    rope_parameters={"rope_type": "default", "rope_theta": 1000000.0,
                     "partial_rotary_factor": 0.25, "mrope_section": [2, 1, 1],
                     "mrope_interleaved": True},
    attention_bias=False, tie_word_embeddings=False, bos_token_id=1, eos_token_id=2,
    torch_dtype="float32")


def norm1p(x, w, eps, one_plus=True):  # Qwen3NextRMSNorm; one_plus=False is the (b) mistake
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * ((1 + w) if one_plus else w)


def rope(x, pos, theta, rot):  # rotate_half on the first `rot` dims of each head, x [T, n, D]
    inv_freq = 1.0 / theta ** (torch.arange(0, rot, 2, dtype=torch.float64) / rot)
    ang = pos[:, None] * inv_freq[None, :]
    cos, sin = torch.cat([ang, ang], -1).cos()[:, None], torch.cat([ang, ang], -1).sin()[:, None]
    r, rest = x[..., :rot], x[..., rot:]
    half = torch.cat([-r[..., rot // 2:], r[..., :rot // 2]], -1)
    return torch.cat([r * cos + half * sin, rest], -1)


def full_attention(w, p, c, n, f):
    t, heads, kv, d = n.shape[0], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    eps, rp = c["rms_norm_eps"], c["rope_parameters"]
    qg = (n @ w[p + "q_proj.weight"].T).view(t, heads, 2 * d)  # per head: query, then gate
    q, gate = qg[..., :d], qg[..., d:].reshape(t, heads * d)
    q = norm1p(q, w[p + "q_norm.weight"], eps, f["one_plus"])
    k = norm1p((n @ w[p + "k_proj.weight"].T).view(t, kv, d), w[p + "k_norm.weight"], eps,
               f["one_plus"])
    v = (n @ w[p + "v_proj.weight"].T).view(t, kv, d)
    rot = d if f["full_rope"] else int(d * rp["partial_rotary_factor"])
    pos = torch.arange(t, dtype=torch.float64)
    q, k = rope(q, pos, rp["rope_theta"], rot), rope(k, pos, rp["rope_theta"], rot)
    k, v = k.repeat_interleave(heads // kv, 1), v.repeat_interleave(heads // kv, 1)
    scores = torch.einsum("thd,shd->hts", q, k) * d ** -0.5
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    probs = F.softmax(scores.masked_fill(~causal, float("-inf")), -1)
    out = torch.einsum("hts,shd->thd", probs, v).reshape(t, heads * d)
    if f["gate"]:
        out = out * torch.sigmoid(gate)
    return out @ w[p + "o_proj.weight"].T


def delta_recurrent(q, k, v, g, beta):  # q, k [T, H, dk]; v [T, H, dv]; g, beta [T, H]
    s = torch.zeros(q.shape[1], q.shape[2], v.shape[2], dtype=torch.float64)
    out = []
    for t in range(q.shape[0]):
        s = s * g[t].exp()[:, None, None]
        mem = torch.einsum("hkv,hk->hv", s, k[t])
        delta = beta[t][:, None] * (v[t] - mem)
        s = s + k[t][:, :, None] * delta[:, None, :]
        out.append(torch.einsum("hkv,hk->hv", s, q[t]))
    return torch.stack(out)


def delta_chunked(q, k, v, g, beta, chunk=CHUNK):
    """Per chunk with state S0 and G = cumsum(g): the deltas d_t = beta_t (v_t - e^{G_t} S0^T k_t
    - sum_{s<t} e^{G_t - G_s} (k_t.k_s) d_s) solve (I + A) d = beta v - beta e^G K S0, A strictly
    lower triangular; with L = (I + A)^-1: d = L (beta v) - L (beta e^G k) S0 (the UT transform).
    Only differences G_t - G_s (s <= t) are exponentiated, so nothing overflows."""
    heads, dk, dv = q.shape[1], q.shape[2], v.shape[2]
    s0 = torch.zeros(heads, dk, dv, dtype=torch.float64)
    out = []
    for c0 in range(0, q.shape[0], chunk):
        qc, kc, vc = (x[c0:c0 + chunk].transpose(0, 1) for x in (q, k, v))  # [H, C, .]
        gc, bc = g[c0:c0 + chunk].T, beta[c0:c0 + chunk].T  # [H, C]
        n = gc.shape[1]
        cum = gc.cumsum(-1)
        diff = cum[:, :, None] - cum[:, None, :]  # G_t - G_s
        lower = torch.ones(n, n, dtype=torch.bool).tril()
        decay = torch.where(lower, diff, torch.full_like(diff, -float("inf"))).exp()
        a = (bc[:, :, None] * decay * (kc @ kc.transpose(1, 2))).tril(-1)
        inv = torch.eye(n, dtype=torch.float64).repeat(heads, 1, 1)
        for i in range(1, n):  # forward substitution: row i of L = e_i - A[i, :i] L[:i]
            inv[:, i] -= torch.einsum("hs,hsc->hc", a[:, i, :i], inv[:, :i])
        u = inv @ (bc[..., None] * vc)
        wk = inv @ (bc[..., None] * cum.exp()[..., None] * kc)
        d = u - wk @ s0
        o = cum.exp()[..., None] * (qc @ s0) + (decay * (qc @ kc.transpose(1, 2))) @ d
        out.append(o.transpose(0, 1))
        last = cum[:, -1:]
        s0 = last.exp()[..., None] * s0 + (kc * (last - cum).exp()[..., None]).transpose(1, 2) @ d
    return torch.cat(out)


def gated_deltanet(w, p, c, n, f, stats):
    t, hk, hv = n.shape[0], c["linear_num_key_heads"], c["linear_num_value_heads"]
    dk, dv, kern = c["linear_key_head_dim"], c["linear_value_head_dim"], c["linear_conv_kernel_dim"]
    qkv = n @ w[p + "in_proj_qkv.weight"].T  # [T, conv_dim]
    z = (n @ w[p + "in_proj_z.weight"].T).view(t, hv, dv)
    b, a = n @ w[p + "in_proj_b.weight"].T, n @ w[p + "in_proj_a.weight"].T
    if f["conv"]:  # causal depthwise: conv[t] = sum_j w[:, 0, j] x[t - (K-1) + j], zeros before 0
        padded = torch.cat([torch.zeros(kern - 1, qkv.shape[1], dtype=torch.float64), qkv])
        cw = w[p + "conv1d.weight"][:, 0, :]  # [conv_dim, K]
        qkv = sum(cw[:, j] * padded[j:j + t] for j in range(kern))
    qkv = F.silu(qkv)
    q, k, v = qkv.split([hk * dk, hk * dk, hv * dv], -1)
    q, k, v = q.view(t, hk, dk), k.view(t, hk, dk), v.view(t, hv, dv)
    beta = torch.sigmoid(b)
    g = -w[p + "A_log"].exp() * F.softplus(a + w[p + "dt_bias"])
    if not f["decay"]:
        g = torch.zeros_like(g)
    q, k = q.repeat_interleave(hv // hk, 1), k.repeat_interleave(hv // hk, 1)  # value h: key h//2
    q = q / (q.pow(2).sum(-1, keepdim=True) + 1e-6).sqrt() * dk ** -0.5
    k = k / (k.pow(2).sum(-1, keepdim=True) + 1e-6).sqrt()
    o = delta_recurrent(q, k, v, g, beta)
    if stats is not None:
        stats["chunk_diff"] = max(stats["chunk_diff"],
                                  float((delta_chunked(q, k, v, g, beta) - o).abs().max()))
        stats["decay"] = (min(stats["decay"][0], float(g.exp().min())),
                          max(stats["decay"][1], float(g.exp().max())))
    o = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + c["rms_norm_eps"]) * w[p + "norm.weight"]
    if f["silu_z"]:
        o = o * F.silu(z)
    return o.reshape(t, hv * dv) @ w[p + "out_proj.weight"].T


def forward(w, c, tokens, stats=None, **changes):
    f = dict(gate=True, one_plus=True, conv=True, decay=True, full_rope=False, silu_z=True)
    f.update(changes)
    eps = c["rms_norm_eps"]
    x = w["model.embed_tokens.weight"][torch.tensor(tokens)]
    for i, kind in enumerate(c["layer_types"]):
        p = f"model.layers.{i}."
        n = norm1p(x, w[p + "input_layernorm.weight"], eps, f["one_plus"])
        if kind == "linear_attention":
            x = x + gated_deltanet(w, p + "linear_attn.", c, n, f, stats)
        else:
            x = x + full_attention(w, p + "self_attn.", c, n, f)
        n = norm1p(x, w[p + "post_attention_layernorm.weight"], eps, f["one_plus"])
        mlp = F.silu(n @ w[p + "mlp.gate_proj.weight"].T) * (n @ w[p + "mlp.up_proj.weight"].T)
        x = x + mlp @ w[p + "mlp.down_proj.weight"].T
    return norm1p(x, w["model.norm.weight"], eps, f["one_plus"]) @ w["lm_head.weight"].T


def random_weights(c):
    hid, inter, d = c["hidden_size"], c["intermediate_size"], c["head_dim"]
    heads, kv = c["num_attention_heads"], c["num_key_value_heads"]
    hk, hv = c["linear_num_key_heads"], c["linear_num_value_heads"]
    key_dim, value_dim = hk * c["linear_key_head_dim"], hv * c["linear_value_head_dim"]
    conv_dim = 2 * key_dim + value_dim

    def randn(*shape, std):
        return torch.randn(*shape, generator=gen) * std

    w = {"model.embed_tokens.weight": randn(c["vocab_size"], hid, std=1.0)}
    for i, kind in enumerate(c["layer_types"]):
        p = f"model.layers.{i}."
        # zero-centred: applied as (1 + w)
        w[p + "input_layernorm.weight"] = randn(hid, std=0.1)
        w[p + "post_attention_layernorm.weight"] = randn(hid, std=0.1)
        if kind == "linear_attention":
            la = p + "linear_attn."
            w[la + "in_proj_qkv.weight"] = randn(conv_dim, hid, std=0.15)
            w[la + "in_proj_z.weight"] = randn(value_dim, hid, std=0.15)
            w[la + "in_proj_b.weight"] = randn(hv, hid, std=0.15)
            w[la + "in_proj_a.weight"] = randn(hv, hid, std=0.1)
            w[la + "conv1d.weight"] = randn(conv_dim, 1, c["linear_conv_kernel_dim"], std=0.3)
            # softplus(dt_bias ~ -2.5) ~ 0.08 times A in 1..16 -> e^g mostly 0.25..0.9: the state
            # reaches back tens of tokens, across the 64-token chunk boundaries.
            w[la + "dt_bias"] = randn(hv, std=0.5) - 2.5
            w[la + "A_log"] = torch.empty(hv).uniform_(1, 16, generator=gen).log()
            w[la + "norm.weight"] = 1 + randn(c["linear_value_head_dim"], std=0.1)  # plain w
            w[la + "out_proj.weight"] = randn(hid, value_dim, std=0.15)
        else:
            sa = p + "self_attn."
            w[sa + "q_proj.weight"] = randn(2 * heads * d, hid, std=0.15)
            w[sa + "k_proj.weight"] = randn(kv * d, hid, std=0.15)
            w[sa + "v_proj.weight"] = randn(kv * d, hid, std=0.2)
            w[sa + "q_norm.weight"] = randn(d, std=0.1)
            w[sa + "k_norm.weight"] = randn(d, std=0.1)
            w[sa + "o_proj.weight"] = randn(hid, heads * d, std=0.1)
        w[p + "mlp.gate_proj.weight"] = randn(inter, hid, std=0.15)
        w[p + "mlp.up_proj.weight"] = randn(inter, hid, std=0.15)
        w[p + "mlp.down_proj.weight"] = randn(hid, inter, std=0.1)
    w["model.norm.weight"] = randn(hid, std=0.1)
    w["lm_head.weight"] = randn(c["vocab_size"], hid, std=0.15)
    return w


c = CONFIG
w = random_weights(c)  # fp32, as written; the forward reads exact float64 copies
assert w["model.layers.0.linear_attn.in_proj_qkv.weight"].shape == (160, 64)
assert w["model.layers.3.self_attn.q_proj.weight"].shape == (256, 64)
w64 = {k: v.double() for k, v in w.items()}
VARIANTS = {"no output gate": dict(gate=False), "norms as w, not 1 + w": dict(one_plus=False),
            "no conv1d": dict(conv=False), "g = 0 (no decay)": dict(decay=False),
            "full rotary (32 dims)": dict(full_rope=True),
            "no silu(z) in the gated norm": dict(silu_z=False)}
stats = dict(chunk_diff=0.0, decay=(1.0, 0.0))
with torch.no_grad():
    logits64 = forward(w64, c, TOKENS, stats=stats)
    ablations = {name: float((forward(w64, c, TOKENS, **ch) - logits64).abs().max())
                 for name, ch in VARIANTS.items()}
logits = logits64.float()
assert torch.isfinite(logits).all() and logits.abs().max() < 100, "logits not O(1)"
assert stats["chunk_diff"] < 1e-9, f"chunked DeltaNet differs by {stats['chunk_diff']}"
for name, diff in ablations.items():
    assert diff > 10 * TOL, f"changing the {name} moves the logits by only {diff}"

d = os.path.join(OUT, "qwen3_5")
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, "config.json"), "w") as f:
    json.dump(c, f, indent=2)
write_safetensors(os.path.join(d, "model.safetensors"), w)
reference = {"tokens": TOKENS, "shape": list(logits.shape), "tol": TOL,
             "max_diff_without": ablations}
raw = logits.contiguous().numpy().astype("<f4").tobytes()
for json_path, f32_path in ((os.path.join(d, "reference.json"), os.path.join(d, "logits.f32")),
                            (d + ".json", d + ".f32")):
    with open(json_path, "w") as f:
        json.dump(reference, f)
    with open(f32_path, "wb") as f:
        f.write(raw)
print(f"qwen3_5: {T} tokens, vocab {VOCAB}, logits std {float(logits.std()):.3g}, "
      f"max |logit| {float(logits.abs().max()):.3g}")
print(f"gated deltanet: chunked ({CHUNK}) vs token-by-token max |diff| {stats['chunk_diff']:.3g}, "
      f"per-token decay e^g in {stats['decay'][0]:.3g}..{stats['decay'][1]:.3g}")
for name, diff in ablations.items():
    print(f"{name}: max |diff| vs the real logits {diff:.3g} (tol {TOL:g})")
print("wrote", d, "and", d + ".{json,f32}")
