"""Writes a "scripted" Qwen3 checkpoint: its greedy reply to any chat prompt is a chosen text.

    /usr/bin/python3 make_scripted_model.py --out DIR --template FILE.jinja \\
        --reply-text "<think>Let me think</think>The answer" [--base models/tiny] [--layers 2]

Tests of the server's reasoning and tool-call parsing need a real model, run by the real
forward, whose output is known. This one is memoryless: every o_proj and down_proj is zero, so
no layer adds anything to the residual stream and the final hidden state of a position is the
RMS-normed embedding of that position's token. The reply is a chain of distinct tokens
t1..tn, then EOS; chain token ti embeds as one-hot direction i, every other token as direction
0, and lm_head maps direction 0 to t1, direction i to t(i+1) and direction n to EOS. So whatever
the prompt, as long as its last token is not in the chain, greedy decoding writes t1..tn EOS.

The chain is a segmentation of the reply's bytes into vocabulary tokens (added tokens such as
<think> stay whole), each used once and none that could end a generation prompt of the given
template; it decodes to exactly the reply text but need not be how the tokenizer would encode
it. A reply that cannot be so segmented (a token needed twice with no other spelling left, e.g.
two newlines when "\\n" also ends the prompt) fails with a message naming the piece.
Stdlib only (plus jinja2, to render the template); safetensors is written by hand.
"""

import argparse
import json
import os
import random
import struct
import sys
from array import array

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from render_template_jinja2 import make_environment  # noqa: E402

# Qwen3 has these as added tokens with special false: their text survives skip_special_tokens.
REASONING_AND_TOOL_TOKENS = ["<think>", "</think>", "<tool_call>", "</tool_call>"]
EOS_TEXT = "<|im_end|>"
LOGIT_SCALE = 4.0  # lm_head entry; the winning logit is this times sqrt(hidden_size)


class ScriptError(Exception):
    pass


