// The web chat page against a reasoning model (a scripted Qwen3 checkpoint whose reply is
// "<think>Let me think</think>The answer"): the reasoning streams into a folded <details>
// above the answer, and only the answer joins the history.
// Usage: node web_reasoning.mjs URL
import { chromium } from 'playwright-core';

import { check, summary } from './server_check.mjs';

const url = process.argv[2];
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox'],  // CI containers run as root, where Chromium's sandbox cannot start
  timeout: 60000,
});
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(60000);
  const bodies = [];
  await page.route('**/v1/chat/completions', (route) => {
    bodies.push(JSON.parse(route.request().postData() || 'null'));
    return route.continue();
  });
  await page.goto(url + '/');
  await page.waitForFunction(() => document.getElementById('model-name').textContent !== '…');
  // Greedy, so the scripted reply comes out exactly.
  await page.evaluate(() => {
    const t = document.getElementById('temperature');
    t.value = '0';
    t.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await page.fill('#input', 'What is six times seven?');
  await page.press('#input', 'Enter');
  await page.waitForSelector('.msg.assistant:not(.streaming)');
  const a = await page.evaluate(() => {
    const b = [...document.querySelectorAll('.msg.assistant')].pop();
    const box = b.querySelector('details.reasoning');
    return {
      boxShown: box && !box.hidden,
      open: box && box.open,
      summary: box && box.querySelector('summary').textContent,
      reasoning: box && box.querySelector('.reasoning-text').textContent,
      answer: b.querySelector('.text').textContent,
      boxFirst: box && b.firstElementChild === box,
    };
  });
  check('the reasoning box is shown, folded', a.boxShown && !a.open, JSON.stringify(a));
  check('it holds the reasoning', a.reasoning === 'Let me think', JSON.stringify(a));
  check('it sits above the answer', a.boxFirst && a.summary === 'Reasoning', JSON.stringify(a));
  check('the answer is the content only', a.answer === 'The answer', JSON.stringify(a));
  await page.fill('#input', 'And again?');
  await page.press('#input', 'Enter');
  await page.waitForFunction(() => document.querySelectorAll('.msg.assistant:not(.streaming)').length >= 2);
  const history = bodies[bodies.length - 1].messages;
  const prior = history.find((m) => m.role === 'assistant');
  check('the history carries the answer, not the reasoning', prior && prior.content === 'The answer',
    JSON.stringify(history));
} finally {
  await browser.close();
}
summary();
