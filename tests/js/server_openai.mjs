// The official openai client against a running `pagedserve serve`: chat and completions,
// streaming and not, usage with include_usage, and stream == non-stream for seeded requests.
// Usage: node server_openai.mjs http://127.0.0.1:PORT
import OpenAI from 'openai';

import { check, summary } from './server_check.mjs';

const url = process.argv[2];
const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'sk-unused', maxRetries: 0, timeout: 120000 });

async function collectChat(params) {
  const stream = await client.chat.completions.create({ ...params, stream: true });
  const texts = {};
  const finish = {};
  const chunks = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
    for (const c of chunk.choices) {
      texts[c.index] = (texts[c.index] ?? '') + (c.delta?.content ?? '');
      if (c.finish_reason) finish[c.index] = c.finish_reason;
    }
  }
  return { texts, finish, chunks };
}

async function collectCompletion(params) {
  const stream = await client.completions.create({ ...params, stream: true });
  const texts = {};
  const finish = {};
  const chunks = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
    for (const c of chunk.choices) {
      texts[c.index] = (texts[c.index] ?? '') + (c.text ?? '');
      if (c.finish_reason) finish[c.index] = c.finish_reason;
    }
  }
  return { texts, finish, chunks };
}

function usageOk(u, maxTokens) {
  return (
    u &&
    u.prompt_tokens > 0 &&
    u.completion_tokens >= 1 &&
    u.completion_tokens <= maxTokens &&
    u.total_tokens === u.prompt_tokens + u.completion_tokens &&
    typeof u.prompt_tokens_details?.cached_tokens === 'number'
  );
}

const models = await client.models.list();
const model = models.data[0]?.id;
check('models.list returns the served model', models.data.length === 1 && typeof model === 'string', JSON.stringify(models.data));

const messages = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'Tell me a short story about a cat.' },
];

// Chat, not streaming.
const chat = await client.chat.completions.create({ model, messages, max_tokens: 12, temperature: 0 });
check('chat: object and id', chat.object === 'chat.completion' && chat.id.startsWith('chatcmpl-'), chat.id);
check('chat: one assistant choice', chat.choices.length === 1 && chat.choices[0].message.role === 'assistant');
check('chat: content is a string', typeof chat.choices[0].message.content === 'string');
check('chat: finish_reason', ['stop', 'length'].includes(chat.choices[0].finish_reason), chat.choices[0].finish_reason);
check('chat: usage', usageOk(chat.usage, 12), JSON.stringify(chat.usage));
check('chat: created and model', chat.created > 1600000000 && chat.model === model);

// Chat, streaming, without and with include_usage.
const plain = await collectChat({ model, messages, max_tokens: 12, temperature: 0 });
check('chat stream: same text as non-stream (greedy)', plain.texts[0] === chat.choices[0].message.content,
  JSON.stringify([plain.texts[0], chat.choices[0].message.content]));
check('chat stream: first delta carries the role', plain.chunks[0]?.choices[0]?.delta?.role === 'assistant');
check('chat stream: no usage unless asked', plain.chunks.every((c) => c.usage == null));
check('chat stream: finish_reason', plain.finish[0] === chat.choices[0].finish_reason, JSON.stringify(plain.finish));
const withUsage = await collectChat({ model, messages, max_tokens: 12, temperature: 0, stream_options: { include_usage: true } });
const last = withUsage.chunks.at(-1);
check('chat stream include_usage: last chunk has usage and no choices',
  last && last.choices.length === 0 && usageOk(last.usage, 12), JSON.stringify(last));
check('chat stream include_usage: usage matches non-stream',
  last?.usage?.completion_tokens === chat.usage.completion_tokens && last?.usage?.prompt_tokens === chat.usage.prompt_tokens);
check('chat stream include_usage: other chunks carry usage null', withUsage.chunks.slice(0, -1).every((c) => c.usage === null));

// Completions, streaming and not.
const prompt = 'Once upon a time, in a land far away,';
const comp = await client.completions.create({ model, prompt, max_tokens: 10, temperature: 0 });
check('completion: object and id', comp.object === 'text_completion' && comp.id.startsWith('cmpl-'));
check('completion: text and finish_reason', typeof comp.choices[0].text === 'string' && ['stop', 'length'].includes(comp.choices[0].finish_reason));
check('completion: usage', usageOk(comp.usage, 10), JSON.stringify(comp.usage));
const compStream = await collectCompletion({ model, prompt, max_tokens: 10, temperature: 0, stream_options: { include_usage: true } });
check('completion stream: same text as non-stream', compStream.texts[0] === comp.choices[0].text,
  JSON.stringify([compStream.texts[0], comp.choices[0].text]));
check('completion stream: usage at the end', usageOk(compStream.chunks.at(-1)?.usage, 10) &&
  compStream.chunks.at(-1).usage.completion_tokens === comp.usage.completion_tokens);
const compPlainStream = await collectCompletion({ model, prompt, max_tokens: 10, temperature: 0 });
check('completion stream: no usage unless asked', compPlainStream.chunks.every((c) => c.usage == null));

// Seeded sampling: the same request gives the same text streamed or not.
for (const seed of [7, 12345]) {
  const p = { model, messages, max_tokens: 24, temperature: 0.9, top_p: 0.95, seed };
  const a = await client.chat.completions.create(p);
  const b = await collectChat(p);
  check(`chat seed ${seed}: stream text == non-stream text`, a.choices[0].message.content === b.texts[0],
    JSON.stringify([a.choices[0].message.content, b.texts[0]]));
  const c = await client.chat.completions.create(p);
  check(`chat seed ${seed}: repeatable`, c.choices[0].message.content === a.choices[0].message.content);
  const q = { model, prompt, max_tokens: 24, temperature: 1.0, top_k: 50, seed };
  const d = await client.completions.create(q);
  const e = await collectCompletion(q);
  check(`completion seed ${seed}: stream text == non-stream text`, d.choices[0].text === e.texts[0],
    JSON.stringify([d.choices[0].text, e.texts[0]]));
}

