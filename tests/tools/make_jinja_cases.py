"""Writes tests/chat/jinja_cases.json: one small template per construct the Jinja engine
supports, each with the output Python's Jinja2 gives under transformers' settings (or the fact
that it raises). tests/chat/jinja_cases_test.cpp renders each with our engine and compares.

    /usr/bin/python3 tests/tools/make_jinja_cases.py

Rerun after adding a case; the expected outputs come from Jinja2, never from our engine.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from render_template_jinja2 import make_environment  # noqa: E402

MSGS = [
    {"role": "system", "content": "sys"},
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "yo"},
]

CASES = [
    # name, template, context
    # --- output and literals
    ("text", "plain text", {}),
    ("string_literal_escapes", "{{ 'a\\nb\\t\\'c\\' \\u00e9 \\x41' }}", {}),
    ("double_quoted", '{{ "say \\"hi\\"" }}', {}),
    ("adjacent_strings", "{{ 'a' 'b' }}", {}),
    ("integers_floats", "{{ 1 }} {{ -2 }} {{ 1.5 }} {{ 1e3 }} {{ 1_000 }} {{ 2.50 }}", {}),
    ("none_true_false", "{{ none }} {{ None }} {{ true }} {{ True }} {{ false }}", {}),
    ("print_list", "{{ [1, 'a', none, true, 1.5, [2]] }}", {}),
    ("print_dict", "{{ {'k': 'v', 'n': 1, 'l': [none]} }}", {}),
    ("print_tuple", "{{ (1, 'a') }} {{ (1,) }} {{ () }}", {}),
    ("print_string_repr_quotes", "{{ [\"it's\", 'say \"x\"', 'both \\' \"', 'nl\\n'] }}", {}),
    ("print_context_values", "{{ x }} {{ y }} {{ z }} {{ w }}", {"x": 1.0, "y": 10000000000000000.0, "z": 1e-5, "w": 0.1}),
    ("print_unicode_repr", "{{ ['é', '中文', '😀'] }}", {}),
    ("undefined_prints_empty", "[{{ missing }}]", {}),
    # --- whitespace control
    ("trim_blocks", "{% if true %}\nyes\n{% endif %}\nafter", {}),
    ("lstrip_blocks", "  {% if true %}\n  x\n  {% endif %}\n  y", {}),
    ("dash_strips_both_sides", "a  \n  {%- if true -%}  \n  b  \n  {%- endif -%}  \n  c", {}),
    ("dash_in_variable", "a  {{- 'b' -}}  c", {}),
    ("variable_no_trim_blocks", "{{ 'a' }}\nb", {}),
    ("plus_disables_lstrip", "  {%+ if true %}x{% endif %}", {}),
    ("plus_disables_trim", "{% if true +%}\nx{% endif %}", {}),
    ("comment_removed", "a{# comment #}b", {}),
    ("comment_trim", "a\n{# c #}\nb", {}),
    ("comment_dash", "a  {#- c -#}  b", {}),
    ("comment_lstrip", "a\n   {# c #}\nb", {}),
    ("trailing_newline_dropped", "x\n", {}),
    ("only_one_trailing_newline_dropped", "x\n\n", {}),
    ("crlf_normalised", "a\r\nb\rc", {}),
    ("raw_block", "{% raw %}{{ not parsed }}{% endraw %}", {}),
    ("lstrip_after_variable_same_line", "{{ 'a' }}   {% if true %}b{% endif %}", {}),
    ("lstrip_tab_indent", "x\n\t\t{% if true %}y{% endif %}", {}),
    ("dash_after_newline_block", "{%- if true %}\n\n  a{% endif %}", {}),
    # --- if / elif / else
    ("if_elif_else", "{% for x in [1, 2, 3] %}{% if x == 1 %}one{% elif x == 2 %}two{% else %}many{% endif %};{% endfor %}", {}),
    ("if_undefined_false", "{% if missing %}yes{% else %}no{% endif %}", {}),
    ("if_empty_collections", "{% if [] or {} or '' or 0 or none %}t{% else %}f{% endif %}", {}),
    ("inline_if", "{{ 'a' if true else 'b' }}{{ 'c' if false else 'd' }}[{{ 'e' if false }}]", {}),
    # --- for loops
    ("for_loop_vars", "{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }} {% endfor %}", {}),
    ("for_else", "{% for x in [] %}x{% else %}empty{% endfor %}", {}),
    ("for_dict_keys", "{% for k in d %}{{ k }}{% endfor %}", {"d": {"b": 1, "a": 2}}),
    ("for_dict_items", "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", {"d": {"b": 1, "a": 2}}),
    ("for_items_filter", "{% for k, v in d|items %}{{ k }}={{ v }};{% endfor %}", {"d": {"x": [1], "y": None}}),
    ("for_with_condition", "{% for x in range(10) if x is odd %}{{ x }}{{ loop.index }}{{ loop.last }} {% endfor %}", {}),
    ("for_over_filter", "{% for m in messages|selectattr('role', 'equalto', 'user') %}{{ m.content }}{% endfor %}", {"messages": MSGS}),
    ("for_previtem_nextitem", "{% for x in [1, 2, 3] %}{{ loop.previtem }}<{{ x }}>{{ loop.nextitem }}|{% endfor %}", {}),
    ("for_cycle", "{% for x in range(5) %}{{ loop.cycle('a', 'b') }}{% endfor %}", {}),
    ("for_reverse_slice", "{% for m in messages[::-1] %}{{ m.role }}{{ loop.index0 }} {% endfor %}", {"messages": MSGS}),
    ("for_scope_does_not_leak", "{% set x = 0 %}{% for i in [1, 2] %}{% set x = x + i %}{{ x }}{% endfor %}{{ x }}", {}),
    ("for_nested_loop_vars", "{% for a in [1, 2] %}{% for b in [1, 2] %}{{ loop.index }}{% endfor %}{{ loop.index }};{% endfor %}", {}),
    ("for_tuple_unpack", "{% for a, b in [[1, 2], (3, 4)] %}{{ a }}{{ b }}{% endfor %}", {}),
    ("for_undefined_is_empty", "{% for x in missing %}x{% endfor %}ok", {}),
    ("for_none_raises", "{% for x in none %}x{% endfor %}", {}),
    ("loop_break", "{% for x in range(10) %}{% if x == 3 %}{% break %}{% endif %}{{ x }}{% endfor %}", {}),
    ("loop_continue", "{% for x in range(5) %}{% if x is even %}{% continue %}{% endif %}{{ x }}{% endfor %}", {}),
    # --- set and namespace
    ("set_simple", "{% set x = 'a' ~ 'b' %}{{ x }}", {}),
    ("set_tuple", "{% set a, b = 1, 2 %}{{ a }}{{ b }}", {}),
    ("set_block", "{% set x %}inner {{ 1 + 1 }}{% endset %}[{{ x }}]", {}),
    ("set_in_if_visible", "{% if true %}{% set x = 1 %}{% endif %}{{ x }}", {}),
    ("namespace", "{% set ns = namespace(count=0, found=false) %}{% for m in messages %}{% set ns.count = ns.count + 1 %}{% if m.role == 'user' %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.count }} {{ ns.found }}", {"messages": MSGS}),
    ("namespace_new_attribute", "{% set ns = namespace() %}{% set ns.x = 5 %}{{ ns.x }}", {}),
    ("set_attribute_on_dict_raises", "{% set d = {} %}{% set d.x = 1 %}", {}),
    # --- macros and call
    ("macro_defaults", "{% macro m(a, b=2) %}{{ a }}-{{ b }}{% endmacro %}{{ m(1) }} {{ m(1, 3) }} {{ m(1, b=4) }}", {}),
    ("macro_sees_globals", "{% macro m() %}{{ x }}{% endmacro %}{% set x = 5 %}{{ m() }}", {}),
    ("macro_missing_arg_undefined", "{% macro m(a) %}[{{ a }}]{% endmacro %}{{ m() }}", {}),
    ("macro_too_many_args", "{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", {}),
    ("macro_recursion", "{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1)|int }}{% endif %}{% endmacro %}{{ fact(5) }}", {}),
    ("macro_output_is_string", "{% macro m() %}abc{% endmacro %}{{ m()|length }} {{ m() ~ 'd' }}", {}),
    ("call_block", "{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}bold{% endcall %}", {}),
    ("call_block_args", "{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(item) each([1, 2]) %}[{{ item }}]{% endcall %}", {}),
    ("star_args", "{% macro m(a, b) %}{{ a }}{{ b }}{% endmacro %}{{ m(*[1, 2]) }}{{ m(**{'a': 3, 'b': 4}) }}", {}),
    ("filter_block", "{% filter upper %}abc{{ 'd' }}{% endfilter %}", {}),
    ("generation_block", "{% generation %}kept{% endgeneration %}", {}),
    # --- raise_exception and strftime_now
    ("raise_exception", "{{ raise_exception('bad roles') }}", {}),
    ("strftime_now_year_length", "{{ strftime_now('%Y')|length }}", {}),
    # --- operators
    ("arithmetic", "{{ 1 + 2 }} {{ 7 - 10 }} {{ 3 * 4 }} {{ 7 / 2 }} {{ 4 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 1.5 + 1 }}", {}),
    ("string_ops", "{{ 'a' + 'b' }} {{ 'ab' * 3 }} {{ 1 ~ 2 ~ none ~ missing }}", {}),
    ("list_ops", "{{ [1] + [2, 3] }} {{ [0] * 3 }}", {}),
    ("comparisons", "{{ 1 < 2 }} {{ 2 <= 2 }} {{ 'a' > 'b' }} {{ 1 == 1.0 }} {{ true == 1 }} {{ '1' == 1 }} {{ [1, 2] == [1, 2] }} {{ none == none }} {{ missing == missing }} {{ 1 != 2 }}", {}),
    ("logic_returns_operands", "{{ 'a' and 'b' }} {{ '' and 'b' }} {{ 'a' or 'b' }} {{ '' or 'b' }} {{ not '' }} {{ not 'a' }}", {}),
    ("in_operator", "{{ 'b' in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 'x' not in 'abc' }} {{ 'a' in missing }}", {}),
    ("precedence", "{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ not 1 == 2 }} {{ 1 + 2 ~ 3 }}", {}),
    ("chained_filters_and_ops", "{{ 'abc'|upper ~ 'd'|upper }} {{ [3, 1]|sort|first + 1 }}", {}),
    ("str_plus_int_raises", "{{ 'a' + 1 }}", {}),
    ("division_by_zero_raises", "{{ 1 / 0 }}", {}),
    ("undefined_plus_raises", "{{ missing + 1 }}", {}),
    # --- access
    ("attribute_and_item", "{{ m.role }} {{ m['content'] }} {{ messages[0].role }} {{ messages[-1]['content'] }} {{ messages.1.role }}", {"m": MSGS[0], "messages": MSGS}),
    ("missing_key_is_undefined", "[{{ m.nope }}] {{ m.nope is defined }} {{ m['nope'] is defined }}", {"m": MSGS[0]}),
    ("attribute_of_undefined_raises", "{{ missing.attr }}", {}),
    ("attribute_of_missing_key_raises", "{{ m.nope.deeper }}", {"m": MSGS[0]}),
    ("dict_method_wins_over_key", "{{ d.items()|list }} {{ d['items'] }}", {"d": {"items": "key"}}),
    ("dict_get", "{{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 'dflt') }}", {"d": {"a": 1}}),
    ("dict_keys_values", "{{ d.keys()|list }} {{ d.values()|list }}", {"d": {"a": 1, "b": 2}}),
    ("index_out_of_range_undefined", "[{{ xs[5] }}] {{ xs[5] is defined }}", {"xs": [1]}),
    ("slicing", "{{ xs[1:] }} {{ xs[:2] }} {{ xs[::2] }} {{ xs[::-1] }} {{ xs[-2:] }} {{ xs[1:-1] }} {{ 'héllo'[1:3] }} {{ 'abc'[::-1] }}", {"xs": [1, 2, 3, 4]}),
    ("string_index_unicode", "{{ 'héllo'[1] }} {{ '中文字'[-1] }} {{ '😀x'|length }}", {}),
    ("none_attribute_undefined", "[{{ n.x }}] {{ n.x is defined }}", {"n": None}),
    # --- tests
    ("tests_types", "{{ 1 is number }} {{ 1.5 is number }} {{ 'a' is string }} {{ 1 is string }} {{ {} is mapping }} {{ [] is mapping }} {{ [] is iterable }} {{ 'a' is iterable }} {{ 1 is iterable }} {{ none is none }} {{ 0 is none }} {{ true is boolean }} {{ 1 is integer }} {{ 1.0 is float }} {{ missing is iterable }}", {}),
    ("tests_defined", "{{ x is defined }} {{ missing is defined }} {{ missing is undefined }} {{ x is not defined }}", {"x": None}),
    ("tests_values", "{{ true is true }} {{ 1 is true }} {{ false is false }} {{ 4 is divisibleby 2 }} {{ 4 is divisibleby(3) }} {{ 3 is odd }} {{ 3 is even }}", {}),
    ("tests_comparison", "{{ 1 is eq 1 }} {{ 1 is equalto 2 }} {{ 1 is ne 2 }} {{ 1 is lt 2 }} {{ 2 is gt 1 }} {{ 'a' is in 'abc' }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ none is sameas none }}", {}),
    ("tests_callable", "{{ raise_exception is callable }} {{ 'x' is callable }} {{ 'upper' is filter }} {{ 'defined' is test }}", {}),
    # --- string methods
    ("startswith_endswith", "{{ s.startswith('he') }} {{ s.endswith('lo') }} {{ s.startswith(('x', 'h')) }} {{ s.endswith('x') }}", {"s": "hello"}),
    ("strip_family", "[{{ s.strip() }}] [{{ s.lstrip() }}] [{{ s.rstrip() }}] [{{ 'xxaxx'.strip('x') }}] [{{ '\\n\\nab\\n'.lstrip('\\n') }}] [{{ 'ab\\n\\n'.rstrip('\\n') }}]", {"s": "  \t hi \n "}),
    ("split", "{{ 'a,b,,c'.split(',') }} {{ '  a  b '.split() }} {{ 'a b c'.split(' ', 1) }} {{ 'a<think>b</think>c'.split('</think>')[-1] }} {{ 'a-b-c'.rsplit('-', 1) }}", {}),
    ("replace_upper_lower_title", "{{ 'aXa'.replace('a', 'b') }} {{ 'Hi'.upper() }} {{ 'Hi'.lower() }} {{ 'hello big world'.title() }} {{ 'hELLO'.capitalize() }}", {}),
    ("string_find_count_join", "{{ 'abcb'.find('b') }} {{ 'abc'.find('z') }} {{ 'abcb'.count('b') }} {{ '-'.join(['a', 'b']) }}", {}),
    ("think_split_like_qwen3", "{% set c = '<think>\\nr\\n</think>\\n\\nanswer' %}{{ c.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') }}|{{ c.split('</think>')[-1].lstrip('\\n') }}", {}),
    ("list_append_unsafe", "{% set xs = [] %}{{ xs.append(1) }}", {}),
    # --- filters
    ("filter_tojson", "{{ d|tojson }}", {"d": {"b": [1, 2.5, None, True], "a": "é\"\\\n", "e": {}, "f": []}}),
    ("filter_tojson_indent", "{{ d|tojson(indent=2) }}", {"d": {"b": [1, {"c": None}], "a": "x", "e": [], "f": {}}}),
    ("filter_tojson_indent_positional", "{{ [1, [2]]|tojson(false, 4) }}", {}),
    ("filter_tojson_separators_sort_keys", "{{ d|tojson(separators=(',', ':'), sort_keys=true) }}", {"d": {"b": 1, "a": [1, 2]}}),
    ("filter_tojson_string_number", "{{ 'x'|tojson }} {{ 1|tojson }} {{ 1.0|tojson }} {{ none|tojson }} {{ '中'|tojson }}", {}),
    ("filter_tojson_undefined_raises", "{{ missing|tojson }}", {}),
    ("filter_trim_length", "[{{ '  x  '|trim }}] {{ 'héllo'|length }} {{ [1, 2]|length }} {{ {'a': 1}|count }} {{ missing|length }} [{{ 'xxaxx'|trim('x') }}]", {}),
    ("filter_join_map", "{{ [1, 2, 3]|join(', ') }} {{ messages|map(attribute='role')|join('/') }} {{ messages|join(',', attribute='content') }} {{ ['a', 'b']|map('upper')|list }}", {"messages": MSGS}),
    ("filter_selectattr_rejectattr", "{{ messages|selectattr('role', 'equalto', 'user')|list|length }} {{ messages|rejectattr('role', 'eq', 'system')|map(attribute='role')|list }} {{ xs|selectattr('a')|list }}", {"messages": MSGS, "xs": [{"a": 1}, {"a": 0}, {"b": 1}]}),
    ("filter_select_reject", "{{ [1, 2, 3, 4]|select('odd')|list }} {{ [1, 2, 3, 4]|reject('odd')|list }} {{ [0, 1, '', 'a']|select|list }}", {}),
    ("filter_first_last", "{{ [1, 2, 3]|first }} {{ [1, 2, 3]|last }} {{ 'abc'|first }} [{{ []|first }}]", {}),
    ("filter_default", "{{ missing|default('d') }} {{ ''|default('d') }} {{ ''|default('d', true) }} {{ none|default('d') }} {{ x|d('y') }}", {"x": "set"}),
    ("filter_items_list_string", "{{ {'a': 1}|items|list }} {{ 'ab'|list }} {{ 1|string ~ 'x' }} {{ [1]|string }} {{ missing|items|list }}", {}),
    ("filter_int_float", "{{ '12'|int }} {{ '3.7'|int }} {{ 'x'|int }} {{ 'x'|int(5) }} {{ 3.9|int }} {{ '2.5'|float }} {{ 2|float }} {{ true|int }}", {}),
    ("filter_safe_capitalize_case", "{{ '<b>'|safe }} {{ 'hELLO wORLD'|capitalize }} {{ 'ab'|upper }} {{ 'AB'|lower }} {{ 'ab cd'|title }}", {}),
    ("filter_replace_reverse_sort_unique", "{{ 'aaa'|replace('a', 'b', 2) }} {{ [1, 2]|reverse|list }} {{ 'abc'|reverse }} {{ [3, 1, 2]|sort }} {{ ['b', 'A', 'a']|sort }} {{ [1, 2, 1]|unique|list }} {{ [3, 1]|sort(reverse=true) }}", {}),
    ("filter_sort_attribute", "{{ xs|sort(attribute='n')|map(attribute='n')|list }}", {"xs": [{"n": 2}, {"n": 1}]}),
    ("filter_min_max_sum_abs_round", "{{ [3, 1, 2]|min }} {{ [3, 1, 2]|max }} {{ [1, 2, 3]|sum }} {{ -3|abs }} {{ 2.567|round(2) }} {{ 2.5|round }}", {}),
    ("filter_indent", "{{ 'a\\nb\\n\\nc'|indent(2) }}|{{ 'a\\nb'|indent(2, true) }}|{{ 'a\\n\\nb'|indent(2, blank=true) }}", {}),
    ("filter_dictsort_wordcount_escape", "{{ {'b': 1, 'a': 2}|dictsort }} {{ 'one two  three'|wordcount }} {{ '<a href=\"x\">&\\''|e }}", {}),
    ("filter_attr", "{{ m|attr('role') }}", {"m": MSGS[0]}),
    ("printf_format", "{{ '%s: %d, %.2f, %r, %5s|%-4d|, 100%%' % ('a', 3, 2.345, 'q', 'x', 7) }} {{ 'one %s' % 'arg' }}", {}),
    ("format_filter", "{{ '%s-%s'|format(1, 'b') }}", {}),
    ("str_format_method", "{{ '{} and {}'.format('a', 1) }} {{ '{1}{0}'.format('x', 'y') }} {{ '{name}!'.format(name='n') }} {{ '{{literal}}'.format() }}", {}),
    ("printf_too_few_raises", "{{ '%s %s' % ('a',) }}", {}),
    # --- globals
    ("range", "{{ range(3)|list }} {{ range(1, 7, 2)|list }} {{ range(3, 0, -1)|list }}", {}),
    ("dict_global", "{{ dict(a=1, b='x') }}", {}),
    ("bos_eos_generation_prompt", "{{ bos_token }}x{{ eos_token }}{% if add_generation_prompt %}gen{% endif %}", {"bos_token": "<s>", "eos_token": "</s>", "add_generation_prompt": True}),
    ("chat_template_kwargs", "{% if enable_thinking is defined and enable_thinking is false %}no-think{% else %}think{% endif %}", {"enable_thinking": False}),
    # --- errors
    ("calling_undefined_raises", "{{ missing() }}", {}),
    ("calling_string_raises", "{{ 'x'() }}", {}),
    ("subscript_undefined_raises", "{{ missing['x'] }}", {}),
    ("compare_incomparable_raises", "{{ 1 < 'a' }}", {}),
    ("unpack_mismatch_raises", "{% for a, b in [[1, 2, 3]] %}{% endfor %}", {}),
]


def main():
    env = make_environment()
    out = []
    for name, template, context in CASES:
        case = {"name": name, "template": template, "context": context}
        try:
            case["expected"] = env.from_string(template).render(**context)
        except Exception as e:  # noqa: BLE001
            case["raises"] = f"{type(e).__name__}: {e}"
        out.append(case)
    path = os.path.join(os.path.dirname(__file__), "..", "chat", "jinja_cases.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(out)} cases ({sum('raises' in c for c in out)} raise) -> {os.path.normpath(path)}")


if __name__ == "__main__":
    main()
