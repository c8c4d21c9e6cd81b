import { generateKeyPairSync } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMcpAdapter } from './mcp-adapter';
import { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_SHUTDOWN_GRACE_MS, loadMcpConfig, parseMcpConfig } from './mcp-config';
import { McpConfigError } from './mcp-config-error';
import { makeTempDir, rejectionOf, removeTempDir } from './mcp-fixtures.test-helper';

/** A P-256 private key (PEM, PKCS#8), made for the tests. */
const EC_KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

/** Stands for {@link EC_KEY} in the tables, so that test names do not print a key. */
const KEY_PLACEHOLDER = '<an EC private key>';

/** `value` with the placeholder replaced by the key. */
function withKey(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  return JSON.parse(JSON.stringify(value).replaceAll(JSON.stringify(KEY_PLACEHOLDER), JSON.stringify(EC_KEY))) as unknown;
}

function failure(value: unknown): McpConfigError {
  try {
    parseMcpConfig(value);
  } catch (error) {
    if (McpConfigError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected parseMcpConfig to throw');
}

describe('parseMcpConfig', () => {
  it('reads stdio and Streamable HTTP servers and fills in the defaults', () => {
    const config = parseMcpConfig({
      globalShortcut: 'ignored',
      mcpServers: {
        everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], env: { TOKEN: 'abc' }, cwd: '/tmp' },
        web: { url: 'http://127.0.0.1:3001/mcp', headers: { Authorization: 'Bearer x' }, scope: 'shared', callTimeoutMs: 1_000 },
        off: { command: 'nothing', disabled: true },
      },
    });
    expect(config.source).toBe('settings');
    expect(config.servers).toEqual([
      {
        name: 'everything',
        transport: 'stdio',
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-everything'],
        env: { TOKEN: 'abc' },
        cwd: '/tmp',
        inheritEnv: [],
        headers: {},
        scope: 'plan',
        poolSize: 1,
        connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS,
        callTimeoutMs: DEFAULT_CALL_TIMEOUT_MS,
        maxTotalTimeoutMs: DEFAULT_CALL_TIMEOUT_MS * 10,
        resetTimeoutOnProgress: undefined, // unset: a progress token only for a caller that listens
        shutdownGraceMs: DEFAULT_SHUTDOWN_GRACE_MS,
        include: ['*'],
        exclude: [],
        capabilities: {},
        trustAnnotations: false,
        roots: true,
      },
      expect.objectContaining({
        name: 'web',
        transport: 'http',
        url: 'http://127.0.0.1:3001/mcp',
        headers: { Authorization: 'Bearer x' },
        scope: 'shared',
        callTimeoutMs: 1_000,
        maxTotalTimeoutMs: 10_000,
      }),
    ]);
    expect(Object.isFrozen(config.servers[0]!.args)).toBe(true);
  });

  it('takes the scope of entries without one from defaultScope, and poolSize for shared servers only', () => {
    const servers = parseMcpConfig(
      {
        mcpServers: {
          pooled: { command: 'x', poolSize: 4 },
          single: { command: 'x' },
          isolated: { command: 'x', scope: 'plan' },
        },
      },
      { defaultScope: 'shared' },
    ).servers;
    expect(servers.map((server) => [server.name, server.scope, server.poolSize])).toEqual([
      ['pooled', 'shared', 4],
      ['single', 'shared', 1],
      ['isolated', 'plan', 1],
    ]);
    // Without defaultScope an entry is plan-scoped, unless it asks for a pool.
    expect(parseMcpConfig({ mcpServers: { a: { command: 'x' } } }).servers[0]).toMatchObject({ scope: 'plan', poolSize: 1 });
    expect(parseMcpConfig({ mcpServers: { a: { command: 'x', poolSize: 3 } } }).servers[0]).toMatchObject({ scope: 'shared', poolSize: 3 });
    expect(() => parseMcpConfig({ mcpServers: {} }, { defaultScope: 'global' as never })).toThrow(TypeError);
  });

  it('accepts an explicit type and the extension keys', () => {
    const [server] = parseMcpConfig({
      mcpServers: {
        files: {
          type: 'stdio',
          command: 'mcp-server-filesystem',
          include: ['read_*', 'list_?irectory'],
          exclude: ['read_media_file'],
          capabilities: { write_file: { checkpointable: false, openWorld: false } },
          inheritEnv: ['HTTPS_PROXY'],
          connectTimeoutMs: 5_000,
          maxTotalTimeoutMs: 1_000,
          resetTimeoutOnProgress: false,
          shutdownGraceMs: 100,
        },
      },
    }).servers;
    expect(server).toMatchObject({
      include: ['read_*', 'list_?irectory'],
      exclude: ['read_media_file'],
      capabilities: { write_file: { checkpointable: false, openWorld: false } },
      inheritEnv: ['HTTPS_PROXY'],
      connectTimeoutMs: 5_000,
      maxTotalTimeoutMs: 1_000,
      resetTimeoutOnProgress: false,
      shutdownGraceMs: 100,
    });
    expect(parseMcpConfig({ mcpServers: { a: { type: 'streamable-http', url: 'https://example.test/mcp' } } }).servers[0]!.transport).toBe('http');
  });

  it.each([
    [null, undefined, undefined, /expected an object like/],
    [{ servers: {} }, undefined, undefined, /"mcpServers" object/],
    [{ mcpServers: { 'my server': { command: 'x' } } }, 'my server', undefined, /cannot be used in tool names/],
    [{ mcpServers: { 'a.b': { command: 'x' } } }, 'a.b', undefined, /no dots/],
    [{ mcpServers: { a: 'npx' } }, 'a', undefined, /expected an object with "command"/],
    [{ mcpServers: { a: {} } }, 'a', undefined, /needs "command".*or "url"/],
    [{ mcpServers: { a: { command: 'x', url: 'http://h/' } } }, 'a', undefined, /both "command" and "url"/],
    [{ mcpServers: { a: { command: '' } } }, 'a', 'command', /non-empty string/],
    [{ mcpServers: { a: { command: 'x', resetTimeoutOnProgress: 'yes' } } }, 'a', 'resetTimeoutOnProgress', /expected true or false/],
    [{ mcpServers: { a: { command: 'x', args: 'serve' } } }, 'a', 'args', /array of strings/],
    [{ mcpServers: { a: { command: 'x', args: ['ok', 3] } } }, 'a', 'args', /index 1/],
    [{ mcpServers: { a: { command: 'x', env: { PORT: 3000 } } } }, 'a', 'env.PORT', /expected a string, got number 3000/],
    [{ mcpServers: { a: { command: 'x', cwd: 5 } } }, 'a', 'cwd', /directory path/],
    [{ mcpServers: { a: { command: 'x', comand: 'y' } } }, 'a', 'comand', /unknown key.*allowed keys are/],
    [{ mcpServers: { a: { url: 'http://h/', env: {} } } }, 'a', 'env', /unknown key for a Streamable HTTP server/],
    [{ mcpServers: { a: { url: 'ftp://h/' } } }, 'a', 'url', /http: or https: URL/],
    [{ mcpServers: { a: { url: 'not a url' } } }, 'a', 'url', /http: or https: URL/],
    [{ mcpServers: { a: { type: 'sse', url: 'http://h/sse' } } }, 'a', 'type', /legacy HTTP\+SSE transport is not supported/],
    [{ mcpServers: { a: { type: 'websocket', url: 'http://h/' } } }, 'a', 'type', /"stdio" or "http"/],
    [{ mcpServers: { a: { command: 'x', scope: 'global' } } }, 'a', 'scope', /"plan" or "shared"/],
    [{ mcpServers: { a: { command: 'x', scope: 'shared', poolSize: 0 } } }, 'a', 'poolSize', /whole number of sessions from 1 to 64/],
    [{ mcpServers: { a: { command: 'x', scope: 'shared', poolSize: 65 } } }, 'a', 'poolSize', /from 1 to 64, got number 65/],
    [{ mcpServers: { a: { command: 'x', poolSize: 2.5 } } }, 'a', 'poolSize', /whole number/],
    [{ mcpServers: { a: { command: 'x', scope: 'plan', poolSize: 2 } } }, 'a', 'poolSize', /applies to scope "shared" only/],
    [{ mcpServers: { a: { command: 'x', callTimeoutMs: 0 } } }, 'a', 'callTimeoutMs', /positive number of milliseconds/],
    [{ mcpServers: { a: { command: 'x', connectTimeoutMs: '5s' } } }, 'a', 'connectTimeoutMs', /positive number/],
    [{ mcpServers: { a: { command: 'x', include: ['ok', ''] } } }, 'a', 'include', /non-empty string at index 1/],
    [{ mcpServers: { a: { command: 'x', capabilities: { t: { write: false } } } } }, 'a', 'capabilities.t.write', /unknown capability field/],
    [{ mcpServers: { a: { command: 'x', capabilities: { t: { writes: 'no' } } } } }, 'a', 'capabilities.t.writes', /true or false/],
    [{ mcpServers: { a: { command: 'x', inheritEnv: ['NOT-A-NAME'] } } }, 'a', 'inheritEnv', /not an environment variable name/],
    [{ mcpServers: { a: { command: 'x', disabled: 'yes' } } }, 'a', 'disabled', /true or false/],
    [
      { mcpServers: { a: { url: 'http://h/', oauth: { clientMetadataUrl: 'http://agents.example.com/client.json' } } } },
      'a',
      'oauth.clientMetadataUrl',
      /https: URL with a path/,
    ],
    [
      { mcpServers: { a: { url: 'http://h/', oauth: { clientMetadataUrl: 'https://agents.example.com/' } } } },
      'a',
      'oauth.clientMetadataUrl',
      /https: URL with a path/,
    ],
    [
      { mcpServers: { a: { url: 'http://h/', oauth: { clientMetadataUrl: 'https://agents.example.com/c.json', clientId: 'c' } } } },
      'a',
      'oauth.clientMetadataUrl',
      /exclude each other/,
    ],
    [
      {
        mcpServers: {
          a: { url: 'http://h/', oauth: { grant: 'client_credentials', clientId: 'c', clientSecret: 's', clientMetadataUrl: 'https://a.example/c.json' } },
        },
      },
      'a',
      'oauth.clientMetadataUrl',
      /authorization_code grant only/,
    ],
    [{ mcpServers: { a: { url: 'http://h/', oauth: { grant: 'client_credentials', clientId: 'c' } } } }, 'a', 'oauth', /"clientSecret" or "privateKey"/],
    [
      { mcpServers: { a: { url: 'http://h/', oauth: { grant: 'client_credentials', clientId: 'c', privateKey: 'not a key' } } } },
      'a',
      'oauth.privateKey',
      /PEM/,
    ],
    [
      { mcpServers: { a: { url: 'http://h/', oauth: { grant: 'client_credentials', clientId: 'c', privateKey: KEY_PLACEHOLDER, clientSecret: 's' } } } },
      'a',
      'oauth.privateKey',
      /exclude each other/,
    ],
    [
      { mcpServers: { a: { url: 'http://h/', oauth: { clientId: 'c', privateKey: KEY_PLACEHOLDER } } } },
      'a',
      'oauth.privateKey',
      /client_credentials grant only/,
    ],
    [
      {
        mcpServers: { a: { url: 'http://h/', oauth: { grant: 'client_credentials', clientId: 'c', privateKey: KEY_PLACEHOLDER, signingAlgorithm: 'RS256' } } },
      },
      'a',
      'oauth.signingAlgorithm',
      /RS256 needs an RSA key/,
    ],
    [
      {
        mcpServers: { a: { url: 'http://h/', oauth: { grant: 'client_credentials', clientId: 'c', privateKey: KEY_PLACEHOLDER, signingAlgorithm: 'HS256' } } },
      },
      'a',
      'oauth.signingAlgorithm',
      /expected one of RS256/,
    ],
    [
      { mcpServers: { a: { url: 'http://h/', oauth: { grant: 'client_credentials', clientId: 'c', clientSecret: 's', signingAlgorithm: 'ES256' } } } },
      'a',
      'oauth.signingAlgorithm',
      /"privateKey" only/,
    ],
  ])('refuses %j, naming the server and the key', (value, server, key, message) => {
    const error = failure(withKey(value));
    expect(error.code).toBe('MCP_CONFIG_INVALID');
    expect(error.source).toBe('settings');
    expect(error.server).toBe(server);
    expect(error.key).toBe(key);
    expect(error.message).toMatch(message);
    if (server !== undefined) expect(error.message).toContain(`MCP server '${server}'`);
    if (key !== undefined) expect(error.message).toContain(`key '${key}'`);
  });
});

