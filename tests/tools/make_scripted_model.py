"""Writes a "scripted" Qwen3 checkpoint: its greedy reply to any chat prompt is a chosen text.

    /usr/bin/python3 make_scripted_model.py --out DIR --template FILE.jinja \\
        --reply-text "<think>Let me think</think>The answer" [--base models/tiny] [--layers 2]
        [--tokenizer FILE] [--bos TEXT] [--eos TEXT] [--special-tokens-in-reply] [--hidden-size N]

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
it. Special added tokens are refused in the reply (skip_special_tokens would drop their text)
unless --special-tokens-in-reply says the server keeps them (gpt-oss's harmony markers).

With --special-tokens-in-reply, an added token may appear twice (a harmony reply of two
messages repeats <|channel|> and <|message|>), each first time before a "switch" token and each
second time after it: the switch is a plain chain token of the first message that no rendering
contains. Layer 0 then carries one bit of memory: its first head attends evenly to every
position (q = 0) and reads only the switch token's value, so after the switch its output is
sqrt(H)/(p+1) > 0 in one residual dimension, before it 0. lm_head maps a repeated token to its
first successor with a logit a hair larger, and to its second successor with that dimension's
help, which outweighs the hair only once the switch has been seen (and never outweighs a
successor's full logit). The template's generation prompt is taken to end with the one token
spelling the text after its last added token when the vocabulary has one (e.g. "assistant"
after <|start|>), else with any token that ends it, as without the flag. A reply that cannot be so segmented (a token needed twice with no other spelling left, e.g.
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
DEFAULT_EOS = "<|im_end|>"
DEFAULT_BOS = "<|im_start|>"
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


def build_chain(tokenizer, reply_text, renderings, eos_text=DEFAULT_EOS, special_ok=False):
    """The reply as token ids, then EOS; raises ScriptError when it cannot be scripted."""
    ids_bytes = token_bytes(tokenizer)
    added = {t["content"]: t["id"] for t in tokenizer["added_tokens"]}
    if eos_text not in added:
        raise ScriptError(f"the tokenizer has no added token {eos_text}")
    eos_id = added[eos_text]
    # Tokens a prompt could end with must stay outside the chain, or the reply would start
    # midway. A token whose text ends a rendering might be its last token: avoid them all.
    plain_vocab = {b: i for i, b in ids_bytes.items() if b and i not in added.values()}
    may_end_prompt = set()
    for r in renderings:
        tail = r
        for content in added:  # the text after the rendering's last added token
            at = tail.rfind(content)
            if at >= 0:
                tail = tail[at + len(content):]
        last = plain_vocab.get(tail.encode("utf-8")) if special_ok and tail != r else None
        if last is not None:
            may_end_prompt.add(last)
        else:
            may_end_prompt |= {i for i, b in ids_bytes.items()
                               if b and r.encode("utf-8").endswith(b)}
    special_ids = set() if special_ok else {t["id"] for t in tokenizer["added_tokens"]
                                            if t["special"]}
    used = set(may_end_prompt) | special_ids | {eos_id}
    seen_once = set()  # added tokens used once, which special_ok lets appear a second time

    chain = []
    for text, is_added in split_at_added(reply_text, list(added)):
        if is_added:
            token_id = added[text]
            if special_ok and token_id in seen_once and token_id != eos_id:
                seen_once.discard(token_id)  # its second and last time
                chain.append(token_id)
                continue
            if token_id in used:
                why = ("it is special" if token_id in special_ids or token_id == eos_id
                       else "it can end the template's generation prompt"
                       if token_id in may_end_prompt else "it appears twice in the reply")
                raise ScriptError(f"the reply cannot contain {text!r}: {why}")
            used.add(token_id)
            seen_once.add(token_id)
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


def find_switch(chain, ids_bytes, renderings):
    """The switch token (see the module doc) of a chain with repeated tokens; None without
    repeats. Raises ScriptError when the repeats cannot be told apart."""
    first, second = {}, {}
    for pos, t in enumerate(chain[:-1]):
        if t in first:
            second[t] = pos
        else:
            first[t] = pos
    if not second:
        return None
    lo = max(first[t] for t in second)   # every first time is before the switch,
    hi = min(second.values())             # every second time after it
    texts = [r.encode("utf-8") for r in renderings]
    for pos in range(lo + 1, hi):
        t = chain[pos]
        if t not in first or first[t] != pos or t in second:
            continue
        if len(ids_bytes[t]) >= 3 and not any(ids_bytes[t] in r for r in texts):
            return t
    raise ScriptError("the repeated tokens need a token between their first and second times "
                      "that no generation prompt contains (a word of the first message)")


def round_up(n, multiple):
    return (n + multiple - 1) // multiple * multiple


def make_tensors(cfg, chain, seed, switch=None):
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

    direction = {}
    for token_id in chain[:-1]:
        direction.setdefault(token_id, len(direction) + 1)
    memory = len(direction) + 1  # the residual dimension the switch bit lives in
    embed = zeros(vocab * hidden)
    for t in range(vocab):
        embed[t * hidden + direction.get(t, 0)] = 1.0
    lm_head = zeros(vocab * hidden)
    lm_head[chain[0] * hidden + 0] = LOGIT_SCALE
    # A repeated token's first successor wins by a hair (HAIR of the scale) until the memory
    # dimension, weighted MEMORY_WEIGHT, lifts the second one (module doc; the margins hold for
    # prompts and replies up to ~8000 positions at hidden size 64).
    hair, memory_weight = LOGIT_SCALE / 1000, LOGIT_SCALE
    seen = set()
    for current, successor in zip(chain, chain[1:]):
        if current not in seen:
            seen.add(current)
            lm_head[successor * hidden + direction[current]] = LOGIT_SCALE
            continue
        lm_head[successor * hidden + direction[current]] = LOGIT_SCALE - hair
        lm_head[successor * hidden + memory] = memory_weight

    tensors = {"model.embed_tokens.weight": ([vocab, hidden], embed)}
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        if layer == 0 and switch is not None:
            # q = 0: every position weighs the same; v slot 0 of KV head 0 reads the switch
            # token only; o_proj moves query head 0's slot 0 into the memory dimension.
            v = noise(kv_size * hidden)
            for col in range(hidden):
                v[col] = 1.0 if col == direction[switch] else 0.0
            o = zeros(hidden * q_size)
            o[memory * q_size + 0] = 1.0
            tensors[p + "input_layernorm.weight"] = ([hidden], ones(hidden))
            tensors[p + "self_attn.q_proj.weight"] = ([q_size, hidden], zeros(q_size * hidden))
            tensors[p + "self_attn.k_proj.weight"] = ([kv_size, hidden], noise(kv_size * hidden))
            tensors[p + "self_attn.v_proj.weight"] = ([kv_size, hidden], v)
            tensors[p + "self_attn.q_norm.weight"] = ([cfg["head_dim"]], ones(cfg["head_dim"]))
            tensors[p + "self_attn.k_norm.weight"] = ([cfg["head_dim"]], ones(cfg["head_dim"]))
            tensors[p + "self_attn.o_proj.weight"] = ([hidden, q_size], o)
            tensors[p + "post_attention_layernorm.weight"] = ([hidden], ones(hidden))
            tensors[p + "mlp.gate_proj.weight"] = ([inter, hidden], noise(inter * hidden))
            tensors[p + "mlp.up_proj.weight"] = ([inter, hidden], noise(inter * hidden))
            tensors[p + "mlp.down_proj.weight"] = ([hidden, inter], zeros(hidden * inter))
            continue
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
    parser.add_argument("--tokenizer", help="tokenizer.json to use (default: the base's)")
    parser.add_argument("--hidden-size", type=int,
                        help="hidden size (default: the base's; raised to fit the reply)")
    parser.add_argument("--bos", default=DEFAULT_BOS, help="bos_token the template renders with")
    parser.add_argument("--eos", default=DEFAULT_EOS, help="added token that ends the reply")
    parser.add_argument("--special-tokens-in-reply", action="store_true",
                        help="allow special added tokens in the reply (a server that keeps them)")
    args = parser.parse_args(argv)

    try:
        with open(args.tokenizer or os.path.join(args.base, "tokenizer.json"),
                  encoding="utf-8") as f:
            tokenizer = json.load(f)
        with open(os.path.join(args.base, "config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
        with open(args.template, encoding="utf-8", newline="") as f:
            template_text = f.read()
        if args.layers < 1:
            raise ScriptError("--layers must be at least 1")

        max_id = add_tokens(tokenizer, REASONING_AND_TOOL_TOKENS)
        renderings = prompt_endings(template_text, args.bos, args.eos)
        chain = build_chain(tokenizer, args.reply_text, renderings, args.eos,
                            args.special_tokens_in_reply)
        switch = find_switch(chain, token_bytes(tokenizer), renderings)

        # Direction 0, one per distinct chain token (EOS needs none) and the memory dimension;
        # 64-aligned for the kernels.
        cfg.update({
            "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
            "hidden_size": max(args.hidden_size or cfg["hidden_size"],
                               round_up(len(set(chain)) + 1, 64)),
            "num_hidden_layers": args.layers,
            "vocab_size": round_up(max_id + 1, 64),
            "tie_word_embeddings": False, "torch_dtype": "float32",
            "eos_token_id": chain[-1],
        })
        tensors = make_tensors(cfg, chain, args.seed, switch)

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
            "bos_token": args.bos,
            "eos_token": args.eos,
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
            "reply_text": args.reply_text, "chain": chain, "switch": switch})
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
