// The official openai client against a multi-LoRA `pagedserve serve` (issue #22). Each adapter's
// greedy answer must equal the answer of a server running the base merged with that adapter;
// the base's must equal a plain server's. Also: /v1/models, 404 for unknown names, runtime
// load / unload (vLLM's bodies), and unloading an adapter while a stream uses it.
// Usage: node lora_serving.mjs MULTI_URL PLAIN_URL MERGED_ALPHA_URL MERGED_BETA_URL ADAPTER_DIR
import OpenAI from 'openai';

import { check, summary } from './server_check.mjs';

const [multiUrl, plainUrl, alphaUrl, betaUrl, adapters] = process.argv.slice(2);
const client = (url) =>
  new OpenAI({ baseURL: `${url}/v1`, apiKey: 'sk-unused', maxRetries: 0, timeout: 120000 });
const multi = client(multiUrl);
const refs = {
  base: [client(plainUrl), 'base'],
  alpha: [client(alphaUrl), 'merged-alpha'],
  beta: [client(betaUrl), 'merged-beta'],
};

const prompt = 'Once upon a time there was a little robot who';
const messages = [{ role: 'user', content: 'Tell me about the sea and the sky.' }];
const greedy = { temperature: 0, max_tokens: 16, ignore_eos: true };

async function complete(c, model, stream) {
  if (!stream) {
    const r = await c.completions.create({ model, prompt, ...greedy });
    return { text: r.choices[0].text, model: r.model };
  }
  let text = '';
  let seen = '';
  for await (const chunk of await c.completions.create({ model, prompt, ...greedy, stream: true })) {
    seen = chunk.model;
    for (const ch of chunk.choices) text += ch.text ?? '';
  }
  return { text, model: seen };
}

async function chat(c, model, stream) {
  if (!stream) {
    const r = await c.chat.completions.create({ model, messages, ...greedy });
    return { text: r.choices[0].message.content, model: r.model };
  }
  let text = '';
  let seen = '';
  for await (const chunk of await c.chat.completions.create({ model, messages, ...greedy, stream: true })) {
    seen = chunk.model;
    for (const ch of chunk.choices) text += ch.delta?.content ?? '';
  }
  return { text, model: seen };
}

