#!/usr/bin/env python3
"""Writes regex_cases.json: GBNF constructs paired with the same language as a Python regex,
and random strings with Python's re.fullmatch verdict, for regex_cases_test.cpp.

Run again after editing PAIRS:  python3 tests/structured/make_regex_cases.py
"""
import json
import os
import random
import re

# (GBNF, Python regex, alphabet the random strings are drawn from)
PAIRS = [
    (r'root ::= [a-c]+ "x"?', r'[a-c]+x?', 'abcxd', ['abcx', 'cc']),
    (r'root ::= ("ab" | "c"){2,3} [0-9]*', r'(?:ab|c){2,3}[0-9]*', 'abc01',
     ['abc01', 'cc', 'ababab1', 'cabc']),
    (r'root ::= [^a-z]{1,2} .', r'[^a-z]{1,2}.', 'aZ9\n\u00e9', ['ZZa', '9\n']),
    (r'root ::= "\u00e9"+ [\u4e00-\u9fff]?', r'\u00e9+[\u4e00-\u9fff]?', '\u00e9\u4e2de',
     ['\u00e9\u00e9\u4e2d', '\u00e9']),
    (r'root ::= ("a" | "ab") ("c" | "bc")', r'(?:a|ab)(?:c|bc)', 'abc', ['abc', 'ac', 'abbc']),
    (r'root ::= [0-9]{3} "-" [0-9]{2,}', r'[0-9]{3}-[0-9]{2,}', '01-', ['010-11', '111-0101']),
    (r'root ::= ([a-z] [0-9]?)* "!"', r'(?:[a-z][0-9]?)*!', 'a1!', ['a1a!', '!', 'aa1!']),
    (r'root ::= "\"" ([^"\\] | "\\" ["\\n])* "\""', r'"(?:[^"\\]|\\["\\n])*"', '"\\na',
     ['"a\\n"', '""', '"\\\\a"']),
    (r'root ::= (" " | "\t")* "x" ("\n" "y"){0,2}', r'(?:[ \t])*x(?:\ny){0,2}', ' \txy\n',
     [' \tx\ny', 'x', 'x\ny\ny']),
    (r'root ::= [\x41-\x43\x61] [^\x00-\x7F]', r'[A-Ca][^\x00-\x7F]', 'ABa\u00e9\u4e2dz',
     ['A\u00e9', 'a\u4e2d']),
    (r'root ::= "a"{0} "b"{1} "c"{0,1}', r'b(?:c)?', 'abc', ['b', 'bc']),
    # Balanced parentheses around x: the regex alone over-accepts, so the verdict below also
    # requires as many "(" as ")".
    ('root ::= t\nt ::= "(" t ")" | "x"', r'\(*x\)*', '()x', ['x', '((x))']),
]


def main():
    rng = random.Random(18)
    cases = []
    for gbnf, regex, alphabet, seeds in PAIRS:
        rx = re.compile(regex, re.DOTALL)
        strings = set()
        # Random strings, plus mutations of matching ones so both verdicts occur often.
        while len(strings) < 150:
            n = rng.randint(0, 8)
            strings.add(''.join(rng.choice(alphabet) for _ in range(n)))
        for seed in seeds:
            assert rx.fullmatch(seed), seed
            strings.add(seed)
        matching = [s for s in strings if rx.fullmatch(s)]
        # Near misses (and near hits) of each matching string: one character replaced,
        # dropped or added, several times.
        for s in matching[:40]:
            for _ in range(6):
                i = rng.randrange(len(s) + 1)
                c = rng.choice(alphabet)
                strings.add(s[:i] + c + s[i + 1:])
                strings.add(s[:i] + s[i + 1:])
                strings.add(s[:i] + c + s[i:])
                strings.add(s + s)
        rows = []
        for s in sorted(strings):
            verdict = rx.fullmatch(s) is not None
            if regex == r'\(*x\)*':  # the grammar is balanced parentheses around x
                verdict = verdict and s.count('(') == s.count(')')
            rows.append({'text': s, 'match': verdict})
        cases.append({'gbnf': gbnf, 'regex': regex, 'strings': rows})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'regex_cases.json')
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(cases, f, ensure_ascii=False, indent=1)
        f.write('\n')
    print(path, sum(len(c['strings']) for c in cases), 'strings')


if __name__ == '__main__':
    main()
