// The web chat page's LoRA drop-down (issue #22), in real headless Chromium against a server
// with adapters: it lists the adapters /v1/models names, and picking one makes the next chat
// request ask for it as `model` (and the base again after "none").
// Usage: node web_lora.mjs URL
import { chromium } from 'playwright-core';

import { check, summary } from './server_check.mjs';

const url = process.argv[2];
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox'],
  timeout: 60000,
});
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(60000);
  const models = [];
  await page.route('**/v1/chat/completions', async (route) => {
    models.push(JSON.parse(route.request().postData() || '{}').model);
    return route.continue();
  });
  const listed = (await (await fetch(url + '/v1/models')).json()).data;
  await page.goto(url + '/');
  await page.waitForFunction(() => document.getElementById('adapter').options.length > 1);
  const options = await page.$$eval('#adapter option', (os) => os.map((o) => o.value));
  const adapters = listed.filter((m) => m.parent).map((m) => m.id);
  check('the drop-down lists every adapter of /v1/models', JSON.stringify(options) === JSON.stringify(['', ...adapters]),
    JSON.stringify(options));
  check('the drop-down is shown', await page.isVisible('#adapter'));

  async function ask(q) {
    await page.fill('#input', q);
    await page.press('#input', 'Enter');
    await page.waitForFunction(() => !document.getElementById('send').disabled);
  }
  await page.selectOption('#adapter', adapters[0]);
  check('the panel shows the chosen adapter', (await page.textContent('#model-name')) === adapters[0]);
  await ask('hello');
  check('the request asks for the adapter', models.at(-1) === adapters[0], String(models.at(-1)));
  await page.selectOption('#adapter', '');
  await ask('hello again');
  check('"none" asks for the base model', models.at(-1) === listed[0].id, String(models.at(-1)));
} finally {
  await browser.close();
}
summary();
