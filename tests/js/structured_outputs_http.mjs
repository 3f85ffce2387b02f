// The official openai client against a random-weight model sampled at temperature 1: whatever
// the weights, constrained replies must parse and validate. Covers response_format
// (json_schema with the client's parse() helper, json_object), structured_outputs (choice,
// regex, grammar) on both endpoints, tools with every tool_choice, streamed tool-call deltas
// assembled by the client (by hand and by its stream helper) equal to the non-streamed message,
// multi-turn with tool results, and the 400s for bad schemas, tool names and tool fields.
// Usage: node structured_outputs_http.mjs http://127.0.0.1:PORT
import OpenAI from 'openai';

import { check, summary } from './server_check.mjs';

const url = process.argv[2];
const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'sk-unused', maxRetries: 0 });
const model = (await client.models.list()).data[0].id;
const ask = (content) => [{ role: 'user', content }];
const SEEDS = [1, 2, 3, 4, 5];

// --- response_format json_schema, through the client's parse() helper
const person = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 6 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    role: { enum: ['admin', 'user'] },
    tags: { type: 'array', items: { type: 'string', maxLength: 3 }, maxItems: 2 },
  },
  required: ['name', 'age', 'role'],
  additionalProperties: false,
};
function validPerson(p) {
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return false;
  const keys = Object.keys(p);
  if (!['name', 'age', 'role'].every((k) => keys.includes(k))) return false;
  if (!keys.every((k) => k in person.properties)) return false;
  if (typeof p.name !== 'string' || [...p.name].length > 6) return false;
  if (!Number.isInteger(p.age) || p.age < 0 || p.age > 120) return false;
  if (!['admin', 'user'].includes(p.role)) return false;
  if ('tags' in p && !(Array.isArray(p.tags) && p.tags.length <= 2 &&
    p.tags.every((t) => typeof t === 'string' && [...t].length <= 3))) return false;
  return true;
}
for (const seed of SEEDS) {
  const r = await client.chat.completions.parse({
    model, messages: ask('Describe a person as JSON.'), temperature: 1, seed, max_tokens: 120,
    response_format: { type: 'json_schema', json_schema: { name: 'person', schema: person, strict: true } },
  });
  const c = r.choices[0];
  check(`json_schema seed ${seed}: finished by the grammar`, c.finish_reason === 'stop', c.finish_reason);
  check(`json_schema seed ${seed}: parse() gives a valid object`, validPerson(c.message.parsed),
    c.message.content);
  check(`json_schema seed ${seed}: members in schema order`,
    JSON.stringify(Object.keys(c.message.parsed ?? {})) ===
      JSON.stringify(Object.keys(person.properties).filter((k) => k in (c.message.parsed ?? {}))),
    c.message.content);
}
const obj = await client.chat.completions.create({
  model, messages: ask('Any JSON object.'), temperature: 1, seed: 7, max_tokens: 200,
  response_format: { type: 'json_object' },
});
let parsedObj = null;
try { parsedObj = JSON.parse(obj.choices[0].message.content); } catch { /* checked below */ }
check('json_object: an object (or cut by max_tokens)',
  (parsedObj !== null && typeof parsedObj === 'object' && !Array.isArray(parsedObj)) ||
    obj.choices[0].finish_reason === 'length', obj.choices[0].message.content);

// --- structured_outputs: choice, regex, grammar; chat and completions
for (const seed of SEEDS) {
  const r = await client.chat.completions.create({
    model, messages: ask('yes or no?'), temperature: 1, seed, max_tokens: 10,
    structured_outputs: { choice: ['yes', 'no', 'maybe not'] },
  });
  check(`choice seed ${seed}`, ['yes', 'no', 'maybe not'].includes(r.choices[0].message.content),
    r.choices[0].message.content);
  const c = await client.completions.create({
    model, prompt: 'Code:', temperature: 1, seed, max_tokens: 16,
    structured_outputs: { regex: '[A-Z]{2}-[0-9]{3}' },
  });
  check(`completions regex seed ${seed}`, /^[A-Z]{2}-[0-9]{3}$/.test(c.choices[0].text), c.choices[0].text);
  const g = await client.completions.create({
    model, prompt: 'Sum:', temperature: 1, seed, max_tokens: 16,
    structured_outputs: { grammar: 'root ::= num " + " num\nnum ::= [1-9] [0-9]?' },
  });
  check(`completions GBNF seed ${seed}`, /^[1-9][0-9]? \+ [1-9][0-9]?$/.test(g.choices[0].text),
    g.choices[0].text);
}

