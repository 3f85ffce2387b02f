#!/usr/bin/python3
"""Validate a response body against one schema of OpenAI's OpenAPI document.

Usage: validate_openai_schema.py [--schemas SUBSET_JSON] SCHEMA_NAME FILE [--sse]

FILE holds one JSON document (a whole response body), or with --sse a server-sent-event stream:
every event's data (its "data:" lines joined) is one JSON document, except "[DONE]", which is
skipped; an event that names itself ("event: NAME") must carry "type": NAME in its JSON (the
Responses and Anthropic streams do so). Each document is validated against
#/components/schemas/SCHEMA_NAME of tests/api_schemas/openai_openapi_subset.json (made by
tests/tools/extract_openai_schemas.py) with Draft 2020-12, "$ref"s resolving inside that file,
and formats it knows (uri, date, ...) checked.

Prints every failure as "WHERE JSON_PATH: MESSAGE" (for an anyOf/oneOf miss, also the failure
inside the branch that came closest) and exits 1 on any failure, 0 when all pass, 2 on a usage
error (bad arguments, an unknown schema name, an unreadable file). Needs python3-jsonschema
(Debian's /usr/bin/python3 has 4.10); the validator is built once per run, so long streams
are quick.
"""
import argparse
import json
import os
import sys

import jsonschema

DEFAULT_SUBSET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "api_schemas",
                              "openai_openapi_subset.json")


def usage_error(parser, message):
    parser.print_usage(sys.stderr)
    print(f"{parser.prog}: error: {message}", file=sys.stderr)
    sys.exit(2)


def make_validator(subset, name):
    # The subset document itself is the root resource, so "#/components/schemas/X" resolves in
    # it; its other top-level keys (openapi, info, components) are not keywords and are ignored.
    schema = dict(subset)
    schema["$ref"] = "#/components/schemas/" + name
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def short(message, limit=300):
    return message if len(message) <= limit else message[:limit] + " ..."


def closest(errors):
    """The failure that explains an anyOf/oneOf miss best. The branches are ranked: one whose
    type did not even match (the null of a nullable field) or whose enum/const missed (the
    wrong member of a union told apart by a "type" field) is a poor match; of the rest, the
    one with the fewest failures; its deepest failure is the answer."""
    branches = {}
    for e in errors:
        branches.setdefault(e.relative_schema_path[0], []).append(e)

    def rank(errs):
        wrong_type = any(e.validator == "type" and not e.relative_path for e in errs)
        wrong_kind = any(e.validator in ("enum", "const") for e in errs)
        return (wrong_type, wrong_kind, len(errs))

    best = min(branches.values(), key=rank)
    inner = max(best, key=lambda e: len(e.absolute_path))
    return closest(inner.context) if inner.context else inner


def describe(error):
    """One failure: its JSON path and message, plus the nearest reason inside an anyOf/oneOf."""
    text = f"{error.json_path}: {short(error.message)}"
    if error.context:
        inner = closest(error.context)
        text += f"\n    because: {inner.json_path}: {short(inner.message)}"
    return text


def check(validator, document, where):
    failures = 0
    for error in sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.path))):
        failures += 1
        print(f"{where}{describe(error)}")
    return failures


def sse_events(text):
    """(line number, event name or None, data) for each event of a text/event-stream."""
    name, data, first = None, [], None
    for number, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if line == "":
            if data:
                yield first, name, "\n".join(data)
            name, data, first = None, [], None
            continue
        if line.startswith(":"):
            continue  # a comment (keep-alive)
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
            first = first or number
    if data:
        yield first, name, "\n".join(data)


def main():
    parser = argparse.ArgumentParser(
        prog="validate_openai_schema.py",
        description="Validate a JSON body or an SSE stream against an OpenAI OpenAPI schema.")
    parser.add_argument("schema_name", metavar="SCHEMA_NAME")
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--sse", action="store_true", help="FILE is a server-sent-event stream")
    parser.add_argument("--schemas", default=DEFAULT_SUBSET, metavar="SUBSET_JSON",
                        help="the schema subset (default: "
                        "tests/api_schemas/openai_openapi_subset.json)")
    args = parser.parse_args()  # exits 2 on bad arguments

    try:
        with open(args.schemas, encoding="utf-8") as f:
            subset = json.load(f)
    except (OSError, ValueError) as e:
        usage_error(parser, f"cannot read the schemas {args.schemas}: {e}")
    if args.schema_name not in subset.get("components", {}).get("schemas", {}):
        usage_error(parser, f"no schema {args.schema_name!r} in {args.schemas}")
    try:
        with open(args.file, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        usage_error(parser, f"cannot read {args.file}: {e}")

    validator = make_validator(subset, args.schema_name)
    failures = 0
    if not args.sse:
        try:
            document = json.loads(text)
        except ValueError as e:
            print(f"{args.file}: not JSON: {e}")
            return 1
        failures = check(validator, document, "")
        checked = 1
    else:
        checked = 0
        for line, name, data in sse_events(text):
            if data == "[DONE]":
                continue
            where = f"event {checked + 1} (line {line}): "
            checked += 1
            try:
                document = json.loads(data)
            except ValueError as e:
                print(f"{where}data is not JSON: {e}: {data[:200]}")
                failures += 1
                continue
            if name is not None:
                kind = document.get("type") if isinstance(document, dict) else None
                if kind != name:
                    print(f"{where}$.type: {kind!r} is not the event's name {name!r}")
                    failures += 1
            failures += check(validator, document, where)
        if checked == 0:
            print(f"{args.file}: no data events in the stream")
            return 1
    if failures:
        print(f"{args.file}: {failures} failure(s) against {args.schema_name} "
              f"({checked} document(s))")
        return 1
    print(f"{args.file}: {checked} document(s) valid against {args.schema_name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
