// The official @anthropic-ai/sdk client against a running `pagedserve serve` on the shipped
// model (models/tiny), through /v1/messages and /v1/messages/count_tokens: a plain message and
// its equal through /v1/chat/completions, system as a string and as blocks, the stream (the
// SDK's own MessageStream must accept every event and rebuild the same message), max_tokens and
// stop_sequences stop reasons, a tool use round trip (tool_use, then tool_result) taken from
// the model's training data, streamed tool input, count_tokens, and errors in Anthropic's shape.
// Usage: node server_anthropic.mjs http://127.0.0.1:PORT REPO_ROOT [API_KEY]

import Anthropic from '@anthropic-ai/sdk';

import { check, summary, weatherDialogue } from './server_check.mjs';

const [url, root, apiKey] = process.argv.slice(2);
const client = new Anthropic({ baseURL: url, apiKey: apiKey ?? 'unused', maxRetries: 0, timeout: 120000 });
const base = { model: 'tiny', max_tokens: 64, temperature: 0 };

async function chatText(messages) {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${apiKey ?? ''}` },
    body: JSON.stringify({ ...base, messages }),
  });
  return (await res.json()).choices[0].message.content;
}

async function expectError(name, params, status, type, mention) {
  try {
    await client.messages.create(params);
    check(`${name}: refused`, false, 'the request succeeded');
  } catch (e) {
    check(`${name}: HTTP ${status}`, e.status === status, `got ${e.status}: ${e.message}`);
    check(`${name}: error.type ${type}`, e.error?.type === 'error' && e.error?.error?.type === type,
      JSON.stringify(e.error));
    check(`${name}: the message names ${mention}`, String(e.error?.error?.message).includes(mention),
      String(e.error?.error?.message));
  }
}

if (process.argv.length > 5) {
  // Started with --api-key: the SDK sends it as x-api-key.
  const msg = await client.messages.create({ ...base, messages: [{ role: 'user', content: 'Who are you?' }] });
  check('x-api-key accepted', msg.type === 'message' && msg.content[0]?.type === 'text');
  const wrong = new Anthropic({ baseURL: url, apiKey: 'wrong', maxRetries: 0 });
  try {
    await wrong.messages.create({ ...base, messages: [{ role: 'user', content: 'hi' }] });
    check('a wrong x-api-key is refused', false);
  } catch (e) {
    check('a wrong x-api-key is a 401 authentication_error',
      e.status === 401 && e.error?.error?.type === 'authentication_error', JSON.stringify(e.error));
  }
  summary();
  process.exit();
}

// 1. A plain message: the same text the chat route gives the same conversation.
const question = [{ role: 'user', content: 'What is continuous batching?' }];
const plain = await client.messages.create({ ...base, messages: question });
const want = await chatText(question);
check('message: id msg_..., type message, role assistant',
  plain.id.startsWith('msg_') && plain.type === 'message' && plain.role === 'assistant', JSON.stringify(plain));
check('message: one text block, the chat route\'s answer',
  plain.content.length === 1 && plain.content[0].type === 'text' && plain.content[0].text === want,
  `${JSON.stringify(plain.content)} vs ${JSON.stringify(want)}`);
check('message: stop_reason end_turn, stop_sequence null', plain.stop_reason === 'end_turn' && plain.stop_sequence === null);
check('message: usage counts the prompt and the reply',
  plain.usage.input_tokens + plain.usage.cache_read_input_tokens > 0 && plain.usage.output_tokens > 0,
  JSON.stringify(plain.usage));

// 2. system as a string and as text blocks: the chat route's system message.
const sys = 'You are a helpful assistant.';
const withSystem = await chatText([{ role: 'system', content: sys }, ...question]);
const sysString = await client.messages.create({ ...base, system: sys, messages: question });
const sysBlocks = await client.messages.create({ ...base, system: [{ type: 'text', text: sys }], messages: question });
check('system string: the chat route\'s answer with that system message', sysString.content[0]?.text === withSystem);
check('system blocks: the same answer', sysBlocks.content[0]?.text === withSystem);

// 3. Streamed: every event accepted by the SDK's MessageStream, the same message rebuilt.
const events = [];
const stream = client.messages.stream({ ...base, messages: question });
stream.on('streamEvent', (e) => events.push(e.type));
const streamed = await stream.finalMessage();
check('stream: the final message equals the whole one',
  streamed.content.length === 1 && streamed.content[0].text === plain.content[0].text &&
  streamed.stop_reason === 'end_turn' && streamed.usage.output_tokens === plain.usage.output_tokens,
  JSON.stringify(streamed));
check('stream: message_start first, message_stop last',
  events[0] === 'message_start' && events.at(-1) === 'message_stop', events.join(','));
check('stream: block start, deltas, stop, then message_delta',
  events[1] === 'content_block_start' && events.at(-3) === 'content_block_stop' &&
  events.at(-2) === 'message_delta' && events.slice(2, -3).every((t) => t === 'content_block_delta'),
  events.join(','));

// 4. max_tokens ends the reply early.
const short = await client.messages.create({ ...base, max_tokens: 3, messages: question });
check('max_tokens 3: stop_reason max_tokens, 3 output tokens',
  short.stop_reason === 'max_tokens' && short.usage.output_tokens === 3, JSON.stringify(short));

// 5. stop_sequences: the reply ends before the sequence, which is reported.
const word = ' requests';
const cut = want.indexOf(word);
const stopped = await client.messages.create({ ...base, stop_sequences: [word], messages: question });
check(`stop_sequences: stop_reason stop_sequence "${word}"`,
  cut > 0 && stopped.stop_reason === 'stop_sequence' && stopped.stop_sequence === word, JSON.stringify(stopped));
check('stop_sequences: the text up to it', stopped.content[0]?.text === want.slice(0, cut), JSON.stringify(stopped.content));

// 6. Tool use round trip on a training dialogue: the call, then the tool's result.
const row = weatherDialogue(root);
check('a get_weather training dialogue was found', row !== null);
const [user, call, result] = row.messages;
const tools = row.tools.map((t) => ({
  name: t.function.name, description: t.function.description, input_schema: t.function.parameters,
}));
const asked = await client.messages.create({ ...base, tools, messages: [{ role: 'user', content: user.content }] });
const use = asked.content.find((b) => b.type === 'tool_use');
check('tool use: stop_reason tool_use', asked.stop_reason === 'tool_use', JSON.stringify(asked));
check('tool use: get_weather with the training call\'s input',
  use?.name === 'get_weather' && JSON.stringify(use.input) === JSON.stringify(JSON.parse(call.tool_calls[0].function.arguments)),
  JSON.stringify(use));
const answered = await client.messages.create({
  ...base, tools,
  messages: [
    { role: 'user', content: user.content },
    { role: 'assistant', content: asked.content },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: use?.id, content: result.content }] },
  ],
});
const facts = JSON.parse(result.content);
const words = answered.content.find((b) => b.type === 'text')?.text ?? '';
check('tool result: an answer in words, end_turn', answered.stop_reason === 'end_turn' && words.length > 0, JSON.stringify(answered));
check(`tool result: it names ${facts.city} and ${facts.temperature}°C`,
  new RegExp(`${facts.city}.*${facts.temperature}°C`).test(words), words);
const toolStream = client.messages.stream({ ...base, tools, messages: [{ role: 'user', content: user.content }] });
const streamedUse = (await toolStream.finalMessage()).content.find((b) => b.type === 'tool_use');
check('tool use streamed: the SDK rebuilds the same input from input_json_delta',
  streamedUse?.name === 'get_weather' && JSON.stringify(streamedUse.input) === JSON.stringify(use?.input),
  JSON.stringify(streamedUse));
const none = await client.messages.create({ ...base, tools, tool_choice: { type: 'none' }, messages: [{ role: 'user', content: user.content }] });
check('tool_choice none: no tool_use block', none.content.every((b) => b.type !== 'tool_use'), JSON.stringify(none.content));

// 7. count_tokens: the prompt the message was answered from.
const counted = await client.messages.countTokens({ model: 'tiny', messages: question });
check('count_tokens: the message\'s prompt tokens',
  counted.input_tokens === plain.usage.input_tokens + plain.usage.cache_read_input_tokens, JSON.stringify(counted));
const countedTools = await client.messages.countTokens({ model: 'tiny', tools, messages: [{ role: 'user', content: user.content }] });
check('count_tokens with tools: the tools are in the prompt',
  countedTools.input_tokens === asked.usage.input_tokens + asked.usage.cache_read_input_tokens &&
  countedTools.input_tokens > counted.input_tokens, JSON.stringify(countedTools));

// 8. Errors, in Anthropic's shape.
await expectError('no max_tokens', { model: 'tiny', messages: question }, 400, 'invalid_request_error', 'max_tokens');
await expectError('an image block', {
  ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA==' } }] }],
}, 400, 'invalid_request_error', 'messages[0].content[0].type');
await expectError('a server tool', { ...base, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: question },
  400, 'invalid_request_error', 'tools[0].type');
await expectError('role tool in messages', { ...base, messages: [{ role: 'tool', content: 'x' }] },
  400, 'invalid_request_error', 'messages[0].role');
await expectError('an unknown model', { ...base, model: 'no-such-model', messages: question }, 404, 'not_found_error', 'no-such-model');
const raw = await fetch(`${url}/v1/messages`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"model":' });
const rawBody = await raw.json();
check('malformed JSON: 400 {type: error, error: {type: invalid_request_error}}',
  raw.status === 400 && rawBody.type === 'error' && rawBody.error?.type === 'invalid_request_error', JSON.stringify(rawBody));

summary();