// --- tools
const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather', description: 'Weather for a city',
      parameters: {
        type: 'object',
        properties: { city: { enum: ['Paris', 'Tokyo', 'Lima'] }, days: { type: 'integer', minimum: 1, maximum: 7 } },
        required: ['city'], additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'calculate', description: 'Evaluate arithmetic',
      parameters: {
        type: 'object', properties: { expression: { type: 'string', pattern: '^[0-9+*-]{1,7}$' } },
        required: ['expression'], additionalProperties: false,
      },
    },
  },
];
function validCall(call, allowed = ['get_weather', 'calculate']) {
  if (call.type !== 'function' || typeof call.id !== 'string' || !call.id) return false;
  if (!allowed.includes(call.function.name)) return false;
  let a;
  try { a = JSON.parse(call.function.arguments); } catch { return false; }
  if (call.function.name === 'get_weather') {
    return ['Paris', 'Tokyo', 'Lima'].includes(a.city) && Object.keys(a).every((k) => ['city', 'days'].includes(k)) &&
      (!('days' in a) || (Number.isInteger(a.days) && a.days >= 1 && a.days <= 7));
  }
  return Object.keys(a).length === 1 && /^[0-9+*-]{1,7}$/.test(a.expression);
}
const toolBase = { model, messages: ask('What is the weather in Paris?'), tools, temperature: 1, max_tokens: 160 };

for (const seed of SEEDS) {
  const r = await client.chat.completions.create({ ...toolBase, seed, tool_choice: 'required' });
  const c = r.choices[0];
  const calls = c.message.tool_calls ?? [];
  // A random model may keep adding parallel calls until max_tokens: then only the last one can
  // be cut short; every complete call is valid.
  const complete = c.finish_reason === 'length' ? calls.slice(0, -1) : calls;
  check(`required seed ${seed}: at least one call, every complete one valid`,
    calls.length >= 1 && complete.every((t) => validCall(t)), JSON.stringify(c.message));
  check(`required seed ${seed}: finish_reason tool_calls (or length), content null`,
    ['tool_calls', 'length'].includes(c.finish_reason) && c.message.content === null, JSON.stringify(c));

  const one = await client.chat.completions.create({ ...toolBase, seed, tool_choice: 'required', parallel_tool_calls: false });
  check(`parallel_tool_calls false seed ${seed}: exactly one call`, (one.choices[0].message.tool_calls ?? []).length === 1,
    JSON.stringify(one.choices[0].message));

  const named = await client.chat.completions.create({
    ...toolBase, seed, tool_choice: { type: 'function', function: { name: 'calculate' } },
  });
  const nc = named.choices[0].message.tool_calls ?? [];
  check(`named seed ${seed}: one call of that function`, nc.length === 1 && validCall(nc[0], ['calculate']),
    JSON.stringify(named.choices[0].message));

  // Streamed with the same seed: the deltas, assembled, are the same calls (ids are fresh).
  const stream = await client.chat.completions.create({ ...toolBase, seed, tool_choice: 'required', stream: true });
  const assembled = [];
  let streamedContent = '';
  let finish = null;
  let order = 'ok';
  for await (const chunk of stream) {
    const ch = chunk.choices[0];
    if (!ch) continue;
    if (ch.finish_reason) finish = ch.finish_reason;
    if (ch.delta.content) streamedContent += ch.delta.content;
    for (const d of ch.delta.tool_calls ?? []) {
      if (d.id) {
        if (d.index !== assembled.length || !d.function?.name) order = 'bad first delta';
        assembled.push({ id: d.id, type: d.type, function: { name: d.function.name, arguments: d.function.arguments ?? '' } });
      } else if (!assembled[d.index]) {
        order = 'fragment before its call';
      } else {
        assembled[d.index].function.arguments += d.function?.arguments ?? '';
      }
    }
  }
  const strip = (list) => JSON.stringify(list.map((t) => [t.type, t.function.name, t.function.arguments]));
  check(`streamed seed ${seed}: deltas in order (index, id, name first)`, order === 'ok', order);
  check(`streamed seed ${seed}: assembled calls == non-streamed`, strip(assembled) === strip(calls),
    `${strip(assembled)} vs ${strip(calls)}`);
  check(`streamed seed ${seed}: no tag text in content, the same finish_reason`,
    streamedContent === '' && finish === c.finish_reason, `${JSON.stringify(streamedContent)} ${finish}`);

  // The client's own stream helper assembles the same message.
  const runner = client.chat.completions.stream({ ...toolBase, seed, tool_choice: 'required' });
  const final = await runner.finalChatCompletion();
  check(`stream helper seed ${seed}: finalChatCompletion has the same calls`,
    strip(final.choices[0].message.tool_calls ?? []) === strip(calls), JSON.stringify(final.choices[0].message));

  // auto: free text unless the model opens a call; a call it opens is valid, no tag leaks.
  const auto = await client.chat.completions.create({ ...toolBase, seed, max_tokens: 24 });
  const am = auto.choices[0].message;
  check(`auto seed ${seed}: calls (if any) valid, no tag in content`,
    (am.tool_calls ?? []).every((t) => validCall(t)) && !(am.content ?? '').includes('<tool_call>'),
    JSON.stringify(am));
}

