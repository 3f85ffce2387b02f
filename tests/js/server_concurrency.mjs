// 64 concurrent streaming clients (openai client) must all finish with the output the same
// greedy request gives alone, and the engine must have batched them (/metrics).
// Usage: node server_concurrency.mjs http://127.0.0.1:PORT [clients]
import OpenAI from 'openai';

import { check, metrics, summary, waitForMetrics } from './server_check.mjs';

const url = process.argv[2];
const clients = Number(process.argv[3] ?? 64);
const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'sk-unused', maxRetries: 0, timeout: 300000 });
const model = (await client.models.list()).data[0].id;

const topics = ['the sea', 'a mountain', 'an old clock', 'rain in the city', 'a lost key', 'the moon',
  'a small robot', 'autumn leaves'];
const prompts = topics.map((t) => `Write one sentence about ${t}:`);
const maxTokens = 24;
const base = { model, max_tokens: maxTokens, temperature: 0, ignore_eos: true, logprobs: 2 };

// Greedy tokens may legitimately differ between batch shapes only after a near tie (float
// summation order differs); DESIGN.md §5 compares where the top-2 margin is clear.
const kTie = 1e-3;
function firstClearMismatch(alone, batched) {
  const n = Math.max(alone.tokens.length, batched.tokens.length);
  for (let i = 0; i < n; i++) {
    if (alone.tokens[i] === batched.tokens[i]) continue;
    const top = Object.values(alone.top[i] ?? {}).sort((a, b) => b - a);
    const margin = top.length > 1 ? top[0] - top[1] : Infinity;
    return margin < kTie ? -1 : i;  // -1: diverged after a near tie, allowed
  }
  return -1;
}

// Alone: one request at a time.
const alone = [];
for (const prompt of prompts) {
  const r = await client.completions.create({ ...base, prompt });
  const L = r.choices[0].logprobs;
  alone.push({ text: r.choices[0].text, tokens: L.tokens, top: L.top_logprobs });
}
check('baseline: every prompt produced max_tokens tokens', alone.every((a) => a.tokens.length === maxTokens));

const before = await metrics(url);
const t0 = Date.now();
const results = await Promise.all(
  Array.from({ length: clients }, async (_, i) => {
    const p = i % prompts.length;
    try {
      const stream = await client.completions.create({ ...base, prompt: prompts[p], stream: true, stream_options: { include_usage: true } });
      let text = '';
      const tokens = [];
      let finish = null;
      let usage = null;
      for await (const chunk of stream) {
        for (const c of chunk.choices) {
          text += c.text;
          if (c.logprobs) tokens.push(...c.logprobs.tokens);
          if (c.finish_reason) finish = c.finish_reason;
        }
        if (chunk.usage) usage = chunk.usage;
      }
      return { p, text, tokens, finish, usage };
    } catch (e) {
      return { p, error: String(e) };
    }
  }),
);
const secs = (Date.now() - t0) / 1000;
console.log(`${clients} streaming clients finished in ${secs.toFixed(1)} s`);

const errors = results.filter((r) => r.error);
check(`all ${clients} clients completed without error`, errors.length === 0, errors.slice(0, 3).map((r) => r.error).join('; '));
const ok = results.filter((r) => !r.error);
check('every stream finished with length and full usage', ok.every((r) => r.finish === 'length' && r.usage?.completion_tokens === maxTokens),
  JSON.stringify(ok.find((r) => r.finish !== 'length' || r.usage?.completion_tokens !== maxTokens)));
let exact = 0;
const bad = [];
for (const r of ok) {
  if (r.text === alone[r.p].text) {
    exact++;
    continue;
  }
  const at = firstClearMismatch(alone[r.p], r);
  if (at >= 0) bad.push({ prompt: r.p, at, alone: alone[r.p].text, batched: r.text });
}
console.log(`${exact}/${ok.length} outputs identical to the request run alone`);
check('batched outputs equal the alone outputs (up to near ties)', bad.length === 0, JSON.stringify(bad.slice(0, 2)));
check('most outputs are byte-identical', exact >= ok.length * 0.75, `${exact}/${ok.length}`);

const after = await metrics(url);
const maxSeqs = after['pagedserve_max_seqs_in_step'];
console.log(`max_seqs_in_step = ${maxSeqs}`);
check('the engine ran more than one sequence per step', maxSeqs > 1, String(maxSeqs));
check('generation tokens counted', after['pagedserve_generation_tokens_total'] - before['pagedserve_generation_tokens_total'] >= clients * maxTokens);
const [idle] = await waitForMetrics(url, (m) => m['pagedserve_num_requests_running'] === 0 && m['pagedserve_num_requests_waiting'] === 0 &&
  m['pagedserve_kv_cache_blocks{state="active"}'] === 0, 30000);
check('afterwards nothing runs and no block is held', idle);
check('no 500 answered', after['pagedserve_http_responses_total{code="500"}'] === 0);
summary();
