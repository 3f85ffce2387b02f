#!/usr/bin/env python3
"""Writes train.jsonl and heldout.jsonl for the tiny chat model (python3 standard library only).

    python3 data/tiny_chat/generate.py            # rewrites both files next to this script

The output is a pure function of this script, topics.py and SEED, so the committed files can be
checked by regenerating them (`git diff` shows nothing).

Line schema (one JSON object per line, UTF-8):
    {"question": "...", "answer": "..."}                  a single user turn and its reply
    {"messages": [{"role": "system"|"user"|"assistant", "content": "..."}, ...]}
                                                          a whole chat; the last message is the
                                                          assistant reply that is trained/scored
    {"messages": [...], "tools": [...]}                   a chat with tools offered (OpenAI form:
                                                          assistant tool_calls, role "tool")
Every line also has "kind": topic | arithmetic | counting | successor | tool_call | tool_answer |
tool_no_call | json_answer (for reports only).
"""

import json
import os
import random

from tool_dialogues import tool_examples
from topics import SYSTEM_PROMPTS, TOPICS

SEED = 20240607
HERE = os.path.dirname(os.path.abspath(__file__))


def qa(question, answer, kind):
    return {"question": question, "answer": answer, "kind": kind}


def with_system(system, question, answer, kind):
    return {
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": question},
            {"role": "assistant", "content": answer},
        ],
        "kind": kind,
    }


def casual_english(q):
    """'What is a KV cache?' -> 'what is a kv cache': how people type into a chat box."""
    return q.rstrip("?.!").lower()


def casual_chinese(q):
    """'什么是KV缓存？' -> '请问什么是KV缓存': a polite prefix, no final punctuation."""
    return "请问" + q.rstrip("？。！")


def topic_examples(rng):
    train, held = [], []
    for en_qs, en_a, zh_qs, zh_a in TOPICS:
        for qs, a, casual in ((en_qs, en_a, casual_english), (zh_qs, zh_a, casual_chinese)):
            seen = qs[:-1] if len(qs) >= 4 else qs
            if len(qs) >= 4:
                held.append(qa(qs[-1], a, "topic"))
            for q in seen:
                train.append(qa(q, a, "topic"))
            train.append(qa(casual(seen[0]), a, "topic"))
            # People often leave off the question mark ("你是谁", "What is a KV cache").
            bare = seen[0].rstrip("?.!？。！")
            if bare not in seen:
                train.append(qa(bare, a, "topic"))
            # The same question under a system prompt, so a client's system turn does not
            # change the answer.
            train.append(with_system(rng.choice(SYSTEM_PROMPTS), rng.choice(seen), a, "topic"))
    return train, held


def arithmetic_examples(rng, train_count, held_count):
    """Small sums, differences and products, in English or Chinese, each pair asked once."""
    pool = []
    for a in range(21):
        for b in range(21):
            pool.append(("+", a, b, a + b))
            if b <= a:
                pool.append(("-", a, b, a - b))
            if a < 10 and b < 10:
                pool.append(("*", a, b, a * b))
    rng.shuffle(pool)
    out = []
    for op, a, b, c in pool[: train_count + held_count]:
        if rng.random() < 0.5:
            word = {"+": "plus", "-": "minus", "*": "times"}[op]
            q = rng.choice([f"What is {a} {op} {b}?", f"What is {a} {word} {b}?",
                            f"Compute {a} {op} {b}."])
            out.append(qa(q, f"{a} {op} {b} = {c}.", "arithmetic"))
        else:
            word = {"+": "加", "-": "减", "*": "乘"}[op]
            q = rng.choice([f"{a}{word}{b}等于多少？", f"{a}{word}{b}等于几？", f"计算{a}{word}{b}。"])
            out.append(qa(q, f"{a}{word}{b}等于{c}。", "arithmetic"))
    return out[:train_count], out[train_count:]


def counting_examples(rng, train_count, held_count):
    pool = [(a, b) for a in range(1, 13) for b in range(a + 2, a + 10)]
    rng.shuffle(pool)
    out = []
    for a, b in pool[: train_count + held_count]:
        nums = [str(n) for n in range(a, b + 1)]
        if rng.random() < 0.5:
            out.append(qa(f"Count from {a} to {b}.", ", ".join(nums) + ".", "counting"))
        else:
            out.append(qa(f"从{a}数到{b}。", "、".join(nums) + "。", "counting"))
    return out[:train_count], out[train_count:]


def successor_examples(rng, train_count, held_count):
    pool = [(n, d) for n in range(100) for d in ("after", "before") if n > 0 or d == "after"]
    rng.shuffle(pool)
    out = []
    for n, d in pool[: train_count + held_count]:
        m = n + 1 if d == "after" else n - 1
        if rng.random() < 0.5:
            out.append(qa(f"What number comes {d} {n}?", f"{m} comes {d} {n}.", "successor"))
        else:
            zh = "后面" if d == "after" else "前面"
            out.append(qa(f"{n}{zh}是几？", f"{n}{zh}是{m}。", "successor"))
    return out[:train_count], out[train_count:]


def question_of(row):
    """The text the reply answers, and whether tools were offered (the same question with and
    without tools is two different prompts)."""
    if "question" in row:
        return row["question"], False
    return row["messages"][-2]["content"], "tools" in row


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def main():
    rng = random.Random(SEED)
    train, held = topic_examples(rng)
    for make, n_train, n_held in ((arithmetic_examples, 360, 40), (counting_examples, 80, 16),
                                  (successor_examples, 100, 16)):
        t, h = make(rng, n_train, n_held)
        train += t
        held += h
    # Its own generator, so adding tool dialogues left every other example as it was.
    t, h = tool_examples(random.Random(SEED + 1), TOPICS)
    train += t
    held += h
    # A held-out question must never also be a training question (that would not test anything).
    train_questions = {question_of(r) for r in train}
    held = [r for r in held if question_of(r) not in train_questions]
    rng.shuffle(train)
    write_jsonl(os.path.join(HERE, "train.jsonl"), train)
    write_jsonl(os.path.join(HERE, "heldout.jsonl"), held)
    print(f"train.jsonl: {len(train)} examples, heldout.jsonl: {len(held)} examples")


if __name__ == "__main__":
    main()
