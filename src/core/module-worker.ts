/**
 * @module
 * Starts a module of this package in a worker thread: the built `.js` beside the caller,
 * or, when the caller itself runs from source (tests, `npx tsx`), the `.ts` with tsx's
 * loader registered in the worker first — a worker does not inherit the loader of the
 * thread that starts it.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * @example startModuleWorker(import.meta.url, './worker', setup)
 */
export function startModuleWorker(callerUrl: string, name: string, workerData: unknown): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`${name}.js`, callerUrl), { workerData });
  const entry = new URL(`${name}.ts`, callerUrl).href;
  const tsxPackage = createRequire(callerUrl).resolve('tsx/package.json');
  const api = pathToFileURL(join(dirname(tsxPackage), 'dist/esm/api/index.mjs')).href;
  const code = `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { eval: true, workerData });
}