async function post(path, body) {
  const res = await fetch(`${multiUrl}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function status(fn) {
  try {
    await fn();
    return 200;
  } catch (e) {
    return e.status ?? String(e);
  }
}

// /v1/models: the base, then each adapter with its parent.
const models = (await multi.models.list()).data;
check('/v1/models lists base + 3 adapters', models.map((m) => m.id).join(',') === 'base,alpha,beta,gamma',
  JSON.stringify(models.map((m) => m.id)));
check('adapters name their parent', models.slice(1).every((m) => m.parent === 'base'));
check('base has no parent', models[0].parent === null);

// Each adapter (and the base) answers as its merged model does, streaming and not, in a batch.
const names = ['base', 'alpha', 'beta'];
const jobs = [];
for (const name of names) {
  for (const stream of [false, true]) {
    jobs.push([name, stream, 'completion', complete(multi, name, stream)]);
    jobs.push([name, stream, 'chat', chat(multi, name, stream)]);
  }
}
const texts = {};
for (const [name, stream, kind, promise] of jobs) {
  const got = await promise;
  const [ref, refModel] = refs[name];
  const want = kind === 'chat' ? await chat(ref, refModel, false) : await complete(ref, refModel, false);
  check(`${kind} ${name} stream=${stream} equals the merged model`, got.text === want.text,
    `${JSON.stringify(got.text)} vs ${JSON.stringify(want.text)}`);
  check(`${kind} ${name} stream=${stream} reports model ${name}`, got.model === name, got.model);
  texts[`${kind}/${name}`] = got.text;
}
check('alpha answers differently from the base', texts['completion/alpha'] !== texts['completion/base']);
check('beta answers differently from alpha', texts['completion/beta'] !== texts['completion/alpha']);
const gamma = await complete(multi, 'gamma', false);
check('the .pth adapter serves', gamma.text.length > 0 && gamma.model === 'gamma');

// Unknown names are 404 like an unknown model.
let notFound = null;
try {
  await multi.completions.create({ model: 'nope', prompt, max_tokens: 2 });
} catch (e) {
  notFound = e;
}
check('unknown adapter is 404 model_not_found', notFound?.status === 404 && notFound?.code === 'model_not_found',
  `${notFound?.status} ${notFound?.code}`);

// Runtime load / unload with vLLM's bodies.
let r = await post('/v1/load_lora_adapter', { lora_name: 'delta', lora_path: `${adapters}/delta` });
check('load delta: 200', r.status === 200, JSON.stringify(r.body));
check('/v1/models lists delta', (await multi.models.list()).data.some((m) => m.id === 'delta' && m.parent === 'base'));
check('delta serves', (await complete(multi, 'delta', true)).model === 'delta');
r = await post('/v1/load_lora_adapter', { lora_name: 'delta', lora_path: `${adapters}/delta` });
check('loading a taken name: 400', r.status === 400 && /already loaded/.test(r.body.error?.message), JSON.stringify(r.body));
r = await post('/v1/load_lora_adapter', { lora_name: 'x', lora_path: `${adapters}/badshape` });
check('bad shape: 400 naming the tensor', r.status === 400 && /q_proj\.lora_A\.weight/.test(r.body.error?.message),
  JSON.stringify(r.body));
r = await post('/v1/load_lora_adapter', { lora_name: 'x', lora_path: `${adapters}/gpt2` });
check('another architecture: 400 naming the tensor', r.status === 400 && /c_attn/.test(r.body.error?.message),
  JSON.stringify(r.body));
r = await post('/v1/load_lora_adapter', { lora_name: 'x' });
check('missing lora_path: 400 naming it', r.status === 400 && r.body.error?.param === 'lora_path');
r = await post('/v1/load_lora_adapter', { lora_name: 'x', lora_path: `${adapters}/alpha` });
check('a fifth adapter over --max-loras 4: 400', r.status === 400 && /--max-loras/.test(r.body.error?.message),
  JSON.stringify(r.body));
r = await post('/v1/unload_lora_adapter', { lora_name: 'delta' });
check('unload delta: 200', r.status === 200, JSON.stringify(r.body));
check('delta is 404 after unload', (await status(() => complete(multi, 'delta', false))) === 404);
r = await post('/v1/unload_lora_adapter', { lora_name: 'delta' });
check('unloading it again: 404', r.status === 404);

// Unloading an adapter a stream is using: the stream ends normally, with all its tokens.
const long = multi.completions.create({ model: 'gamma', prompt, temperature: 0, max_tokens: 120,
  ignore_eos: true, stream: true });
let tokens = 0;
let finish = null;
let unloaded = null;
for await (const chunk of await long) {
  tokens += 1;
  if (tokens === 3) unloaded = await post('/v1/unload_lora_adapter', { lora_name: 'gamma' });
  for (const ch of chunk.choices) finish = ch.finish_reason ?? finish;
}
check('unload during a stream: 200 with 1 request in flight',
  unloaded?.status === 200 && unloaded?.body.requests_in_flight === 1, JSON.stringify(unloaded?.body));
check('the stream still ends with length', finish === 'length', `${finish} after ${tokens} chunks`);
check('gamma is gone afterwards', (await status(() => complete(multi, 'gamma', false))) === 404);
r = await post('/v1/load_lora_adapter', { lora_name: 'gamma2', lora_path: `${adapters}/gamma/gamma.pth` });
check('its slot takes a new adapter', r.status === 200, JSON.stringify(r.body));

// Servers without --enable-lora-runtime-updates refuse, naming the flag.
const off = await fetch(`${alphaUrl}/v1/load_lora_adapter`, {
  method: 'POST', headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ lora_name: 'a', lora_path: `${adapters}/alpha` }),
});
check('runtime updates off: 404 naming the flag', off.status === 404 &&
  /--enable-lora-runtime-updates/.test((await off.json()).error?.message));

summary();
