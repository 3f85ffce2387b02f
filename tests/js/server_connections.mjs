// Connection behaviour: a client that leaves has its request cancelled and blocks freed within
// moments (watched on /metrics); keep-alive connections stay usable right after a streamed
// response; a token that is a lone UTF-8 continuation byte never fails a request.
// Usage: node server_connections.mjs http://127.0.0.1:PORT MODEL_DIR
import fs from 'node:fs';
import http from 'node:http';

import { check, metrics, post, sseEvents, sleep, summary, waitForMetrics } from './server_check.mjs';

const url = process.argv[2];
const modelDir = process.argv[3];
const long = { prompt: 'Count forever:', max_tokens: 3000, temperature: 0, ignore_eos: true };
const idle = (m) =>
  m['pagedserve_num_requests_running'] === 0 &&
  m['pagedserve_num_requests_waiting'] === 0 &&
  m['pagedserve_kv_cache_blocks{state="active"}'] === 0;

// 1. Streaming client disconnects after a few chunks.
{
  const before = await metrics(url);
  let chunks = 0;
  const r = await post(url, '/v1/completions', { ...long, stream: true }, {
    onData: () => (++chunks >= 4 ? 'stop' : undefined),
  });
  check('stream disconnect: got chunks before leaving', r.destroyed === true && chunks >= 4, JSON.stringify(r.error ?? ''));
  const [ok, ms, m] = await waitForMetrics(url, idle, 30000);
  console.log(`stream disconnect: idle after ${ms} ms`);
  check('stream disconnect: request cancelled and blocks freed', ok, JSON.stringify(m));
  check('stream disconnect: counted as aborted',
    m['pagedserve_requests_aborted_total'] > before['pagedserve_requests_aborted_total']);
}

// 2. Non-streaming client disconnects while its request runs.
{
  const before = await metrics(url);
  const req = http.request(`${url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } });
  req.on('error', () => {});
  req.end(JSON.stringify(long));
  const [running] = await waitForMetrics(url, (m) => m['pagedserve_num_requests_running'] >= 1, 30000);
  check('non-stream disconnect: request is running', running);
  await sleep(200);
  req.destroy();
  const [ok, ms, m] = await waitForMetrics(url, idle, 30000);
  console.log(`non-stream disconnect: idle after ${ms} ms`);
  check('non-stream disconnect: request cancelled and blocks freed', ok, JSON.stringify(m));
  check('non-stream disconnect: counted as aborted',
    m['pagedserve_requests_aborted_total'] > before['pagedserve_requests_aborted_total']);
}

// 3. Keep-alive: one socket, a streamed response, then at once another request, many times.
{
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let failures = 0;
  let reused = 0;
  const rounds = 10;
  for (let i = 0; i < rounds; i++) {
    const s = await post(url, '/v1/completions', { prompt: `round ${i}`, max_tokens: 4, temperature: 0, stream: true }, { agent });
    const { done } = sseEvents(s.body);
    if (s.status !== 200 || !done) failures++;
    if (s.reusedSocket) reused++;
    const j = await post(url, '/v1/completions', { prompt: `round ${i}`, max_tokens: 4, temperature: 0 }, { agent });
    if (j.status !== 200 || !JSON.parse(j.body).choices) failures++;
    if (j.reusedSocket) reused++;
  }
  agent.destroy();
  check('keep-alive: every request on the reused connection succeeded', failures === 0, `${failures} failures`);
  check('keep-alive: the connection was actually reused', reused >= 2 * rounds - 1, `${reused} of ${2 * rounds}`);
}

// 4. A lone UTF-8 continuation byte as a generated token (forced with logit_bias).
{
  const tok = JSON.parse(fs.readFileSync(`${modelDir}/tokenizer.json`, 'utf8'));
  // GPT-2 byte-level alphabet: byte 0x80 is written as the code point 256 + its rank among
  // the bytes that are not printable.
  const printable = (b) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  let rank = 0;
  for (let b = 0; b < 0x80; b++) if (!printable(b)) rank++;
  const piece = String.fromCodePoint(256 + rank);
  const id = tok.model.vocab[piece];
  check('utf8: the vocabulary has the single-byte token 0x80', Number.isInteger(id), piece);
  const body = { prompt: 'x', max_tokens: 6, temperature: 0, ignore_eos: true, logit_bias: { [id]: 100 } };
  const whole = await post(url, '/v1/completions', body);
  check('utf8: non-stream answers 200 with valid JSON', whole.status === 200 && JSON.parse(whole.body).choices.length === 1,
    `${whole.status} ${whole.body.slice(0, 200)}`);
  const streamed = await post(url, '/v1/completions', { ...body, stream: true });
  let parsed = null;
  try {
    parsed = sseEvents(streamed.body);
  } catch (e) {
    parsed = null;
  }
  check('utf8: stream answers 200, valid events, [DONE]', streamed.status === 200 && parsed?.done === true,
    streamed.body.slice(0, 300));
  const chat = await post(url, '/v1/chat/completions', {
    messages: [{ role: 'user', content: 'x' }], max_tokens: 6, temperature: 0, ignore_eos: true,
    logit_bias: { [id]: 100 }, logprobs: true,
  });
  const lp = chat.status === 200 ? JSON.parse(chat.body).choices[0].logprobs.content : [];
  check('utf8: chat with logprobs answers 200, the token bytes are [128]',
    chat.status === 200 && lp.length > 0 && lp.every((t) => t.bytes.length === 1 && t.bytes[0] === 0x80),
    chat.body.slice(0, 300));
}

const m = await metrics(url);
check('no 500 answered', m['pagedserve_http_responses_total{code="500"}'] === 0);
summary();
