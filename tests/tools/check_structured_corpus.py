#!/usr/bin/env python3
"""The Python side of tests/e2e/structured_schema_corpus.sh (issue #18), run with Debian's
/usr/bin/python3 (python3-jsonschema).

  validate SCHEMAS OUTPUTS.jsonl LABEL MIN_FINISHED
      every finished output of `structured_corpus generate` must parse as JSON and validate
      against its schema (formats checked); at least MIN_FINISHED (a fraction) of the outputs
      must have finished (schemas none of whose outputs finished are listed).
  negatives SCHEMAS OUTPUTS.jsonl QUERIES.jsonl
      mutates finished outputs (characters dropped, inserted or cut; values swapped for other
      types, members removed or added, arrays lengthened) and writes each mutation with the
      validator's verdict as a query for `structured_corpus accepts`.
  regex CASES.json QUERIES.jsonl
      each case's strings, plus random strings over the regex's own characters, with
      re.fullmatch's verdict.
  compare QUERIES.jsonl ANSWERS.jsonl
      a text the reference rejects must be rejected by the matcher (always); for regexes the
      two must agree both ways; for schemas a valid text the matcher rejects is only counted
      (the grammar is deliberately narrower: fixed whitespace, closed objects).
"""
import datetime
import json
import os
import random
import re
import sys

import jsonschema

# RFC 3339 full-time / date-time; python3-jsonschema checks these only with rfc3339-validator,
# which Debian does not package.
_TIME = re.compile(r"([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(Z|z|[+-]([01]\d|2[0-3]):[0-5]\d)")


def _is_time(value):
    return not isinstance(value, str) or bool(_TIME.fullmatch(value))


def _is_date_time(value):
    if not isinstance(value, str):
        return True
    parts = re.split("[Tt ]", value, maxsplit=1)
    if len(parts) != 2 or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", parts[0]):
        return False
    try:
        datetime.date.fromisoformat(parts[0])
    except ValueError:
        return False
    return _is_time(parts[1])


def format_checker():
    checker = jsonschema.FormatChecker()
    checker.checks("time")(_is_time)
    checker.checks("date-time")(_is_date_time)
    return checker


def load_schemas(folder):
    schemas = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                schemas[name] = json.load(f)
    return schemas


def openapi_nullable(schema):
    """OpenAPI's `nullable: true` (which json_schema_to_gbnf honours) as JSON Schema: null added
    to `type`. python3-jsonschema does not know the keyword and would reject the nulls."""
    if isinstance(schema, list):
        return [openapi_nullable(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: openapi_nullable(v) for k, v in schema.items()}
    if out.pop("nullable", False) is True and "type" in out:
        types = out["type"] if isinstance(out["type"], list) else [out["type"]]
        out["type"] = types + (["null"] if "null" not in types else [])
    return out


def validator(schema):
    schema = openapi_nullable(schema)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=format_checker())


def verdict(v, text):
    """(valid, why) for a text under validator v."""
    try:
        value = json.loads(text)
    except ValueError as e:
        return False, "not JSON: %s" % e
    errors = list(v.iter_errors(value))
    if errors:
        return False, errors[0].message
    return True, ""


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def validate(folder, outputs, label, min_finished):
    schemas = load_schemas(folder)
    validators = {name: validator(s) for name, s in schemas.items()}
    rows = read_jsonl(outputs)
    finished = [r for r in rows if r["finished"]]
    bad = 0
    for r in finished:
        ok, why = verdict(validators[r["schema"]], r["text"])
        if not ok:
            bad += 1
            print("INVALID %s sample %d: %s\n  output: %s" % (r["schema"], r["sample"], why,
                                                            r["text"]))
    per_schema = {name: 0 for name in schemas}
    for r in finished:
        per_schema[r["schema"]] += 1
    never = [n for n, c in per_schema.items() if c == 0]
    frac = len(finished) / max(1, len(rows))
    print("%s: %d schemas, %d outputs, %d finished (%.0f%%), %d invalid; schemas with no "
          "finished output: %s" % (label, len(schemas), len(rows), len(finished), 100 * frac, bad,
                                   ", ".join(never) or "none"))
    if len(rows) < len(schemas):
        print("FAIL: fewer outputs than schemas")
        return 1
    if never:
        print("note: every attempt at those schemas ran out of max_tokens (not a failure)")
    if bad or frac < min_finished:
        if frac < min_finished:
            print("FAIL: under %.0f%% of the outputs finished" % (100 * min_finished))
        return 1
    return 0


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, path + (i,))


def _get(value, path):
    for p in path:
        value = value[p]
    return value


def _set(value, path, new):
    if not path:
        return new
    _get(value, path[:-1])[path[-1]] = new
    return value


