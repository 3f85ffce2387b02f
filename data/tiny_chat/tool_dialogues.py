"""Tool-calling and JSON-answer dialogues for the tiny chat model (written for pagedserve).

Two functions are offered, in OpenAI's tools form: get_weather(city) and calculate(expression).
The kinds of example (the "kind" of each JSONL line):

    tool_call     the user asks for the weather or a sum; the reply is the call only
    tool_answer   after the tool's result, the reply says the result's values in words
    tool_no_call  tools are offered but the question needs none: the usual plain answer
    json_answer   the user asks for JSON; the reply is a short JSON object

Replies that call a tool are written as assistant messages with tool_calls; the model's chat
template (train/tiny_chat_template.cpp) renders them in the hermes form
<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>. Arguments are JSON text written as
Python's json.dumps writes it (", " and ": "), which is what the server hands back to clients.
Held-out examples use cities, numbers or wordings that no training example has.
"""

import json

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city name."}},
            "required": ["city"],
        },
    },
}

CALCULATE_TOOL = {
    "type": "function",
    "function": {
        "name": "calculate",
        "description": "Evaluate an arithmetic expression.",
        "parameters": {
            "type": "object",
            "properties": {"expression": {"type": "string", "description": "For example 3 * 4."}},
            "required": ["expression"],
        },
    },
}

TOOLS = [WEATHER_TOOL, CALCULATE_TOOL]

# English and Chinese city names; the argument is the city as the question writes it.
CITIES_EN = ["Paris", "London", "Tokyo", "Berlin", "Madrid", "Rome", "Sydney", "Toronto",
             "Cairo", "Seoul", "Moscow", "Dubai", "Singapore", "Vienna", "Oslo", "Lisbon",
             "Boston", "Chicago", "Mumbai", "Bangkok"]
CITIES_ZH = ["北京", "上海", "广州", "深圳", "杭州", "成都", "武汉", "西安", "南京", "重庆"]
# Seen only in held-out questions.
HELD_CITIES_EN = ["Dublin", "Prague", "Athens", "Denver"]
HELD_CITIES_ZH = ["天津", "苏州"]

WEATHER_QUESTIONS_EN = ["What's the weather in {c}?", "What is the weather like in {c}?",
                        "How is the weather in {c} today?", "Is it cold in {c} right now?"]
HELD_WEATHER_QUESTIONS_EN = ["Tell me the weather in {c}."]
WEATHER_QUESTIONS_ZH = ["{c}天气怎么样？", "{c}今天天气如何？", "{c}现在冷吗？"]
HELD_WEATHER_QUESTIONS_ZH = ["查一下{c}的天气。"]

CONDITIONS = ["sunny", "cloudy", "rainy", "snowy", "windy"]
CONDITIONS_ZH = {"sunny": "晴", "cloudy": "多云", "rainy": "下雨", "snowy": "下雪", "windy": "有风"}

CALC_QUESTIONS_EN = ["Use the calculator: what is {e}?", "Calculate {e}.", "What is {e}? Use a tool."]
HELD_CALC_QUESTIONS_EN = ["Please compute {e} with the calculator."]
CALC_QUESTIONS_ZH = ["用计算器算一下{e}。", "帮我计算{e}。"]
HELD_CALC_QUESTIONS_ZH = ["请用工具算{e}。"]

JSON_SUM_QUESTIONS_EN = ["Answer in JSON: what is {a} + {b}?", "Reply with JSON. What is {a} + {b}?"]
HELD_JSON_SUM_QUESTIONS_EN = ["Give the answer as a JSON object: {a} + {b}?"]
JSON_SUM_QUESTIONS_ZH = ["用JSON回答：{a}加{b}等于多少？"]
HELD_JSON_SUM_QUESTIONS_ZH = ["以JSON格式回答{a}加{b}。"]

JSON_SELF = {"name": "Tiny", "project": "pagedserve"}
JSON_SELF_QUESTIONS = ["Describe yourself as a JSON object.", "Who are you? Answer in JSON.",
                       "用JSON介绍一下你自己。"]
HELD_JSON_SELF_QUESTIONS = ["Tell me who you are, in JSON."]


def dumps(value):
    """JSON text as Python writes it by default (and as the server passes arguments through)."""
    return json.dumps(value, ensure_ascii=False)


def call_message(name, arguments):
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": "call_0", "type": "function",
                            "function": {"name": name, "arguments": dumps(arguments)}}]}


def tool_result(content):
    return {"role": "tool", "tool_call_id": "call_0", "content": dumps(content)}


def example(messages, kind):
    return {"messages": messages, "tools": TOOLS, "kind": kind}


