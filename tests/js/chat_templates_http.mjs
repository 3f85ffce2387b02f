// The official openai client against a server with a reasoning (Qwen3) template and a scripted
// reply "<think>Let me think</think>The answer": reasoning_content and content, streamed and
// not, and chat_template_kwargs passed through the client's body.
// Usage: node chat_templates_http.mjs http://127.0.0.1:PORT
import OpenAI from 'openai';

import { check, summary } from './server_check.mjs';

const client = new OpenAI({ baseURL: `${process.argv[2]}/v1`, apiKey: 'sk-unused', maxRetries: 0 });
const base = {
  model: (await client.models.list()).data[0].id,
  messages: [{ role: 'user', content: 'What is six times seven?' }],
  max_tokens: 64,
  temperature: 0,
};

const whole = await client.chat.completions.create(base);
const msg = whole.choices[0].message;
check('reasoning_content', msg.reasoning_content === 'Let me think', JSON.stringify(msg));
check('content', msg.content === 'The answer', JSON.stringify(msg));
check('refusal null', msg.refusal === null, JSON.stringify(msg));

const stream = await client.chat.completions.create({ ...base, stream: true });
let reasoning = '';
let content = '';
let order = '';
for await (const chunk of stream) {
  const d = chunk.choices[0]?.delta ?? {};
  if (d.reasoning_content) {
    reasoning += d.reasoning_content;
    order += 'r';
  }
  if (d.content) {
    content += d.content;
    order += 'c';
  }
}
check('streamed split equals the non-streamed one', reasoning === msg.reasoning_content &&
  content === msg.content, `${reasoning} | ${content}`);
check('streamed reasoning before content', /^r+c+$/.test(order), order);

const nothink = await client.chat.completions.create({
  ...base,
  chat_template_kwargs: { enable_thinking: false },
});
const m2 = nothink.choices[0].message;
check('enable_thinking false: no reasoning_content', !('reasoning_content' in m2), JSON.stringify(m2));
check('enable_thinking false: all content', m2.content === '<think>Let me think</think>The answer',
  JSON.stringify(m2));
summary();
