import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { ToolRuntime, type InteractionContext, type InteractionHandler, type InteractionRequest } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { createMcpAdapter } from './mcp-adapter';
import type { McpServerConfig } from './mcp-config';
import { MemoryTokenStore, type McpStoredCredentials, type McpTokenStore } from './mcp-oauth';
import { McpServerError } from './mcp-server-error';
import { makeTempDir, PersonAtBrowser, readLines, rejectionOf, removeTempDir, startFixtureHttp, type FixtureHttpServer } from './mcp-fixtures.test-helper';

jest.setTimeout(60_000);

/** A token store that shows what it was given (like a file would). */
class VisibleStore implements McpTokenStore {
  readonly entries = new Map<string, McpStoredCredentials>();
  load(key: string): McpStoredCredentials | undefined {
    return this.entries.get(key);
  }
  save(key: string, credentials: McpStoredCredentials): void {
    this.entries.set(key, credentials);
  }
  delete(key: string): void {
    this.entries.delete(key);
  }
}

describe('OAuth 2.1 against a real local authorization server (the SDK’s auth router)', () => {
  let dir: string;
  let record: string;
  let server: FixtureHttpServer;

  beforeAll(async () => {
    dir = await makeTempDir();
    record = join(dir, 'record.txt');
    server = await startFixtureHttp({
      FIXTURE_AUTH: 'oauth',
      FIXTURE_RECORD_FILE: record,
      FIXTURE_CLIENT_ID: 'reporting-service',
      FIXTURE_CLIENT_SECRET: 's3cret',
      FIXTURE_TOKEN_TTL_S: '2',
    });
  });

  afterAll(async () => {
    await server.kill();
    await removeTempDir(dir);
  });

  function runtimeFor(
    entry: Partial<McpServerConfig> & Record<string, unknown>,
    settings: { interactionHandler?: InteractionHandler; tokenStore?: McpTokenStore } = {},
  ) {
    const logger = new RecordingLogger();
    const source = createMcpAdapter({ servers: { mcpServers: { secured: { url: server.url, ...entry } as McpServerConfig } }, logger, ...settings });
    return { source, runtime: new ToolRuntime({ sources: [source], logger }), logger };
  }

  it('authorization code with PKCE: registers dynamically, takes the person to sign in once, refreshes, and keeps the tokens in the store', async () => {
    const person = new PersonAtBrowser();
    const store = new VisibleStore();
    const { runtime } = runtimeFor({ oauth: true }, { interactionHandler: person, tokenStore: store });
    try {
      const before = (await readLines(record)).length;
      const tools = (await runtime.listTools()).map((tool) => tool.name);
      expect(tools).toEqual(expect.arrayContaining(['mcp.secured.echo', 'mcp.secured.whoami']));
      expect(person.asked).toHaveLength(1);
      const [{ request, context }] = person.asked as [{ request: InteractionRequest; context: InteractionContext }];
      expect(request).toMatchObject({
        kind: 'url',
        purpose: 'authorization',
        message: expect.stringMatching(/Sign in to allow access to MCP server 'secured'/),
      });
      const authorizationUrl = new URL((request as { url: string }).url);
      expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
      expect(authorizationUrl.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      expect(context).toMatchObject({ source: 'mcp', origin: 'secured' });
      const seen = (await readLines(record)).slice(before);
      // The OAuth exchanges, in order (not the calls, the event streams opened or the sessions ended).
      expect(seen.filter((line) => !line.startsWith('call') && line !== 'terminate' && line !== 'events')).toEqual([
        expect.stringMatching(/^register \S+ @ca\/adapters-mcp$/),
        expect.stringMatching(/^authorize /),
        'token authorization_code',
      ]);
      const [stored] = [...store.entries.values()] as [McpStoredCredentials];
      expect(stored.clientInformation).toMatchObject({ client_id: expect.any(String), issuer: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/?$/) });
      expect(stored.tokens).toMatchObject({
        access_token: expect.any(String),
        refresh_token: expect.any(String),
        token_type: expect.stringMatching(/bearer/i),
      });
      const firstToken = stored.tokens?.['access_token'];

      // The access token lives 2 s: the next plan's session is refused once, refreshes and goes on.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      const result = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.secured.whoami', {}, ctx));
      expect(result).toMatchObject({ ok: true, output: (stored.clientInformation as { client_id: string }).client_id });
      expect(await readLines(record)).toContain('token refresh_token');
      expect([...store.entries.values()][0]?.tokens?.['access_token']).not.toBe(firstToken);
      expect(person.asked).toHaveLength(1);
    } finally {
      await runtime.dispose();
    }
  });

  it('a second source with the same store signs in without asking anyone', async () => {
    const store = new MemoryTokenStore();
    const first = runtimeFor({ oauth: true }, { interactionHandler: new PersonAtBrowser(), tokenStore: store });
    await first.runtime.listTools();
    await first.runtime.dispose();
    const nobody = new PersonAtBrowser(false);
    const second = runtimeFor({ oauth: true }, { interactionHandler: nobody, tokenStore: store });
    try {
      const result = await second.runtime.runPlan({}, (ctx) => second.runtime.execute('mcp.secured.echo', { text: 'remembered' }, ctx));
      expect(result).toMatchObject({ ok: true, output: 'echo: remembered' });
      expect(nobody.asked).toEqual([]);
    } finally {
      await second.runtime.dispose();
    }
  });

  it('fails with MCP_AUTH_REQUIRED when nobody can be asked, or the person declines', async () => {
    const alone = runtimeFor({ oauth: true });
    const declined = runtimeFor({ oauth: true }, { interactionHandler: new PersonAtBrowser(false) });
    try {
      const noHandler = (await alone.runtime.discover()).sourceErrors[0]?.error;
      expect(McpServerError.isInstance(noHandler)).toBe(true);
      expect(noHandler).toMatchObject({ code: 'MCP_AUTH_REQUIRED', server: 'secured' });
      expect(noHandler?.message).toMatch(/no interaction handler was given/);
      const no = (await declined.runtime.discover()).sourceErrors[0]?.error;
      expect(no).toMatchObject({ code: 'MCP_AUTH_REQUIRED' });
      expect(no?.message).toMatch(/the sign-in was declined/);
    } finally {
      await alone.runtime.dispose();
      await declined.runtime.dispose();
    }
  });

  it('client credentials: a service authenticates with its own client, no person involved; the store never holds the secret', async () => {
    const nobody = new PersonAtBrowser(false);
    const store = new VisibleStore();
    const { runtime } = runtimeFor(
      { oauth: { grant: 'client_credentials', clientId: 'reporting-service', clientSecret: 's3cret' } },
      { interactionHandler: nobody, tokenStore: store },
    );
    try {
      const result = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.secured.whoami', {}, ctx));
      expect(result).toMatchObject({ ok: true, output: 'reporting-service' });
      expect(nobody.asked).toEqual([]);
      expect(await readLines(record)).toContain('token client_credentials');
      // What the store keeps (a file, for the agents command): the tokens and the client's id, never its configured secret.
      const [stored] = [...store.entries.values()] as [McpStoredCredentials];
      expect(stored.tokens).toMatchObject({ access_token: expect.any(String) });
      expect(stored.clientInformation).toMatchObject({ client_id: 'reporting-service' });
      expect(JSON.stringify([...store.entries])).not.toContain('s3cret');
    } finally {
      await runtime.dispose();
    }
    // The next source, with the same store, still authenticates: the secret comes from its configuration.
    const again = runtimeFor({ oauth: { grant: 'client_credentials', clientId: 'reporting-service', clientSecret: 's3cret' } }, { tokenStore: store });
    try {
      await store.delete([...store.entries.keys()][0] as string);
      const result = await again.runtime.runPlan({}, (ctx) => again.runtime.execute('mcp.secured.whoami', {}, ctx));
      expect(result).toMatchObject({ ok: true, output: 'reporting-service' });
      expect(JSON.stringify([...store.entries])).not.toContain('s3cret');
    } finally {
      await again.runtime.dispose();
    }
  });

  it('a tool of a server whose authentication failed at discovery: execute says so, naming the server (not TOOL_NOT_FOUND)', async () => {
    const { runtime } = runtimeFor({ oauth: { grant: 'client_credentials', clientId: 'reporting-service', clientSecret: 'wrong' } });
    try {
      await runtime.discover();
      const error = await rejectionOf(runtime.runPlan({}, (ctx) => runtime.execute('mcp.secured.whoami', {}, ctx)));
      expect(error.code).not.toBe('TOOL_NOT_FOUND');
      expect(error).toMatchObject({ code: 'TOOL_REGISTRATION_FAILED', problem: 'unavailable', toolName: 'mcp.secured.whoami' });
      expect(error.message).toMatch(/^Tool 'mcp\.secured\.whoami' is unavailable: .*MCP server 'secured'.*refused.*invalid_client/);
      expect(error.cause).toMatchObject({ code: 'MCP_AUTH_FAILED', server: 'secured' });
    } finally {
      await runtime.dispose();
    }
  });

  it('client credentials with a wrong secret fail with MCP_AUTH_FAILED', async () => {
    const { runtime } = runtimeFor({ oauth: { grant: 'client_credentials', clientId: 'reporting-service', clientSecret: 'wrong' } });
    try {
      const error = (await runtime.discover()).sourceErrors[0]?.error;
      expect(error).toMatchObject({ code: 'MCP_AUTH_FAILED', server: 'secured' });
      expect(error?.message).toMatch(/invalid_client/);
      expect(await readLines(record)).toContain('token client_credentials refused');
    } finally {
      await runtime.dispose();
    }
  });

  it('authorize() signs in ahead of use and forgetAuthorization() drops what the store keeps', async () => {
    const store = new VisibleStore();
    const person = new PersonAtBrowser();
    const { source, runtime } = runtimeFor({ oauth: true }, { interactionHandler: person, tokenStore: store });
    try {
      await source.authorize('secured');
      expect(store.entries.size).toBe(1);
      expect(person.asked).toHaveLength(1);
      await source.forgetAuthorization('secured');
      expect(store.entries.size).toBe(0);
      await expect(source.authorize('nowhere')).rejects.toMatchObject({ code: 'MCP_CONFIG_INVALID' });
    } finally {
      await runtime.dispose();
    }
  });
});

