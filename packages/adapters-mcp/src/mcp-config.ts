import { describeValue, messageOf, type ToolCapabilityInput } from '@ca/domain';
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { resolveSandboxSettings, SandboxSettingsError, type SandboxMode } from '@ca/sandbox';
import { McpConfigError } from './mcp-config-error';

/**
 * How long a server's session lives:
 * - `plan` (the default unless the adapter's `defaultScope` says otherwise):
 *   one session (one process, for stdio) per plan, opened when the plan
 *   first uses one of the server's tools and closed when the plan ends — for
 *   servers that keep state per client;
 * - `shared`: a pool of up to `poolSize` sessions that every plan shares,
 *   opened on first use and kept until the source is disposed; each plan is
 *   given one of them (the least used) for all its requests.
 */
export type McpServerScope = 'plan' | 'shared';

/** A capability override: any field of `ToolCapability`, as booleans. */
export type McpCapabilityOverride = {
  readonly [K in keyof ToolCapabilityInput]?: boolean;
};

/**
 * The keys this adapter adds beside the standard ones of an `mcpServers`
 * entry. Every one is optional.
 */
export interface McpServerExtensions {
  /** `plan` or `shared` (default: the adapter's `defaultScope`, `plan` unless set); see {@link McpServerScope}. */
  readonly scope?: McpServerScope;
  /**
   * Scope `shared`: the most sessions (processes, for stdio) plans share,
   * per set of roots (default 1; at most 64). A new one is opened only when
   * every open one already serves a plan. Set without `scope`, it makes the
   * server shared.
   */
  readonly poolSize?: number;
  /** Deadline of the start plus the `initialize` handshake, in ms (default 30,000). */
  readonly connectTimeoutMs?: number;
  /** Deadline of one request without progress, in ms (default 60,000); progress resets it. */
  readonly callTimeoutMs?: number;
  /** Deadline of one request however much progress it reports, in ms (default 10 × `callTimeoutMs`). */
  readonly maxTotalTimeoutMs?: number;
  /**
   * Whether progress resets `callTimeoutMs`. Unset (default): a `tools/call`
   * carries a progress token only when the caller listens for progress
   * (`onProgress`), and then progress resets the timeout (up to
   * `maxTotalTimeoutMs`); a call nobody listens to carries none, so
   * `callTimeoutMs` is a hard limit for it and the server has nothing more to
   * parse. `true`: every call carries a token, so progress resets the timeout
   * even when nobody listens. `false`: a token only for a listener, and
   * `callTimeoutMs` is a hard limit for every call.
   */
  readonly resetTimeoutOnProgress?: boolean;
  /** How long a closing stdio server may take after SIGTERM before SIGKILL, in ms (default 2,000). */
  readonly shutdownGraceMs?: number;
  /** Only tools whose MCP name matches one of these globs (`*`, `?`) are offered. */
  readonly include?: readonly string[];
  /** Tools whose MCP name matches one of these globs are not offered (wins over `include`). */
  readonly exclude?: readonly string[];
  /** Per MCP tool name, capability fields that replace what the annotations imply. */
  readonly capabilities?: Readonly<Record<string, McpCapabilityOverride>>;
  /** Names of further variables of this process's environment passed to a stdio server. */
  readonly inheritEnv?: readonly string[];
  /** `true` leaves the server out entirely. */
  readonly disabled?: boolean;
  // Protocol features and trust (the client side of MCP).
  /**
   * `true`: believe the server's tool annotations (`readOnlyHint`, …). Default
   * `false`: annotations are a server's claims, so its tools write, are not
   * checkpointable and are open-world unless `capabilities` says otherwise.
   */
  readonly trustAnnotations?: boolean;
  /** `false`: do not offer the plan's resources as the server's roots (default `true`). */
  readonly roots?: boolean;
}

/** A server started as a child process, spoken to over stdin/stdout. */
export interface McpStdioServerConfig extends McpServerExtensions {
  /** `'stdio'`; implied by `command`. */
  readonly type?: 'stdio';
  /** The program to run (looked up on `PATH`; no shell). */
  readonly command: string;
  /** Its arguments. */
  readonly args?: readonly string[];
  /** Environment variables for the server, on top of the safe default set. */
  readonly env?: Readonly<Record<string, string>>;
  /** Working directory of the server (default: this process's). */
  readonly cwd?: string;
  /** Run the server in the kernel sandbox (opt-in; default `'off'`); see {@link McpServerSandbox}. */
  readonly sandbox?: McpServerSandbox;
}

