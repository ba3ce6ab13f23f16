/**
 * @module
 * Wake-ups for the file stores across processes: several server processes share one
 * mailbox folder (one stdio server per agent), and a send by one should wake the
 * waiters and subscribers of another at once, not at its next poll. The folder that
 * changes on every send is watched (inotify on Linux). A watcher is a hint, never
 * evidence: what a woken reader sees is read from the store, and the polling every
 * waiter does anyway covers a file system where watching does not work.
 */
import { type FSWatcher, watch } from 'node:fs';

/** Calls `onChange` with the changed file's name while anyone listens; returns the function that stops listening. */
export class FolderWatch {
  private watcher: FSWatcher | undefined;
  private readonly listeners = new Set<(file: string | undefined) => void>();

  constructor(private readonly folder: string) {}

  listen(onChange: (file: string | undefined) => void): () => void {
    this.listeners.add(onChange);
    this.start();
    return () => {
      this.listeners.delete(onChange);
      if (this.listeners.size === 0) this.stop();
    };
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }

  private start(): void {
    if (this.watcher) return;
    try {
      this.watcher = watch(this.folder, { persistent: false }, (_event, file) => {
        for (const l of this.listeners) l(file ?? undefined);
      });
      this.watcher.on('error', () => this.stop()); // e.g. the folder was removed: polling remains
    } catch {
      this.watcher = undefined; // no inotify here (or its limit is reached): polling remains
    }
  }
}
