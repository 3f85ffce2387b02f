#!/usr/bin/env python3
"""Writes grounded_chat.jsonl: an input-grounded workload for speculative decoding (issue #21).

Each request is a two-turn ChatML conversation for the shipped tiny model (models/tiny): the
user asks a training question, the assistant's answer is in the prompt, and the user asks the
same question again. The model answers it the same way, so the reply repeats a span of the
prompt, as an answer that quotes its input does (code edits, summaries, retrieval answers).
Requests are in `bench` dataset form: {"conversations": [human: the whole ChatML prompt,
gpt: the expected reply + <|im_end|>]}; the reply's token count is the output length.

Python 3 standard library only; same bytes every time:
    python3 data/spec_grounded/generate.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "..", "tiny_chat", "train.jsonl")


def chatml(turns):
    text = "".join(f"<|im_start|>{role}\n{content}<|im_end|>\n" for role, content in turns)
    return text + "<|im_start|>assistant\n"


def main():
    seen = set()
    rows = []
    with open(TRAIN, encoding="utf-8") as f:
        for line in f:
            ex = json.loads(line)
            # Topic answers are sentences (arithmetic ones are a few tokens); one per answer.
            if ex.get("kind") != "topic" or "question" not in ex or ex["answer"] in seen:
                continue
            seen.add(ex["answer"])
            q, a = ex["question"], ex["answer"]
            prompt = chatml([("user", q), ("assistant", a), ("user", q)])
            rows.append({"conversations": [{"from": "human", "value": prompt},
                                           {"from": "gpt", "value": a + "<|im_end|>"}]})
    out = os.path.join(HERE, "grounded_chat.jsonl")
    with open(out, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} requests to {out}")


if __name__ == "__main__":
    main()
