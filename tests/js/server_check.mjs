// Helpers shared by the server_*.mjs end-to-end scripts: counted checks, /metrics reading, and
// a raw SSE reader for when we need bytes exactly as the server sent them.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

let passed = 0;
let failed = 0;

export function check(name, ok, detail = '') {
  if (ok) {
    passed++;
    console.log(`ok   - ${name}`);
  } else {
    failed++;
    console.log(`FAIL - ${name}${detail ? `: ${detail}` : ''}`);
  }
  return ok;
}

// Prints the summary line and sets the exit code; call once at the end.
export function summary() {
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed > 0 ? 1 : 0;
}

export async function metrics(url) {
  const res = await fetch(`${url}/metrics`);
  const text = await res.text();
  const values = {};
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const sp = line.lastIndexOf(' ');
    values[line.slice(0, sp)] = Number(line.slice(sp + 1));
  }
  return values;
}

// Polls until pred(metrics) holds or timeoutMs passes; returns [ok, elapsedMs, lastMetrics].
export async function waitForMetrics(url, pred, timeoutMs) {
  const t0 = Date.now();
  let m = {};
  while (Date.now() - t0 < timeoutMs) {
    m = await metrics(url);
    if (pred(m)) return [true, Date.now() - t0, m];
    await new Promise((r) => setTimeout(r, 25));
  }
  return [false, Date.now() - t0, m];
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// POST with node:http so the test controls the socket (keep-alive agent, destroying it).
// Resolves {status, headers, body, reusedSocket}; onData sees each chunk and may return 'stop'
// to destroy the request mid-response.
export function post(url, path, body, { agent, onData, headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const data = typeof body === 'string' ? body : JSON.stringify(body);
    const req = http.request(
      `${url}${path}`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
          if (onData && onData(chunk, text) === 'stop') {
            req.destroy();
            resolve({ status: res.statusCode, headers: res.headers, body: text, destroyed: true });
          }
        });
        res.on('end', () =>
          resolve({ status: res.statusCode, headers: res.headers, body: text, reusedSocket: req.reusedSocket }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(120000, () => req.destroy(new Error('request timed out')));
    req.on('error', (e) => (onData ? resolve({ error: e }) : reject(e)));
    req.end(data);
  });
}

// The JSON payloads of an SSE body, and whether it ended with [DONE].
export function sseEvents(body) {
  const events = [];
  let done = false;
  for (const block of body.split('\n\n')) {
    if (!block.startsWith('data: ')) continue;
    const payload = block.slice(6);
    if (payload === '[DONE]') done = true;
    else events.push(JSON.parse(payload));
  }
  return { events, done };
}

// The first English get_weather dialogue of the shipped model's training data (data/tiny_chat):
// the model answers its question with that call. {messages: [user, call, result, ...], tools}.
export function weatherDialogue(root) {
  for (const line of fs.readFileSync(path.join(root, 'data/tiny_chat/train.jsonl'), 'utf8').split('\n')) {
    if (!line) continue;
    const r = JSON.parse(line);
    if (r.kind !== 'tool_answer') continue;
    const [user, call] = r.messages;
    if (call.tool_calls[0].function.name === 'get_weather' && !/[\u4e00-\u9fff]/.test(user.content)) return r;
  }
  return null;
}
