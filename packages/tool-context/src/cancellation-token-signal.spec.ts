// The token's signal with the real consumers users hand it to: fetch,
// child_process and events.once. No mocks: a real server and a real process.
import { spawn } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CancellationToken } from './cancellation-token';
import { ToolCancelledError } from './tool-cancelled-error';

describe('CancellationToken.signal with real consumers', () => {
  describe('fetch', () => {
    let server: Server;
    let url: string;
    let requestArrived: Promise<void>;

    beforeEach(async () => {
      let markArrived: () => void = () => undefined;
      requestArrived = new Promise((resolve) => (markArrived = resolve));
      // Accepts requests and never answers them.
      server = createServer(() => markArrived());
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`;
    });

    afterEach(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    it('aborts a pending request when the token is cancelled, rejecting with the ToolCancelledError', async () => {
      const token = new CancellationToken();
      const response = fetch(url, { signal: token.signal });
      await requestArrived;
      token.cancel('cancelled by user');
      const error = await response.catch((caught: unknown) => caught);
      expect(ToolCancelledError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ reason: 'cancelled by user' });
    });

    it("aborts a request under a child's deadline while the plan goes on", async () => {
      const plan = new CancellationToken();
      const execution = plan.child({ timeoutMs: 50 });
      const error = await fetch(url, { signal: execution.signal }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'TOOL_CANCELLED', reason: 'timed out after 50 ms' });
      expect(plan.isCancelled).toBe(false);
      execution.dispose();
    });
  });

  describe('child_process.spawn', () => {
    it('kills the process when the token is cancelled', async () => {
      const token = new CancellationToken();
      const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 10000)'], { signal: token.signal, stdio: 'ignore' });
      // events.once(child, 'exit') would reject on the 'error' event, so listen directly.
      const errored = new Promise<Error>((resolve) => child.once('error', resolve));
      const exited = new Promise<[number | null, string | null]>((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
      await new Promise((resolve) => child.once('spawn', resolve));
      token.cancel('cancelled by user');
      const error = await errored;
      const [code, signal] = await exited;
      expect(error.name).toBe('AbortError');
      expect(ToolCancelledError.isInstance(error.cause)).toBe(true);
      expect(code).toBeNull();
      expect(signal).toBe('SIGTERM');
      expect(child.killed).toBe(true);
    });

    it('does not start a process when the token is already cancelled', async () => {
      const token = new CancellationToken();
      token.cancel('earlier');
      const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 10000)'], { signal: token.signal, stdio: 'ignore' });
      const closed = new Promise((resolve) => child.once('close', resolve));
      const error = await new Promise<Error>((resolve) => child.once('error', resolve));
      expect(error.name).toBe('AbortError');
      await closed;
      expect(child.exitCode !== null || child.signalCode !== null).toBe(true);
    });
  });

  describe('events.once', () => {
    it('rejects with an AbortError whose cause is the ToolCancelledError', async () => {
      const token = new CancellationToken();
      const emitter = new EventEmitter();
      const waiting = once(emitter, 'never', { signal: token.signal });
      token.cancel('cancelled by user');
      const error = await waiting.catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: 'AbortError', code: 'ABORT_ERR' });
      expect(ToolCancelledError.isInstance((error as Error).cause)).toBe(true);
      expect(emitter.listenerCount('never')).toBe(0);
    });

    it('rejects when a parent token is cancelled', async () => {
      const plan = new CancellationToken();
      const execution = plan.child();
      const waiting = once(new EventEmitter(), 'never', { signal: execution.signal });
      plan.cancel('plan cancelled');
      await expect(waiting).rejects.toMatchObject({ name: 'AbortError', cause: { reason: 'plan cancelled' } });
    });
  });
});
