// The pagedserve web chat: streams answers from /v1/chat/completions (Server-Sent Events read
// through fetch, because EventSource cannot POST), keeps the conversation in the page and
// sends it with every request. No framework and no build step: the server embeds this file.
'use strict';

const $ = (id) => document.getElementById(id);
const state = {
  history: [],        // [{role, content}] of finished turns, sent with every question
  controller: null,   // AbortController of the request in flight
  busy: false,
  model: '',          // what requests ask for: the base model or the chosen LoRA adapter
  baseModel: '',
  lastQuestion: '',
  epoch: 0,           // bumped by New chat, so an answer that ends afterwards is not recorded
};

// ---- small helpers ---------------------------------------------------------------------

function headers() {
  const h = { 'Content-Type': 'application/json' };
  const key = $('api-key').value.trim();
  if (key) h.Authorization = 'Bearer ' + key;
  return h;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function scrollDown() {
  const m = $('messages');
  m.scrollTop = m.scrollHeight;
}

function addBubble(cls, text) {
  const b = el('div', 'msg ' + cls, text);
  $('messages').appendChild(b);
  scrollDown();
  return b;
}

function showError(text) {
  const b = addBubble('error', text);
  b.setAttribute('role', 'alert');
  return b;
}

// The OpenAI-style error body says what is wrong; fall back to the raw text.
async function errorOf(resp) {
  const text = await resp.text().catch(() => '');
  let msg = text;
  try {
    const j = JSON.parse(text);
    if (j && j.error && j.error.message) msg = j.error.message;
  } catch (_) { /* not JSON: keep the text */ }
  return `Server error ${resp.status}: ${msg || resp.statusText}`;
}

function setBusy(busy) {
  state.busy = busy;
  $('send').disabled = busy;
  $('consistency').disabled = busy;
  $('stop').disabled = !busy;
}

// ---- the knobs -------------------------------------------------------------------------

function numberOf(id) {
  const v = $(id).value.trim();
  return v === '' ? undefined : Number(v);
}

// Sampling fields of a request, from the side panel. Empty fields are left to the server.
function knobs() {
  const k = {
    temperature: numberOf('temperature'),
    top_p: numberOf('top-p'),
    top_k: numberOf('top-k'),
    max_tokens: numberOf('max-tokens'),
    repetition_penalty: numberOf('repetition-penalty'),
    seed: numberOf('seed'),
  };
  for (const name of Object.keys(k)) if (k[name] === undefined || Number.isNaN(k[name])) delete k[name];
  return k;
}

function conversation(question, withHistory) {
  const msgs = [];
  const system = $('system').value.trim();
  if (system) msgs.push({ role: 'system', content: system });
  if (withHistory) msgs.push(...state.history);
  msgs.push({ role: 'user', content: question });
  return msgs;
}

// Mean token probability -> the label under each answer.
function confidence(probs) {
  if (!probs.length) return null;
  const mean = probs.reduce((a, b) => a + b, 0) / probs.length;
  return { mean, label: mean > 0.8 ? 'high' : mean > 0.5 ? 'medium' : 'low' };
}

// ---- streaming one answer --------------------------------------------------------------

// Yields each `data:` payload of an SSE response as it arrives.
async function* sseData(resp) {
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      if (line.startsWith('data:')) yield line.slice(5).trim();
    }
  }
}

function renderStats(bubble, s) {
  const stats = el('div', 'stats');
  const seconds = (performance.now() - s.t0) / 1000;
  const tokens = s.usageTokens ?? s.probs.length;
  const decode = seconds - (s.ttft ?? seconds);
  const rate = tokens > 1 && decode > 0 ? (tokens - 1) / decode : 0;
  stats.append(
    el('span', 'stat-tokens', `${tokens} tokens`),
    el('span', 'stat-ttft', s.ttft === null ? 'no tokens' : `${(s.ttft * 1000).toFixed(0)} ms to first token`),
    el('span', 'stat-rate', `${rate.toFixed(1)} tok/s`),
    el('span', 'stat-finish', `finish: ${s.finish}`));
  const c = confidence(s.probs);
  if (c) {
    const badge = el('span', 'confidence ' + c.label, `confidence ${c.label}`);
    badge.title = `mean token probability ${c.mean.toFixed(3)} over ${s.probs.length} tokens`;
    badge.dataset.mean = c.mean.toFixed(4);
    stats.append(badge);
  }
  bubble.appendChild(stats);
  bubble.dataset.finish = s.finish;
}