// n > 1: choices indexed 0..n-1, streamed per index the same as returned whole.
const nReq = { model, messages, max_tokens: 10, temperature: 1.0, seed: 99, n: 3 };
const many = await client.chat.completions.create(nReq);
check('n=3: three choices with indices 0..2', many.choices.length === 3 &&
  many.choices.map((c) => c.index).join() === '0,1,2');
const manyStream = await collectChat(nReq);
check('n=3: streamed choices equal non-streamed',
  [0, 1, 2].every((i) => manyStream.texts[i] === many.choices[i].message.content),
  JSON.stringify([manyStream.texts, many.choices.map((c) => c.message.content)]));
check('n=3: usage counts the prompt once', many.usage.prompt_tokens === chat.usage.prompt_tokens,
  `${many.usage.prompt_tokens} vs ${chat.usage.prompt_tokens}`);

// Logprobs.
const lp = await client.chat.completions.create({ model, messages, max_tokens: 5, temperature: 0, logprobs: true, top_logprobs: 2 });
const content = lp.choices[0].logprobs?.content ?? [];
check('chat logprobs: one entry per token with 2 alternatives',
  content.length === lp.usage.completion_tokens && content.every((t) => t.top_logprobs.length === 2 && Array.isArray(t.bytes)),
  JSON.stringify(lp.choices[0].logprobs));
check('chat logprobs: greedy token is the most likely', content.every((t) => t.logprob >= t.top_logprobs[0].logprob - 1e-4));
const clp = await client.completions.create({ model, prompt, max_tokens: 5, temperature: 0, logprobs: 1 });
const L = clp.choices[0].logprobs;
check('completion logprobs: parallel lists', L && L.tokens.length === 5 && L.token_logprobs.length === 5 &&
  L.top_logprobs.length === 5 && L.text_offset.length === 5, JSON.stringify(L));

// Stop strings: cut a greedy output at a string from its middle.
const long = await client.completions.create({ model, prompt, max_tokens: 24, temperature: 0, ignore_eos: true });
const full = long.choices[0].text;
const stopAt = full.length > 8 ? full.slice(Math.floor(full.length / 2), Math.floor(full.length / 2) + 2) : null;
if (stopAt && stopAt.trim().length > 0) {
  const cut = await client.completions.create({ model, prompt, max_tokens: 24, temperature: 0, ignore_eos: true, stop: [stopAt] });
  const cutStream = await collectCompletion({ model, prompt, max_tokens: 24, temperature: 0, ignore_eos: true, stop: stopAt });
  check('stop: text ends before the stop string', cut.choices[0].finish_reason === 'stop' &&
    full.startsWith(cut.choices[0].text) && !cut.choices[0].text.includes(stopAt), JSON.stringify([full, stopAt, cut.choices[0].text]));
  check('stop: streamed text is the same, stop string never sent', cutStream.texts[0] === cut.choices[0].text,
    JSON.stringify([cutStream.texts[0], cut.choices[0].text]));
} else {
  check('stop: greedy output long enough to pick a stop string', false, JSON.stringify(full));
}

// Prompt shapes, max_completion_tokens, user.
const ids = await client.completions.create({ model, prompt: [5, 6, 7, 8], max_tokens: 3, temperature: 0 });
check('completion: token-id prompt', ids.usage.prompt_tokens === 4 && ids.choices.length === 1);
const two = await client.completions.create({ model, prompt: ['first prompt', 'second prompt'], max_tokens: 3, temperature: 0 });
check('completion: two prompts give two choices', two.choices.length === 2 && two.choices[1].index === 1);
const mct = await client.chat.completions.create({ model, messages, max_completion_tokens: 4, temperature: 0, ignore_eos: true, user: 'u1' });
check('chat: max_completion_tokens', mct.usage.completion_tokens === 4 && mct.choices[0].finish_reason === 'length',
  JSON.stringify(mct.usage));

// Every documented field at the edge of its range is accepted end to end (the API's and the
// engine's validation agree), and array-of-text-parts content works.
const all = await client.chat.completions.create({
  model, max_tokens: 6, temperature: 2, top_p: 1, top_k: 40, min_p: 0.05, presence_penalty: 2, frequency_penalty: -2,
  repetition_penalty: 2, seed: 3, n: 2, stop: ['\n\n'], stop_token_ids: [0], min_tokens: 2, ignore_eos: false,
  logprobs: true, top_logprobs: 20, logit_bias: { 5: -100, 6: 100 }, user: 'someone',
  messages: [{ role: 'developer', content: 'be brief' }, { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }],
});
check('all fields at their limits: accepted', all.choices.length === 2 && all.choices.every((c) => c.logprobs.content.length >= 2),
  JSON.stringify(all.usage));

// Prefix cache: the same long prompt twice; the second reuses full blocks.
const longMessages = [{ role: 'user', content: 'Repeat after me: ' + 'the quick brown fox jumps over the lazy dog. '.repeat(8) }];
await client.chat.completions.create({ model, messages: longMessages, max_tokens: 2, temperature: 0 });
const again = await client.chat.completions.create({ model, messages: longMessages, max_tokens: 2, temperature: 0 });
check('usage: cached_tokens > 0 on a repeated prompt', again.usage.prompt_tokens_details.cached_tokens > 0,
  JSON.stringify(again.usage));

summary();
