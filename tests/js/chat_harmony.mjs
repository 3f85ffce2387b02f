// The official openai client against a server whose chat template is gpt-oss's (harmony): one
// request whole and one streamed, with the given tools. Prints, for each, the message's content,
// reasoning_content, tool calls and finish reason (the stream's deltas concatenated), as JSON
// for the e2e script (tests/e2e/chat_harmony.sh).
// Usage: node chat_harmony.mjs http://127.0.0.1:PORT 'TOOLS_JSON'
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: `${process.argv[2]}/v1`, apiKey: 'sk-unused', maxRetries: 0 });
const model = (await client.models.list()).data[0].id;
const tools = JSON.parse(process.argv[3]);
const request = {
  model,
  messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
  max_tokens: 64,
  temperature: 0,
  ...(tools.length ? { tools } : {}),
};

const r = await client.chat.completions.create(request);
const m = r.choices[0].message;
const whole = {
  content: m.content,
  reasoning: m.reasoning_content ?? null,
  calls: (m.tool_calls ?? []).map((c) => ({ id: c.id.startsWith('call_'), name: c.function.name, arguments: c.function.arguments })),
  finish: r.choices[0].finish_reason,
};

const stream = await client.chat.completions.create({ ...request, stream: true });
const streamed = { content: '', reasoning: '', calls: [], finish: null };
for await (const chunk of stream) {
  const c = chunk.choices[0];
  if (!c) continue;
  streamed.content += c.delta.content ?? '';
  streamed.reasoning += c.delta.reasoning_content ?? '';
  for (const t of c.delta.tool_calls ?? []) {
    if (!streamed.calls[t.index]) streamed.calls[t.index] = { id: false, name: '', arguments: '' };
    const call = streamed.calls[t.index];
    if (t.id) call.id = t.id.startsWith('call_');
    call.name += t.function?.name ?? '';
    call.arguments += t.function?.arguments ?? '';
  }
  if (c.finish_reason) streamed.finish = c.finish_reason;
}
console.log(JSON.stringify({ whole, streamed }));
