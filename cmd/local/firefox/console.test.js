// The console in a real Firefox (console.md: "works in current Chromium
// and Firefox at 1280 px wide and on a 390 px wide phone"), driven by
// puppeteer-core over WebDriver BiDi, Firefox's own remote protocol (no
// geckodriver), and run by `node --test` against a running stack:
// cmd/local's TestLocalStack/Console/Firefox starts one, creates an order
// per screen and sets the variables below.
//
// At each screen an operator signs in with the keyboard by the fields'
// and button's accessible names, sees the heading Queue, opens the order
// by its documentId link, is told beside the field why a bad Unique doc ref
// is refused, moves the paper to Created, and signs out. Every page gets a
// full-page screenshot, an axe-core check (WCAG 2.1 A and AA, as in
// Chromium), and no console error, uncaught exception, failed request or
// Content-Security-Policy violation may have happened.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`set ${name} (cmd/local's TestLocalStack/Console/Firefox sets every STAMPDUTY_* variable, FIREFOX and SCREENSHOTS_DIR)`);
  return v;
};
const base = env('STAMPDUTY_API_URL');
const email = env('STAMPDUTY_EMAIL');
const password = env('STAMPDUTY_PASSWORD');
const [desktopOrder, phoneOrder] = env('STAMPDUTY_ORDERS').split(',');
const firefox = env('FIREFOX');
const shots = env('SCREENSHOTS_DIR');
const axeSource = readFileSync(env('AXE'), 'utf8');

// STEP bounds each wait for the page (a control to appear, a status to
// change); START bounds Firefox's start (about 3 s on two shared cores).
const STEP = 10_000;
const START = 60_000;

// The screens of console.md, as in shared/testkit/browser: 1 CSS px per
// device px.
const screens = [
  { name: 'desktop', width: 1280, height: 800, order: desktopOrder },
  { name: 'phone', width: 390, height: 844, order: phoneOrder },
];

const started = Date.now();
const browser = await puppeteer.launch({
  browser: 'firefox',
  executablePath: firefox,
  headless: true,
  timeout: START,
  protocolTimeout: START,
  // Nothing that reaches out to a network that refuses it.
  extraPrefsFirefox: {
    'network.captive-portal-service.enabled': false,
    'network.connectivity-service.enabled': false,
    'browser.safebrowsing.update.enabled': false,
  },
});
console.log(`firefox: ${await browser.version()} started in ${((Date.now() - started) / 1000).toFixed(1)} s`);
after(() => browser.close());

mkdirSync(shots, { recursive: true });

// The accessible-name selectors of Puppeteer's ARIA query handler, which
// over BiDi asks Firefox's accessibility tree (browsingContext.locateNodes
// by role and name): only what assistive technology announces is found.
// A control is [role, name]; find and gone turn it into the selector.
const aria = (role, name) => `::-p-aria([name=${JSON.stringify(name)}][role=${JSON.stringify(role)}])`;
const textbox = (name) => ['textbox', name];
const button = (name) => ['button', name];
const link = (name) => ['link', name];
const heading = (name) => ['heading', name];
const group = (name) => ['group', name];

// find waits until exactly one visible element within scope (the page or
// an element) has the role and name, and returns it: acting on the first
// of several would press the wrong paper's button. When none comes, it
// fails naming what the role's elements are called instead.
async function find(scope, [role, name]) {
  const selector = aria(role, name);
  try {
    await scope.waitForSelector(selector, { visible: true, timeout: STEP });
  } catch (e) {
    if (e.name !== 'TimeoutError') throw e;
    const names = [];
    for (const h of await scope.$$(`::-p-aria([role=${JSON.stringify(role)}])`)) {
      if (await h.isVisible()) names.push(await h.evaluate((el) => ((el.labels && el.labels[0] && el.labels[0].textContent) || el.getAttribute('aria-label') || el.textContent || '').trim()));
    }
    assert.fail(`no visible ${role} ${JSON.stringify(name)} after ${STEP / 1000} s; the visible ${role}s are named ${JSON.stringify(names)}`);
  }
  const all = await scope.$$(selector);
  const shown = [];
  for (const h of all) if (await h.isVisible()) shown.push(h);
  assert.equal(shown.length, 1, `${shown.length} visible elements are ${role} ${JSON.stringify(name)}: name the one meant`);
  return shown[0];
}

// gone waits until no visible element has the role and name.
async function gone(page, [role, name]) {
  try {
    await page.waitForSelector(aria(role, name), { hidden: true, timeout: STEP });
  } catch (e) {
    if (e.name !== 'TimeoutError') throw e;
    assert.fail(`${role} ${JSON.stringify(name)} is still shown after ${STEP / 1000} s`);
  }
}

// focused returns the accessible name the focused element is labelled by
// (its label's text), for checking where Tab and the page put the focus.
const focused = (page) => page.evaluate(() => {
  const a = document.activeElement;
  return (a && ((a.labels && a.labels[0] && a.labels[0].textContent) || a.textContent || '')).trim();
});

// press is a keyboard user's action: focus the control, then Enter.
async function press(page, handle) {
  await handle.focus();
  await page.keyboard.press('Enter');
}

