import { getEventListeners } from 'node:events';
import { CancellationToken, ToolCancelledError } from '@ca/tool-context';
import { linkToken } from './cancellation-link';

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
