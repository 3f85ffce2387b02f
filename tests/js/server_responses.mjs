// The official openai client's Responses API (client.responses) against a running
// `pagedserve serve` on the shipped model (models/tiny), through /v1/responses: a plain response
// and its equal through /v1/chat/completions, instructions, the stream (the SDK's ResponseStream
// must accept every event and rebuild the same response; sequence numbers count up from 0),
// max_output_tokens (incomplete), a function tool round trip through function_call_output taken
// from the model's training data (whole and streamed), text.format json_schema, store +
// previous_response_id (the same answer as the whole conversation through chat), retrieve and
// delete, the store's size bound, and errors in OpenAI's shape.
// Usage: node server_responses.mjs http://127.0.0.1:PORT REPO_ROOT [STORE_SIZE]

import OpenAI from 'openai';

import { check, summary, weatherDialogue } from './server_check.mjs';

const [url, root, storeSize] = process.argv.slice(2);
const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 120000 });
const base = { model: 'tiny', max_output_tokens: 64, temperature: 0 };

async function chatText(messages, extra = {}) {
  const res = await client.chat.completions.create({ model: 'tiny', max_tokens: 64, temperature: 0, messages, ...extra });
  return res.choices[0].message.content;
}

async function expectError(name, params, status, mention, param) {
  try {
    await client.responses.create(params);
    check(`${name}: refused`, false, 'the request succeeded');
  } catch (e) {
    check(`${name}: HTTP ${status}`, e.status === status, `got ${e.status}: ${e.message}`);
    check(`${name}: the message names ${mention}`, String(e.error?.message).includes(mention), JSON.stringify(e.error));
    if (param) check(`${name}: param ${param}`, e.error?.param === param, JSON.stringify(e.error));
  }
}

if (storeSize) {
  // Started with --responses-store-size N: the N+1th stored response evicts the first.
  const ids = [];
  for (let i = 0; i <= Number(storeSize); i++) {
    ids.push((await client.responses.create({ ...base, max_output_tokens: 2, input: `hello ${i}`, store: true })).id);
  }
  try {
    await client.responses.retrieve(ids[0]);
    check('the oldest stored response was evicted', false);
  } catch (e) {
    check('the oldest stored response was evicted: 404', e.status === 404 && /store/.test(e.error?.message), JSON.stringify(e.error));
  }
  const kept = await client.responses.retrieve(ids.at(-1));
  check('the newest is still stored', kept.id === ids.at(-1));
  await expectError('previous_response_id of an evicted response',
    { ...base, input: 'and then?', previous_response_id: ids[0] }, 404, ids[0], 'previous_response_id');
  summary();
  process.exit();
}

// 1. A plain response: the chat route's answer to the same message.
const question = 'What is continuous batching?';
const plain = await client.responses.create({ ...base, input: question });
const want = await chatText([{ role: 'user', content: question }]);
check('response: id resp_..., object response, status completed',
  plain.id.startsWith('resp_') && plain.object === 'response' && plain.status === 'completed', JSON.stringify(plain));
check('response: one message item with one output_text, the chat route\'s answer',
  plain.output.length === 1 && plain.output[0].type === 'message' && plain.output[0].role === 'assistant' &&
  plain.output[0].content[0].type === 'output_text' && plain.output_text === want,
  `${JSON.stringify(plain.output)} vs ${JSON.stringify(want)}`);
check('response: usage counts the prompt and the reply',
  plain.usage.input_tokens > 0 && plain.usage.output_tokens > 0 &&
  plain.usage.total_tokens === plain.usage.input_tokens + plain.usage.output_tokens, JSON.stringify(plain.usage));
check('response: store false by default (stateless, as vLLM)', plain.store === false);

// 2. instructions: the chat route's system message; input as message items.
const sys = 'You are a helpful assistant.';
const withSystem = await chatText([{ role: 'system', content: sys }, { role: 'user', content: question }]);
const instructed = await client.responses.create({ ...base, instructions: sys, input: question });
check('instructions: the chat route\'s answer with that system message', instructed.output_text === withSystem, instructed.output_text);
check('instructions: echoed', instructed.instructions === sys);
const items = await client.responses.create({
  ...base, input: [{ role: 'developer', content: sys }, { type: 'message', role: 'user', content: [{ type: 'input_text', text: question }] }],
});
check('input items (developer, user with input_text): the same answer', items.output_text === withSystem, items.output_text);

