import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fixtures, removeTemporaryFolders, temporaryFolder } from './cli.test-helper';
import { killLeft, startReplicas, startRoundRobinProxy, waitFor, type Replica } from './fleet.test-helper';

// Three `agents mcp serve --http --fleet` processes behind a plain round-robin
// proxy (no affinity), server-everything upstream, and real clients of both
// SDK generations: a v2 client (`@modelcontextprotocol/client`) negotiating
// MCP 2026-07-28 is served without a session by whichever replica gets each
// request; 2025-11-25 and 2025-06-18 clients keep their sessions.
jest.setTimeout(300_000);

const replicas: Replica[] = [];
afterEach(() => {
  killLeft(replicas);
  removeTemporaryFolders();
});

/** What one client's HTTP exchanges carried: session ids either way, the replicas that answered. */
function recordingFetch(): { fetch: typeof fetch; sessionIds: string[]; replicas: Set<string>; statuses: number[] } {
  const seen = { sessionIds: [] as string[], replicas: new Set<string>(), statuses: [] as number[] };
  const recording: typeof fetch = async (input, init) => {
    const sent = new Headers(init?.headers).get('mcp-session-id');
    if (sent !== null) seen.sessionIds.push(sent);
    const response = await fetch(input, init);
    const given = response.headers.get('mcp-session-id');
    if (given !== null) seen.sessionIds.push(given);
    const replica = response.headers.get('x-agents-replica');
    if (replica !== null) seen.replicas.add(replica);
    seen.statuses.push(response.status);
    return response;
  };
  return { fetch: recording, ...seen };
}

describe('agents mcp serve --http: MCP 2026-07-28', () => {
  it('serves a v2 client on 2026-07-28 through 3 replicas without affinity and without a session; 2025-11-25 and 2025-06-18 clients keep theirs', async () => {
    const workspace = temporaryFolder();
    const config = path.join(workspace, 'fleet.config.json');
    fs.writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { everything: { command: 'node', args: ['../counted-server.js'], cwd: path.join(fixtures, 'with-mcp'), scope: 'shared' } },
      }),
    );
    const env = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', AGENTS_FLEET_KEY: randomBytes(32).toString('hex') };
    await startReplicas(['r0', 'r1', 'r2'], { config, cwd: workspace, env }, replicas);
    const proxy = await startRoundRobinProxy(replicas.map((replica) => (replica.url as URL).origin));
    const endpoint = new URL('/mcp', proxy.url);
    try {
      // The v2 client tries 2026-07-28 first (server/discover) when asked to negotiate, and falls back to 2025-11-25 otherwise.
      const recorded = recordingFetch();
      const transport = new V2Transport(endpoint, { fetch: recorded.fetch });
      const modern = new V2Client({ name: 'v2-client', version: '2.4.0' }, { versionNegotiation: { mode: 'auto' } });
      await modern.connect(transport);
      expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect(modern.getProtocolEra()).toBe('modern');
      const listed = await modern.listTools();
      expect(listed.tools.map((tool) => tool.name)).toContain('mcp.everything.echo');
      for (let index = 0; index < 6; index++) {
        const result = await modern.callTool({ name: 'mcp.everything.echo', arguments: { message: `stateless ${index}` } });
        expect((result.content as { type: string; text: string }[])[0]?.text).toBe(`Echo: stateless ${index}`);
      }
      // An unknown tool: MCP's invalid params, as on the 2025 protocol.
      await expect(modern.callTool({ name: 'mcp.everything.nope', arguments: {} })).rejects.toThrow(/nope/);
      // Progress comes on the answer's stream of whichever replica runs the call.
      const progress: { progress: number; total?: number }[] = [];
      await modern.callTool(
        { name: 'mcp.everything.trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
        { onprogress: (update) => progress.push(update) },
      );
      // Steps 1 and 2 come 100 ms before the result; the last step and the result leave the upstream together,
      // and a progress notification that reaches the gateway after the result has nothing left to go on.
      const seen = progress.map((update) => [update.progress, update.total]);
      expect(seen.length).toBeGreaterThanOrEqual(1);
      expect(seen).toEqual(
        [
          [1, 3],
          [2, 3],
          [3, 3],
        ].slice(0, seen.length),
      );
      // subscriptions/listen: one long request, held by one replica; the resource updates of its upstream reach the client on it.
      const resource = 'demo://resource/dynamic/text/1';
      const updates: string[] = [];
      modern.setNotificationHandler('notifications/resources/updated', (notification) => {
        updates.push(notification.params.uri);
      });
      const subscription = await modern.listen({ resourceSubscriptions: [resource], toolsListChanged: true });
      expect(subscription.honoredFilter).toEqual({ toolsListChanged: true, resourceSubscriptions: [resource] });
      // server-everything sends updates of subscribed resources every 5 s once told to: each replica's upstream is told (round robin).
      const toggle = async (): Promise<void> => {
        for (let index = 0; index < 3; index++) await modern.callTool({ name: 'mcp.everything.toggle-subscriber-updates', arguments: {} });
      };
      await toggle();
      await waitFor(() => updates.length > 0, 'a resource update on the listen stream');
      expect(updates.every((uri) => uri === resource)).toBe(true);
      await subscription.close();
      await toggle();
      // No session id went either way, every replica answered this one client, and nothing was refused.
      expect(transport.sessionId).toBeUndefined();
      expect(recorded.sessionIds).toEqual([]);
      expect([...recorded.replicas].sort()).toEqual(['r0', 'r1', 'r2']);
      expect(recorded.statuses.every((status) => status === 200 || status === 202)).toBe(true);
      await modern.close();

      // 2025-11-25 (the v1 SDK's latest) and 2025-06-18 (a v2 client offering only it): sessions, sealed, served by any replica.
      const v1Transport = new StreamableHTTPClientTransport(endpoint);
      const v1 = new Client({ name: 'v1-client', version: '1.32.2' });
      await v1.connect(v1Transport);
      expect(v1Transport.protocolVersion).toBe('2025-11-25');
      expect(v1Transport.sessionId).toEqual(expect.any(String));
      const old = new V2Client({ name: 'v2-2025-06-18', version: '2.4.0' }, { supportedProtocolVersions: ['2025-06-18'] });
      const oldTransport = new V2Transport(endpoint);
      await old.connect(oldTransport);
      expect(old.getNegotiatedProtocolVersion()).toBe('2025-06-18');
      expect(oldTransport.sessionId).toEqual(expect.any(String));
      for (let index = 0; index < 3; index++) {
        const a = await v1.callTool({ name: 'mcp.everything.echo', arguments: { message: `v1 ${index}` } });
        expect((a.content as { text: string }[])[0]?.text).toBe(`Echo: v1 ${index}`);
        const b = await old.callTool({ name: 'mcp.everything.echo', arguments: { message: `old ${index}` } });
        expect((b.content as { type: string; text: string }[])[0]?.text).toBe(`Echo: old ${index}`);
      }
      await v1Transport.terminateSession();
      await v1.close();
      await oldTransport.terminateSession();
      await old.close();
      expect(proxy.counts.every((count) => count > 0)).toBe(true);

      for (const replica of replicas) replica.child.kill('SIGTERM');
      for (const replica of replicas) expect(await replica.exit).toBe(0);
      // Each stateless request's plan ended with it: every replica logged no error.
      for (const replica of replicas) expect(replica.output()).not.toMatch(/a request failed|Internal error/);
    } finally {
      await proxy.close();
    }
  });
});
