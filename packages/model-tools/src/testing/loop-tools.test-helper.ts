import { TestTool } from '@ca/tool-lifecycle/testing';

/**
 * The tools every framework's loop test runs: one that reads (called with
 * repairable arguments), one that reaches the network (refused by a plan
 * that denies it) and one that writes (approved through the framework).
 */
export function loopTools(): { search: TestTool; fetch: TestTool; write: TestTool } {
  const search = new TestTool({
    name: 'docs.search',
    description: 'Searches the docs.',
    inputSchema: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer' } }, required: ['query'] },
    capability: { writes: false, openWorld: false },
    execute: (input) => {
      const { query, limit } = input as { query: string; limit?: number };
      return { hits: [`${query} (${limit ?? 'all'})`] };
    },
  });
  const fetch = new TestTool({ name: 'web.fetch', description: 'Fetches a URL.', capability: { writes: false, openWorld: true }, execute: () => 'page' });
  const write = new TestTool({
    name: 'notes.write',
    description: 'Writes a note.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    capability: { writes: true, checkpointable: true, openWorld: false },
    execute: () => 'written',
  });
  return { search, fetch, write };
}

/** The executions a test tool saw. */
export function executed(tool: TestTool): TestTool['events'] {
  return tool.events.filter((event) => event.type === 'execute');
}