// 3. Streamed: the SDK's ResponseStream accepts every event and rebuilds the same response.
const events = [];
const stream = client.responses.stream({ ...base, input: question });
stream.on('event', (e) => events.push(e));
const streamed = await stream.finalResponse();
check('stream: the final response equals the whole one',
  streamed.output_text === plain.output_text && streamed.status === 'completed' &&
  streamed.usage.output_tokens === plain.usage.output_tokens, JSON.stringify(streamed));
const types = events.map((e) => e.type);
check('stream: created, in_progress, item added, part added first; completed last',
  types[0] === 'response.created' && types[1] === 'response.in_progress' &&
  types[2] === 'response.output_item.added' && types[3] === 'response.content_part.added' &&
  types.at(-1) === 'response.completed', types.join(','));
check('stream: text deltas, then text done, part done, item done',
  types.slice(4, -4).every((t) => t === 'response.output_text.delta') && types.at(-4) === 'response.output_text.done' &&
  types.at(-3) === 'response.content_part.done' && types.at(-2) === 'response.output_item.done', types.join(','));
check('stream: sequence_number counts 0, 1, 2, ...', events.every((e, i) => e.sequence_number === i));
check('stream: the deltas add up to the text',
  events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('') === plain.output_text);

// 4. max_output_tokens ends the reply early: an incomplete response.
const short = await client.responses.create({ ...base, max_output_tokens: 3, input: question });
check('max_output_tokens 3: status incomplete, reason max_output_tokens, 3 output tokens',
  short.status === 'incomplete' && short.incomplete_details?.reason === 'max_output_tokens' &&
  short.usage.output_tokens === 3 && short.output[0].status === 'incomplete', JSON.stringify(short));

// 5. A function tool round trip on a training dialogue: the call, then function_call_output.
const row = weatherDialogue(root);
check('a get_weather training dialogue was found', row !== null);
const [user, call, result] = row.messages;
const tools = row.tools.map((t) => ({
  type: 'function', name: t.function.name, description: t.function.description, parameters: t.function.parameters,
}));
const asked = await client.responses.create({ ...base, tools, input: user.content });
const fc = asked.output.find((o) => o.type === 'function_call');
check('function tool: a function_call item for get_weather with the training call\'s arguments',
  fc?.name === 'get_weather' && fc.call_id && fc.status === 'completed' &&
  JSON.stringify(JSON.parse(fc.arguments)) === JSON.stringify(JSON.parse(call.tool_calls[0].function.arguments)),
  JSON.stringify(asked.output));
check('function tool: the tools echoed', asked.tools.length === tools.length && asked.tools[0].name === tools[0].name);
const answered = await client.responses.create({
  ...base, tools,
  input: [{ role: 'user', content: user.content }, ...asked.output,
    { type: 'function_call_output', call_id: fc?.call_id, output: result.content }],
});
const facts = JSON.parse(result.content);
check(`function_call_output: an answer naming ${facts.city} and ${facts.temperature}°C`,
  answered.status === 'completed' && new RegExp(`${facts.city}.*${facts.temperature}°C`).test(answered.output_text),
  answered.output_text);
const toolEvents = [];
const toolStream = client.responses.stream({ ...base, tools, input: user.content });
toolStream.on('event', (e) => toolEvents.push(e.type));
const streamedCall = (await toolStream.finalResponse()).output.find((o) => o.type === 'function_call');
check('function tool streamed: the same call rebuilt from function_call_arguments.delta',
  streamedCall?.name === 'get_weather' && streamedCall.arguments === fc?.arguments &&
  toolEvents.includes('response.function_call_arguments.delta') &&
  toolEvents.includes('response.function_call_arguments.done'), `${JSON.stringify(streamedCall)} ${toolEvents.join(',')}`);
const none = await client.responses.create({ ...base, tools, tool_choice: 'none', input: user.content });
check('tool_choice none: no function_call item', none.output.every((o) => o.type !== 'function_call'), JSON.stringify(none.output));