describe('client ID metadata documents (SEP-991) and private_key_jwt', () => {
  let dir: string;
  const servers: FixtureHttpServer[] = [];
  const DOCUMENT = 'https://agents.example.com/oauth/client.json';

  beforeAll(async () => {
    dir = await makeTempDir();
  });

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.kill()));
    await removeTempDir(dir);
  });

  async function start(name: string, env: Record<string, string>): Promise<{ url: string; record: string }> {
    const record = join(dir, `${name}.txt`);
    const server = await startFixtureHttp({ FIXTURE_AUTH: 'oauth', FIXTURE_RECORD_FILE: record, ...env });
    servers.push(server);
    return { url: server.url, record };
  }

  it.each([
    ['advertises client_id_metadata_document_supported: the document URL is the client id, nothing is registered', '1'],
    ['does not advertise it: the client registers dynamically, as without the setting', '0'],
  ])('an authorization server that %s', async (_case, cimd) => {
    const { url, record } = await start(`cimd-${cimd}`, { FIXTURE_CIMD: cimd });
    const person = new PersonAtBrowser();
    const store = new VisibleStore();
    const source = createMcpAdapter({
      servers: { mcpServers: { secured: { url, oauth: { clientMetadataUrl: DOCUMENT } } } },
      logger: new RecordingLogger(),
      interactionHandler: person,
      tokenStore: store,
    });
    const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    try {
      const result = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.secured.whoami', {}, ctx));
      const clientId = new URL((person.asked[0]?.request as { url: string }).url).searchParams.get('client_id');
      const seen = await readLines(record);
      if (cimd === '1') {
        expect(clientId).toBe(DOCUMENT);
        expect(result).toMatchObject({ ok: true, output: DOCUMENT });
        expect(seen.some((line) => line.startsWith('register '))).toBe(false);
        expect([...store.entries.values()][0]?.clientInformation).toMatchObject({ client_id: DOCUMENT });
      } else {
        expect(clientId).not.toBe(DOCUMENT);
        expect(result).toMatchObject({ ok: true, output: clientId });
        expect(seen.filter((line) => line.startsWith('register '))).toHaveLength(1);
      }
      expect(person.asked).toHaveLength(1);
    } finally {
      await runtime.dispose();
    }
  });

  it('with the defaults (no clientMetadataUrl), an authorization server that accepts documents: the client registers dynamically, as the SDK does, and the log says once which setting would use a document', async () => {
    const { url, record } = await start('cimd-defaults', { FIXTURE_CIMD: '1' });
    const person = new PersonAtBrowser();
    const logger = new RecordingLogger();
    const source = createMcpAdapter({ servers: { mcpServers: { secured: { url, oauth: true } } }, logger, interactionHandler: person });
    const runtime = new ToolRuntime({ sources: [source], logger });
    try {
      const result = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.secured.whoami', {}, ctx));
      const clientId = new URL((person.asked[0]?.request as { url: string }).url).searchParams.get('client_id');
      expect(result).toMatchObject({ ok: true, output: clientId });
      expect((await readLines(record)).filter((line) => line.startsWith('register '))).toHaveLength(1);
      const hints = logger.at('warn').filter((entry) => /client_id_metadata_document_supported/.test(entry.message));
      expect(hints).toHaveLength(1);
      expect(hints[0]?.message).toMatch(/MCP server 'secured'.*registered dynamically.*"oauth\.clientMetadataUrl"/);
    } finally {
      await runtime.dispose();
    }
  });

  it.each([
    ['accepts documents but none is configured', '1', /accepts a client ID metadata document instead: .*"oauth\.clientMetadataUrl"/],
    ['accepts no documents either', '0', /Register a client there and set "oauth\.clientId"/],
  ])(
    'an authorization server without dynamic registration that %s: MCP_AUTH_FAILED naming the setting, and nobody is asked to sign in',
    async (_case, cimd, remedy) => {
      const { url } = await start(`no-registration-${cimd}`, { FIXTURE_CIMD: cimd, FIXTURE_NO_REGISTRATION: '1' });
      const person = new PersonAtBrowser();
      const source = createMcpAdapter({
        servers: { mcpServers: { secured: { url, oauth: true } } },
        logger: new RecordingLogger(),
        interactionHandler: person,
      });
      const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
      try {
        const error = (await runtime.discover()).sourceErrors[0]?.error;
        expect(error).toMatchObject({ code: 'MCP_AUTH_FAILED', server: 'secured' });
        expect(error?.message).toMatch(/offers no dynamic client registration/);
        expect(error?.message).toMatch(remedy);
        expect(person.asked).toEqual([]);
      } finally {
        await runtime.dispose();
      }
    },
  );

  it('an authorization server without dynamic registration that accepts the configured document: it is the client id', async () => {
    const { url, record } = await start('no-registration-document', { FIXTURE_CIMD: '1', FIXTURE_NO_REGISTRATION: '1' });
    const person = new PersonAtBrowser();
    const source = createMcpAdapter({
      servers: { mcpServers: { secured: { url, oauth: { clientMetadataUrl: DOCUMENT } } } },
      logger: new RecordingLogger(),
      interactionHandler: person,
    });
    const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    try {
      const result = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.secured.whoami', {}, ctx));
      expect(result).toMatchObject({ ok: true, output: DOCUMENT });
      expect(await readLines(record)).toContain(`cimd ${DOCUMENT}`);
    } finally {
      await runtime.dispose();
    }
  });

  it('client credentials with private_key_jwt: each token request carries a JWT signed with the configured key, no secret; the store never holds the key', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const { url, record } = await start('jwt', {
      FIXTURE_CLIENT_ID: 'signing-service',
      FIXTURE_CLIENT_PUBLIC_KEY: publicKey.export({ type: 'spki', format: 'pem' }) as string,
    });
    const store = new VisibleStore();
    const source = createMcpAdapter({
      servers: { mcpServers: { secured: { url, oauth: { grant: 'client_credentials', clientId: 'signing-service', privateKey: pem } } } },
      logger: new RecordingLogger(),
      tokenStore: store,
    });
    const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    try {
      const result = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.secured.whoami', {}, ctx));
      expect(result).toMatchObject({ ok: true, output: 'signing-service' });
      expect(await readLines(record)).toContain('token client_credentials private_key_jwt without a secret');
      const kept = JSON.stringify([...store.entries]);
      expect(kept).toContain('access_token');
      expect(kept).not.toContain('PRIVATE KEY');
      expect(kept).not.toContain(pem.split('\n')[1] as string);
    } finally {
      await runtime.dispose();
    }
  });

  it('a key the authorization server does not know: MCP_AUTH_FAILED (invalid_client)', async () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const { url } = await start('jwt-wrong', {
      FIXTURE_CLIENT_ID: 'signing-service',
      FIXTURE_CLIENT_PUBLIC_KEY: publicKey.export({ type: 'spki', format: 'pem' }) as string,
    });
    const source = createMcpAdapter({
      servers: { mcpServers: { secured: { url, oauth: { grant: 'client_credentials', clientId: 'signing-service', privateKey: other } } } },
      logger: new RecordingLogger(),
    });
    const runtime = new ToolRuntime({ sources: [source], logger: new RecordingLogger() });
    try {
      const error = (await runtime.discover()).sourceErrors[0]?.error;
      expect(error).toMatchObject({ code: 'MCP_AUTH_FAILED', server: 'secured' });
      expect(error?.message).toMatch(/invalid_client/);
      expect(error?.message).not.toContain('PRIVATE KEY');
    } finally {
      await runtime.dispose();
    }
  });
});
