/**
 * @module
 * Small file primitives for the JSONL store: read a file from a byte offset, replace
 * a cursor file atomically (temporary file, fsync, rename), fdatasync without
 * blocking the event loop (so requests are read while a commit syncs).
 */
import { closeSync, fdatasync, fstatSync, fsyncSync, openSync, readSync, renameSync, writeSync } from 'node:fs';

export function readFrom(path: string, offset: number): string {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size <= offset) return '';
    const buf = Buffer.alloc(size - offset);
    let read = 0;
    while (read < buf.length) {
      const n = readSync(fd, buf, read, buf.length - read, offset + read);
      if (n === 0) break;
      read += n;
    }
    return buf.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

export function fstatSize(path: string): number {
  const fd = openSync(path, 'r');
  try {
    return fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
}

export function writeCursor(path: string, cursor: unknown): void {
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o644);
  try {
    writeSync(fd, JSON.stringify(cursor));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

export function fdatasyncAsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
}
