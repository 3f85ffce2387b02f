"""Renders a chat template the way transformers does (the reference for pagedserve's engine).

    /usr/bin/python3 render_template_jinja2.py TEMPLATE.jinja CONTEXT.json

Prints the rendering to stdout (exit 0) or "error: <message>" to stderr (exit 1). The
environment, tojson, raise_exception and strftime_now reproduce transformers'
utils/chat_template_utils.py (_compile_jinja_template); the context is passed as given.
"""

import json
import sys
from datetime import datetime

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def strftime_now(format):
    return datetime.now().strftime(format)


class Generation(jinja2.ext.Extension):
    """transformers' AssistantTracker: {% generation %} renders its body unchanged."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def main():
    if len(sys.argv) != 3:
        print("usage: render_template_jinja2.py TEMPLATE.jinja CONTEXT.json", file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        source = f.read()
    with open(sys.argv[2], encoding="utf-8") as f:
        context = json.load(f)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[Generation, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    try:
        out = env.from_string(source).render(**context)
    except Exception as e:  # noqa: BLE001 - any failure is the template's error
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
