/**
 * @module
 * Headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core) for the
 * page tests: a page that records uncaught errors, console errors and every request's
 * URL, so a test can assert that none failed and none left 127.0.0.1.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

export interface OpenedPage {
  page: Page;
  /** Uncaught page errors and console errors. */
  errors: string[];
  /** Every URL the page requested. */
  requests: string[];
  close(): Promise<void>;
}

/** Opens `url` in a fresh headless browser, waiting for `ready` (a selector) when given. */
export async function openPage(url: string, ready?: string): Promise<OpenedPage> {
  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('request', (r) => requests.push(r.url()));
  try {
    await page.goto(url);
    if (ready) await page.waitForSelector(ready, { timeout: 30_000 });
  } catch (error) {
    await browser.close();
    throw error;
  }
  return { page, errors, requests, close: () => browser.close() };
}