// 6. text.format json_schema: the grammar engine holds the text to the schema.
const schema = {
  type: 'object', properties: { answer: { type: 'string', maxLength: 20 }, sure: { type: 'boolean' } },
  required: ['answer', 'sure'], additionalProperties: false,
};
const structured = await client.responses.create({
  ...base, input: question, text: { format: { type: 'json_schema', name: 'reply', schema, strict: true } },
});
let parsed = null;
try {
  parsed = JSON.parse(structured.output_text);
} catch {}
check('text.format json_schema: the text is JSON with the schema\'s keys, in its order',
  parsed !== null && Object.keys(parsed).join(',') === 'answer,sure' && typeof parsed.answer === 'string' &&
  typeof parsed.sure === 'boolean', structured.output_text);
check('text.format: echoed', structured.text.format.type === 'json_schema' && structured.text.format.name === 'reply');

// 7. store + previous_response_id: the next turn sees the whole conversation.
const first = await client.responses.create({ ...base, input: question, store: true });
const followUp = 'What is a KV cache?';
const second = await client.responses.create({ ...base, input: followUp, previous_response_id: first.id, store: true });
const whole = await chatText([
  { role: 'user', content: question }, { role: 'assistant', content: first.output_text }, { role: 'user', content: followUp },
]);
check('previous_response_id: the chat route\'s answer to the whole conversation',
  second.output_text === whole && second.previous_response_id === first.id, `${second.output_text} vs ${whole}`);
check('previous_response_id: the earlier turns came from the prefix cache',
  second.usage.input_tokens_details.cached_tokens > 0, JSON.stringify(second.usage));
const third = await client.responses.create({ ...base, input: 'Thanks!', previous_response_id: second.id });
const whole3 = await chatText([
  { role: 'user', content: question }, { role: 'assistant', content: first.output_text },
  { role: 'user', content: followUp }, { role: 'assistant', content: second.output_text }, { role: 'user', content: 'Thanks!' },
]);
check('a chain of two previous responses', third.output_text === whole3, `${third.output_text} vs ${whole3}`);
const got = await client.responses.retrieve(first.id);
check('retrieve: the stored response', got.id === first.id && got.output_text === first.output_text && got.status === 'completed');
await expectError('previous_response_id of an unstored response (store false)',
  { ...base, input: 'again', previous_response_id: plain.id }, 404, plain.id, 'previous_response_id');
await expectError('an unknown previous_response_id', { ...base, input: 'again', previous_response_id: 'resp_unknown' },
  404, 'store', 'previous_response_id');
await client.responses.delete(third.id).catch(() => {});
await client.responses.delete(first.id);
try {
  await client.responses.retrieve(first.id);
  check('retrieve after delete: 404', false);
} catch (e) {
  check('retrieve after delete: 404 in OpenAI\'s error shape', e.status === 404 && e.error?.type === 'invalid_request_error', JSON.stringify(e.error));
}

// 8. Errors, in OpenAI's shape, naming the Responses field.
await expectError('an unknown input item type', { ...base, input: [{ type: 'computer_call_output', call_id: 'x' }] },
  400, 'input[0].type', 'input[0].type');
await expectError('a built-in tool', { ...base, input: question, tools: [{ type: 'web_search' }] }, 400, 'tools[0].type', 'tools[0].type');
await expectError('an image part', {
  ...base, input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/a.png' }] }],
}, 400, 'input[0].content[0].type', 'input[0].content[0].type');
await expectError('no input', { ...base }, 400, "'input' is required", 'input');
await expectError('background', { ...base, input: question, background: true }, 400, 'background', 'background');
await expectError('an unknown model', { ...base, model: 'no-such-model', input: question }, 404, 'no-such-model');
await expectError('function_call without call_id', { ...base, input: [{ type: 'function_call', name: 'f', arguments: '{}' }] },
  400, 'input[0].call_id', 'input[0].call_id');
const raw = await fetch(`${url}/v1/responses`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"model":' });
const rawBody = await raw.json();
check('malformed JSON: 400 {error: {type: invalid_request_error}}',
  raw.status === 400 && rawBody.error?.type === 'invalid_request_error', JSON.stringify(rawBody));

summary();