// Problems of a page: console errors, uncaught exceptions, failed
// requests and CSP violations, from its first navigation on. Firefox
// reports a violation both as an error and (through the listener every
// document gets before its scripts) as a securitypolicyviolation event.
async function watch(page) {
  const seen = { errors: [], csp: [] };
  page.on('console', (m) => { if (m.type() === 'error') seen.errors.push(`console.error: ${m.text()}`); });
  page.on('pageerror', (e) => {
    const msg = String(e && e.message ? e.message : e);
    (msg.startsWith('Content-Security-Policy') ? seen.csp : seen.errors).push(msg);
  });
  page.on('requestfailed', (r) => seen.errors.push(`request failed: ${r.method()} ${r.url()}: ${r.failure() && r.failure().errorText}`));
  page.on('response', (r) => { if (r.status() >= 400) seen.errors.push(`${r.status()} ${r.request().method()} ${r.url()}`); });
  await page.exposeFunction('__cspViolation', (v) => seen.csp.push(v));
  await page.evaluateOnNewDocument(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__cspViolation(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`);
    });
  });
  return seen;
}

// check is what every page state gets: a screenshot, axe-core with the
// WCAG 2.1 A and AA tags, and no problem seen so far.
async function check(page, seen, screen, name) {
  await page.screenshot({ path: join(shots, `${name}-${screen.name}.png`), fullPage: true });
  // No page is wider than the screen: on a phone nothing is cut off or
  // needs a sideways scroll.
  const wide = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth,
    [...document.querySelectorAll('body *')].filter((el) => el.getBoundingClientRect().left + el.scrollWidth > document.documentElement.clientWidth + 0.5)
      .map((el) => el.id ? `${el.localName}#${el.id}` : el.localName).slice(0, 5)]);
  assert.ok(wide[0] <= wide[1], `${name}: the page is ${wide[0]} px wide at ${screen.width} px (${wide[1]} px without the scroll bar); too wide: ${wide[2].join(', ')}`);
  const violations = await page.evaluate(async (src) => {
    if (typeof window.axe !== 'object') (0, eval)(src);
    const r = await window.axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
      resultTypes: ['violations'],
    });
    return r.violations.map((v) => `${v.id} (${v.impact}): ${v.help}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  }, axeSource);
  assert.deepEqual(violations, [], `${name}: axe-core violations in Firefox`);
  assert.deepEqual(seen.errors, [], `${name}: console errors in Firefox`);
  assert.deepEqual(seen.csp, [], `${name}: CSP violations in Firefox`);
}

for (const screen of screens) {
  test(`operator moves a paper to Created in Firefox at ${screen.width}x${screen.height}`, async () => {
    const context = await browser.createBrowserContext();
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(STEP);
      await page.setViewport({ width: screen.width, height: screen.height });
      const seen = await watch(page);

      // Sign in with the keyboard: the page puts the focus in Email, Tab
      // moves it to Password, Tab again to the button Sign in, Enter
      // presses it.
      await page.goto(`${base}/console`, { waitUntil: 'load', timeout: STEP });
      await find(page, heading('Sign in'));
      await check(page, seen, screen, 'sign-in');
      const emailBox = await find(page, textbox('Email'));
      await emailBox.focus();
      await page.keyboard.type(email);
      await page.keyboard.press('Tab');
      assert.equal(await focused(page), 'Password', 'Tab from Email goes to Password');
      await page.keyboard.type(password);
      const signIn = await find(page, button('Sign in'));
      await page.keyboard.press('Tab');
      assert.ok(await signIn.evaluate((el) => el === document.activeElement), 'Tab from Password goes to the button Sign in');
      await page.keyboard.press('Enter');
      await find(page, heading('Queue'));
      await check(page, seen, screen, 'queue');

      // The order, by its documentId link.
      await press(page, await find(page, link(screen.order)));
      await find(page, heading(`Order ${screen.order}`));
      await check(page, seen, screen, 'order');

      // A bad Unique doc ref is refused beside the field, before any
      // request, and the focus goes back to the field.
      const paper = await find(page, group('Paper 1'));
      const ref = await find(paper, textbox('Unique doc ref'));
      await ref.focus();
      await page.keyboard.type('bad ref!');
      await press(page, await find(paper, button('Move to Created')));
      await page.waitForFunction(
        (id) => document.getElementById(id).textContent.startsWith('1 to 64 characters'),
        { timeout: STEP }, await ref.evaluate((el) => el.getAttribute('aria-describedby')));
      assert.equal(await ref.evaluate((el) => el.getAttribute('aria-invalid')), 'true');
      assert.equal(await focused(page), 'Unique doc ref', 'the focus goes back to the refused field');
      await check(page, seen, screen, 'field-error');

      // Corrected in place, with Enter in the field.
      await page.keyboard.down('Control');
      await page.keyboard.press('a');
      await page.keyboard.up('Control');
      await page.keyboard.type(`SUBIN-FIREFOX-${screen.name.toUpperCase()}-1`);
      await page.keyboard.press('Enter');
      const moved = await find(page, group('Paper 1'));
      await find(moved, button('Move to Procured'));
      await gone(page, button('Move to Created'));
      await check(page, seen, screen, 'order-created');

      await press(page, await find(page, button('Sign out')));
      // Signed out, the next person at the screen sees the sign-in form
      // only: not the order (its parties' names), nor the navigation.
      await find(page, heading('Sign in'));
      await gone(page, heading(`Order ${screen.order}`));
      await gone(page, link('Queue'));
      await check(page, seen, screen, 'signed-out');
    } finally {
      await context.close();
    }
  });
}
