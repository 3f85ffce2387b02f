"""PyTorch-made Qwen3.5 / Qwen3-Next hybrid fixtures for tests/tools/convert_logits. Three variants;
the default, qwen3_5_text (HF model_type "qwen3_5_text"), is described first, the others after it.

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

Both other variants keep this shape (hidden 64, 4 layers: 0-2 Gated DeltaNet, 3 gated full
attention, the same attention/DeltaNet sizes and math) and its checks and six ablations, and add:
  - qwen3_next (Qwen3NextForCausalLM, seed 20260302): config without layer_types (layer i is
    full attention iff (i + 1) % full_attention_interval == 0) and with rope_theta /
    partial_rotary_factor at the top level. Each DeltaNet layer has two fused projections,
    in_proj_qkvz [hk (2 dk + 2 r dv), H] and in_proj_ba [hk 2r, H] (r = hv / hk), whose rows
    are grouped per key head g: [q_g | k_g | v_g (r heads) | z_g (r heads)] and [b_g | a_g];
    the forward applies them and splits the result that way (fused_projections). Layer 1
    (mlp_only_layers) is the dense MLP; layers 0, 2, 3 are sparse MoE blocks: router
    mlp.gate [8, H], softmax, top 2 renormalised (norm_topk_prob), experts mlp.experts.{j}.
    {gate,up,down}_proj (width 32), plus shared_expert (width 48) times
    sigmoid(shared_expert_gate [1, H]). Extra ablations: qkvz/ba read as contiguous
    [q | k | v | z] / [b | a] blocks, the shared expert without its gate, top-2 weights not
    renormalised. For vocab 6400: logits std 1.21 (max 6.2), chunked vs token-by-token 7e-16,
    e^g 3e-5..0.99; all 28 expert pairs chosen, min router margin at the top-2 cut 1.5e-3; max
    |diff| without the output gate 1.8, w for (1 + w) 6.3, no conv1d 8.4, g = 0 8.1, full
    rotary 0.74, no silu(z) 7.9, contiguous qkvz/ba 8.4, ungated shared expert 5.8,
    unrenormalised top-2 3.0.
  - qwen3_5_moe (Qwen3_5MoeForConditionalGeneration, seed 20260303): the text model's config
    (model_type qwen3_5_moe_text, rope_parameters as qwen3_5_text, no intermediate_size) under
    "text_config"; tensors under model.language_model. (lm_head.weight at the top); DeltaNet
    projections split as in qwen3_5_text; every layer's MLP sparse, the same router and shared
    expert as qwen3_next, the experts fused as transformers v5 stores them:
    mlp.experts.gate_up_proj [8, 2*32, H] (expert j's gate rows [j, :32], up rows [j, 32:]) and
    mlp.experts.down_proj [8, H, 32], no ".weight" suffix. Extra ablations: the shared expert
    without its gate, top-2 not renormalised, gate and up halves swapped. For vocab 6400:
    logits std 1.21 (max 6.4), chunked 1e-15, e^g 6e-4..0.97; 28 pairs, margin 4.5e-4; max
    |diff| without the output gate 1.7, w for (1 + w) 6.5, no conv1d 8.2, g = 0 8.4, full
    rotary 1.1, no silu(z) 8.2, ungated shared expert 5.7, unrenormalised 4.1, swapped 7.1.
The router std (0.3) makes the top-2 sets vary from token to token; the script asserts at least
6 distinct pairs, and that no token's 2nd and 3rd router logits lie within 1e-4 (a near-tie could
flip under the engine's fp32 rounding and pick another expert).

usage: /usr/bin/python3 make_qwen35_fixture.py OUT_DIR VOCAB_SIZE [VARIANT]
VARIANT: qwen3_5_text (the default), qwen3_next or qwen3_5_moe;
writes OUT_DIR/NAME/{config.json, model.safetensors, reference.json, logits.f32} and, for
convert_logits' PREFIX argument, OUT_DIR/NAME.json and OUT_DIR/NAME.f32 (the same reference),
NAME being qwen3_5 for qwen3_5_text (the default) and the variant's name for the others:
convert_logits OUT_DIR/qwen3_5 OUT_DIR/qwen3_5
"""
import json
import os
import sys

