// Drives the web chat page (served by `pagedserve serve` at /) in real headless Chromium.
// Usage: node web_chat.mjs URL SCREENSHOT.png [COPY.png]
// The model is random, so answers are noise: this checks the mechanics (streaming, stop,
// knobs sent, history, consistency count, errors shown), not the words.
import { chromium } from 'playwright-core';
import { copyFileSync } from 'node:fs';

const [url, shot, shotCopy] = process.argv.slice(2);
if (!url || !shot) {
  console.error('usage: node web_chat.mjs URL SCREENSHOT.png [COPY.png]');
  process.exit(2);
}
let passed = 0;
let failed = 0;
function check(cond, name, detail = '') {
  if (cond) {
    passed++;
    console.log(`ok   - ${name}`);
  } else {
    failed++;
    console.log(`FAIL - ${name}${detail ? ': ' + detail : ''}`);
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function runningRequests() {
  const text = await (await fetch(url + '/metrics')).text();
  const m = text.match(/^pagedserve_num_requests_running (\S+)$/m);
  return m ? Number(m[1]) : NaN;
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox'],  // CI containers run as root, where Chromium's sandbox cannot start
  timeout: 60000,
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.setDefaultTimeout(60000);
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));

  // Every chat request body, captured by interception; the next one can be made to fail as a
  // dropped connection would.
  const bodies = [];
  let dropNext = false;
  await page.route('**/v1/chat/completions', async (route) => {
    bodies.push(JSON.parse(route.request().postData() || 'null'));
    if (dropNext) {
      dropNext = false;
      return route.abort('connectionreset');
    }
    return route.continue();
  });

  const expectedModel = (await (await fetch(url + '/v1/models')).json()).data[0].id;
  await page.goto(url + '/');
  await page.waitForFunction(() => document.getElementById('model-name').textContent !== '…');
  check((await page.textContent('#model-name')) === expectedModel, 'the page shows the model name from /v1/models');

  const lastAssistant = () => page.evaluate(() => {
    const all = document.querySelectorAll('.msg.assistant');
    const b = all[all.length - 1];
    if (!b) return null;
    return {
      len: b.querySelector('.text').textContent.length,
      streaming: b.classList.contains('streaming'),
      finish: b.dataset.finish || null,
      stats: b.querySelector('.stats') ? b.querySelector('.stats').textContent : '',
      titles: [...b.querySelectorAll('.tok')].map((t) => t.title),
    };
  });
  // Waits for the newest answer to finish; returns the distinct text lengths seen meanwhile.
  async function waitAnswer(before) {
    const lengths = new Set();
    for (let i = 0; i < 2400; i++) {
      const n = await page.locator('.msg.assistant').count();
      const a = n > before ? await lastAssistant() : null;
      if (a && a.streaming && a.len > 0) lengths.add(a.len);
      if (a && !a.streaming) return { a, lengths };
      if (n <= before && (await page.locator('.msg.error').count()) > 0) return { a: null, lengths };
      await sleep(25);
    }
    return { a: null, lengths };
  }
  const setValue = (sel, v) => page.$eval(sel, (e, v) => {
    e.value = v;
    e.dispatchEvent(new Event('input', { bubbles: true }));
  }, String(v));
  const assistants = () => page.locator('.msg.assistant').count();

  // 1. A question streams in token by token. Counted as the page sees it: a MutationObserver
  // records each piece of text added to an answer while it is still streaming, however fast the
  // tokens come (polling the page would miss pieces on a fast machine).
  await page.evaluate(() => {
    window.streamedAppends = 0;
    new MutationObserver((records) => {
      for (const r of records) {
        const added = [...r.addedNodes].some((n) => n.classList && n.classList.contains('tok'));
        if (added && r.target.closest('.msg.assistant.streaming')) window.streamedAppends++;
      }
    }).observe(document.getElementById('messages'), { childList: true, subtree: true });
  });
  await setValue('#max-tokens', 160);
  let before = await assistants();
  await page.fill('#input', 'What is the capital of France?');
  await page.press('#input', 'Enter');
  let { a, lengths } = await waitAnswer(before);
  check(a && (a.finish === 'length' || a.finish === 'stop'), 'Enter sends; the answer finishes', JSON.stringify(a));
  const appends = await page.evaluate(() => window.streamedAppends);
  check(appends >= 3, `the answer appeared progressively (${appends} pieces added while streaming; ${lengths.size} partial lengths seen by polling)`);
  check(a && /\d+ tokens/.test(a.stats) && /ms to first token/.test(a.stats) && /tok\/s/.test(a.stats),
        'tokens, time to first token and tokens/s shown under the answer', a && a.stats);
  check(a && /confidence (high|medium|low)/.test(a.stats), 'a confidence label is shown', a && a.stats);
  check(a && a.titles.length > 0 && a.titles.every((t) => /probability \d\.\d{3}/.test(t)),
        'hovering a token shows its probability (title on every token span)');
  check((await page.inputValue('#input')) === '', 'the input box is cleared after sending');
  const first = bodies[bodies.length - 1];
  check(first.stream === true && first.logprobs === true && first.messages.length === 1,
        'the request streams, asks for logprobs, and sends the question', JSON.stringify(first));

  // 2. Shift+Enter adds a line; the second question carries the first turn.
  await page.fill('#input', 'line one');
  await page.press('#input', 'Shift+Enter');
  await page.type('#input', 'line two');
  const sentBefore = bodies.length;
  check((await page.inputValue('#input')) === 'line one\nline two' && bodies.length === sentBefore,
        'Shift+Enter makes a new line without sending');
  before = await assistants();
  await page.press('#input', 'Enter');
  ({ a } = await waitAnswer(before));
  const second = bodies[bodies.length - 1];
  check(second.messages.length === 3 && second.messages[0].role === 'user' &&
        second.messages[1].role === 'assistant' && second.messages[2].content === 'line one\nline two',
        'multi-turn: the history is sent with the next question', JSON.stringify(second.messages.map((m) => m.role)));

  // 3. Knobs from the side panel reach the request.
  await page.fill('#system', 'You are terse.');
  await setValue('#temperature', 0.35);
  await setValue('#top-p', 0.9);
  await page.fill('#top-k', '7');
  await setValue('#max-tokens', 24);
  await page.fill('#repetition-penalty', '1.1');
  await page.fill('#seed', '1234');
  before = await assistants();
  await page.fill('#input', 'Knobs?');
  await page.click('#send');
  ({ a } = await waitAnswer(before));
  const k = bodies[bodies.length - 1];
  check(k.temperature === 0.35 && k.top_p === 0.9 && k.top_k === 7 && k.max_tokens === 24 &&
        k.repetition_penalty === 1.1 && k.seed === 1234,
        'temperature, top_p, top_k, max_tokens, repetition_penalty and seed are sent', JSON.stringify(k));
  check(k.messages[0].role === 'system' && k.messages[0].content === 'You are terse.',
        'the system prompt is sent first');
  check(a && /\b(2[0-4]|1?\d) tokens/.test(a.stats), 'max tokens 24 bounds the answer', a && a.stats);
  await page.fill('#seed', '');
  await page.fill('#system', '');

  // 4. Stop cancels a long generation, and the server frees it.
  await page.click('#new-chat');
  check((await page.locator('.msg').count()) === 0, 'New chat clears the page');
  await setValue('#max-tokens', 3000);
  before = await assistants();
  await page.fill('#input', 'Tell me a very long story.');
  await page.press('#input', 'Enter');
  await page.waitForFunction(() => {
    const b = document.querySelector('.msg.assistant.streaming .text');
    return b && b.textContent.length > 20;
  });
  check((await runningRequests()) === 1, 'the server is running the long answer');
  await page.click('#stop');
  ({ a } = await waitAnswer(before));
  check(a && a.finish === 'stopped', 'Stop ends the answer (finish: stopped)', JSON.stringify(a));
  let running = NaN;
  for (let i = 0; i < 600; i++) {  // at most 30 s: the server frees it when it sees the close
    running = await runningRequests();
    if (running === 0) break;
    await sleep(50);
  }
  check(running === 0, '/metrics shows no running request after Stop', `running ${running}`);
  const afterStop = bodies[bodies.length - 1];
  check(afterStop.messages.length === 1, 'New chat dropped the history', JSON.stringify(afterStop.messages));

  // 5. A server error (max tokens over the context) appears in the page.
  const errorsBefore = await page.locator('.msg.error').count();
  await setValue('#max-tokens', 100000);
  await page.fill('#input', 'Too long?');
  await page.press('#input', 'Enter');
  await page.waitForFunction((n) => document.querySelectorAll('.msg.error').length > n, errorsBefore);
  const err = await page.locator('.msg.error').last().textContent();
  check(/Server error 400/.test(err) && /context/.test(err), 'a 400 (max tokens over the context) is shown', err);
  check(!(await page.isDisabled('#send')) && (await page.isDisabled('#stop')), 'after an error the page is ready again');

  // 6. A dropped connection appears in the page too.
  await setValue('#max-tokens', 16);
  dropNext = true;
  await page.fill('#input', 'Are you there?');
  await page.press('#input', 'Enter');
  await page.waitForFunction((n) => document.querySelectorAll('.msg.error').length > n + 1, errorsBefore);
  const lost = await page.locator('.msg.error').last().textContent();
  check(/Lost the connection/.test(lost), 'a lost connection is shown', lost);

  // 7. The consistency check asks 5 times at temperature 0.5 and counts agreeing answers.
  await page.click('#new-chat');
  await setValue('#max-tokens', 48);
  await setValue('#temperature', 0.7);
  before = await assistants();
  await page.fill('#input', 'What is two plus two?');
  await page.press('#input', 'Enter');
  await waitAnswer(before);
  await page.click('#consistency');
  await page.waitForSelector('.msg.consistency[data-agree]');
  const cc = await page.locator('.msg.consistency').textContent();
  const agree = Number(await page.getAttribute('.msg.consistency', 'data-agree'));
  check(/[1-5] of 5 answers agree/.test(cc) && agree >= 1 && agree <= 5, `the consistency check shows a count out of 5 (${agree})`, cc);
  const ccBody = bodies[bodies.length - 1];
  check(ccBody.n === 5 && ccBody.temperature === 0.5 && ccBody.stream === false &&
        ccBody.messages[ccBody.messages.length - 1].content === 'What is two plus two?',
        'the check asks the last question 5 times at temperature 0.5', JSON.stringify(ccBody));

  check(pageErrors.length === 0, 'no uncaught errors in the page', pageErrors.join('; '));
  await page.screenshot({ path: shot });
  if (shotCopy) copyFileSync(shot, shotCopy);
  console.log(`screenshot: ${shot}${shotCopy ? ' (copied to ' + shotCopy + ')' : ''}`);
} catch (e) {
  failed++;
  console.log(`FAIL - ${e.stack || e}`);
} finally {
  await browser.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