/**
 * The kernel sandbox of a stdio server (`@ca/sandbox`:
 * bubblewrap, Linux), opted in per server: `'required'` (the server does not
 * start where the sandbox does not work), `'auto'` (where it works) or
 * `'off'`, or the settings in full. A sandboxed server sees the file system
 * read-only, except `writable`; a private `/tmp` (its `cwd` and `readable`
 * stay visible there); a PID namespace (every process it started ends with
 * it); and the network unless `network: false`.
 */
export type McpServerSandbox =
  | SandboxMode
  | {
      readonly mode: SandboxMode;
      /** `false`: no network at all (a loopback of its own). Default `true`. */
      readonly network?: boolean;
      /** Absolute paths the server may write, in place (a cache, a data folder). Default none. */
      readonly writable?: readonly string[];
      /** Absolute paths under `/tmp` the server must see, read-only (the rest of the file system is visible anyway). */
      readonly readable?: readonly string[];
      /** The `bwrap` program (absolute path); default `bwrap` on the `PATH`. */
      readonly bwrapPath?: string;
    };

/** A server's sandbox after validation. */
export interface ParsedMcpSandbox {
  readonly mode: SandboxMode;
  readonly network: boolean;
  readonly writable: readonly string[];
  readonly readable: readonly string[];
  readonly bwrapPath?: string;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServerConfig extends McpServerExtensions {
  /** `'http'` (or `'streamable-http'`, `'streamableHttp'`); implied by `url`. */
  readonly type?: 'http' | 'streamable-http' | 'streamableHttp';
  /** The MCP endpoint, `http:` or `https:`. */
  readonly url: string;
  /** Headers sent with every request (e.g. `Authorization`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** OAuth 2.1 for this server: `true` for the defaults, or its settings. */
  readonly oauth?: boolean | McpOAuthConfig;
}

/**
 * OAuth 2.1 settings of a Streamable HTTP server. The authorization server
 * is found from the MCP server (protected resource metadata); a client is
 * registered dynamically when no `clientId` is given and the server offers it.
 */
export interface McpOAuthConfig {
  /**
   * `authorization_code` (default): a person signs in in a browser (PKCE,
   * redirect to a loopback address); `client_credentials`: a service
   * authenticates with `clientId` and `clientSecret` (or `privateKey`), no
   * person involved.
   */
  readonly grant?: 'authorization_code' | 'client_credentials';
  /** A client registered beforehand; required for `client_credentials`. */
  readonly clientId?: string;
  /** Its secret (confidential clients; `client_credentials` needs it or `privateKey`). Never written to the token store. */
  readonly clientSecret?: string;
  /**
   * `client_credentials` only, instead of `clientSecret`: the client's
   * private key (PEM, PKCS#8), with which it signs a JWT assertion for each
   * token request (`private_key_jwt`, RFC 7523). Never written to the token store.
   */
  readonly privateKey?: string;
  /**
   * The JWS algorithm of the assertion (`RS256`, `ES256`, `PS256`, … with 384
   * and 512 variants); default: `RS256` for an RSA key (`PS256` for RSA-PSS), `ES256`/`ES384`/`ES512`
   * for an EC key of the matching curve.
   */
  readonly signingAlgorithm?: string;
  /**
   * `authorization_code` only, instead of `clientId`: the `https:` URL of the
   * client's metadata document (SEP-991, OAuth client ID metadata
   * documents). It is the client id wherever the authorization server
   * advertises `client_id_metadata_document_supported`; elsewhere the client
   * registers dynamically, as without it.
   */
  readonly clientMetadataUrl?: string;
  /** Scopes to ask for, space-separated (default: what the server advertises). */
  readonly scope?: string;
  /** Name shown on the consent page when registering dynamically (default `@ca/adapters-mcp`). */
  readonly clientName?: string;
  /** Loopback port of the redirect for `authorization_code` (default 0: any free port). */
  readonly redirectPort?: number;
}

/** One entry of `mcpServers`. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** The `mcpServers` document MCP clients already use (Claude Desktop, Cursor, …). */
export interface McpServersConfig {
  /** Servers by name; a name becomes the middle part of `mcp.<server>.<tool>`. */
  readonly mcpServers: Readonly<Record<string, McpServerConfig>>;
}

/** One server after validation, with every default filled in. */
export interface ParsedMcpServer {
  readonly name: string;
  readonly transport: 'stdio' | 'http';
  readonly command?: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly inheritEnv: readonly string[];
  /** Present when the configuration sets `sandbox` (stdio servers only). */
  readonly sandbox?: ParsedMcpSandbox;
  readonly url?: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly scope: McpServerScope;
  /** Scope `shared`: the most sessions in the pool, per set of roots (1 for scope `plan`). */
  readonly poolSize: number;
  readonly connectTimeoutMs: number;
  readonly callTimeoutMs: number;
  readonly maxTotalTimeoutMs: number;
  /** As configured: `undefined` when the configuration does not say (see {@link McpServerConfig.resetTimeoutOnProgress}). */
  readonly resetTimeoutOnProgress: boolean | undefined;
  readonly shutdownGraceMs: number;
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  readonly capabilities: Readonly<Record<string, McpCapabilityOverride>>;
  readonly trustAnnotations: boolean;
  readonly roots: boolean;
  /** OAuth settings of a Streamable HTTP server, when it uses OAuth. */
  readonly oauth?: ParsedMcpOAuth;
}

/** {@link McpOAuthConfig} with its defaults. */
export interface ParsedMcpOAuth {
  readonly grant: 'authorization_code' | 'client_credentials';
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly privateKey?: string;
  /** Set when `privateKey` is: the configured algorithm, or the one the key implies. */
  readonly signingAlgorithm?: string;
  readonly clientMetadataUrl?: string;
  readonly scope?: string;
  readonly clientName: string;
  readonly redirectPort: number;
}

/** A validated configuration: the enabled servers, in the order given. */
export interface ParsedMcpConfig {
  /** Where it came from: a file path, or `'settings'`. */
  readonly source: string;
  readonly servers: readonly ParsedMcpServer[];
}

/** Options of {@link parseMcpConfig}. */
export interface ParseMcpConfigOptions {
  /** Where the value came from, for messages (a file path); default `'settings'`. */
  readonly source?: string;
  /** The scope of a server whose entry has no `scope`; default `'plan'`. */
  readonly defaultScope?: McpServerScope;
}

/** Default of `connectTimeoutMs`. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
/** Default of `callTimeoutMs` (the MCP SDK's default request timeout). */
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
/** Default of `shutdownGraceMs`. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 2_000;
/** Most sessions of a `shared` server's pool (`poolSize`). */
export const MAX_POOL_SIZE = 64;

const MAX_TIMER_MS = 2_147_483_647;
const SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const CAPABILITY_FIELDS = new Set(['writes', 'checkpointable', 'idempotent', 'destructive', 'openWorld']);
const COMMON_KEYS = [
  'type',
  'scope',
  'poolSize',
  'connectTimeoutMs',
  'callTimeoutMs',
  'maxTotalTimeoutMs',
  'resetTimeoutOnProgress',
  'shutdownGraceMs',
  'include',
  'exclude',
  'capabilities',
  'disabled',
];
// Protocol features and trust.
const CLIENT_KEYS = ['trustAnnotations', 'roots'];
const OAUTH_KEYS = new Set(['grant', 'clientId', 'clientSecret', 'privateKey', 'signingAlgorithm', 'clientMetadataUrl', 'scope', 'clientName', 'redirectPort']);
/** JWS algorithms of a `private_key_jwt` assertion, by the key type they need. */
const SIGNING_ALGORITHMS: Readonly<Record<string, 'rsa' | 'ec'>> = {
  RS256: 'rsa',
  RS384: 'rsa',
  RS512: 'rsa',
  PS256: 'rsa',
  PS384: 'rsa',
  PS512: 'rsa',
  ES256: 'ec',
  ES384: 'ec',
  ES512: 'ec',
};
/** The JWS algorithm an EC key's curve implies. */
const EC_ALGORITHMS: Readonly<Record<string, string>> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };
const STDIO_KEYS = new Set([...COMMON_KEYS, ...CLIENT_KEYS, 'command', 'args', 'env', 'cwd', 'inheritEnv', 'sandbox']);
const HTTP_KEYS = new Set([...COMMON_KEYS, ...CLIENT_KEYS, 'url', 'headers', 'oauth']);

