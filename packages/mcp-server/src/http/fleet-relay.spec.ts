import { silentLogger } from '@ca/tool-lifecycle';
import type { ApprovalRequest } from '@ca/tool-lifecycle';
import { FleetRelay, FleetSessionApprovals, isRelayed, type FleetBroadcast, type RelayedApproval, type RelayedNotification } from './fleet-relay';

// The relay's own rules, over a broadcast in memory: what it passes on and what it ignores. Through
// Redis, between real replicas, it is tested in @ca/cli (mcp-serve-fleet.spec.ts).
function memoryBroadcast(): FleetBroadcast & { readonly channels: Map<string, Set<(text: string) => void>> } {
  const channels = new Map<string, Set<(text: string) => void>>();
  return {
    channels,
    publishBroadcast: async (name, text) => {
      for (const handler of channels.get(name) ?? []) handler(text);
    },
    subscribeBroadcast: async (name, handler) => {
      const handlers = channels.get(name) ?? new Set();
      handlers.add(handler);
      channels.set(name, handlers);
      return async () => {
        handlers.delete(handler);
      };
    },
  };
}

describe('FleetRelay', () => {
  it('passes a change notification to the other replicas of the same key only, as a JSON-RPC notification', async () => {
    const bus = memoryBroadcast();
    const heard: [string, string, RelayedNotification][] = [];
    const a = await FleetRelay.start(bus, Buffer.alloc(32, 1), 'a', silentLogger, (sid, notification) => heard.push(['a', sid, notification]));
    const b = await FleetRelay.start(bus, Buffer.alloc(32, 1), 'b', silentLogger, (sid, notification) => heard.push(['b', sid, notification]));
    const other = await FleetRelay.start(bus, Buffer.alloc(32, 2), 'c', silentLogger, (sid, notification) => heard.push(['c', sid, notification]));
    a.publish('s1', { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'file:///x' } });
    expect(heard).toEqual([['b', 's1', { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'file:///x' } }]]);
    await Promise.all([a.close(), b.close(), other.close()]);
    expect([...bus.channels.values()].every((handlers) => handlers.size === 0)).toBe(true);
  });

  it('ignores what is not a relayed change: other methods, malformed text, bad fields', async () => {
    const bus = memoryBroadcast();
    const heard: unknown[] = [];
    const relay = await FleetRelay.start(bus, Buffer.alloc(32, 3), 'a', silentLogger, (...args) => heard.push(args));
    const [channel] = [...bus.channels.keys()] as [string];
    for (const text of [
      'not json',
      'null',
      JSON.stringify({ v: 2, from: 'x', sid: 's', method: 'notifications/tools/list_changed' }),
      JSON.stringify({ v: 1, from: 'x', sid: 's', method: 'tools/call' }),
      JSON.stringify({ v: 1, from: 'x', sid: 's', method: 'notifications/progress' }),
      JSON.stringify({ v: 1, from: 'x', sid: 's'.repeat(101), method: 'notifications/tools/list_changed' }),
      JSON.stringify({ v: 1, from: 'x', sid: 's', method: 'notifications/resources/updated', params: [1] }),
      JSON.stringify({ v: 1, from: 'x', sid: 's', method: 'notifications/resources/updated', params: { uri: 'x'.repeat(70_000) } }),
    ])
      await bus.publishBroadcast(channel, text);
    expect(heard).toEqual([]);
    await bus.publishBroadcast(channel, JSON.stringify({ v: 1, from: 'x', sid: 's', method: 'notifications/tools/list_changed' }));
    expect(heard).toEqual([['s', { jsonrpc: '2.0', method: 'notifications/tools/list_changed' }]]);
    await relay.close();
  });

  it('relays changes, never answers or a request’s own notifications', () => {
    expect(isRelayed({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })).toBe(true);
    expect(isRelayed({ jsonrpc: '2.0', method: 'notifications/progress', params: {} })).toBe(false);
    expect(isRelayed({ jsonrpc: '2.0', id: 1, method: 'notifications/tools/list_changed' })).toBe(false);
    expect(isRelayed({ jsonrpc: '2.0', id: 1, result: {} })).toBe(false);
  });

  it('shares an approval for the rest of a session, signed: replicas of the same key take it, a forged or foreign one is dropped', async () => {
    const bus = memoryBroadcast();
    const heard: [string, string, RelayedApproval][] = [];
    const start = (key: Buffer, replica: string) =>
      FleetRelay.start(
        bus,
        key,
        replica,
        silentLogger,
        () => undefined,
        (sid, approval) => heard.push([replica, sid, approval]),
      );
    const a = await start(Buffer.alloc(32, 1), 'a');
    const b = await start(Buffer.alloc(32, 1), 'b');
    const approvals = new FleetSessionApprovals(a);
    const request = (toolName: string, args: unknown) => ({ toolName, fingerprint: 'fp', arguments: args }) as unknown as ApprovalRequest;
    approvals.remember('s1', request('notes.write', { text: 'x' }), { scope: 'tool', decidedBy: 'alice' });
    approvals.remember('s1', request('notes.delete', { id: 1 }), { scope: 'call', decidedBy: 'bob' });
    expect(heard.map(([replica, sid, approval]) => [replica, sid, approval.toolName, approval.scope])).toEqual([
      ['b', 's1', 'notes.write', 'tool'],
      ['b', 's1', 'notes.delete', 'call'],
    ]);
    // What the other replica keeps answers the same questions: the tool for any arguments, the call for these arguments only.
    const there = new FleetSessionApprovals(b);
    for (const [, sid, approval] of heard) there.add(sid, approval);
    expect(there.find('s1', request('notes.write', { text: 'other' }))).toEqual({ scope: 'tool', decidedBy: 'alice' });
    expect(there.find('s1', request('notes.delete', { id: 1 }))).toEqual({ scope: 'call', decidedBy: 'bob' });
    expect(there.find('s1', request('notes.delete', { id: 2 }))).toBeUndefined();
    expect(there.find('s2', request('notes.write', {}))).toBeUndefined();
    expect(there.find('s1', { ...request('notes.write', {}), fingerprint: 'changed' } as ApprovalRequest)).toBeUndefined();

    // Signed with another key, or not at all: dropped.
    heard.length = 0;
    const [channel] = [...bus.channels.keys()] as [string];
    const intruder = await start(Buffer.alloc(32, 2), 'c');
    new FleetSessionApprovals(intruder).remember('s1', request('notes.write', {}), { scope: 'tool', decidedBy: 'mallory' });
    const forged = { toolName: 'notes.write', fingerprint: 'fp', scope: 'tool', decidedBy: 'mallory' };
    await bus.publishBroadcast(channel, JSON.stringify({ v: 1, kind: 'approval', from: 'x', sid: 's1', approval: forged, mac: 'A'.repeat(43) }));
    expect(heard.filter(([replica]) => replica !== 'c')).toEqual([]);
    await Promise.all([a.close(), b.close(), intruder.close()]);
  });
});
