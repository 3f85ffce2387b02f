"""Renders a chat template the way transformers does (the reference for pagedserve's engine).

    /usr/bin/python3 render_template_jinja2.py TEMPLATE.jinja CONTEXT.json
    /usr/bin/python3 render_template_jinja2.py --batch PAIRS.tsv OUT

Prints the rendering to stdout (exit 0) or "error: <message>" to stderr (exit 1); with
--batch, renders each "name<TAB>template<TAB>context" line into OUT/name.out or OUT/name.err. The
environment, tojson, raise_exception and strftime_now reproduce transformers'
utils/chat_template_utils.py (_compile_jinja_template); the context is passed as given.
"""

import json
import os
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


def make_environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[Generation, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def continue_final_message(rendered, messages):
    """transformers' apply_chat_template(continue_final_message=True) cut, verbatim in effect."""
    final_message = messages[-1]["content"]
    if isinstance(final_message, (list, tuple)):
        for block in reversed(final_message):
            if "text" in block:
                final_message = block["text"]
                break
        else:
            raise ValueError("continue_final_message: no text to continue in the final message")
    if final_message.strip() not in rendered:
        raise ValueError("continue_final_message: the final message does not appear in the chat")
    loc = rendered.rindex(final_message.strip())
    if rendered[loc : loc + len(final_message.lstrip())] == final_message:
        return rendered[: loc + len(final_message.lstrip())]
    return rendered[: loc + len(final_message.strip())]


_compiled = {}


def render(env, template_path, context_path):
    if template_path not in _compiled:
        with open(template_path, encoding="utf-8", newline="") as f:
            _compiled[template_path] = env.from_string(f.read())
    with open(context_path, encoding="utf-8") as f:
        context = json.load(f)
    # Not a template variable: transformers applies it to the rendered text.
    cont = context.pop("continue_final_message", False)
    out = _compiled[template_path].render(**context)
    return continue_final_message(out, context["messages"]) if cont else out


def batch(pairs_path, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    env = make_environment()
    with open(pairs_path, encoding="utf-8") as f:
        pairs = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    for name, template_path, context_path in pairs:
        try:
            out = render(env, template_path, context_path)
        except Exception as e:  # noqa: BLE001 - any failure is the template's error
            with open(os.path.join(out_dir, name + ".err"), "w", encoding="utf-8") as f:
                f.write(f"error: {type(e).__name__}: {e}\n")
            continue
        with open(os.path.join(out_dir, name + ".out"), "w", encoding="utf-8", newline="") as f:
            f.write(out)
    return 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--batch":
        return batch(sys.argv[2], sys.argv[3])
    if len(sys.argv) != 3:
        print("usage: render_template_jinja2.py TEMPLATE.jinja CONTEXT.json | --batch PAIRS.tsv OUT",
              file=sys.stderr)
        return 2
    try:
        out = render(make_environment(), sys.argv[1], sys.argv[2])
    except Exception as e:  # noqa: BLE001 - any failure is the template's error
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