describe('parseMcpConfig: OAuth client authentication', () => {
  const oauthOf = (oauth: unknown) => parseMcpConfig({ mcpServers: { a: { url: 'https://mcp.example.com/mcp', oauth } } }).servers[0]?.oauth;

  it('takes a private key (PEM) and the JWS algorithm it implies, or the configured one', () => {
    expect(oauthOf({ grant: 'client_credentials', clientId: 'c', privateKey: EC_KEY })).toMatchObject({ privateKey: EC_KEY, signingAlgorithm: 'ES256' });
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    expect(oauthOf({ grant: 'client_credentials', clientId: 'c', privateKey: rsa })).toMatchObject({ signingAlgorithm: 'RS256' });
    expect(oauthOf({ grant: 'client_credentials', clientId: 'c', privateKey: rsa, signingAlgorithm: 'PS384' })).toMatchObject({ signingAlgorithm: 'PS384' });
  });

  it('takes a client metadata document URL for the authorization code grant', () => {
    expect(oauthOf({ clientMetadataUrl: 'https://agents.example.com/oauth/client.json' })).toMatchObject({
      grant: 'authorization_code',
      clientMetadataUrl: 'https://agents.example.com/oauth/client.json',
    });
  });

  it('never quotes a key it cannot read', () => {
    const lines = EC_KEY.split('\n');
    const broken = [lines[0], [...(lines[1] as string)].reverse().join(''), ...lines.slice(2)].join('\n');
    const error = failure({ mcpServers: { a: { url: 'http://h/', oauth: { grant: 'client_credentials', clientId: 'c', privateKey: broken } } } });
    expect(error.key).toBe('oauth.privateKey');
    expect(error.message).not.toContain(broken.split('\n')[1] as string);
  });
});

