// Drives the playground page (GET /) in headless Chromium with playwright-core, one scenario a
// run: node playground-browser.mjs <scenario> <base URL> <output dir> [arguments…]
// Prints "RESULT <json>" for the Java test to check against the gateway's store, and saves a
// screenshot of the page as <output dir>/<scenario>.png. Exits 1 on any failure or page error.

import { chromium } from 'playwright-core';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [scenario, base, outDir, ...rest] = process.argv.slice(2);
const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const WAIT = 20_000;

mkdirSync(outDir, { recursive: true });
const browser = await chromium.launch({
  executablePath,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const context = await browser.newContext({ viewport: { width: 1500, height: 1000 }, acceptDownloads: true });
const page = await context.newPage();
const problems = [];
page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
page.on('console', (m) => {
  // A reattach to a conversation that has no run yet is answered 404, which the browser logs.
  if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console error: ${m.text()}`);
});

const conversation = `pg-test-${scenario}-${Date.now()}`;

async function open(chat, mirror) {
  await page.goto(`${base}/#conversation=${conversation}&chat=${chat}&mirror=${mirror.join(',')}`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: WAIT });
}

/** Waits until every WebSocket column is open (an SSE column follows on its own). */
async function columnsReady(keys) {
  for (const k of keys) {
    await page.waitForSelector(`.col-head[data-column="${k}"] .state:is(.open, .idle)`, { timeout: WAIT });
  }
}

/** Waits for the frame of this type in a column's cells. */
function frameIn(column, type, extra = '') {
  return page.waitForSelector(`.mirror-row:not(.pending) .cell[data-dialect="${column}"] .frame[data-type="${type}"]${extra}`, { timeout: WAIT });
}

/** The seqs of a column's frames in the order the page shows them, top to bottom. */
function columnSeqs(column) {
  return page.$$eval(`.mirror-row:not(.head):not(.pending) .cell[data-dialect="${column}"] .frame[data-dir="in"]`,
    (els) => els.map((e) => e.dataset.seq).filter((s) => s !== '').map(Number));
}

function rowSeqs() {
  return page.$$eval('.mirror-row[data-seq]', (els) => els.map((e) => Number(e.dataset.seq)));
}

async function answer() {
  const bubble = await page.waitForSelector('#transcript .bubble.assistant[data-complete="true"]', { timeout: WAIT });
  return bubble.evaluate((b) => b.querySelector('.text').textContent);
}

function increasing(list) {
  return list.every((s, i) => i === 0 || s > list[i - 1]);
}

async function send(text) {
  await page.click('#composer-input');
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

const scenarios = {
  /** A message typed and sent with Enter; the answer streams into one bubble. */
  async chat() {
    await open('hai', ['hai']);
    await columnsReady(['hai']);
    await page.evaluate(() => {
      window.__updates = 0;
      new MutationObserver((records) => {
        for (const r of records) if (r.target.closest?.('.bubble.assistant') || r.target.classList?.contains('bubble')) window.__updates++;
      }).observe(document.getElementById('transcript'), { childList: true, subtree: true, characterData: true });
    });
    await send('What are the rules for food storage?');
    const text = await answer();
    const updates = await page.evaluate(() => window.__updates);
    const unlabeled = await page.$$eval('input, select, textarea', (els) => els
      .filter((e) => e.type !== 'hidden' && e.labels.length === 0 && !e.getAttribute('aria-label') && e.offsetParent !== null)
      .map((e) => e.id || e.outerHTML.slice(0, 80)));
    await page.screenshot({ path: join(outDir, 'chat.png') });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(200);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    await page.screenshot({ path: join(outDir, 'chat-narrow.png') });
    return { conversation, text, updates, unlabeled, overflow };
  },

  /** One run started from HAI, shown by three dialects at once. */
  async mirror() {
    const columns = ['hai', 'agui-ws', 'agentscope'];
    await open('hai', columns);
    await columnsReady(columns);
    await page.click('button[data-example="search"]');
    await frameIn('hai', 'status completed');
    await frameIn('agui-ws', 'RUN_FINISHED');
    await frameIn('agentscope', 'response completed');
    await answer();
    const seqs = {};
    for (const c of columns) seqs[c] = await columnSeqs(c);
    const rows = await rowSeqs();
    const labels = await page.$$eval('.mirror-row[data-seq] .core', (els) => els.map((e) => e.textContent));
    await page.screenshot({ path: join(outDir, 'mirror.png') });
    return { conversation, seqs, rows, rowsInOrder: increasing(rows), labels };
  },

  /** A report asked over HAI, approved with feedback from the AG-UI WebSocket column. */
  async approval() {
    const columns = ['hai', 'agui-ws'];
    await open('hai', columns);
    await columnsReady(columns);
    await page.click('button[data-example="report"]');
    const card = '.cell[data-dialect="agui-ws"] .approval-card';
    await page.waitForSelector(`${card} button[data-action="approve"]`, { timeout: WAIT });
    const approvalId = await page.$eval(card, (e) => e.dataset.approvalId);
    await page.fill(`${card} input`, 'Checked from the AG-UI column');
    await page.click(`${card} button[data-action="approve"]`);
    const text = await answer();
    await frameIn('hai', 'status completed');
    const outcome = await page.$eval(`#transcript .approval-card[data-approval-id="${approvalId}"] .outcome`, (e) => e.textContent);
    await page.screenshot({ path: join(outDir, 'approval.png') });
    return { conversation, approvalId, text, outcome };
  },

  /** A slow run's HAI connection cut mid-run and resumed from its cursor. */
  async resume() {
    const columns = ['hai', 'agui-ws'];
    await open('hai', columns);
    await columnsReady(columns);
    await page.click('button[data-example="slow"]');
    await page.waitForFunction(() => document.querySelectorAll('.cell[data-dialect="hai"] .frame[data-type="assistant_message_chunk"]').length >= 8, null, { timeout: WAIT });
    await page.click('.col-head[data-column="hai"] button[data-action="cut"]');
    const cutAt = Math.max(...await columnSeqs('hai'));
    await page.waitForTimeout(800);
    await page.click('.col-head[data-column="hai"] button[data-action="resume"]');
    const result = await page.waitForSelector('#lab-results li:is([data-verdict="ok"], [data-verdict="bad"])', { timeout: 30_000 });
    const verdict = await result.evaluate((e) => ({ verdict: e.dataset.verdict, report: e.textContent }));
    const seqs = await columnSeqs('hai');
    const text = await answer();
    await page.screenshot({ path: join(outDir, 'resume.png') });
    return { conversation, cutAt, seqs, text, ...verdict };
  },

  /** The log exported after a run shown in all five dialects. */
  async export() {
    const columns = ['hai', 'agui-ws', 'agui-sse', 'voiceassist', 'agentscope'];
    await open('hai', columns);
    await columnsReady(columns);
    await page.click('button[data-example="search"]');
    await frameIn('hai', 'status completed');
    await frameIn('agui-ws', 'RUN_FINISHED');
    await frameIn('agui-sse', 'RUN_FINISHED');
    await frameIn('voiceassist', 'message_complete');
    await frameIn('agentscope', 'response completed');
    await page.waitForTimeout(300);
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: WAIT }), page.click('#log-export')]);
    const file = join(outDir, 'transcript.json');
    await download.saveAs(file);
    await page.screenshot({ path: join(outDir, 'export.png'), fullPage: true });
    return { conversation, file, suggested: download.suggestedFilename() };
  },

  /** With authentication on: a refused token explained, a good one's claims shown, then a run. */
  async auth() {
    const [good, expired] = rest;
    await open('hai', ['hai', 'agui-ws']);
    await page.waitForSelector('#auth:not([hidden])', { timeout: WAIT });
    await page.fill('#auth-token', expired);
    await page.click('#auth-form button[type="submit"]');
    await page.waitForSelector('#auth-problem:not([hidden])', { timeout: WAIT });
    const refused = await page.textContent('#auth-problem');
    await page.fill('#auth-token', good);
    await page.click('#auth-form button[type="submit"]');
    await page.waitForSelector('#auth-problem', { state: 'hidden', timeout: WAIT });
    const claims = await page.$$eval('#auth-claims tr', (rows) => Object.fromEntries(rows.map((r) => [r.cells[0]?.textContent ?? r.querySelector('th').textContent, r.querySelector('td').textContent])));
    await columnsReady(['hai', 'agui-ws']);
    await send('What are the rules for food storage?');
    const text = await answer();
    await frameIn('agui-ws', 'RUN_FINISHED');
    const stored = await page.evaluate(() => ({ session: sessionStorage.getItem('switchboard.token') !== null, local: localStorage.length }));
    await page.screenshot({ path: join(outDir, 'auth.png') });
    return { conversation, refused, claims, text, stored };
  },
};

let code = 0;
try {
  const run = scenarios[scenario];
  if (!run) throw new Error(`no scenario ${scenario}; one of ${Object.keys(scenarios).join(', ')}`);
  const result = await run();
  if (problems.length) throw new Error(problems.join('\n'));
  console.log(`RESULT ${JSON.stringify(result)}`);
} catch (e) {
  code = 1;
  console.log(`FAIL ${scenario}: ${e.stack ?? e}`);
  try {
    await page.screenshot({ path: join(outDir, `${scenario}-failed.png`), fullPage: true });
    writeFileSync(join(outDir, `${scenario}-failed.html`), await page.content());
  } catch {
    // the page is gone
  }
}
await browser.close();
process.exit(code);