// none: no constraint and no parsing.
const none = await client.chat.completions.create({ ...toolBase, seed: 3, tool_choice: 'none', max_tokens: 8 });
check('tool_choice none: no tool_calls field', !('tool_calls' in none.choices[0].message) ||
  none.choices[0].message.tool_calls === undefined, JSON.stringify(none.choices[0].message));

// Multi-turn: an assistant message with tool_calls and the tool's result go back through the
// template; the rendered prompt shows both.
const history = [
  { role: 'user', content: 'What is the weather in Paris?' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }] },
  { role: 'tool', tool_call_id: 'call_1', content: 'sunny, 21 C' },
];
const follow = await client.chat.completions.create({ model, messages: history, tools, temperature: 0, max_tokens: 8 });
check('multi-turn with a tool result answers', follow.choices.length === 1 && follow.usage.prompt_tokens > 0,
  JSON.stringify(follow));
const tok = await (await fetch(`${url}/tokenize`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages: history, tools }),
})).json();
const detok = await (await fetch(`${url}/detokenize`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tokens: tok.tokens }),
})).json();
check('the prompt shows the call, its result and the tools',
  detok.prompt.includes('get_weather') && detok.prompt.includes('{"city": "Paris"}') &&
    detok.prompt.includes('sunny, 21 C') && detok.prompt.includes('Weather for a city'), detok.prompt);

// --- errors: 400s naming the field
async function status400(name, body, endpoint = 'chat', param = null) {
  try {
    if (endpoint === 'chat') await client.chat.completions.create(body);
    else await client.completions.create(body);
    check(`${name}: refused`, false, 'accepted');
  } catch (e) {
    const p = e.error?.param ?? e.param;
    check(`${name}: 400`, e.status === 400, `${e.status} ${e.message}`);
    if (param) check(`${name}: names ${param}`, p === param || (e.message ?? '').includes(param), `${p} ${e.message}`);
  }
}
await status400('unknown tool name', { ...toolBase, tool_choice: { type: 'function', function: { name: 'nope' } } },
  'chat', 'tool_choice');
await status400('unsupported schema keyword', {
  model, messages: ask('x'),
  response_format: { type: 'json_schema', json_schema: { name: 'n', schema: { type: 'integer', multipleOf: 3 } } },
}, 'chat', 'multipleOf');
await status400('unsupported keyword in a tool schema', {
  model, messages: ask('x'), tool_choice: 'required',
  tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', patternProperties: { a: {} } } } }],
}, 'chat', 'patternProperties');
await status400('bad regex', { model, prompt: 'x', structured_outputs: { regex: '(a' } }, 'completions');
await status400('bad grammar', { model, prompt: 'x', structured_outputs: { grammar: 'root ::= undefined-rule' } },
  'completions', 'undefined-rule');
await status400('tools on completions', { model, prompt: 'x', tools }, 'completions', 'tools');
await status400('a bad tool', { model, messages: ask('x'), tools: [{ type: 'function', function: { name: 'a b' } }] },
  'chat', 'tools[0].function.name');
summary();