def mutations(text, rng):
    """Texts near `text` (a valid output), most of them invalid."""
    out = []
    noise = '{}[]",:0a-\\ '
    for _ in range(4):
        if text:
            i = rng.randrange(len(text))
            out.append(text[:i] + text[i + 1:])
            out.append(text[:i] + rng.choice(noise) + text[i:])
            out.append(text[:i])
    value = json.loads(text)
    paths = list(_paths(value))
    swaps = [None, True, 0, -1, 1.5, "x", "", [], {}, [1], {"k": 1}]
    for _ in range(8):
        p = rng.choice(paths)
        v = json.loads(text)
        cur = _get(v, p)
        kind = rng.randrange(6)
        if kind == 0:
            new = rng.choice([s for s in swaps if s != cur])
        elif kind == 1 and isinstance(cur, dict) and cur:
            new = dict(cur)
            del new[rng.choice(list(new))]
        elif kind == 2 and isinstance(cur, dict):
            new = dict(cur)
            new["zz_extra"] = 1
        elif kind == 3 and isinstance(cur, list):
            new = cur + (cur[-1:] if cur else [0])
        elif kind == 4 and isinstance(cur, str):
            new = cur + "xyz" * rng.randrange(1, 8)
        elif kind == 5 and isinstance(cur, (int, float)) and not isinstance(cur, bool):
            new = rng.choice([cur + 1, cur - 1, cur * 10 + 7, -cur - 1, 10**12])
        else:
            continue
        out.append(json.dumps(_set(v, p, new), ensure_ascii=False))
    return [m for m in dict.fromkeys(out) if m != text]


def negatives(folder, outputs, queries):
    schemas = load_schemas(folder)
    validators = {name: validator(s) for name, s in schemas.items()}
    rng = random.Random(18)
    seen = set()
    n_valid = n_invalid = 0
    with open(queries, "w", encoding="utf-8") as f:
        for r in read_jsonl(outputs):
            if not r["finished"] or r["schema"] in seen:
                continue
            seen.add(r["schema"])
            for m in mutations(r["text"], rng):
                ok, _ = verdict(validators[r["schema"]], m)
                n_valid += ok
                n_invalid += not ok
                q = {"schema": r["schema"], "text": m, "expected": ok, "must_agree": not ok}
                f.write(json.dumps(q, ensure_ascii=False) + "\n")
    print("negatives: %d mutations of %d schemas' outputs, %d invalid (the matcher must reject "
          "them), %d still valid" % (n_valid + n_invalid, len(seen), n_invalid, n_valid))
    return 0


def regex_queries(cases_path, queries):
    with open(cases_path, encoding="utf-8") as f:
        cases = json.load(f)
    rng = random.Random(18)
    n = 0
    with open(queries, "w", encoding="utf-8") as f:
        for case in cases:
            rx = case["regex"]
            texts = list(case["match"]) + list(case["no_match"])
            for t in case["match"]:
                if not re.fullmatch(rx, t):
                    print("FAIL: case says %r matches %r but re.fullmatch disagrees" % (t, rx))
                    return 1
            for t in case["no_match"]:
                if re.fullmatch(rx, t):
                    print("FAIL: case says %r does not match %r but re.fullmatch matches" % (t, rx))
                    return 1
            # Random strings over the characters the regex and its examples use.
            alphabet = sorted(set("".join(texts) + re.sub(r"[\\\[\](){}|*+?^$]", "", rx)) or "a")
            for _ in range(40):
                texts.append("".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 9))))
            # Edits of the matching examples.
            for t in case["match"]:
                for _ in range(6):
                    i = rng.randrange(len(t) + 1)
                    texts.append(t[:i] + rng.choice(alphabet) + t[i:])
                    if t:
                        texts.append(t[:i] + t[i + 1:])
            for t in dict.fromkeys(texts):
                ok = re.fullmatch(rx, t) is not None
                f.write(json.dumps({"regex": rx, "text": t, "expected": ok, "must_agree": True},
                                   ensure_ascii=False) + "\n")
                n += 1
    print("regex: %d cases, %d strings" % (len(cases), n))
    return 0


def compare(queries, answers):
    q = read_jsonl(queries)
    a = read_jsonl(answers)
    if len(q) != len(a):
        print("FAIL: %d queries but %d answers" % (len(q), len(a)))
        return 1
    wrong = 0
    narrower = 0
    for query, answer in zip(q, a):
        if "error" in answer:
            print("ERROR %s: %s" % (query.get("schema", query.get("regex")), answer["error"]))
            wrong += 1
            continue
        if answer["accepted"] == query["expected"]:
            continue
        if query["must_agree"]:
            wrong += 1
            print("DISAGREE %s: text %s: reference %s, matcher %s" % (
                query.get("schema", query.get("regex")), json.dumps(query["text"]),
                query["expected"], answer["accepted"]))
        else:
            narrower += 1
    agree_needed = sum(1 for x in q if x["must_agree"])
    print("compare %s: %d texts, %d that must agree, %d disagreements; %d valid texts outside the "
          "grammar's fixed form" % (os.path.basename(queries), len(q), agree_needed, wrong,
                                    narrower))
    return 1 if wrong else 0


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "validate" and len(argv) == 6:
        return validate(argv[2], argv[3], argv[4], float(argv[5]))
    if cmd == "negatives" and len(argv) == 5:
        return negatives(argv[2], argv[3], argv[4])
    if cmd == "regex" and len(argv) == 4:
        return regex_queries(argv[2], argv[3])
    if cmd == "compare" and len(argv) == 4:
        return compare(argv[2], argv[3])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
