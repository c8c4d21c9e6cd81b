import type { ToolInstance } from '@ca/tool-lifecycle';
import { TestTool } from '@ca/tool-lifecycle/testing';
import { connectClient, gatewayOver } from '../gateway/gateway.test-helper';
import { CALL_TOOL_NAME, SEARCH_TOOL_NAME } from './session-tools';

const reader = { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false };
const writer = { writes: true, checkpointable: true, idempotent: false, destructive: true, openWorld: false };

/** A catalog of many tools, as a client with hundreds of upstream tools has. */
function largeCatalog(): ToolInstance[] {
  const areas = ['billing', 'calendar', 'crm', 'deploy', 'docs', 'email', 'files', 'issues', 'metrics', 'search'];
  const verbs = ['list', 'get', 'create', 'update', 'delete', 'export', 'import', 'archive', 'restore', 'count', 'find', 'share'];
  const tools: ToolInstance[] = [];
  for (const area of areas) {
    for (const verb of verbs) {
      const writes = ['create', 'update', 'delete', 'import', 'archive', 'restore', 'share'].includes(verb);
      tools.push(
        new TestTool({
          name: `${area}.${verb}`,
          description: `${verb[0]?.toUpperCase()}${verb.slice(1)} ${area} records.`,
          capability: writes ? writer : reader,
          inputSchema: { type: 'object', properties: { id: { type: 'string', description: `The ${area} record` } } },
          execute: (input) => ({ ran: `${area}.${verb}`, input }),
        }),
      );
    }
  }
  tools.push(
    new TestTool({
      name: 'weather.forecast',
      description: 'Forecast of the weather for a city: temperature and rain for the next days.',
      capability: reader,
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      execute: (input: { city: string }) => ({ city: input.city, rain: false }),
    }),
  );
  return tools;
}

describe("McpGateway: 'search' mode for large catalogs", () => {
  it('lists only the search and call tools and the pinned ones', async () => {
    const { gateway } = gatewayOver(largeCatalog(), { profile: { mode: 'search', pin: ['docs.get'] } });
    const { client } = await connectClient(gateway);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([SEARCH_TOOL_NAME, CALL_TOOL_NAME, 'docs.get']);
    expect(tools[0]?.description).toMatch(/among the 121 tools of this session/);
    expect(tools[0]?.annotations).toMatchObject({ readOnlyHint: true });
    // The call tool reaches writers: it says so.
    expect(tools[1]?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    await gateway.close();
  });

  it('finds a tool by words and calls it by the name the search gave', async () => {
    const { gateway } = gatewayOver(largeCatalog(), { profile: { mode: 'search' } });
    const { client } = await connectClient(gateway);
    const found = await client.callTool({ name: SEARCH_TOOL_NAME, arguments: { query: 'will it rain in Paris tomorrow', limit: 3 } });
    const hits = (found.structuredContent as { tools: { name: string; readOnly: boolean; inputSchema: unknown }[] }).tools;
    expect(hits[0]).toMatchObject({ name: 'weather.forecast', readOnly: true, inputSchema: { required: ['city'] } });
    expect(hits.length).toBeLessThanOrEqual(3);
    const called = await client.callTool({ name: CALL_TOOL_NAME, arguments: { name: 'weather.forecast', arguments: { city: 'Paris' } } });
    expect(called.structuredContent).toEqual({ city: 'Paris', rain: false });
    const regex = await client.callTool({ name: SEARCH_TOOL_NAME, arguments: { query: '^email\\.(list|count)$', mode: 'regex' } });
    expect((regex.structuredContent as { tools: { name: string }[] }).tools.map((tool) => tool.name).sort()).toEqual(['email.count', 'email.list']);
    await gateway.close();
  });

  it('finds only what the plan lets run and the profile offers, and the call tool refuses the rest', async () => {
    const { gateway } = gatewayOver(largeCatalog(), {
      profile: { mode: 'search', tools: ['billing.*', 'weather.*'], policy: { readOnly: true, requireCheckpoint: false } },
    });
    const { client } = await connectClient(gateway);
    const found = await client.callTool({ name: SEARCH_TOOL_NAME, arguments: { query: 'delete billing records', limit: 50 } });
    const names = (found.structuredContent as { tools: { name: string }[] }).tools.map((tool) => tool.name);
    expect(names.length).toBeGreaterThan(0);
    expect(names.every((name) => name.startsWith('billing.') || name.startsWith('weather.'))).toBe(true);
    expect(names).not.toContain('billing.delete');
    const refused = await client.callTool({ name: CALL_TOOL_NAME, arguments: { name: 'billing.delete', arguments: { id: '1' } } });
    expect((refused.content as { text: string }[])[0]?.text).toMatch(/^Error TOOL_ACCESS_DENIED/);
    const hidden = await client.callTool({ name: CALL_TOOL_NAME, arguments: { name: 'crm.list', arguments: {} } });
    expect((hidden.content as { text: string }[])[0]?.text).toMatch(/^Error MODEL_TOOL_UNKNOWN/);
    const bad = await client.callTool({ name: SEARCH_TOOL_NAME, arguments: { query: '' } });
    expect(bad.isError).toBe(true);
    const badPattern = await client.callTool({ name: SEARCH_TOOL_NAME, arguments: { query: '(?=lookahead)', mode: 'regex' } });
    expect(badPattern.isError).toBe(true);
    expect((badPattern.content as { text: string }[])[0]?.text).toMatch(/^Error /);
    await gateway.close();
  });
});