// Adds streamed text to the bubble, one span per chunk, titled with its tokens' probability.
function appendText(textEl, text, probs) {
  const span = el('span', 'tok', text);
  if (probs.length) {
    const p = probs.reduce((a, b) => a + b, 0) / probs.length;
    span.title = probs.length === 1 ? `probability ${p.toFixed(3)}`
                                    : `mean probability ${p.toFixed(3)} over ${probs.length} tokens`;
    span.dataset.prob = p.toFixed(4);
  }
  textEl.appendChild(span);
}

async function ask(question) {
  if (state.busy || !question) return;
  state.lastQuestion = question;
  addBubble('user', question);
  const messages = conversation(question, true);
  const bubble = addBubble('assistant streaming', '');
  // A reasoning model's thinking (delta.reasoning_content) goes in a folded box above the
  // answer; the box appears with the first reasoning text.
  const reasoningBox = el('details', 'reasoning');
  reasoningBox.hidden = true;
  reasoningBox.appendChild(el('summary', '', 'Thinking…'));
  const reasoningEl = el('div', 'reasoning-text');
  reasoningBox.appendChild(reasoningEl);
  bubble.appendChild(reasoningBox);
  const textEl = el('div', 'text');
  bubble.appendChild(textEl);

  const body = {
    model: state.model || undefined, messages, stream: true,
    stream_options: { include_usage: true }, logprobs: true, ...knobs(),
  };
  const s = {
    t0: performance.now(), ttft: null, probs: [], usageTokens: null, finish: null, text: '', reasoning: '',
  };
  const epoch = state.epoch;
  let heldProbs = [];  // probabilities of tokens whose text the server still holds back
  state.controller = new AbortController();
  setBusy(true);
  let error = null;
  try {
    const resp = await fetch('/v1/chat/completions', {
      method: 'POST', headers: headers(), body: JSON.stringify(body), signal: state.controller.signal,
    });
    if (!resp.ok) throw new Error(await errorOf(resp));
    for await (const data of sseData(resp)) {
      if (data === '[DONE]') break;
      const j = JSON.parse(data);
      if (j.error) throw new Error('Server error: ' + (j.error.message || JSON.stringify(j.error)));
      if (j.usage) s.usageTokens = j.usage.completion_tokens;
      const c = j.choices && j.choices[0];
      if (!c) continue;
      const lp = (c.logprobs && c.logprobs.content) || [];
      for (const t of lp) heldProbs.push(Math.exp(t.logprob));
      if (lp.length && s.ttft === null) s.ttft = (performance.now() - s.t0) / 1000;
      const thought = c.delta && c.delta.reasoning_content;
      if (thought) {
        reasoningBox.hidden = false;
        reasoningEl.textContent += thought;
        s.reasoning += thought;
        scrollDown();
      }
      const text = c.delta && c.delta.content;
      if (text) {
        s.probs.push(...heldProbs);
        appendText(textEl, text, heldProbs);
        heldProbs = [];
        s.text += text;
        scrollDown();
      }
      if (c.finish_reason) s.finish = c.finish_reason;
    }
    s.probs.push(...heldProbs);
    if (!s.finish) error = 'The server closed the stream before the answer finished.';
  } catch (e) {
    if (e.name === 'AbortError') s.finish = 'stopped';
    else if (e instanceof TypeError) error = 'Lost the connection to the server: ' + e.message;
    else error = e.message;
  }
  bubble.classList.remove('streaming');
  reasoningBox.querySelector('summary').textContent = 'Reasoning';
  state.controller = null;
  setBusy(false);
  if (epoch !== state.epoch) return;  // New chat cleared the page while this was running
  if (error && !s.text && !s.reasoning) {
    bubble.remove();
  } else {
    renderStats(bubble, { ...s, finish: s.finish || 'error' });
    state.history.push({ role: 'user', content: question }, { role: 'assistant', content: s.text });
  }
  if (error) showError(error);
  scrollDown();
}

// ---- consistency check -----------------------------------------------------------------

// Answers "agree" when they are the same text up to case, punctuation and spacing.
function normalize(text) {
  return text.toLowerCase().replace(/[\p{P}\p{S}]+/gu, ' ').replace(/\s+/g, ' ').trim();
}

