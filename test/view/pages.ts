/**
 * What every page test of the viewer checks around its own: the page opened, then no
 * console error and no request off the machine; and a table's cell texts, row by row.
 */
import { expect } from 'vitest';
import type { OpenedPage } from '../support/browser.js';

// biome-ignore lint/suspicious/noExplicitAny: the DOM and playwright's page, untyped in this Node project (no DOM lib).
type Untyped = any;

/** Runs `check` on the opened page, then asserts no error and no request that `local` does not allow. */
export async function checkedVisit(
  open: () => Promise<OpenedPage>,
  local: (url: string) => boolean,
  check: (o: OpenedPage) => Promise<void>,
): Promise<void> {
  const opened = await open();
  try {
    await check(opened);
    expect(opened.errors).toEqual([]);
    expect(
      opened.requests.filter((u) => !local(u)),
      'no request leaves the machine',
    ).toEqual([]);
  } finally {
    await opened.close();
  }
}

/** The texts of a table's cells, row by row. */
export const cellsOf = (page: Untyped, selector: string): Promise<string[][]> =>
  page.evaluate(
    (s: string) =>
      [...(globalThis as Untyped).document.querySelectorAll(`${s} tbody tr`)].map((tr: Untyped) =>
        [...tr.children].map((td: Untyped) => td.textContent),
      ),
    selector,
  );