/**
 * Validates an `mcpServers` document and fills in the defaults.
 *
 * @example
 * const config = parseMcpConfig({ mcpServers: { everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] } } });
 *
 * @throws {McpConfigError} When the value is not `{ mcpServers: { … } }`, a
 *   server name is not 1–64 letters, digits, `_` or `-`, an entry has both or
 *   neither of `command` and `url`, an unknown key, or a value of the wrong
 *   type. The error names the server and the key.
 */
export function parseMcpConfig(value: unknown, options: ParseMcpConfigOptions = {}): ParsedMcpConfig {
  const source = options.source ?? 'settings';
  const defaultScope = options.defaultScope ?? 'plan';
  if (defaultScope !== 'plan' && defaultScope !== 'shared') throw new TypeError(`defaultScope must be 'plan' or 'shared'; got ${String(defaultScope)}.`);
  const fail = (message: string, server?: string, key?: string): never => {
    const where = server === undefined ? '' : `MCP server '${server}'${key === undefined ? '' : `, key '${key}'`}: `;
    throw new McpConfigError({
      source,
      message: `Invalid MCP configuration (${source}): ${where}${message}`,
      ...(server === undefined ? {} : { server }),
      ...(key === undefined ? {} : { key }),
    });
  };
  if (!isPlainObject(value)) {
    fail(`expected an object like { "mcpServers": { "<name>": { "command": "…" } } }, got ${describeValue(value)}.`);
  }
  const servers = (value as Record<string, unknown>)['mcpServers'];
  if (!isPlainObject(servers)) {
    fail(`expected a "mcpServers" object mapping server names to their settings, got ${describeValue(servers)}.`);
  }
  const parsed: ParsedMcpServer[] = [];
  for (const [name, entry] of Object.entries(servers as Record<string, unknown>)) {
    if (!SERVER_NAME.test(name)) {
      fail(`the server name '${name}' cannot be used in tool names (mcp.<server>.<tool>): use 1–64 letters, digits, '_' or '-' (no dots or spaces).`, name);
    }
    const server = parseServer(name, entry, defaultScope, (message, key) => fail(message, name, key));
    if (server !== undefined) parsed.push(server);
  }
  return Object.freeze({ source, servers: Object.freeze(parsed) });
}

