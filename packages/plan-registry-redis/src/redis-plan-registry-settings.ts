import os from 'node:os';
import { describeValue, redactUrlCredentials } from '@ca/domain';
import { PlanRegistryError, type RuntimeLogger } from '@ca/tool-lifecycle';

/** TLS options for a `rediss://` server (those of Node's `tls.connect`). */
export interface RedisTlsSettings {
  /** Certificate authorities to trust besides Node's own (PEM). */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>;
  /** A client certificate and its key (PEM), for servers that ask for one. */
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
  /** The name the server's certificate must carry, when it is not the URL's host. */
  readonly servername?: string;
}

/** Settings of {@link connectRedisPlanRegistry}. */
export interface RedisPlanRegistrySettings {
  /**
   * `redis://host[:port][/database]` or `rediss://…` (TLS). Credentials belong
   * in `username` and `password` (from the environment, see
   * `redisCredentialsFromEnvironment`); a URL that carries them still works,
   * and they are never printed.
   */
  readonly url: string;
  /** ACL user (default: the URL's, else Redis's `default` user). */
  readonly username?: string;
  /** Password of the ACL user (or of `requirepass`). */
  readonly password?: string;
  /** Prefix of every key and channel (default `ca:plans:`): registries with different prefixes do not see each other. */
  readonly keyPrefix?: string;
  /** How long a plan stays listed after its process last said it was alive, in ms (default 30,000). */
  readonly ttlMs?: number;
  /** How often the runtime refreshes each plan, in ms (default a third of `ttlMs`; less than `ttlMs`). */
  readonly heartbeatIntervalMs?: number;
  /** How long a message waits for a plan whose process is not connected, in ms (default 600,000; at least `ttlMs`). */
  readonly pendingTtlMs?: number;
  /** How long connecting may take before `connectRedisPlanRegistry` gives up, in ms (default 5,000). */
  readonly connectTimeoutMs?: number;
  /** How long `list` and `send` wait for the server, in ms (default 5,000). */
  readonly commandTimeoutMs?: number;
  /** Longest wait between two reconnection attempts, in ms (default 2,000). */
  readonly reconnectMaxDelayMs?: number;
  /** The name plans of this process are listed under (default the machine's host name). */
  readonly host?: string;
  /** TLS options for `rediss://`. */
  readonly tls?: RedisTlsSettings;
  /** Where connection losses and ignored messages are reported (default: stderr, warnings and errors). */
  readonly logger?: RuntimeLogger;
}

/** The settings checked and completed. */
export interface ResolvedSettings {
  readonly tls: boolean;
  readonly host: string;
  readonly port: number;
  readonly database: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** `redis://host:port/database`: what messages name, never with credentials. */
  readonly description: string;
  readonly keyPrefix: string;
  readonly ttlMs: number;
  readonly heartbeatIntervalMs: number;
  readonly pendingTtlMs: number;
  readonly connectTimeoutMs: number;
  readonly commandTimeoutMs: number;
  readonly reconnectMaxDelayMs: number;
  readonly planHost: string;
  readonly tlsOptions: RedisTlsSettings | undefined;
}

const DEFAULT_PORT = 6379;
const MAX_TIMER_MS = 2_147_483_647;
// eslint-disable-next-line no-control-regex
const CONTROL_OR_SPACE = /[\u0000-\u0020\u007f-\u009f]/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const KNOWN_SETTINGS = new Set([
  'url',
  'username',
  'password',
  'keyPrefix',
  'ttlMs',
  'heartbeatIntervalMs',
  'pendingTtlMs',
  'connectTimeoutMs',
  'commandTimeoutMs',
  'reconnectMaxDelayMs',
  'host',
  'tls',
  'logger',
]);

/**
 * A URL as messages may show it: no user, no password, no query. A value
 * that does not parse as a URL with a host (`redis:/user:pw@host` parses, with
 * everything in its path) is shown as written, its credentials — everything
 * between the scheme and the last `@` — replaced with `***`.
 */
export function describeRedisUrl(url: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || parsed.host === '') return typeof url === 'string' ? redactUrlCredentials(url).trim().slice(0, 200) : '(not a URL)';
  return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
}

/**
 * Removes secrets from a message before anyone sees it: the password and
 * user given, and the user information of any URL in the text.
 */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let result = text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi, '$1***@');
  for (const secret of secrets) {
    if (secret !== undefined && secret.length > 0) result = result.split(secret).join('***');
  }
  return result;
}

/**
 * The ACL user and password from the environment: `REDIS_USERNAME` and
 * `REDIS_PASSWORD` (or the names given). An empty variable counts as unset.
 */
