"""PyTorch-made gpt-oss fixture (HF model_type "gpt_oss") for tests/tools/convert_logits.

Writes a random-weight checkpoint (config.json + model.safetensors) laid out as the released
gpt-oss checkpoints are: attention, router, embeddings, norms and lm_head in fp32 (here; bf16 in
the release), the experts MXFP4 (uint8 *_blocks and *_scales, fp32 *_bias), plus the logits of
every position that a plain-torch fp32 forward gives for a 48-token sequence. The forward follows
the code it names, op for op where the order matters (no transformers import: it is not
installed here):
  - HF transformers integrations/mxfp4.py: convert_moe_packed_tensors (FP4_VALUES lookup, low
    nibble = input 2i, high nibble = input 2i+1, ldexp by scale - 127, blocks [E, rows, K]
    transposed to the parameter [E, K, rows]), in fp32 rather than its default bf16: exact in
    both, every value being an E2M1 code times a power of two. Checked against a second decode,
    element by element from the nibble's sign/exponent/mantissa bits.
  - HF transformers models/gpt_oss/modeling_gpt_oss.py: GptOssRMSNorm; GptOssRotaryEmbedding and
    _apply_rotary_emb (each head split in halves, cos/sin times the YaRN attention factor);
    eager_attention_forward (GQA by repeat_kv, scores * head_dim^-0.5, causal or sliding mask,
    the head's sink appended as an extra column, row max subtracted, softmax, sink column dropped);
    GptOssTopKRouter (biased linear, topk, softmax over the k kept, scattered over all experts);
    GptOssExperts.forward's inference path (every expert on every token: interleaved gate/up
    columns gu[..., ::2] / gu[..., 1::2], gate clamped above and up both ways at swiglu_limit,
    gate * sigmoid(1.702 gate) * (up + 1), biased down projection, routing-weighted sum).
  - HF transformers modeling_rope_utils.py _compute_yarn_parameters (truncate false: no floor /
    ceil of the correction range; attention factor 0.1 ln(factor) + 1), reused from
    make_rope_fixtures.py; masking_utils' sliding window (key j seen by query i when
    i - sliding_window < j <= i).

The shape is tiny but keeps what sets gpt-oss apart: heads * head_dim = 128 != hidden 64, layer 0
sliding (window 8) and layer 1 full, 48 tokens (3x the original context 16, 6x the window),
biases everywhere, sinks N(0, 1), expert scales drawn so that a fair share of gate/up values
pass the clamp. The script asserts, and prints, that the logits change by more than 10x tol
(1e-4) when the sinks, the window or the clamp are left out, so each feature is one the check
can see. What it prints for vocab 6400 (seed 20250805): of the 12288 gate and 12288 up values
the chosen experts compute (2 layers x 48 tokens x k 2 x width 64), 1308 gates > 7 and 2482 ups
with |up| > 7 are clamped; max |diff| vs the real logits without the sinks 8.2, without the
window 11, without the clamp 10 (logits std 2.4); smallest router top-k margin 3.3e-3.

usage: /usr/bin/python3 make_gptoss_fixture.py OUT_DIR VOCAB_SIZE
writes OUT_DIR/gpt_oss/{config.json, model.safetensors, reference.json, logits.f32} and, for
convert_logits' PREFIX argument as make_moe_fixtures.py writes its cases, OUT_DIR/gpt_oss.json and
OUT_DIR/gpt_oss.f32 (the same reference): convert_logits OUT_DIR/gpt_oss OUT_DIR/gpt_oss
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_rope_fixtures import _compute_yarn_parameters  # noqa: E402
from safetensors_f32 import write_safetensors  # noqa: E402

OUT, VOCAB = sys.argv[1], int(sys.argv[2])
T, TOL, ALPHA = 48, 1e-4, 1.702  # ALPHA: GptOssExperts.alpha
gen = torch.Generator().manual_seed(20250805)
TOKENS = torch.randint(3, VOCAB, (T,), generator=gen).tolist()

CONFIG = dict(
    model_type="gpt_oss", architectures=["GptOssForCausalLM"], hidden_size=64,
    num_hidden_layers=2, layer_types=["sliding_attention", "full_attention"],
    num_attention_heads=4, num_key_value_heads=2, head_dim=32, intermediate_size=64,
    num_local_experts=4, num_experts_per_tok=2, experts_per_token=2, sliding_window=8,
    swiglu_limit=7.0, attention_bias=True, rms_norm_eps=1e-5, rope_theta=150000.0,
    rope_scaling={"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                  "truncate": False, "original_max_position_embeddings": 16},
    initial_context_length=16, max_position_embeddings=512, tie_word_embeddings=False,
    vocab_size=VOCAB, bos_token_id=1, eos_token_id=2, pad_token_id=0, torch_dtype="float32",
    hidden_act="silu",
    quantization_config={"quant_method": "mxfp4", "modules_to_not_convert": [
        "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]})
# E8M0 scale bytes: 2^(s - 127). gate_up's 64 inputs of E2M1 (rms 2.9) times a post-norm
# activation of rms ~1 give |gu| ~ 23 * 2^(s - 127): s in 122..126 puts ~1/10 of the gates and
# ~1/5 of the ups past 7; down's scales keep each layer's MoE output at rms ~1.2.
GATE_UP_SCALES, DOWN_SCALES = (122, 126), (117, 120)
FP4_VALUES = [+0.0, +0.5, +1.0, +1.5, +2.0, +3.0, +4.0, +6.0,
              -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def dequant_mxfp4(blocks, scales):  # convert_moe_packed_tensors, fp32
    lut = torch.tensor(FP4_VALUES, dtype=torch.float32)
    *prefix, groups, nbytes = blocks.shape
    vals = torch.empty(*prefix, groups, nbytes * 2, dtype=torch.float32)
    vals[..., 0::2] = lut[(blocks & 0x0F).long()]
    vals[..., 1::2] = lut[(blocks >> 4).long()]
    vals = torch.ldexp(vals, (scales.to(torch.int32) - 127)[..., None])
    return vals.reshape(*prefix, groups * nbytes * 2).transpose(1, 2).contiguous()


def e2m1_from_bits(code):  # sign | 2 exponent bits (bias 1) | 1 mantissa bit; no table
    sign = -1.0 if code & 8 else 1.0
    e, m = (code >> 1) & 3, code & 1
    return sign * (m * 0.5 if e == 0 else (1.0 + 0.5 * m) * 2.0 ** (e - 1))


def check_dequant(blocks, scales, param, rows):
    """The slow decode, plain loops: param[e, k, r] from byte k // 2 of row r's block k // 32."""
    n = 0
    for e in range(blocks.shape[0]):
        for r in rows:
            for k in range(param.shape[1]):
                byte = int(blocks[e, r, k // 32, (k % 32) // 2])
                code = byte >> 4 if k % 2 else byte & 0x0F
                want = math.ldexp(e2m1_from_bits(code), int(scales[e, r, k // 32]) - 127)
                got = float(param[e, k, r])
                assert got == want and math.copysign(1, got) == math.copysign(1, want), \
                    f"expert {e} row {r} input {k}: {got} != {want}"
                n += 1
    return n


def rms(x, w, eps):  # GptOssRMSNorm in fp32
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rotary(x, cos, sin):  # _apply_rotary_emb: x [T, heads, D], cos/sin [T, 1, D/2]
    first, second = torch.chunk(x, 2, dim=-1)
    return torch.cat((first * cos - second * sin, second * cos + first * sin), dim=-1)


def attention(w, p, c, x, cos, sin, visible, sinks):
    t, heads, kv, d = x.shape[0], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]

    def proj(name, n):
        y = x @ w[f"{p}self_attn.{name}.weight"].T + w[f"{p}self_attn.{name}.bias"]
        return y.view(t, n, d)

    q, k, v = proj("q_proj", heads), proj("k_proj", kv), proj("v_proj", kv)
    q, k = rotary(q, cos, sin), rotary(k, cos, sin)
    k = k.repeat_interleave(heads // kv, dim=1)  # repeat_kv: query head h reads kv head h // 2
    v = v.repeat_interleave(heads // kv, dim=1)
    scores = torch.einsum("thd,shd->hts", q, k) * d ** -0.5
    scores = scores.masked_fill(~visible, float("-inf"))
    if sinks:
        sink = w[p + "self_attn.sinks"].view(heads, 1, 1).expand(heads, t, 1)
        scores = torch.cat([scores, sink], dim=-1)
    scores = scores - scores.max(dim=-1, keepdim=True).values
    probs = F.softmax(scores, dim=-1)[..., :t]  # the sink column dropped
    out = torch.einsum("hts,shd->thd", probs, v).reshape(t, heads * d)
    return out @ w[p + "self_attn.o_proj.weight"].T + w[p + "self_attn.o_proj.bias"]


def moe(w, p, c, x, clamp, stats):
    e_, k, limit = c["num_local_experts"], c["num_experts_per_tok"], c["swiglu_limit"]
    logits = x @ w[p + "mlp.router.weight"].T + w[p + "mlp.router.bias"]
    top, idx = torch.topk(logits, k, dim=-1)
    scores = torch.zeros_like(logits).scatter_(1, idx, F.softmax(top, dim=1))
    gu = torch.bmm(x.expand(e_, -1, -1), w[p + "mlp.experts.gate_up_proj"])
    gu = gu + w[p + "mlp.experts.gate_up_proj_bias"][:, None, :]
    gate, up = gu[..., ::2], gu[..., 1::2]
    if stats is not None:
        chosen = (scores.T > 0)[..., None].expand_as(gate)  # [E, T, I]: the (token, expert) used
        stats["gate"] += int((gate[chosen] > limit).sum())
        stats["up"] += int((up[chosen].abs() > limit).sum())
        stats["n"] += int(chosen.sum())
        ranked = logits.sort(dim=-1, descending=True).values
        stats["margin"] = min(stats["margin"], float((ranked[:, k - 1] - ranked[:, k]).min()))
    if clamp:
        gate, up = gate.clamp(min=None, max=limit), up.clamp(min=-limit, max=limit)
    glu = gate * torch.sigmoid(gate * ALPHA)
    y = torch.bmm((up + 1) * glu, w[p + "mlp.experts.down_proj"])
    y = y + w[p + "mlp.experts.down_proj_bias"][:, None, :]
    return (y * scores.T[..., None]).sum(dim=0)


def forward(w, c, tokens, sinks=True, window=True, clamp=True, stats=None):
    t, eps = len(tokens), c["rms_norm_eps"]
    inv_freq, attention_factor = _compute_yarn_parameters(c)
    freqs = torch.arange(t, dtype=torch.float32)[:, None] * inv_freq[None, :].float()
    cos = (freqs.cos() * attention_factor)[:, None, :]
    sin = (freqs.sin() * attention_factor)[:, None, :]
    pos = torch.arange(t)
    causal = pos[None, :] <= pos[:, None]  # [query, key]
    sliding = causal & (pos[None, :] > pos[:, None] - c["sliding_window"])
    x = w["model.embed_tokens.weight"][torch.tensor(tokens)]
    for i, kind in enumerate(c["layer_types"]):
        p = f"model.layers.{i}."
        visible = sliding if kind == "sliding_attention" and window else causal
        x = x + attention(w, p, c, rms(x, w[p + "input_layernorm.weight"], eps), cos, sin,
                          visible, sinks)
        x = x + moe(w, p, c, rms(x, w[p + "post_attention_layernorm.weight"], eps), clamp, stats)
    return rms(x, w["model.norm.weight"], eps) @ w["lm_head.weight"].T


def random_weights(c):
    hid, d, e_ = c["hidden_size"], c["head_dim"], c["num_local_experts"]
    inter = c["intermediate_size"]
    q, kv = c["num_attention_heads"] * d, c["num_key_value_heads"] * d

    def randn(*shape, std):
        return torch.randn(*shape, generator=gen) * std

    def mxfp4(name, rows, inputs, scale_range):  # random bytes and scales, not quantized floats
        w[name + "_blocks"] = torch.randint(0, 256, (e_, rows, inputs // 32, 16), generator=gen,
                                            dtype=torch.uint8)
        lo, hi = scale_range
        w[name + "_scales"] = torch.randint(lo, hi + 1, (e_, rows, inputs // 32), generator=gen,
                                            dtype=torch.uint8)
        w[name + "_bias"] = randn(e_, rows, std=0.5)

    w = {"model.embed_tokens.weight": randn(c["vocab_size"], hid, std=1.0)}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = 1 + randn(hid, std=0.1)
        w[p + "post_attention_layernorm.weight"] = 1 + randn(hid, std=0.1)
        for name, rows, std in (("q_proj", q, 0.15), ("k_proj", kv, 0.15), ("v_proj", kv, 0.3)):
            w[f"{p}self_attn.{name}.weight"] = randn(rows, hid, std=std)
            w[f"{p}self_attn.{name}.bias"] = randn(rows, std=0.5)
        w[p + "self_attn.o_proj.weight"] = randn(hid, q, std=0.1)
        w[p + "self_attn.o_proj.bias"] = randn(hid, std=0.5)
        w[p + "self_attn.sinks"] = randn(c["num_attention_heads"], std=1.0)
        w[p + "mlp.router.weight"] = randn(e_, hid, std=0.3)
        w[p + "mlp.router.bias"] = randn(e_, std=0.5)
        # gate_up rows interleave gate (even) and up (odd), the bias likewise.
        mxfp4(p + "mlp.experts.gate_up_proj", 2 * inter, hid, GATE_UP_SCALES)
        mxfp4(p + "mlp.experts.down_proj", hid, inter, DOWN_SCALES)
    w["model.norm.weight"] = 1 + randn(hid, std=0.1)
    w["lm_head.weight"] = randn(c["vocab_size"], hid, std=0.3)
    return w


c = CONFIG
w = random_weights(c)
params = dict(w)  # the checkpoint plus the dequantized expert parameters HF's modules hold
checked = 0
for i in range(c["num_hidden_layers"]):
    for name in ("gate_up_proj", "down_proj"):
        p = f"model.layers.{i}.mlp.experts.{name}"
        params[p] = dequant_mxfp4(w[p + "_blocks"], w[p + "_scales"])
        rows = params[p].shape[2]
        checked += check_dequant(w[p + "_blocks"], w[p + "_scales"], params[p], [0, 1, rows - 1])
assert params["model.layers.0.mlp.experts.gate_up_proj"].shape == (4, 64, 128)
assert params["model.layers.0.mlp.experts.down_proj"].shape == (4, 64, 64)

stats = dict(gate=0, up=0, n=0, margin=math.inf)
with torch.no_grad():
    logits = forward(params, c, TOKENS, stats=stats)
    ablations = {what: float((forward(params, c, TOKENS, **{what: False}) - logits).abs().max())
                 for what in ("sinks", "window", "clamp")}
assert torch.isfinite(logits).all() and logits.abs().max() < 100, "logits not O(1)"
assert stats["gate"] > 0.05 * stats["n"] and stats["up"] > 0.05 * stats["n"], stats
assert stats["margin"] > 1e-3, f"router top-k too close to a tie: {stats['margin']}"
for what, diff in ablations.items():
    assert diff > 10 * TOL, f"leaving out the {what} changes the logits by only {diff}"

d = os.path.join(OUT, "gpt_oss")
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, "config.json"), "w") as f:
    json.dump(c, f, indent=2)
write_safetensors(os.path.join(d, "model.safetensors"), w)
inv_freq, attention_factor = _compute_yarn_parameters(c)
reference = {"tokens": TOKENS, "shape": list(logits.shape), "tol": TOL,
             "inv_freq": inv_freq.tolist(), "attention_factor": attention_factor,
             "clamped": {"gate": stats["gate"], "up": stats["up"], "of": stats["n"]},
             "max_diff_without": ablations}
raw = logits.contiguous().numpy().astype("<f4").tobytes()
for json_path, f32_path in ((os.path.join(d, "reference.json"), os.path.join(d, "logits.f32")),
                            (d + ".json", d + ".f32")):
    with open(json_path, "w") as f:
        json.dump(reference, f)
    with open(f32_path, "wb") as f:
        f.write(raw)
print(f"gpt_oss: {T} tokens, vocab {VOCAB}, logits std {float(logits.std()):.3g}, "
      f"max |logit| {float(logits.abs().max()):.3g}")
print(f"mxfp4: dequantization equals the per-element bit decode on {checked} values")
print(f"clamped (chosen experts): gate > {c['swiglu_limit']:g} in {stats['gate']} of {stats['n']}, "
      f"|up| > {c['swiglu_limit']:g} in {stats['up']} of {stats['n']}")
print(f"router: smallest margin between the k-th and (k+1)-th logit {stats['margin']:.3g}")
print("max |diff| vs the real forward (tol %g): " % TOL +
      ", ".join(f"without {k} {v:.3g}" for k, v in ablations.items()))
print("wrote", d, "and", d + ".{json,f32}")