/**
 * Reads and validates an `mcpServers` JSON file.
 *
 * @throws {McpConfigError} (as a rejection) When the file cannot be read, is
 *   not JSON, or is not a valid configuration (see {@link parseMcpConfig}).
 */
export async function loadMcpConfig(path: string, options: Omit<ParseMcpConfigOptions, 'source'> = {}): Promise<ParsedMcpConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new McpConfigError({
      source: path,
      cause: error,
      message: `Cannot read the MCP configuration file '${path}': ${messageOf(error)}. Check the path and its permissions.`,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError({
      source: path,
      cause: error,
      message: `The MCP configuration file '${path}' is not valid JSON: ${messageOf(error)}.`,
    });
  }
  return parseMcpConfig(value, { ...options, source: path });
}

function parseServer(name: string, entry: unknown, defaultScope: McpServerScope, fail: (message: string, key?: string) => never): ParsedMcpServer | undefined {
  if (!isPlainObject(entry)) fail(`expected an object with "command" (stdio) or "url" (Streamable HTTP), got ${describeValue(entry)}.`);
  const raw = entry as Record<string, unknown>;
  const disabled = optionalBoolean(raw['disabled'], 'disabled', fail);
  const type = raw['type'];
  let transport: 'stdio' | 'http';
  if (type === undefined) {
    if (raw['command'] !== undefined && raw['url'] !== undefined) fail('has both "command" and "url"; keep one (stdio or Streamable HTTP).');
    if (raw['command'] === undefined && raw['url'] === undefined) {
      fail('needs "command" (a stdio server) or "url" (a Streamable HTTP server).');
    }
    transport = raw['command'] !== undefined ? 'stdio' : 'http';
  } else if (type === 'stdio') {
    transport = 'stdio';
  } else if (type === 'http' || type === 'streamable-http' || type === 'streamableHttp') {
    transport = 'http';
  } else if (type === 'sse') {
    fail('the legacy HTTP+SSE transport is not supported; point "url" at the server\'s Streamable HTTP endpoint.', 'type');
  } else {
    fail(`expected "stdio" or "http", got ${describeValue(type)}.`, 'type');
  }
  const allowed = transport === 'stdio' ? STDIO_KEYS : HTTP_KEYS;
  for (const key of Object.keys(raw)) {
    if (!allowed.has(key)) {
      fail(`unknown key for a ${transport === 'stdio' ? 'stdio' : 'Streamable HTTP'} server; allowed keys are ${[...allowed].join(', ')}.`, key);
    }
  }

  const scope = raw['scope'];
  if (scope !== undefined && scope !== 'plan' && scope !== 'shared') fail(`expected "plan" or "shared", got ${describeValue(scope)}.`, 'scope');
  const poolSize = raw['poolSize'];
  // A pool size asks for a pool: an entry with one and no scope is shared.
  const effectiveScope = (scope as McpServerScope | undefined) ?? (poolSize === undefined ? defaultScope : 'shared');
  if (poolSize !== undefined) {
    if (typeof poolSize !== 'number' || !Number.isInteger(poolSize) || poolSize < 1 || poolSize > MAX_POOL_SIZE) {
      fail(`expected a whole number of sessions from 1 to ${MAX_POOL_SIZE}, got ${describeValue(poolSize)}.`, 'poolSize');
    }
    if (scope === 'plan') fail('applies to scope "shared" only (scope "plan" opens one session per plan); remove one of the two keys.', 'poolSize');
  }
  const callTimeoutMs = optionalTimeout(raw['callTimeoutMs'], 'callTimeoutMs', fail) ?? DEFAULT_CALL_TIMEOUT_MS;
  const resetTimeoutOnProgress = raw['resetTimeoutOnProgress'];
  if (resetTimeoutOnProgress !== undefined && typeof resetTimeoutOnProgress !== 'boolean') {
    fail(`expected true or false, got ${describeValue(resetTimeoutOnProgress)}.`, 'resetTimeoutOnProgress');
  }
  const common = {
    name,
    scope: effectiveScope,
    poolSize: effectiveScope === 'shared' ? ((poolSize as number | undefined) ?? 1) : 1,
    connectTimeoutMs: optionalTimeout(raw['connectTimeoutMs'], 'connectTimeoutMs', fail) ?? DEFAULT_CONNECT_TIMEOUT_MS,
    callTimeoutMs,
    maxTotalTimeoutMs: optionalTimeout(raw['maxTotalTimeoutMs'], 'maxTotalTimeoutMs', fail) ?? Math.min(callTimeoutMs * 10, MAX_TIMER_MS),
    resetTimeoutOnProgress: resetTimeoutOnProgress as boolean | undefined,
    shutdownGraceMs: optionalTimeout(raw['shutdownGraceMs'], 'shutdownGraceMs', fail) ?? DEFAULT_SHUTDOWN_GRACE_MS,
    include: optionalStrings(raw['include'], 'include', fail) ?? ['*'],
    exclude: optionalStrings(raw['exclude'], 'exclude', fail) ?? [],
    capabilities: parseCapabilities(raw['capabilities'], fail),
    trustAnnotations: optionalBoolean(raw['trustAnnotations'], 'trustAnnotations', fail) ?? false,
    roots: optionalBoolean(raw['roots'], 'roots', fail) ?? true,
  };
  let server: ParsedMcpServer;
  if (transport === 'stdio') {
    const command = raw['command'];
    if (typeof command !== 'string' || command.trim().length === 0) {
      fail(`expected the program to run as a non-empty string, got ${describeValue(command)}.`, 'command');
    }
    const cwd = raw['cwd'];
    if (cwd !== undefined && (typeof cwd !== 'string' || cwd.length === 0)) fail(`expected a directory path, got ${describeValue(cwd)}.`, 'cwd');
    const inheritEnv = optionalStrings(raw['inheritEnv'], 'inheritEnv', fail) ?? [];
    for (const variable of inheritEnv) {
      if (!ENV_NAME.test(variable)) fail(`'${variable}' is not an environment variable name.`, 'inheritEnv');
    }
    server = {
      ...common,
      transport: 'stdio',
      command: command as string,
      args: optionalStrings(raw['args'], 'args', fail, true) ?? [],
      env: optionalStringRecord(raw['env'], 'env', fail) ?? {},
      ...(cwd === undefined ? {} : { cwd: cwd as string }),
      inheritEnv,
      ...(raw['sandbox'] === undefined ? {} : { sandbox: parseSandbox(raw['sandbox'], fail) }),
      headers: {},
    };
  } else {
    const url = raw['url'];
    let parsedUrl: URL | undefined;
    try {
      parsedUrl = typeof url === 'string' ? new URL(url) : undefined;
    } catch {
      parsedUrl = undefined;
    }
    if (parsedUrl === undefined || (parsedUrl.protocol !== 'http:' && parsedUrl.protocol !== 'https:')) {
      fail(`expected an http: or https: URL such as "http://127.0.0.1:3001/mcp", got ${describeValue(url)}.`, 'url');
    }
    server = {
      ...common,
      transport: 'http',
      url: (parsedUrl as URL).href,
      headers: optionalStringRecord(raw['headers'], 'headers', fail) ?? {},
      ...parseOAuth(raw['oauth'], fail),
      args: [],
      env: {},
      inheritEnv: [],
    };
  }
  return disabled === true ? undefined : deepFreeze(server);
}