def byte_decoder():
    """GPT-2's byte-level alphabet: the printable stand-in character of each byte, inverted."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def token_bytes(tokenizer):
    """id -> the bytes it decodes to, for the BPE vocabulary and the added tokens."""
    decoder = byte_decoder()
    out = {}
    for spelling, token_id in tokenizer["model"]["vocab"].items():
        try:
            out[token_id] = bytes(decoder[ch] for ch in spelling)
        except KeyError:
            continue  # not a byte-level spelling; never used for the chain
    for t in tokenizer["added_tokens"]:
        out[t["id"]] = t["content"].encode("utf-8")
    return out


def add_tokens(tokenizer, contents):
    """Appends the missing `contents` as non-special added tokens with new ids; returns max id."""
    added = tokenizer["added_tokens"]
    known = {t["content"] for t in added}
    next_id = 1 + max([t["id"] for t in added] + list(tokenizer["model"]["vocab"].values()))
    for content in contents:
        if content in known:
            continue
        added.append({"id": next_id, "content": content, "single_word": False, "lstrip": False,
                      "rstrip": False, "normalized": False, "special": False})
        known.add(content)
        next_id += 1
    return next_id - 1


def split_at_added(text, added_contents):
    """Pieces of `text`: (string, True) for an added token, (string, False) for plain text.
    Leftmost match first, the longest where several start at one place (as tokenizers does)."""
    pieces = []
    plain_start = 0
    i = 0
    by_length = sorted(added_contents, key=len, reverse=True)
    while i < len(text):
        match = next((c for c in by_length if text.startswith(c, i)), None)
        if match is None:
            i += 1
            continue
        if plain_start < i:
            pieces.append((text[plain_start:i], False))
        pieces.append((match, True))
        i += len(match)
        plain_start = i
    if plain_start < len(text):
        pieces.append((text[plain_start:], False))
    return pieces


def segment(data, by_bytes, used, budget):
    """Distinct token ids, none in `used`, whose bytes concatenate to `data`; longest tokens
    first, backtracking when a later part cannot be spelled. None when impossible."""
    lengths = sorted({len(b) for b in by_bytes}, reverse=True)

    def search(pos):
        if pos == len(data):
            return []
        for n in lengths:
            if pos + n > len(data):
                continue
            token_id = by_bytes.get(data[pos:pos + n])
            if token_id is None or token_id in used:
                continue
            budget[0] -= 1
            if budget[0] < 0:
                return None
            used.add(token_id)
            rest = search(pos + n)
            if rest is not None:
                return [token_id] + rest
            used.discard(token_id)
        return None

    return search(0)


def prompt_endings(template_text, bos, eos):
    """Generation prompts the template renders for a few typical requests."""
    env = make_environment()
    template = env.from_string(template_text)
    messages = [
        [{"role": "user", "content": "Hi"}],
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
    ]
    renderings = []
    for msgs in messages:
        for extra in ({}, {"enable_thinking": False}, {"enable_thinking": True}):
            renderings.append(template.render(messages=msgs, add_generation_prompt=True,
                                              bos_token=bos, eos_token=eos, tools=None,
                                              documents=None, **extra))
    return renderings


def build_chain(tokenizer, reply_text, renderings):
    """The reply as token ids, then EOS; raises ScriptError when it cannot be scripted."""
    ids_bytes = token_bytes(tokenizer)
    added = {t["content"]: t["id"] for t in tokenizer["added_tokens"]}
    if EOS_TEXT not in added:
        raise ScriptError(f"the tokenizer has no added token {EOS_TEXT}")
    eos_id = added[EOS_TEXT]
    # Tokens a prompt could end with must stay outside the chain, or the reply would start
    # midway. A token whose text ends a rendering might be its last token: avoid them all.
    may_end_prompt = {i for i, b in ids_bytes.items()
                      if b and any(r.encode("utf-8").endswith(b) for r in renderings)}
    special_ids = {t["id"] for t in tokenizer["added_tokens"] if t["special"]}
    used = set(may_end_prompt) | special_ids | {eos_id}
    plain_vocab = {b: i for i, b in ids_bytes.items() if b and i not in added.values()}

    chain = []
    for text, is_added in split_at_added(reply_text, list(added)):
        if is_added:
            token_id = added[text]
            if token_id in used:
                why = ("it is special" if token_id in special_ids or token_id == eos_id
                       else "it can end the template's generation prompt"
                       if token_id in may_end_prompt else "it appears twice in the reply")
                raise ScriptError(f"the reply cannot contain {text!r}: {why}")
            used.add(token_id)
            chain.append(token_id)
            continue
        budget = [200000]
        ids = segment(text.encode("utf-8"), plain_vocab, used, budget)
        if ids is None:
            raise ScriptError(
                f"cannot spell {text!r} with tokens not used before in the reply and not able to "
                f"end the template's generation prompt (each chain token must be distinct: the "
                f"model's next token depends on the current one only)")
        chain.extend(ids)
    if not chain:
        raise ScriptError("the reply text is empty")
    return chain + [eos_id]


def round_up(n, multiple):
    return (n + multiple - 1) // multiple * multiple


def make_tensors(cfg, chain, seed):
    """name -> (shape, array('f')). Unlisted token rows of embed_tokens point at direction 0."""
    hidden, vocab = cfg["hidden_size"], cfg["vocab_size"]
    q_size = cfg["num_attention_heads"] * cfg["head_dim"]
    kv_size = cfg["num_key_value_heads"] * cfg["head_dim"]
    inter = cfg["intermediate_size"]
    rng = random.Random(seed)

    def zeros(n):
        return array("f", bytes(4 * n))

    def ones(n):
        return array("f", [1.0]) * n

    def noise(n):
        # Small values: the q/k/v/gate/up products are computed for real but reach nothing.
        return array("f", (rng.uniform(-0.05, 0.05) for _ in range(n)))

    direction = {token_id: i + 1 for i, token_id in enumerate(chain[:-1])}
    embed = zeros(vocab * hidden)
    for t in range(vocab):
        embed[t * hidden + direction.get(t, 0)] = 1.0
    lm_head = zeros(vocab * hidden)
    lm_head[chain[0] * hidden + 0] = LOGIT_SCALE
    for current, successor in zip(chain, chain[1:]):
        lm_head[successor * hidden + direction[current]] = LOGIT_SCALE

    tensors = {"model.embed_tokens.weight": ([vocab, hidden], embed)}
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        tensors[p + "input_layernorm.weight"] = ([hidden], ones(hidden))
        tensors[p + "self_attn.q_proj.weight"] = ([q_size, hidden], noise(q_size * hidden))
        tensors[p + "self_attn.k_proj.weight"] = ([kv_size, hidden], noise(kv_size * hidden))
        tensors[p + "self_attn.v_proj.weight"] = ([kv_size, hidden], noise(kv_size * hidden))
        tensors[p + "self_attn.q_norm.weight"] = ([cfg["head_dim"]], ones(cfg["head_dim"]))
        tensors[p + "self_attn.k_norm.weight"] = ([cfg["head_dim"]], ones(cfg["head_dim"]))
        tensors[p + "self_attn.o_proj.weight"] = ([hidden, q_size], zeros(hidden * q_size))
        tensors[p + "post_attention_layernorm.weight"] = ([hidden], ones(hidden))
        tensors[p + "mlp.gate_proj.weight"] = ([inter, hidden], noise(inter * hidden))
        tensors[p + "mlp.up_proj.weight"] = ([inter, hidden], noise(inter * hidden))
        tensors[p + "mlp.down_proj.weight"] = ([hidden, inter], zeros(hidden * inter))
    tensors["model.norm.weight"] = ([hidden], ones(hidden))
    tensors["lm_head.weight"] = ([vocab, hidden], lm_head)
    return tensors


def write_safetensors(path, tensors):
    """8-byte little-endian header length, the JSON header, then the raw little-endian data."""
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (shape, data) in tensors.items():
        size = 4 * len(data)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # keeps the data 8-byte aligned, as safetensors does
    if sys.byteorder != "little":
        raise ScriptError("this writer assumes a little-endian machine")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, data in tensors.values():
            data.tofile(f)


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2, ensure_ascii=False)
        f.write("\n")


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="model directory to write (created)")
    parser.add_argument("--template", required=True, help="chat template (.jinja) to embed")
    parser.add_argument("--reply-text", required=True, help="the greedy reply, before EOS")
    parser.add_argument("--base", default=os.path.join(here, "..", "..", "models", "tiny"),
                        help="model directory whose tokenizer.json and config.json to start from")
    parser.add_argument("--layers", type=int, default=2, help="num_hidden_layers (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the inert q/k/v/gate/up")
    args = parser.parse_args(argv)

    try:
        with open(os.path.join(args.base, "tokenizer.json"), encoding="utf-8") as f:
            tokenizer = json.load(f)
        with open(os.path.join(args.base, "config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
        with open(args.template, encoding="utf-8", newline="") as f:
            template_text = f.read()
        if args.layers < 1:
            raise ScriptError("--layers must be at least 1")

        max_id = add_tokens(tokenizer, REASONING_AND_TOOL_TOKENS)
        renderings = prompt_endings(template_text, "<|im_start|>", EOS_TEXT)
        chain = build_chain(tokenizer, args.reply_text, renderings)

        # Direction 0 plus one per chain token (EOS needs none); 64-aligned for the kernels.
        cfg.update({
            "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
            "hidden_size": max(cfg["hidden_size"], round_up(len(chain), 64)),
            "num_hidden_layers": args.layers,
            "vocab_size": round_up(max_id + 1, 64),
            "tie_word_embeddings": False, "torch_dtype": "float32",
            "eos_token_id": chain[-1],
        })
        tensors = make_tensors(cfg, chain, args.seed)

        os.makedirs(args.out, exist_ok=True)
        write_safetensors(os.path.join(args.out, "model.safetensors"), tensors)
        write_json(os.path.join(args.out, "config.json"), cfg)
        write_json(os.path.join(args.out, "tokenizer.json"), tokenizer)
        write_json(os.path.join(args.out, "tokenizer_config.json"), {
            "add_bos_token": False,
            "added_tokens_decoder": {
                str(t["id"]): {k: t[k] for k in
                               ("content", "lstrip", "normalized", "rstrip", "single_word",
                                "special")}
                for t in tokenizer["added_tokens"]},
            "bos_token": "<|im_start|>",
            "eos_token": EOS_TEXT,
            "pad_token": "<|endoftext|>",
            "unk_token": None,
            "chat_template": template_text,
            "clean_up_tokenization_spaces": False,
            "model_max_length": cfg["max_position_embeddings"],
            "tokenizer_class": "PreTrainedTokenizerFast",
        })
        write_json(os.path.join(args.out, "generation_config.json"),
                   {"eos_token_id": chain[-1], "do_sample": False})
        write_json(os.path.join(args.out, "scripted_chain.json"), {
            "reply_text": args.reply_text, "chain": chain})
    except (OSError, ValueError, KeyError, ScriptError) as e:
        print(f"make_scripted_model: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a template that fails to render, etc.: say so, exit non-zero
        print(f"make_scripted_model: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}: {len(chain) - 1} reply tokens {chain[:-1]} then EOS {chain[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