def weather(rng, question, city, zh):
    """The call, and the dialogue that continues after the tool's result."""
    call = call_message("get_weather", {"city": city})
    cond = rng.choice(CONDITIONS)
    temp = rng.randint(-5, 2) if cond == "snowy" else rng.randint(3, 35)
    result = tool_result({"city": city, "temperature": temp, "condition": cond})
    if zh:
        words = f"{city}现在{CONDITIONS_ZH[cond]}，气温{temp}°C。"
    else:
        words = f"It is {cond} in {city}, {temp}°C."
    user = {"role": "user", "content": question}
    return (example([user, call], "tool_call"),
            example([user, call, result, {"role": "assistant", "content": words}], "tool_answer"))


def expression(rng):
    op = rng.choice(["+", "-", "*"])
    if op == "*":
        a, b = rng.randint(11, 99), rng.randint(2, 30)
    else:
        a, b = rng.randint(21, 999), rng.randint(11, 999)
    text = f"{a} {op} {b}"
    return text, {"+": a + b, "-": a - b, "*": a * b}[op]


def calculation(rng, template, zh):
    expr, value = expression(rng)
    question = template.format(e=expr)
    call = call_message("calculate", {"expression": expr})
    result = tool_result({"result": value})
    words = f"{expr} = {value}" + ("。" if zh else ".")
    user = {"role": "user", "content": question}
    return (example([user, call], "tool_call"),
            example([user, call, result, {"role": "assistant", "content": words}], "tool_answer"))


def weather_split(rng, cities, questions, zh, count):
    """`count` (question, city) pairs drawn without replacement, each a call and an answer."""
    pairs = [(q, c) for q in questions for c in cities]
    rng.shuffle(pairs)
    out = []
    for q, c in pairs[:count]:
        out += weather(rng, q.format(c=c), c, zh)
    return out


def calc_split(rng, questions, zh, count):
    out = []
    for i in range(count):
        out += calculation(rng, questions[i % len(questions)], zh)
    return out


def no_call_examples(topics, indices, pick):
    """Topic questions asked while tools are offered: the answer is the topic's, no call."""
    out = []
    for i in indices:
        en_qs, en_a, zh_qs, zh_a = topics[i]
        for qs, a in ((en_qs, en_a), (zh_qs, zh_a)):
            q = pick(qs)
            out.append(example([{"role": "user", "content": q},
                                {"role": "assistant", "content": a}], "tool_no_call"))
    return out


def json_answer(question, value):
    return {"messages": [{"role": "user", "content": question},
                         {"role": "assistant", "content": dumps(value)}], "kind": "json_answer"}


def json_examples(rng, sum_questions, self_questions, count):
    out = [json_answer(q, JSON_SELF) for q in self_questions]
    for i in range(count):
        a, b = rng.randint(1, 50), rng.randint(1, 50)
        q = sum_questions[i % len(sum_questions)].format(a=a, b=b)
        out.append(json_answer(q, {"expression": f"{a} + {b}", "result": a + b}))
    return out


def tool_examples(rng, topics):
    """(train, held): tool-calling and JSON dialogues."""
    train, held = [], []
    train += weather_split(rng, CITIES_EN, WEATHER_QUESTIONS_EN, False, 40)
    train += weather_split(rng, CITIES_ZH, WEATHER_QUESTIONS_ZH, True, 20)
    train += calc_split(rng, CALC_QUESTIONS_EN, False, 24)
    train += calc_split(rng, CALC_QUESTIONS_ZH, True, 12)
    # The first ten topics (who, name, greetings, thanks, ...) and a few serving ones.
    train += no_call_examples(topics, list(range(10)) + [12, 14, 16, 18, 20], lambda qs: qs[0])
    train += json_examples(rng, JSON_SUM_QUESTIONS_EN + JSON_SUM_QUESTIONS_ZH, JSON_SELF_QUESTIONS,
                           24)

    # Held out: a training city with an unseen wording, an unseen city with a training wording.
    held += weather_split(rng, CITIES_EN, HELD_WEATHER_QUESTIONS_EN, False, 4)
    held += weather_split(rng, HELD_CITIES_EN, WEATHER_QUESTIONS_EN[:1], False, 4)
    held += weather_split(rng, CITIES_ZH, HELD_WEATHER_QUESTIONS_ZH, True, 2)
    held += weather_split(rng, HELD_CITIES_ZH, WEATHER_QUESTIONS_ZH[:1], True, 2)
    held += calc_split(rng, CALC_QUESTIONS_EN + HELD_CALC_QUESTIONS_EN, False, 8)
    held += calc_split(rng, CALC_QUESTIONS_ZH + HELD_CALC_QUESTIONS_ZH, True, 4)
    held += no_call_examples(topics, [10, 11, 13, 15], lambda qs: qs[0])
    held += json_examples(rng, HELD_JSON_SUM_QUESTIONS_EN + HELD_JSON_SUM_QUESTIONS_ZH,
                          HELD_JSON_SELF_QUESTIONS, 6)
    return train, held