const SANDBOX_KEYS = new Set(['mode', 'network', 'writable', 'readable', 'bwrapPath']);

function parseSandbox(value: unknown, fail: (message: string, key?: string) => never): ParsedMcpSandbox {
  const record: Record<string, unknown> = typeof value === 'string' ? { mode: value } : isPlainObject(value) ? value : {};
  if ((typeof value !== 'string' && !isPlainObject(value)) || (typeof value === 'string' && !['required', 'auto', 'off'].includes(value))) {
    fail(`expected "required", "auto", "off" or an object such as { "mode": "required", "network": false }, got ${describeValue(value)}.`, 'sandbox');
  }
  for (const key of Object.keys(record)) {
    if (!SANDBOX_KEYS.has(key)) fail(`unknown key; a sandbox has ${[...SANDBOX_KEYS].join(', ')}.`, `sandbox.${key}`);
  }
  const paths = (key: 'writable' | 'readable'): string[] => {
    const list = optionalStrings(record[key], `sandbox.${key}`, fail) ?? [];
    for (const path of list) if (!isAbsolute(path) || path.includes('\0')) fail(`expected absolute paths, got ${describeValue(path)}.`, `sandbox.${key}`);
    return list;
  };
  const writable = paths('writable');
  const readable = paths('readable');
  let settings;
  try {
    settings = resolveSandboxSettings({
      mode: record['mode'],
      ...(record['network'] === undefined ? {} : { network: record['network'] }),
      ...(record['bwrapPath'] === undefined ? {} : { bwrapPath: record['bwrapPath'] }),
    });
  } catch (error) {
    if (!SandboxSettingsError.isInstance(error)) throw error;
    return fail(`${error.message.replace(/^The sandbox setting \S+ /, '')}`, error.setting);
  }
  return { mode: settings.mode, network: settings.network, writable, readable, ...(settings.bwrapPath === undefined ? {} : { bwrapPath: settings.bwrapPath }) };
}

