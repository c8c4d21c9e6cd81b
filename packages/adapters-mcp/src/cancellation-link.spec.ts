import { getEventListeners } from 'node:events';
import { CancellationToken, ToolCancelledError } from '@ca/tool-context';
import { linkCall, linkToken } from './cancellation-link';

describe('linkToken', () => {
  it('aborts the signal with a ToolCancelledError when the token is cancelled', () => {
    const token = new CancellationToken();
    const link = linkToken(token, { toolName: 'mcp.s.t', planId: 'p' });
    token.cancel('stop');
    expect(link.signal.aborted).toBe(true);
    expect(ToolCancelledError.isInstance(link.signal.reason)).toBe(true);
    expect(link.signal.reason).toMatchObject({ reason: 'stop', toolName: 'mcp.s.t', planId: 'p' });
    link.release();
  });

  it('is born aborted for a cancelled token, and never reuses an aborted signal', () => {
    const token = new CancellationToken();
    token.cancel('early');
    const link = linkToken(token);
    expect(link.signal.aborted).toBe(true);
    link.release();
    const next = linkToken(new CancellationToken());
    expect(next.signal).not.toBe(link.signal);
    expect(next.signal.aborted).toBe(false);
    next.release();
  });

  it('stops following the token on release, strips the listeners and reuses the signal', () => {
    const token = new CancellationToken();
    const first = linkToken(token);
    first.signal.addEventListener('abort', () => undefined);
    first.release();
    first.release();
    expect(getEventListeners(first.signal, 'abort')).toHaveLength(0);
    token.cancel('later');
    expect(first.signal.aborted).toBe(false);
    const second = linkToken(new CancellationToken());
    expect(second.signal).toBe(first.signal);
    second.release();
  });

  it('leaves no listener on the token signal, whatever the number of calls', () => {
    const token = new CancellationToken();
    const signal = token.signal;
    for (let index = 0; index < 1_000; index++) linkToken(token).release();
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    token.cancel();
  });
});

describe('linkCall', () => {
  it('aborts with a ToolCancelledError when the token is cancelled, calling onabort and every listener once', () => {
    const token = new CancellationToken();
    const link = linkCall(token, { toolName: 'mcp.s.t', planId: 'p' });
    const calls: string[] = [];
    link.signal.onabort = () => calls.push('onabort');
    link.signal.addEventListener('abort', (event) => calls.push(`first ${event.type}`));
    link.signal.addEventListener('abort', { handleEvent: () => calls.push('object') });
    const removed = (): number => calls.push('removed');
    link.signal.addEventListener('abort', removed);
    link.signal.removeEventListener('abort', removed);
    link.signal.addEventListener('other' as 'abort', () => calls.push('other'));
    expect(link.signal.aborted).toBe(false);
    expect(() => link.signal.throwIfAborted()).not.toThrow();
    token.cancel('stop');
    token.cancel('again');
    expect(calls).toEqual(['onabort', 'first abort', 'object']);
    expect(link.signal.aborted).toBe(true);
    expect(link.signal.reason).toMatchObject({ code: 'TOOL_CANCELLED', reason: 'stop', toolName: 'mcp.s.t', planId: 'p' });
    expect(() => link.signal.throwIfAborted()).toThrow(/stop/);
    link.release();
  });

  it('is born aborted for a cancelled token', () => {
    const token = new CancellationToken();
    token.cancel('early');
    const link = linkCall(token);
    expect(link.signal.aborted).toBe(true);
    expect(() => link.signal.throwIfAborted()).toThrow(/early/);
    link.release();
  });

  it('runs every listener when one throws, then reports the first error through cancel()', () => {
    const token = new CancellationToken();
    const link = linkCall(token);
    const calls: number[] = [];
    link.signal.addEventListener('abort', () => {
      throw new Error('listener broke');
    });
    link.signal.addEventListener('abort', () => calls.push(2));
    expect(() => token.cancel('stop')).toThrow(/listener broke/);
    expect(calls).toEqual([2]);
    link.release();
  });

  it('stops following the token on release: 1,000 released calls are not aborted by a later cancel', () => {
    const token = new CancellationToken();
    const links = [];
    const calls: number[] = [];
    for (let index = 0; index < 1_000; index++) {
      const link = linkCall(token);
      link.signal.addEventListener('abort', () => calls.push(index));
      link.release();
      link.release();
      links.push(link);
    }
    token.cancel('later');
    expect(links.filter((link) => link.signal.aborted)).toHaveLength(0);
    expect(calls).toEqual([]);
  });

  it('aborts on demand with the given reason', () => {
    const link = linkCall(new CancellationToken());
    const calls: unknown[] = [];
    link.signal.addEventListener('abort', () => calls.push(link.signal.reason));
    link.abort('timed out');
    link.abort('twice');
    expect(calls).toEqual(['timed out']);
    link.release();
  });
});
