/**
 * What every page test of the viewer checks around its own: the page opened, then no
 * console error and no request off the machine; and a table's cell texts, row by row.
 */
import { expect } from 'vitest';
import type { OpenedPage } from '../support/browser.js';

/** Runs `check` on the opened page, then asserts no error and no request that `local` does not allow. */
export async function checkedVisit(open: () => Promise<OpenedPage>, local: (url: string) => boolean, check: (o: OpenedPage) => Promise<void>): Promise<void> {
  const opened = await open();
  try {
    await check(opened);
    expect(opened.errors).toEqual([]);
    expect(opened.requests.filter((u) => !local(u)), 'no request leaves the machine').toEqual([]);
  } finally {
    await opened.close();
  }
}

/** The texts of a table's cells, row by row. */
// biome-ignore lint/suspicious/noExplicitAny: a playwright page.
export const cellsOf = (page: any, selector: string): Promise<string[][]> =>
  // biome-ignore lint/suspicious/noExplicitAny: runs in the page.
  page.evaluate((s: string) => [...(globalThis as any).document.querySelectorAll(`${s} tbody tr`)].map((tr: any) => [...tr.children].map((td: any) => td.textContent)), selector);