function parseOAuth(value: unknown, fail: (message: string, key?: string) => never): { oauth?: ParsedMcpOAuth } {
  if (value === undefined || value === false) return {};
  const raw: Record<string, unknown> = value === true ? {} : (value as Record<string, unknown>);
  if (value !== true && !isPlainObject(value)) {
    fail(`expected true or an object such as { "grant": "client_credentials", "clientId": "…", "clientSecret": "…" }, got ${describeValue(value)}.`, 'oauth');
  }
  for (const key of Object.keys(raw)) {
    if (!OAUTH_KEYS.has(key)) fail(`unknown key; allowed keys are ${[...OAUTH_KEYS].join(', ')}.`, `oauth.${key}`);
  }
  const grant = raw['grant'] ?? 'authorization_code';
  if (grant !== 'authorization_code' && grant !== 'client_credentials') {
    fail(`expected "authorization_code" or "client_credentials", got ${describeValue(grant)}.`, 'oauth.grant');
  }
  const text = (key: string): string | undefined => {
    const item = raw[key];
    if (item === undefined) return undefined;
    if (typeof item !== 'string' || item.length === 0) fail(`expected a non-empty string, got ${describeValue(item)}.`, `oauth.${key}`);
    return item as string;
  };
  const clientId = text('clientId');
  const clientSecret = text('clientSecret');
  const privateKey = text('privateKey');
  const scope = text('scope');
  const clientName = text('clientName') ?? '@ca/adapters-mcp';
  const clientMetadataUrl = text('clientMetadataUrl');
  if (grant === 'client_credentials' && (clientId === undefined || (clientSecret === undefined && privateKey === undefined))) {
    fail('the client_credentials grant needs "clientId" and "clientSecret" or "privateKey" (a client registered with the authorization server).', 'oauth');
  }
  if (clientSecret !== undefined && clientId === undefined) fail('"clientSecret" needs the "clientId" it belongs to.', 'oauth.clientSecret');
  if (privateKey !== undefined && clientSecret !== undefined) {
    fail('"privateKey" and "clientSecret" exclude each other: the client authenticates with one of them.', 'oauth.privateKey');
  }
  if (privateKey !== undefined && grant !== 'client_credentials') {
    fail('"privateKey" (private_key_jwt) is supported with the client_credentials grant only.', 'oauth.privateKey');
  }
  const signing = privateKey === undefined ? undefined : signingAlgorithmOf(privateKey, raw['signingAlgorithm'], fail);
  if (privateKey === undefined && raw['signingAlgorithm'] !== undefined) fail('"signingAlgorithm" applies to "privateKey" only.', 'oauth.signingAlgorithm');
  if (clientMetadataUrl !== undefined) {
    if (grant !== 'authorization_code') fail('a client metadata document is for the authorization_code grant only.', 'oauth.clientMetadataUrl');
    if (clientId !== undefined) {
      fail(
        '"clientMetadataUrl" and "clientId" exclude each other: the client id is either the document\'s URL or the registered one.',
        'oauth.clientMetadataUrl',
      );
    }
    if (!isDocumentUrl(clientMetadataUrl)) {
      fail(`expected an https: URL with a path (the client's metadata document), got ${describeValue(clientMetadataUrl)}.`, 'oauth.clientMetadataUrl');
    }
  }
  const port = raw['redirectPort'] ?? 0;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65_535) {
    fail(`expected a port number from 0 (any free port) to 65535, got ${describeValue(port)}.`, 'oauth.redirectPort');
  }
  return {
    oauth: {
      grant: grant as ParsedMcpOAuth['grant'],
      ...(clientId === undefined ? {} : { clientId }),
      ...(clientSecret === undefined ? {} : { clientSecret }),
      ...(privateKey === undefined ? {} : { privateKey, signingAlgorithm: signing as string }),
      ...(clientMetadataUrl === undefined ? {} : { clientMetadataUrl }),
      ...(scope === undefined ? {} : { scope }),
      clientName,
      redirectPort: port as number,
    },
  };
}