describe('loadMcpConfig', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeTempDir();
  });
  afterAll(() => removeTempDir(dir));

  it('reads a configuration file', async () => {
    const path = join(dir, 'mcp.json');
    await writeFile(path, JSON.stringify({ mcpServers: { everything: { command: 'npx', args: ['-y', 'x'] } } }));
    const config = await loadMcpConfig(path);
    expect(config.source).toBe(path);
    expect(config.servers.map((server) => server.name)).toEqual(['everything']);
  });

  it('names the file in its errors', async () => {
    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{ "mcpServers": ');
    const syntax = await rejectionOf(loadMcpConfig(broken));
    expect(McpConfigError.isInstance(syntax)).toBe(true);
    expect(syntax.message).toMatch(/broken\.json' is not valid JSON/);
    const missing = await rejectionOf(loadMcpConfig(join(dir, 'missing.json')));
    expect(missing).toMatchObject({ code: 'MCP_CONFIG_INVALID', source: join(dir, 'missing.json') });
    expect(missing.message).toMatch(/Cannot read the MCP configuration file/);
    const invalid = join(dir, 'invalid.json');
    await writeFile(invalid, JSON.stringify({ mcpServers: { a: { command: 'x', args: 1 } } }));
    const wrong = await rejectionOf(loadMcpConfig(invalid));
    expect(wrong).toMatchObject({ server: 'a', key: 'args', source: invalid });
    expect(wrong.message).toContain(invalid);
  });

  it('is what createMcpAdapter uses for a path: errors surface from discover', async () => {
    const empty = join(dir, 'empty.json');
    await writeFile(empty, JSON.stringify({ mcpServers: {} }));
    const source = createMcpAdapter({ servers: empty });
    expect(source.id).toBe(`mcp:${empty}`);
    expect(await source.discover()).toEqual([]);
    const broken = createMcpAdapter({ servers: join(dir, 'missing.json') });
    expect(await rejectionOf(broken.discover())).toMatchObject({ code: 'MCP_CONFIG_INVALID' });
  });

  it('is validated at once when given as an object', () => {
    expect(() => createMcpAdapter({ servers: { mcpServers: { a: { command: 'x', args: 'y' } } } as never })).toThrow(/MCP server 'a', key 'args'/);
  });
});
