import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { isProcessAlive, killProcesses, waitUntilProcessesGone } from '@ca/sandbox/testing';
import { MAX_MESSAGE_BYTES, ProcessStdioTransport } from './process-stdio-transport';

// Child processes start slowly on a loaded machine; a hang guard, not a speed requirement.
jest.setTimeout(30_000);

const node = process.execPath;

/** Answers each JSON-RPC request line with a result echoing its params and its environment; prints one banner line first. */
const ECHO_SERVER = `
  process.stdout.write('a banner, not JSON-RPC\\n');
  process.stderr.write('server ready\\n');
  const lines = require('node:readline').createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    const request = JSON.parse(line);
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { params: request.params, env: process.env } }) + '\\n');
  });
  lines.on('close', () => process.exit(0));`;

/** Ignores the end of stdin and SIGTERM, and starts a grandchild in its group, whose pid it reports on stderr. */
const STUBBORN_SERVER = `
  const { spawn } = require('node:child_process');
  const grandchild = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  process.on('SIGTERM', () => process.stderr.write('ignoring SIGTERM\\n'));
  process.stdin.resume();
  process.stderr.write('grandchild ' + grandchild.pid + '\\n');
  setInterval(() => {}, 1000);`;

function transportFor(script: string, options: Partial<ConstructorParameters<typeof ProcessStdioTransport>[0]> = {}) {
  const stderr: string[] = [];
  const invalid: string[] = [];
  const transport = new ProcessStdioTransport({
    command: node,
    args: ['-e', script],
    env: {},
    shutdownGraceMs: 300,
    onStderr: (text) => stderr.push(text),
    onInvalidLine: (line) => invalid.push(line),
    ...options,
  });
  return { transport, stderr, invalid };
}