/**
 * The JWS algorithm for `privateKey`: the configured one when the key fits
 * it, else the one the key implies. The key is parsed here so that a wrong
 * one is a configuration error, not a failed sign-in later; no message
 * quotes it.
 */
function signingAlgorithmOf(pem: string, configured: unknown, fail: (message: string, key?: string) => never): string {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (error) {
    return fail(`expected a private key in PEM (PKCS#8, "-----BEGIN PRIVATE KEY-----"); it could not be read (${messageOf(error)}).`, 'oauth.privateKey');
  }
  const type = key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'rsa-pss' ? 'rsa' : key.asymmetricKeyType === 'ec' ? 'ec' : undefined;
  if (type === undefined) fail(`expected an RSA or EC private key, got a ${String(key.asymmetricKeyType)} key.`, 'oauth.privateKey');
  if (configured !== undefined) {
    if (typeof configured !== 'string' || SIGNING_ALGORITHMS[configured] === undefined) {
      fail(`expected one of ${Object.keys(SIGNING_ALGORITHMS).join(', ')}, got ${describeValue(configured)}.`, 'oauth.signingAlgorithm');
    }
    if (SIGNING_ALGORITHMS[configured as string] !== type)
      fail(
        `${configured as string} needs ${SIGNING_ALGORITHMS[configured as string] === 'rsa' ? 'an RSA' : 'an EC'} key, and "privateKey" is ${type === 'rsa' ? 'an RSA' : 'an EC'} key.`,
        'oauth.signingAlgorithm',
      );
    return configured as string;
  }
  if (type === 'rsa') return key.asymmetricKeyType === 'rsa-pss' ? 'PS256' : 'RS256';
  const curve = key.asymmetricKeyDetails?.namedCurve;
  const algorithm = curve === undefined ? undefined : EC_ALGORITHMS[curve];
  if (algorithm === undefined) fail(`no JWS algorithm signs with the EC curve ${String(curve)}; use P-256, P-384 or P-521.`, 'oauth.privateKey');
  return algorithm as string;
}

