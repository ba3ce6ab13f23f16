import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { hostName, portNumber } from '../../src/cli/args.js';
import { systemErrorExitCode, systemErrorMessage } from '../../src/cli/system-error.js';

describe('system errors in the CLI', () => {
  it('turns a port in use into one line that says what to do', async () => {
    const first = createServer();
    await new Promise<void>((resolve) => first.listen(0, '127.0.0.1', resolve));
    const port = (first.address() as { port: number }).port;
    const second = createServer();
    const error = await new Promise<unknown>((resolve) => {
      second.once('error', resolve);
      second.listen(port, '127.0.0.1');
    });
    first.close();
    const message = systemErrorMessage(error);
    expect(message).toBe(
      `listen failed: address 127.0.0.1:${port} is already in use; stop the other server or choose another --port (0 picks a free one).`,
    );
    expect(message).not.toContain('\n');
    expect(systemErrorExitCode(error)).toBe(2);
  });

  it('leaves errors that are not system errors to the bug path', () => {
    expect(systemErrorMessage(new TypeError('x is undefined'))).toBeUndefined();
    expect(systemErrorMessage({ code: 'ERR_INVALID_ARG_TYPE' })).toBeUndefined();
    expect(systemErrorMessage(null)).toBeUndefined();
  });

  it('accepts ports 0–65535 and host names or IP literals, and refuses the rest', () => {
    expect(portNumber('0')).toBe(0);
    expect(portNumber('65535')).toBe(65535);
    for (const bad of ['70000', '-1', '1.5', 'http', '']) expect(() => portNumber(bad)).toThrow('not a TCP port');
    expect(hostName('127.0.0.1')).toBe('127.0.0.1');
    expect(hostName('[::1]')).toBe('::1');
    expect(hostName('localhost')).toBe('localhost');
    for (const bad of ['http://x', 'a b', '', 'host/']) expect(() => hostName(bad)).toThrow('not a host name');
  });
});