import torch
import torch.nn.functional as F
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_f32 import write_safetensors  # noqa: E402

OUT, VOCAB = sys.argv[1], int(sys.argv[2])
VARIANT = sys.argv[3] if len(sys.argv) > 3 else "qwen3_5_text"
# variant -> (generator seed, output name). Each variant has its own seed, so adding variants
# leaves qwen3_5_text's draws, and so its files, exactly as they were.
SEEDS = {"qwen3_5_text": (20260301, "qwen3_5"), "qwen3_next": (20260302, "qwen3_next"),
         "qwen3_5_moe": (20260303, "qwen3_5_moe")}
if VARIANT not in SEEDS:
    sys.exit(f"usage: {sys.argv[0]} OUT_DIR VOCAB_SIZE [{'|'.join(SEEDS)}]")
SEED, NAME = SEEDS[VARIANT]
T, TOL, CHUNK = 300, 1e-4, 64
gen = torch.Generator().manual_seed(SEED)
TOKENS = torch.randint(3, VOCAB, (T,), generator=gen).tolist()

QWEN35 = dict(
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
LINEAR = {k: QWEN35[k] for k in ("linear_num_key_heads", "linear_num_value_heads",
                                 "linear_key_head_dim", "linear_value_head_dim",
                                 "linear_conv_kernel_dim")}
MOE = dict(num_experts=8, num_experts_per_tok=2, moe_intermediate_size=32,
           shared_expert_intermediate_size=48)
QWEN3_NEXT = dict(
    model_type="qwen3_next", architectures=["Qwen3NextForCausalLM"], vocab_size=VOCAB,
    hidden_size=64, num_hidden_layers=4, full_attention_interval=4,  # layers 0-2 linear, 3 full
    num_attention_heads=4, num_key_value_heads=2, head_dim=32, intermediate_size=96, **LINEAR,
    hidden_act="silu", rms_norm_eps=1e-6, max_position_embeddings=4096, rope_theta=1000000.0,
    partial_rotary_factor=0.25, attention_bias=False, **MOE, norm_topk_prob=True,
    decoder_sparse_step=1, mlp_only_layers=[1], tie_word_embeddings=False, bos_token_id=1,
    eos_token_id=2, torch_dtype="float32")
QWEN35_MOE = dict(
    model_type="qwen3_5_moe", architectures=["Qwen3_5MoeForConditionalGeneration"],
    tie_word_embeddings=False, text_config=dict(
        model_type="qwen3_5_moe_text", vocab_size=VOCAB, hidden_size=64, num_hidden_layers=4,
        layer_types=list(QWEN35["layer_types"]), num_attention_heads=4, num_key_value_heads=2,
        head_dim=32, **LINEAR, hidden_act="silu", rms_norm_eps=1e-6,
        max_position_embeddings=4096, rope_parameters=dict(QWEN35["rope_parameters"]),
        attention_bias=False, **MOE, tie_word_embeddings=False, bos_token_id=1, eos_token_id=2))
CONFIG = {"qwen3_5_text": QWEN35, "qwen3_next": QWEN3_NEXT, "qwen3_5_moe": QWEN35_MOE}[VARIANT]
# Qwen3.5-MoE is a vision-language wrapper: its text model's tensors sit under model.language_model.
M = "model.language_model." if VARIANT == "qwen3_5_moe" else "model."


def layer_types(c):  # qwen3_next has no list: every full_attention_interval-th layer is full
    if "layer_types" in c:
        return c["layer_types"]
    return ["full_attention" if (i + 1) % c["full_attention_interval"] == 0 else
            "linear_attention" for i in range(c["num_hidden_layers"])]


def is_sparse(c, i):  # the MoE models' rule for which layers get a sparse MLP block
    return (c.get("num_experts", 0) > 0 and i not in c.get("mlp_only_layers", [])
            and (i + 1) % c.get("decoder_sparse_step", 1) == 0)


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
    eps, rp = c["rms_norm_eps"], c.get("rope_parameters", c)  # qwen3_next: rope_* at top level
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


def fused_projections(w, p, c, n, grouped=True):
    """qwen3_next's in_proj_qkvz / in_proj_ba, split as its fix_query_key_value_ordering does.
    The rows are grouped by key head g (r = hv / hk value heads each): [q_g | k_g | v_g | z_g]
    (dk, dk, r*dv, r*dv) and [b_g | a_g] (r, r); g's value heads are g*r .. g*r+r-1.
    grouped=False is the mistake of reading them as [q | k | v | z] and [b | a] blocks."""
    t, hk, hv = n.shape[0], c["linear_num_key_heads"], c["linear_num_value_heads"]
    dk, dv, r = c["linear_key_head_dim"], c["linear_value_head_dim"], hv // hk
    qkvz, ba = n @ w[p + "in_proj_qkvz.weight"].T, n @ w[p + "in_proj_ba.weight"].T
    if grouped:
        q, k, v, z = qkvz.view(t, hk, 2 * dk + 2 * r * dv).split([dk, dk, r * dv, r * dv], -1)
        b, a = ba.view(t, hk, 2 * r).split([r, r], -1)
    else:
        q, k, v, z = qkvz.split([hk * dk, hk * dk, hv * dv, hv * dv], -1)
        b, a = ba.split([hv, hv], -1)
    # conv1d's channels are [q of all heads | k | v], as in_proj_qkv's rows are in Qwen3.5
    qkv = torch.cat([q.reshape(t, hk * dk), k.reshape(t, hk * dk), v.reshape(t, hv * dv)], -1)
    return qkv, z.reshape(t, hv, dv), b.reshape(t, hv), a.reshape(t, hv)


def gated_deltanet(w, p, c, n, f, stats):
    t, hk, hv = n.shape[0], c["linear_num_key_heads"], c["linear_num_value_heads"]
    dk, dv, kern = c["linear_key_head_dim"], c["linear_value_head_dim"], c["linear_conv_kernel_dim"]
    if p + "in_proj_qkvz.weight" in w:  # qwen3_next: two fused, per-key-head-grouped projections
        qkv, z, b, a = fused_projections(w, p, c, n, f["grouped"])
    else:
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


def dense_mlp(w, p, n):  # SiLU-gated MLP: down(silu(gate(n)) * up(n))
    mlp = F.silu(n @ w[p + "gate_proj.weight"].T) * (n @ w[p + "up_proj.weight"].T)
    return mlp @ w[p + "down_proj.weight"].T


def sparse_moe(w, p, c, n, f, stats):
    """Router softmax(n W^T) over E experts, keep the top k, renormalise the kept weights to sum
    1 (qwen3_next's norm_topk_prob; Qwen3.5-MoE always does), sum the chosen experts' SiLU MLPs
    by weight, plus the shared expert times sigmoid(its per-token gate). Every expert runs on
    every token and the unchosen get weight 0: the same sum as dispatching, and shorter."""
    e, k, inter = c["num_experts"], c["num_experts_per_tok"], c["moe_intermediate_size"]
    router = n @ w[p + "gate.weight"].T  # [T, E]
    probs = F.softmax(router, -1)
    top_w, top_i = probs.topk(k, -1)
    if f["renorm"]:
        top_w = top_w / top_w.sum(-1, keepdim=True)
    mix = torch.zeros_like(probs).scatter(1, top_i, top_w)  # [T, E], k nonzeros a row
    if p + "experts.gate_up_proj" in w:  # transformers v5's fused experts: [E, 2I, H], gate first
        gu = w[p + "experts.gate_up_proj"]
        gate, up = gu[:, :inter], gu[:, inter:]
        if f["swap_gate_up"]:
            gate, up = up, gate
        down = w[p + "experts.down_proj"]  # [E, H, I]
    else:  # one module per expert (qwen3_next)
        gate, up, down = (torch.stack([w[f"{p}experts.{j}.{m}_proj.weight"] for j in range(e)])
                          for m in ("gate", "up", "down"))
    h = F.silu(torch.einsum("th,eih->eti", n, gate)) * torch.einsum("th,eih->eti", n, up)
    routed = torch.einsum("te,eti,ehi->th", mix, h, down)
    shared = dense_mlp(w, p + "shared_expert.", n)
    if f["shared_gate"]:
        shared = shared * torch.sigmoid(n @ w[p + "shared_expert_gate.weight"].T)  # [T, 1]
    if stats is not None:
        stats["pairs"].update(tuple(sorted(row)) for row in top_i.tolist())
        stats["load"] += torch.bincount(top_i.flatten(), minlength=e)
        ranked = router.sort(-1, descending=True).values  # k-th vs (k+1)-th: how near a tie
        stats["margin"] = min(stats["margin"], float((ranked[:, k - 1] - ranked[:, k]).min()))
    return routed + shared


def forward(w, c, tokens, stats=None, **changes):
    f = dict(gate=True, one_plus=True, conv=True, decay=True, full_rope=False, silu_z=True,
             grouped=True, shared_gate=True, renorm=True, swap_gate_up=False)
    f.update(changes)
    eps = c["rms_norm_eps"]
    x = w[M + "embed_tokens.weight"][torch.tensor(tokens)]
    for i, kind in enumerate(layer_types(c)):
        p = f"{M}layers.{i}."
        n = norm1p(x, w[p + "input_layernorm.weight"], eps, f["one_plus"])
        if kind == "linear_attention":
            x = x + gated_deltanet(w, p + "linear_attn.", c, n, f, stats)
        else:
            x = x + full_attention(w, p + "self_attn.", c, n, f)
        n = norm1p(x, w[p + "post_attention_layernorm.weight"], eps, f["one_plus"])
        if is_sparse(c, i):
            x = x + sparse_moe(w, p + "mlp.", c, n, f, stats)
        else:
            x = x + dense_mlp(w, p + "mlp.", n)
    return norm1p(x, w[M + "norm.weight"], eps, f["one_plus"]) @ w["lm_head.weight"].T


def random_weights(c):
    hid, inter, d = c["hidden_size"], c.get("intermediate_size"), c["head_dim"]
    heads, kv = c["num_attention_heads"], c["num_key_value_heads"]
    hk, hv = c["linear_num_key_heads"], c["linear_num_value_heads"]
    dk, dv = c["linear_key_head_dim"], c["linear_value_head_dim"]
    key_dim, value_dim, r = hk * dk, hv * dv, hv // hk
    conv_dim = 2 * key_dim + value_dim

    def randn(*shape, std):
        return torch.randn(*shape, generator=gen) * std

    w = {M + "embed_tokens.weight": randn(c["vocab_size"], hid, std=1.0)}
    for i, kind in enumerate(layer_types(c)):
        p = f"{M}layers.{i}."
        # zero-centred: applied as (1 + w)
        w[p + "input_layernorm.weight"] = randn(hid, std=0.1)
        w[p + "post_attention_layernorm.weight"] = randn(hid, std=0.1)
        if kind == "linear_attention":
            la = p + "linear_attn."
            if VARIANT == "qwen3_next":  # fused, grouped by key head (see fused_projections)
                w[la + "in_proj_qkvz.weight"] = randn(hk * (2 * dk + 2 * r * dv), hid, std=0.15)
                # [b_g | a_g] per key head, b at std 0.15 and a at 0.1 as the split ones are
                ba_std = torch.tensor([0.15, 0.1])[:, None, None]
                w[la + "in_proj_ba.weight"] = (randn(hk, 2, r, hid, std=1.0) * ba_std).reshape(
                    hk * 2 * r, hid)
            else:
                w[la + "in_proj_qkv.weight"] = randn(conv_dim, hid, std=0.15)
                w[la + "in_proj_z.weight"] = randn(value_dim, hid, std=0.15)
                w[la + "in_proj_b.weight"] = randn(hv, hid, std=0.15)
                w[la + "in_proj_a.weight"] = randn(hv, hid, std=0.1)
            w[la + "conv1d.weight"] = randn(conv_dim, 1, c["linear_conv_kernel_dim"], std=0.3)
            # softplus(dt_bias ~ -2.5) ~ 0.08 times A in 1..16 -> e^g mostly 0.25..0.9: the state
            # reaches back tens of tokens, across the 64-token chunk boundaries.
            w[la + "dt_bias"] = randn(hv, std=0.5) - 2.5
            w[la + "A_log"] = torch.empty(hv).uniform_(1, 16, generator=gen).log()
            w[la + "norm.weight"] = 1 + randn(dv, std=0.1)  # plain w
            w[la + "out_proj.weight"] = randn(hid, value_dim, std=0.15)
        else:
            sa = p + "self_attn."
            w[sa + "q_proj.weight"] = randn(2 * heads * d, hid, std=0.15)
            w[sa + "k_proj.weight"] = randn(kv * d, hid, std=0.15)
            w[sa + "v_proj.weight"] = randn(kv * d, hid, std=0.2)
            w[sa + "q_norm.weight"] = randn(d, std=0.1)
            w[sa + "k_norm.weight"] = randn(d, std=0.1)
            w[sa + "o_proj.weight"] = randn(hid, heads * d, std=0.1)
        m = p + "mlp."
        if is_sparse(c, i):
            e, mi, si = c["num_experts"], c["moe_intermediate_size"], \
                c["shared_expert_intermediate_size"]
            # router std 0.3: logits std ~2.4 over the normed input, so the top-2 sets vary from
            # token to token and the kept weights are uneven
            w[m + "gate.weight"] = randn(e, hid, std=0.3)
            if VARIANT == "qwen3_5_moe":  # fused 3-D tensors, no ".weight" suffix
                w[m + "experts.gate_up_proj"] = randn(e, 2 * mi, hid, std=0.15)
                w[m + "experts.down_proj"] = randn(e, hid, mi, std=0.1)
            else:
                for j in range(e):
                    w[f"{m}experts.{j}.gate_proj.weight"] = randn(mi, hid, std=0.15)
                    w[f"{m}experts.{j}.up_proj.weight"] = randn(mi, hid, std=0.15)
                    w[f"{m}experts.{j}.down_proj.weight"] = randn(hid, mi, std=0.1)
            w[m + "shared_expert.gate_proj.weight"] = randn(si, hid, std=0.15)
            w[m + "shared_expert.up_proj.weight"] = randn(si, hid, std=0.15)
            w[m + "shared_expert.down_proj.weight"] = randn(hid, si, std=0.1)
            w[m + "shared_expert_gate.weight"] = randn(1, hid, std=0.15)
        else:
            w[m + "gate_proj.weight"] = randn(inter, hid, std=0.15)
            w[m + "up_proj.weight"] = randn(inter, hid, std=0.15)
            w[m + "down_proj.weight"] = randn(hid, inter, std=0.1)
    w[M + "norm.weight"] = randn(hid, std=0.1)
    w["lm_head.weight"] = randn(c["vocab_size"], hid, std=0.15)
    return w


c = CONFIG.get("text_config", CONFIG)  # the text model's config; CONFIG is what is written
w = random_weights(c)  # fp32, as written; the forward reads exact float64 copies
SHAPES = {"qwen3_5_text": {"model.layers.0.linear_attn.in_proj_qkv.weight": (160, 64),
                           "model.layers.3.self_attn.q_proj.weight": (256, 64)},
          "qwen3_next": {"model.layers.0.linear_attn.in_proj_qkvz.weight": (256, 64),
                         "model.layers.0.linear_attn.in_proj_ba.weight": (8, 64),
                         "model.layers.1.mlp.down_proj.weight": (64, 96),
                         "model.layers.3.mlp.experts.7.down_proj.weight": (64, 32)},
          "qwen3_5_moe": {M + "layers.0.linear_attn.in_proj_qkv.weight": (160, 64),
                          M + "layers.3.mlp.experts.gate_up_proj": (8, 64, 64),
                          M + "layers.3.mlp.experts.down_proj": (8, 64, 32)}}
for name, shape in SHAPES[VARIANT].items():
    assert w[name].shape == shape, (name, w[name].shape)
w64 = {k: v.double() for k, v in w.items()}
VARIANTS = {"no output gate": dict(gate=False), "norms as w, not 1 + w": dict(one_plus=False),
            "no conv1d": dict(conv=False), "g = 0 (no decay)": dict(decay=False),
            "full rotary (32 dims)": dict(full_rope=True),
            "no silu(z) in the gated norm": dict(silu_z=False)}
if VARIANT == "qwen3_next":
    VARIANTS["qkvz/ba read as contiguous blocks"] = dict(grouped=False)
if VARIANT != "qwen3_5_text":
    VARIANTS["shared expert without its sigmoid gate"] = dict(shared_gate=False)
    VARIANTS["top-k weights not renormalised"] = dict(renorm=False)
if VARIANT == "qwen3_5_moe":
    VARIANTS["gate and up halves of gate_up_proj swapped"] = dict(swap_gate_up=True)
stats = dict(chunk_diff=0.0, decay=(1.0, 0.0), pairs=set(), margin=float("inf"),
             load=torch.zeros(c.get("num_experts", 0), dtype=torch.long))
with torch.no_grad():
    logits64 = forward(w64, c, TOKENS, stats=stats)
    ablations = {name: float((forward(w64, c, TOKENS, **ch) - logits64).abs().max())
                 for name, ch in VARIANTS.items()}
logits = logits64.float()
assert torch.isfinite(logits).all() and logits.abs().max() < 100, "logits not O(1)"
assert stats["chunk_diff"] < 1e-9, f"chunked DeltaNet differs by {stats['chunk_diff']}"
for name, diff in ablations.items():
    assert diff > 10 * TOL, f"changing the {name} moves the logits by only {diff}"
sparse = [i for i in range(c["num_hidden_layers"]) if is_sparse(c, i)]
if sparse:  # routing must vary, or a router that always picks the same pair would pass
    assert len(stats["pairs"]) >= 6, f"only {len(stats['pairs'])} distinct expert pairs"
    # a near-tie at the k-th expert could flip under the engine's fp32 rounding and pick
    # another expert: a logits mismatch that is no bug
    assert stats["margin"] > 1e-4, f"router logits within {stats['margin']} of a tie"

d = os.path.join(OUT, NAME)
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, "config.json"), "w") as f:
    json.dump(CONFIG, f, indent=2)
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
print(f"{NAME}: {T} tokens, vocab {VOCAB}, logits std {float(logits.std()):.3g}, "
      f"max |logit| {float(logits.abs().max()):.3g}")
print(f"gated deltanet: chunked ({CHUNK}) vs token-by-token max |diff| {stats['chunk_diff']:.3g}, "
      f"per-token decay e^g in {stats['decay'][0]:.3g}..{stats['decay'][1]:.3g}")
if sparse:
    print(f"moe: sparse layers {sparse}, {len(stats['pairs'])} distinct top-"
          f"{c['num_experts_per_tok']} expert sets over them, picks per expert "
          f"{stats['load'].tolist()}, min router-logit margin at the top-"
          f"{c['num_experts_per_tok']} cut {stats['margin']:.2g}")
for name, diff in ablations.items():
    print(f"{name}: max |diff| vs the real logits {diff:.3g} (tol {TOL:g})")
print("wrote", d, "and", d + ".{json,f32}")
