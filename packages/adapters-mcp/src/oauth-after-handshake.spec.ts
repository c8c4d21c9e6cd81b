import { join } from 'node:path';
import { ToolRuntime, type InteractionHandler } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { createMcpAdapter } from './mcp-adapter';
import { MAX_SIGN_INS_PER_REQUEST } from './mcp-session';
import { makeTempDir, PersonAtBrowser, readLines, removeTempDir, startFixtureHttp, waitFor, type FixtureHttpServer } from './mcp-fixtures.test-helper';

jest.setTimeout(60_000);

// A server that accepts the handshake without a token and wants one for everything else
// (the conformance suite's auth/scope-step-up and auth/scope-retry-limit do the same).
describe('OAuth after the handshake: a refused request starts the sign-in', () => {
  let dir: string;
  const servers: FixtureHttpServer[] = [];

  beforeAll(async () => {
    dir = await makeTempDir();
  });

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.kill()));
    await removeTempDir(dir);
  });

  async function start(name: string, env: Record<string, string> = {}): Promise<{ url: string; record: string }> {
    const record = join(dir, `${name}.txt`);
    const server = await startFixtureHttp({ FIXTURE_AUTH: 'oauth', FIXTURE_GUARD: 'after-handshake', FIXTURE_RECORD_FILE: record, ...env });
    servers.push(server);
    return { url: server.url, record };
  }

  function runtimeFor(url: string, interactionHandler?: InteractionHandler) {
    const logger = new RecordingLogger();
    const source = createMcpAdapter({
      servers: { mcpServers: { secured: { url, oauth: true } } },
      logger,
      ...(interactionHandler === undefined ? {} : { interactionHandler }),
    });
    return new ToolRuntime({ sources: [source], logger });
  }

  it('tools/list refused with 401 after the handshake: the person signs in, and discovery lists the tools', async () => {
    const { url, record } = await start('list');
    const person = new PersonAtBrowser();
    const runtime = runtimeFor(url, person);
    try {
      const discovery = await runtime.discover();
      expect(discovery.sourceErrors).toEqual([]);
      expect(discovery.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['mcp.secured.echo', 'mcp.secured.whoami']));
      expect(person.asked).toHaveLength(1);
      expect(person.asked[0]?.request).toMatchObject({ kind: 'url', purpose: 'authorization' });
      expect((await readLines(record)).filter((line) => line.startsWith('authorize '))).toHaveLength(1);
      // Signed in once: a plan's call uses the tokens without asking again.
      const result = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.secured.echo', { text: 'after sign-in' }, ctx));
      expect(result).toMatchObject({ ok: true, output: 'echo: after sign-in' });
      expect(person.asked).toHaveLength(1);
    } finally {
      await runtime.dispose();
    }
  });

  it('tools/call refused with 403 insufficient_scope: the person signs in again for the wider scope (step-up), and the call goes through', async () => {
    const { url, record } = await start('step-up', { FIXTURE_CALL_SCOPE: 'mcp:write' });
    const person = new PersonAtBrowser();
    const runtime = runtimeFor(url, person);
    try {
      const result = await runtime.runPlan({ planId: 'step-up-plan' }, (ctx) => runtime.execute('mcp.secured.whoami', {}, ctx));
      expect(result).toMatchObject({ ok: true, output: expect.any(String) });
      expect(person.scopes()).toEqual(['mcp:tools', 'mcp:tools mcp:write']);
      // The step-up happened during a call: the question names its plan and tool.
      expect(person.asked[1]?.context).toMatchObject({ source: 'mcp', origin: 'secured', planId: 'step-up-plan', toolName: 'mcp.secured.whoami' });
      expect(await readLines(record)).toContain('insufficient_scope tools/call');
    } finally {
      await runtime.dispose();
    }
  });

  it(`a scope the server never gets: after ${MAX_SIGN_INS_PER_REQUEST} sign-ins for one request the call fails with MCP_AUTH_FAILED, without asking again`, async () => {
    const { url, record } = await start('never', { FIXTURE_CALL_SCOPE: 'mcp:admin' });
    const person = new PersonAtBrowser();
    const runtime = runtimeFor(url, person);
    try {
      await runtime.discover();
      expect(person.asked).toHaveLength(1);
      const result = await runtime.runPlan({ planId: 'never-plan' }, (ctx) => runtime.execute('mcp.secured.whoami', {}, ctx));
      expect(result.ok).toBe(false);
      const error = result.ok ? undefined : result.error;
      expect(error).toMatchObject({ code: 'MCP_AUTH_FAILED', server: 'secured', status: 403, toolName: 'mcp.secured.whoami', planId: 'never-plan' });
      expect(error?.message).toMatch(/insufficient_scope/);
      // One step-up for the call, then no more questions: the person is not sent to sign in again and again.
      expect(person.scopes()).toEqual(['mcp:tools', 'mcp:tools mcp:admin']);
      expect((await readLines(record)).filter((line) => line === 'insufficient_scope tools/call')).toHaveLength(2);
    } finally {
      await runtime.dispose();
    }
  });

  it(`a server that refuses every token it was just given: after ${MAX_SIGN_INS_PER_REQUEST} sign-ins the request fails with MCP_AUTH_FAILED`, async () => {
    const { url } = await start('rejects', { FIXTURE_REJECT_TOKENS: '1' });
    const person = new PersonAtBrowser();
    const runtime = runtimeFor(url, person);
    try {
      const error = (await runtime.discover()).sourceErrors[0]?.error;
      expect(error).toMatchObject({ code: 'MCP_AUTH_FAILED', server: 'secured' });
      expect(error?.message).toMatch(new RegExp(`still refused a request after ${MAX_SIGN_INS_PER_REQUEST} sign-ins in a row`));
      expect(person.asked).toHaveLength(MAX_SIGN_INS_PER_REQUEST);
    } finally {
      await runtime.dispose();
    }
  });

  it('the event stream the server refused before the sign-in is opened again after it: a tools/list_changed sent on it arrives', async () => {
    const { url, record } = await start('events');
    const person = new PersonAtBrowser();
    const logger = new RecordingLogger();
    // One session for discovery and the plan: the one that signed in after its handshake.
    const source = createMcpAdapter({ servers: { mcpServers: { secured: { url, oauth: true, scope: 'shared' } } }, logger, interactionHandler: person });
    const runtime = new ToolRuntime({ sources: [source], logger });
    let changes = 0;
    source.onToolsChanged(() => changes++);
    try {
      expect((await runtime.discover()).sourceErrors).toEqual([]);
      expect(person.asked).toHaveLength(1);
      // Refused (401) right after the handshake, before anyone signed in; with the new token it opens.
      await waitFor(async () => (await readLines(record)).includes('events'), 20_000, 'the event stream to open with the new token');
      const result = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.secured.add-tool', {}, ctx));
      expect(result).toMatchObject({ ok: true, output: 'added' });
      await waitFor(() => changes > 0, 20_000, 'the tools/list_changed notification');
      expect((await runtime.listTools()).map((tool) => tool.name)).toContain('mcp.secured.added');
      expect(person.asked).toHaveLength(1);
    } finally {
      await runtime.dispose();
    }
  });

  it.each([
    ['nobody can be asked', undefined, /no interaction handler was given/],
    ['the person declines', new PersonAtBrowser(false), /the sign-in was declined/],
  ])('discovery reports MCP_AUTH_REQUIRED when %s (not MCP_LIST_TOOLS_FAILED)', async (_case, person, why) => {
    const { url } = await start(`declined-${person === undefined ? 'alone' : 'person'}`);
    const runtime = runtimeFor(url, person);
    try {
      const error = (await runtime.discover()).sourceErrors[0]?.error;
      expect(error).toMatchObject({ code: 'MCP_AUTH_REQUIRED', server: 'secured' });
      expect(error?.message).toMatch(why);
    } finally {
      await runtime.dispose();
    }
  });
});
