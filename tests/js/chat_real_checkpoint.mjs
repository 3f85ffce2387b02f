// The official openai client against a server on a real checkpoint's Qwen3 template: the extra
// body field chat_template_kwargs goes through to the template, and the reply is the
// chat.completion the client's types expect. Prints a JSON summary for the e2e script.
// Usage: node chat_real_checkpoint.mjs http://127.0.0.1:PORT 'MESSAGES_JSON'
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: `${process.argv[2]}/v1`, apiKey: 'sk-unused', maxRetries: 0 });
const model = (await client.models.list()).data[0].id;
const messages = JSON.parse(process.argv[3]);
const r = await client.chat.completions.create({
  model,
  messages,
  max_tokens: 4,
  temperature: 0,
  chat_template_kwargs: { enable_thinking: false },
});
console.log(JSON.stringify({
  prompt_tokens: r.usage.prompt_tokens,
  object: r.object,
  refusal: r.choices[0].message.refusal,
  finish: r.choices[0].finish_reason,
}));