async function consistencyCheck() {
  if (state.busy) return;
  const question = $('input').value.trim() || state.lastQuestion;
  if (!question) {
    addBubble('info', 'Ask a question first (or type one), then run the consistency check.');
    return;
  }
  const box = addBubble('info consistency', `Consistency check: asking “${question}” 5 times at temperature 0.5…`);
  const k = knobs();
  delete k.seed;  // a fixed seed would make the five answers a function of the seed, not the model
  const body = {
    model: state.model || undefined, messages: conversation(question, false),
    ...k, temperature: 0.5, n: 5, stream: false,
  };
  state.controller = new AbortController();
  setBusy(true);
  try {
    const resp = await fetch('/v1/chat/completions', {
      method: 'POST', headers: headers(), body: JSON.stringify(body), signal: state.controller.signal,
    });
    if (!resp.ok) throw new Error(await errorOf(resp));
    const j = await resp.json();
    const answers = j.choices.map((c) => c.message.content || '');
    const groups = new Map();
    for (const a of answers) {
      const key = normalize(a);
      const g = groups.get(key) || { text: a, count: 0 };
      g.count += 1;
      groups.set(key, g);
    }
    const sorted = [...groups.values()].sort((a, b) => b.count - a.count);
    const agree = sorted[0].count;
    box.textContent = '';
    const head = el('div', 'agree',
      `Consistency check: ${agree} of ${answers.length} answers agree` +
      (agree >= 4 ? ' (stable)' : agree <= 2 ? ' (the model is unsure)' : ''));
    box.dataset.agree = String(agree);
    const list = el('ol', 'agree-list');
    for (const g of sorted) {
      const short = g.text.length > 140 ? g.text.slice(0, 140) + '…' : g.text;
      list.appendChild(el('li', '', `${g.count}× ${short || '(empty)'}`));
    }
    box.append(head, list);
  } catch (e) {
    box.remove();
    if (e.name === 'AbortError') addBubble('info', 'Consistency check stopped.');
    else showError(e instanceof TypeError ? 'Lost the connection to the server: ' + e.message : e.message);
  }
  state.controller = null;
  setBusy(false);
  scrollDown();
}

// ---- wiring ----------------------------------------------------------------------------

async function loadModel() {
  for (let attempt = 0; ; attempt++) {
    try {
      const resp = await fetch('/v1/models', { headers: headers() });
      if (!resp.ok) throw new Error(await errorOf(resp));
      const j = await resp.json();
      state.baseModel = j.data[0].id;
      state.model = state.baseModel;
      $('model-name').textContent = state.model;
      $('model-context').textContent = j.data[0].max_model_len ?? '?';
      // LoRA adapters are listed after the base with `parent` naming it (as vLLM lists them).
      const adapters = j.data.filter((m) => m.parent === state.baseModel);
      for (const a of adapters) {
        const opt = el('option', '', a.id + (a.lora_rank ? ' (rank ' + a.lora_rank + ')' : ''));
        opt.value = a.id;
        $('adapter').append(opt);
      }
      $('adapter-box').hidden = adapters.length === 0;
      return;
    } catch (e) {
      // Shown once, then retried quietly: the server may still be loading the model, or an
      // API key may be typed into the panel meanwhile (each try reads it afresh).
      if (attempt === 0) showError('Cannot list the model (/v1/models): ' + e.message + ' — retrying.');
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

function sendInput() {
  const q = $('input').value.trim();
  if (!q || state.busy) return;
  $('input').value = '';
  ask(q);
}

$('composer').addEventListener('submit', (e) => { e.preventDefault(); sendInput(); });
$('input').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); sendInput(); }
});
$('stop').addEventListener('click', () => { if (state.controller) state.controller.abort(); });
$('new-chat').addEventListener('click', () => {
  if (state.controller) state.controller.abort();
  state.epoch += 1;
  state.history = [];
  state.lastQuestion = '';
  $('messages').textContent = '';
  $('input').focus();
});
$('consistency').addEventListener('click', consistencyCheck);
$('adapter').addEventListener('change', () => {
  state.model = $('adapter').value || state.baseModel;
  $('model-name').textContent = state.model;
});
for (const id of ['temperature', 'top-p']) {
  $(id).addEventListener('input', () => { $(id + '-out').textContent = $(id).value; });
}
loadModel();
$('input').focus();