export function redisCredentialsFromEnvironment(
  env: Readonly<Record<string, string | undefined>> = process.env,
  names: { readonly username?: string; readonly password?: string } = {},
): { username?: string; password?: string } {
  const username = env[names.username ?? 'REDIS_USERNAME'];
  const password = env[names.password ?? 'REDIS_PASSWORD'];
  return {
    ...(username === undefined || username === '' ? {} : { username }),
    ...(password === undefined || password === '' ? {} : { password }),
  };
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * Checks the settings and completes them with the defaults.
 * @throws PlanRegistryError `PLAN_REGISTRY_INVALID_ARGUMENT` naming the setting.
 */
export function resolveSettings(settings: RedisPlanRegistrySettings): ResolvedSettings {
  const invalid = (reason: string, registry = 'redis'): never => {
    throw new PlanRegistryError({ code: 'PLAN_REGISTRY_INVALID_ARGUMENT', registry, reason });
  };
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    return invalid(`the settings must be an object like { url: 'redis://127.0.0.1:6379' }; got ${describeValue(settings)}`);
  }
  for (const key of Object.keys(settings)) {
    if (!KNOWN_SETTINGS.has(key)) invalid(`'${key}' is not a setting (the settings are ${[...KNOWN_SETTINGS].join(', ')})`);
  }
  if (typeof settings.url !== 'string' || settings.url.length === 0)
    return invalid(`url must be a redis:// or rediss:// URL; got ${describeValue(settings.url)}`);
  let parsed: URL;
  try {
    parsed = new URL(settings.url);
  } catch {
    return invalid(
      `its url '${describeRedisUrl(settings.url)}' cannot be read as a URL: expected redis://host:6379/0 (rediss:// for TLS), a space or an @ of the password percent-encoded — or the password in REDIS_PASSWORD`,
    );
  }
  const description = describeRedisUrl(settings.url);
  const fail = (reason: string): never => invalid(reason, description);
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') fail(`url must start with redis:// or rediss://; got ${parsed.protocol}//`);
  if (parsed.hostname === '') fail('url names no host: expected redis://host:6379/0 (two slashes after the scheme)');
  if (parsed.search !== '' || parsed.hash !== '') fail('url must not carry a query or a fragment; settings go in the settings object');
  const databaseText = parsed.pathname.replace(/^\/+/, '');
  if (databaseText !== '' && !/^\d{1,5}$/.test(databaseText)) fail(`the URL's path must be a database number (/0); got /${databaseText}`);
  const port = parsed.port === '' ? DEFAULT_PORT : Number(parsed.port);

  const text = (value: unknown, name: string, { max, spaces = false }: { max: number; spaces?: boolean }): string | undefined => {
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value.length === 0 || value.length > max || (spaces ? CONTROL : CONTROL_OR_SPACE).test(value)) {
      return fail(`${name} must be a string of 1–${max} characters without ${spaces ? 'control characters' : 'spaces or control characters'}`);
    }
    return value;
  };
  const duration = (value: unknown, name: string, fallback: number, min: number): number => {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > MAX_TIMER_MS) {
      return fail(`${name} must be a number of milliseconds from ${min} to ${MAX_TIMER_MS}; got ${describeValue(value)}`);
    }
    return value;
  };

  // Explicit settings win over the URL's user information.
  const username = text(settings.username, 'username', { max: 256 }) ?? (parsed.username === '' ? undefined : decode(parsed.username));
  // A password may hold any character but control characters; it is never printed.
  if (settings.password !== undefined && (typeof settings.password !== 'string' || settings.password.length === 0 || CONTROL.test(settings.password))) {
    fail('password must be a non-empty string without control characters');
  }
  const password = settings.password ?? (parsed.password === '' ? undefined : decode(parsed.password));
  const keyPrefix = text(settings.keyPrefix, 'keyPrefix', { max: 100 }) ?? 'ca:plans:';
  const ttlMs = duration(settings.ttlMs, 'ttlMs', 30_000, 100);
  const heartbeatIntervalMs = duration(settings.heartbeatIntervalMs, 'heartbeatIntervalMs', Math.max(1, Math.floor(ttlMs / 3)), 1);
  if (heartbeatIntervalMs >= ttlMs)
    fail(`heartbeatIntervalMs (${heartbeatIntervalMs}) must be less than ttlMs (${ttlMs}), or plans leave the list between two heartbeats`);
  const pendingTtlMs = duration(settings.pendingTtlMs, 'pendingTtlMs', Math.max(600_000, ttlMs), ttlMs);
  const connectTimeoutMs = duration(settings.connectTimeoutMs, 'connectTimeoutMs', 5_000, 1);
  const commandTimeoutMs = duration(settings.commandTimeoutMs, 'commandTimeoutMs', 5_000, 1);
  const reconnectMaxDelayMs = duration(settings.reconnectMaxDelayMs, 'reconnectMaxDelayMs', 2_000, 1);
  const planHost = text(settings.host, 'host', { max: 255, spaces: true }) ?? os.hostname();
  if (settings.tls !== undefined) {
    if (typeof settings.tls !== 'object' || settings.tls === null || Array.isArray(settings.tls))
      fail(`tls must be an object of TLS options; got ${describeValue(settings.tls)}`);
    if (parsed.protocol !== 'rediss:') fail('tls settings are given, but the URL is redis:// (plain TCP): use rediss:// for TLS');
    for (const key of Object.keys(settings.tls)) {
      if (!['ca', 'cert', 'key', 'servername'].includes(key)) fail(`tls.${key} is not a TLS setting (ca, cert, key, servername)`);
    }
  }
  const logger = settings.logger as unknown;
  if (
    logger !== undefined &&
    (typeof logger !== 'object' ||
      logger === null ||
      ['debug', 'info', 'warn', 'error'].some((level) => typeof (logger as Record<string, unknown>)[level] !== 'function'))
  ) {
    fail('logger must be a RuntimeLogger (debug, info, warn, error)');
  }
  return {
    tls: parsed.protocol === 'rediss:',
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port,
    database: databaseText === '' ? 0 : Number(databaseText),
    username,
    password,
    description,
    keyPrefix,
    ttlMs,
    heartbeatIntervalMs,
    pendingTtlMs,
    connectTimeoutMs,
    commandTimeoutMs,
    reconnectMaxDelayMs,
    planHost,
    tlsOptions: settings.tls,
  };
}