describe('ProcessStdioTransport (through the process runner)', () => {
  const leftovers: number[] = [];

  afterEach(() => killProcesses(leftovers.splice(0)));

  it('exchanges JSON-RPC lines, skips a line that is not JSON-RPC, and gives the server only the minimal, inherited and declared environment', async () => {
    process.env['CA_TRANSPORT_SECRET'] = 'do-not-leak';
    process.env['CA_TRANSPORT_PASSED'] = 'passed';
    try {
      const { transport, stderr, invalid } = transportFor(ECHO_SERVER, { env: { DECLARED: 'yes' }, inheritEnv: ['CA_TRANSPORT_PASSED'] });
      const messages: JSONRPCMessage[] = [];
      const answered = new Promise<void>((resolve) => {
        transport.onmessage = (message) => {
          messages.push(message);
          resolve();
        };
      });
      await transport.start();
      leftovers.push(transport.pid as number);
      await transport.send({ jsonrpc: '2.0', id: 1, method: 'echo', params: { text: 'hello' } });
      await answered;
      const result = (messages[0] as unknown as { result: { params: unknown; env: Record<string, string> } }).result;
      expect(result.params).toEqual({ text: 'hello' });
      expect(result.env).toMatchObject({ DECLARED: 'yes', CA_TRANSPORT_PASSED: 'passed', PATH: process.env['PATH'] });
      expect(result.env['CA_TRANSPORT_SECRET']).toBeUndefined();
      expect(invalid).toEqual(['a banner, not JSON-RPC']);
      expect(transport.invalidOutput).toEqual({ count: 1, last: 'a banner, not JSON-RPC' });
      const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
      await transport.close();
      await closed;
      expect(transport.exit).toEqual({ code: 0, signal: null });
      expect(stderr.join('')).toBe('server ready\n');
      expect(transport.stderrTail()).toBe('server ready');
      await expect(transport.send({ jsonrpc: '2.0', id: 2, method: 'echo' })).rejects.toThrow(/not running/);
    } finally {
      delete process.env['CA_TRANSPORT_SECRET'];
      delete process.env['CA_TRANSPORT_PASSED'];
    }
  });

  it('close() goes from stdin to SIGTERM to SIGKILL for a server that ignores both, and its grandchild goes too', async () => {
    const { transport } = transportFor(STUBBORN_SERVER);
    await transport.start();
    leftovers.push(transport.pid as number);
    let grandchild = 0;
    while (grandchild === 0) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      grandchild = Number(/grandchild (\d+)/.exec(transport.stderrTail())?.[1] ?? 0);
    }
    leftovers.push(grandchild);
    await Promise.all([transport.close(), transport.close()]);
    await transport.exited;
    expect(transport.exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(transport.stderrTail()).toContain('ignoring SIGTERM');
    expect(await waitUntilProcessesGone([transport.pid as number, grandchild])).toBe(true);
  });

  it('when the server dies on its own, reports the exit and kills the grandchild it left', async () => {
    const { transport } = transportFor(`
      const { spawn } = require('node:child_process');
      const grandchild = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
      process.stderr.write('grandchild ' + grandchild.pid + '\\n');
      setTimeout(() => process.exit(7), 200);`);
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
    await transport.start();
    await closed;
    expect(transport.exit).toEqual({ code: 7, signal: null });
    const grandchild = Number(/grandchild (\d+)/.exec(transport.stderrTail())?.[1]);
    leftovers.push(grandchild);
    expect(await waitUntilProcessesGone([grandchild])).toBe(true);
  });

  it('reads a message of exactly the limit, split over many pipe reads, as one message', async () => {
    // The padding makes the line exactly MAX_MESSAGE_BYTES long; it is written in 1,000-byte pieces.
    const { transport, invalid } = transportFor(`
      const head = '{"jsonrpc":"2.0","id":1,"result":{"pad":"';
      const tail = '"}}';
      const line = head + 'p'.repeat(${MAX_MESSAGE_BYTES} - head.length - tail.length) + tail;
      let at = 0;
      const write = () => {
        while (at < line.length) {
          const piece = line.slice(at, at + 1000);
          at += piece.length;
          if (!process.stdout.write(piece)) return process.stdout.once('drain', write);
        }
        process.stdout.write('\\n');
      };
      write();
      setInterval(() => {}, 1000);`);
    const received = new Promise<JSONRPCMessage>((resolve) => (transport.onmessage = resolve));
    await transport.start();
    leftovers.push(transport.pid as number);
    const message = (await received) as unknown as { result: { pad: string } };
    expect(message.result.pad.length).toBe(MAX_MESSAGE_BYTES - '{"jsonrpc":"2.0","id":1,"result":{"pad":"'.length - '"}}'.length);
    expect(invalid).toEqual([]);
    expect(transport.oversizedMessage).toBeUndefined();
    await transport.close();
  });

  it('a line over the limit closes the transport at once (the process may not exit on its own) and ends the group, grandchild included', async () => {
    const { transport } = transportFor(
      `
      const { spawn } = require('node:child_process');
      const grandchild = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
      process.stderr.write('grandchild ' + grandchild.pid + '\\n');
      process.on('SIGTERM', () => process.stderr.write('ignoring SIGTERM\\n'));
      // No newline ever comes: without a limit this would be buffered without end.
      const piece = 'y'.repeat(65536);
      const write = () => { while (process.stdout.write(piece)); process.stdout.once('drain', write); };
      setTimeout(write, 100);
      setInterval(() => {}, 1000);`,
      { serverName: 'flood' },
    );
    const errors: Error[] = [];
    transport.onerror = (error) => errors.push(error);
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
    await transport.start();
    leftovers.push(transport.pid as number);
    await closed;
    expect(transport.oversizedMessage).toEqual({ bytes: expect.any(Number), limit: MAX_MESSAGE_BYTES });
    expect(transport.oversizedMessage?.bytes).toBeGreaterThan(MAX_MESSAGE_BYTES);
    expect(errors.map((error) => error.message)).toEqual([
      `MCP server 'flood' wrote a stdout line of more than ${MAX_MESSAGE_BYTES} bytes (the limit of one message); the session is closed.`,
    ]);
    const grandchild = Number(/grandchild (\d+)/.exec(transport.stderrTail())?.[1]);
    leftovers.push(grandchild);
    await transport.close();
    expect(await waitUntilProcessesGone([transport.pid as number, grandchild])).toBe(true);
    await expect(transport.send({ jsonrpc: '2.0', id: 2, method: 'echo' })).rejects.toThrow(/not running/);
  });

  it('rejects start with the operating system error for a command that does not exist, and closes', async () => {
    const { transport } = transportFor('', { command: 'ca-no-such-mcp-server', args: [] });
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
    const error = await transport.start().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'ENOENT' });
    expect(transport.spawnError).toBe(error);
    await closed;
    expect(await transport.exited).toEqual({ code: null, signal: null });
    await expect(transport.start()).rejects.toThrow(/already started/);
  });

  it('a close() during the start still stops the server once it runs', async () => {
    const { transport } = transportFor('setInterval(() => {}, 1000);');
    const starting = transport.start();
    const closing = transport.close();
    await starting;
    const pid = transport.pid as number;
    leftovers.push(pid);
    await closing;
    expect(isProcessAlive(pid)).toBe(false);
    expect(transport.exit).toEqual({ code: null, signal: 'SIGTERM' });
  });
});
