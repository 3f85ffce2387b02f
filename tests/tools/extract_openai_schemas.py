#!/usr/bin/env python3
"""Cut the part of OpenAI's OpenAPI document that our response checks need.

Usage: extract_openai_schemas.py OPENAPI_JSON OUT_JSON

OPENAPI_JSON is openapi.json from https://github.com/openai/openai-openapi (3.4 MB). OUT_JSON
gets {"openapi": ..., "info": ..., "components": {"schemas": {...}}} holding the ROOTS below
and every schema they reach through "$ref" (transitively, and through discriminator
mappings), so "#/components/schemas/NAME" references resolve inside it.
tests/tools/validate_openai_schema.py validates against it and tests/api_schemas/README.md says
where the document came from.

Documentation-only keys are dropped where they are schema keywords (never where they name a
property): description, title, example(s), $comment and the x-* vendor extensions (x-oaiMeta,
x-stainless-*, ...). Every other keyword is kept as published (type, enum, const, required,
anyOf/oneOf/allOf, items, additionalProperties, min/max*, pattern, format, default, deprecated,
and OpenAPI's discriminator, which JSON Schema validators ignore). Two keywords that are not
Draft 2020-12 are rewritten into their 2020-12 meaning, since a 2020-12 validator would ignore
them: OpenAPI 3.0's "nullable": true (the document is 3.1 but still uses it, e.g. on a stream
chunk's finish_reason, usage and logprobs, which are null in every real OpenAI stream) becomes
{"anyOf": [{"type": "null"}, THE_SCHEMA_WITHOUT_IT]}, the way the rest of the document spells
a nullable field ("nullable": false is dropped); and the 2019-09 "$recursiveRef": "#"
(recursive filters, under "$recursiveAnchor": true) becomes a "$ref" to the schema that
carries the anchor, which is what it means there. The output is deterministic (sorted schema
names, fixed formatting), so regenerating from the same document gives the same bytes.
"""
import copy
import json
import sys

ROOTS = [
    "CreateChatCompletionResponse",
    "CreateChatCompletionStreamResponse",
    "CreateCompletionResponse",
    "ListModelsResponse",
    "Response",
    "ResponseStreamEvent",
    "ErrorResponse",
]
REF_PREFIX = "#/components/schemas/"

# Keywords whose value is a map from names (property names, definition names) to schemas.
NAME_MAPS = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
# Keywords whose value is one schema.
ONE_SCHEMA = {"items", "additionalProperties", "not", "if", "then", "else", "contains",
              "propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems",
              "contentSchema"}
# Keywords whose value is a list of schemas.
SCHEMA_LISTS = {"allOf", "anyOf", "oneOf", "prefixItems"}
DOC_KEYS = {"description", "title", "example", "examples", "$comment"}


def is_doc_key(key):
    return key in DOC_KEYS or key.startswith("x-")


def clean(schema, refs, anchor_name):
    """A copy of one schema without documentation keys; adds the names it $refs to refs."""
    if not isinstance(schema, dict):
        return schema  # true / false schemas
    out = {}
    for key, value in schema.items():
        if is_doc_key(key):
            continue
        if key in NAME_MAPS:
            out[key] = {name: clean(sub, refs, anchor_name) for name, sub in value.items()}
        elif key in ONE_SCHEMA:
            out[key] = clean(value, refs, anchor_name)
        elif key in SCHEMA_LISTS:
            out[key] = [clean(sub, refs, anchor_name) for sub in value]
        elif key == "$ref":
            if not value.startswith(REF_PREFIX):
                raise SystemExit(f"unexpected $ref {value!r}")
            refs.add(value[len(REF_PREFIX):])
            out[key] = value
        elif key == "$recursiveRef":
            if value != "#" or anchor_name is None:
                raise SystemExit(f"unexpected $recursiveRef {value!r}")
            out["$ref"] = REF_PREFIX + anchor_name
        elif key == "$recursiveAnchor":
            continue  # only meaningful with $recursiveRef, rewritten above
        elif key == "discriminator":
            # The mapping names schemas too: keep them in the subset so no reference dangles.
            for target in (value.get("mapping") or {}).values():
                if target.startswith(REF_PREFIX):
                    refs.add(target[len(REF_PREFIX):])
            out[key] = value
        else:
            out[key] = value  # enum, const, default values etc. are data: copied as they are
    if out.pop("nullable", False) is True:
        return {"anyOf": [{"type": "null"}, out]}
    return out


def derived(picked):
    """Schemas the document lacks, derived from ones it has; named Derived* so that nobody takes
    them for OpenAI's. DerivedCompletionStreamChunk: the document gives /v1/completions only a
    whole-body schema (CreateCompletionResponse), but a streamed completion's chunks carry
    "finish_reason": null until the last (as OpenAI's own streamed example under POST
    /completions shows) and, with stream_options.include_usage, "usage": null on every chunk but
    the usage chunk (as ChatCompletionStreamOptions documents). So the chunk schema is the
    body's with exactly those two fields also allowed to be null; everything else stays."""
    chunk = copy.deepcopy(picked["CreateCompletionResponse"])
    choice = chunk["properties"]["choices"]["items"]["properties"]
    choice["finish_reason"] = {"anyOf": [{"type": "null"}, choice["finish_reason"]]}
    chunk["properties"]["usage"] = {"anyOf": [{"type": "null"}, chunk["properties"]["usage"]]}
    return {"DerivedCompletionStreamChunk": chunk}


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    schemas = doc["components"]["schemas"]
    picked = {}
    todo = list(ROOTS)
    while todo:
        name = todo.pop()
        if name in picked:
            continue
        if name not in schemas:
            raise SystemExit(f"{name} is not in components/schemas")
        refs = set()
        schema = schemas[name]
        anchor = name if isinstance(schema, dict) and schema.get("$recursiveAnchor") else None
        picked[name] = clean(schema, refs, anchor)
        todo.extend(sorted(refs - picked.keys()))
    picked.update(derived(picked))
    out = {
        "openapi": doc["openapi"],
        "info": {"title": doc["info"]["title"], "version": doc["info"]["version"],
                 "license": doc["info"].get("license")},
        "x-subset-roots": ROOTS,
        "components": {"schemas": {name: picked[name] for name in sorted(picked)}},
    }
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1, sort_keys=False)
        f.write("\n")
    print(f"{len(picked)} schemas from {len(ROOTS)} roots -> {sys.argv[2]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