/** An `https:` URL with a path other than `/`, as SEP-991 wants a client id to be. */
function isDocumentUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.pathname !== '/';
  } catch {
    return false;
  }
}

function parseCapabilities(value: unknown, fail: (message: string, key?: string) => never): Record<string, McpCapabilityOverride> {
  if (value === undefined) return {};
  if (!isPlainObject(value)) {
    fail(`expected an object mapping MCP tool names to capability overrides such as { "writes": false }, got ${describeValue(value)}.`, 'capabilities');
  }
  const result: Record<string, McpCapabilityOverride> = {};
  for (const [tool, override] of Object.entries(value as Record<string, unknown>)) {
    if (!isPlainObject(override)) fail(`expected an object such as { "writes": false }, got ${describeValue(override)}.`, `capabilities.${tool}`);
    for (const [field, flag] of Object.entries(override as Record<string, unknown>)) {
      if (!CAPABILITY_FIELDS.has(field)) {
        fail(`unknown capability field; use ${[...CAPABILITY_FIELDS].join(', ')}.`, `capabilities.${tool}.${field}`);
      }
      if (typeof flag !== 'boolean') fail(`expected true or false, got ${describeValue(flag)}.`, `capabilities.${tool}.${field}`);
    }
    result[tool] = { ...(override as McpCapabilityOverride) };
  }
  return result;
}

function optionalBoolean(value: unknown, key: string, fail: (message: string, key?: string) => never): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value;
  return fail(`expected true or false, got ${describeValue(value)}.`, key);
}

function optionalTimeout(value: unknown, key: string, fail: (message: string, key?: string) => never): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_TIMER_MS) {
    fail(`expected a positive number of milliseconds (at most ${MAX_TIMER_MS}), got ${describeValue(value)}.`, key);
  }
  return value as number;
}

function optionalStrings(value: unknown, key: string, fail: (message: string, key?: string) => never, allowEmpty = false): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) fail(`expected an array of strings, got ${describeValue(value)}.`, key);
  return (value as unknown[]).map((item, index) => {
    if (typeof item !== 'string' || (!allowEmpty && item.length === 0)) {
      fail(`expected ${allowEmpty ? 'a string' : 'a non-empty string'} at index ${index}, got ${describeValue(item)}.`, key);
    }
    return item as string;
  });
}

function optionalStringRecord(value: unknown, key: string, fail: (message: string, key?: string) => never): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) fail(`expected an object of string values, got ${describeValue(value)}.`, key);
  const result: Record<string, string> = {};
  for (const [name, item] of Object.entries(value as Record<string, unknown>)) {
    if (typeof item !== 'string') fail(`expected a string, got ${describeValue(item)}.`, `${key}.${name}`);
    result[name] = item as string;
  }
  return result;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
