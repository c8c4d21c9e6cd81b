import { ToolCancelledError } from '@ca/tool-context';
import { toolFailure, toolSuccess, type ToolResult } from '@ca/tool-lifecycle';
import { Agent } from 'undici';
import { schema, type BuiltinToolSpec, type ToolCall } from '../builtin-tool';
import { BuiltinToolError } from '../builtin-tool-error';
import { AddressRefusedError, createGuardedLookup, describeCategory, isMetadataHostName, literalAddress, refusedCategory } from '../network-guard';

/** Output of the HTTP tools. */
export interface HttpOutput {
  /** The URL that answered, after redirects. */
  readonly url: string;
  readonly status: number;
  readonly statusText: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly bodyEncoding: 'utf8' | 'base64';
  /** Body bytes returned (at most the cap). */
  readonly bytesRead: number;
  /** The body was longer than the cap; reading stopped there. */
  readonly truncated: boolean;
  readonly redirects: number;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
// Dropped when a redirect leaves the origin (scheme, host or port), as browsers, Deno and undici do.
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);
// Dropped with the body when a redirect turns the request into a GET (the fetch standard's request-body-header names).
const BODY_HEADERS = new Set(['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']);
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
// Methods that change something: they carry the execution's idempotency key, so that a retried or replayed call happens once.
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const IDEMPOTENCY_HEADER = new Set(['idempotency-key']);
// Answers after which the same request may well succeed: timeout, too early, too many requests, and the server's passing failures.
const RETRYABLE_STATUSES = new Set([408, 425, 429, 500, 502, 503, 504]);
const LONGEST_RETRY_AFTER_MS = 3_600_000;

const OUTPUT_SCHEMA = schema({
  type: 'object',
  properties: {
    url: { type: 'string' },
    status: { type: 'integer' },
    statusText: { type: 'string' },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    body: { type: 'string' },
    bodyEncoding: { enum: ['utf8', 'base64'] },
    bytesRead: { type: 'integer', minimum: 0 },
    truncated: { type: 'boolean' },
    redirects: { type: 'integer', minimum: 0 },
  },
  required: ['url', 'status', 'statusText', 'headers', 'body', 'bodyEncoding', 'bytesRead', 'truncated', 'redirects'],
  additionalProperties: false,
});

const COMMON_PROPERTIES = {
  url: { type: 'string', pattern: '^[hH][tT][tT][pP][sS]?://', description: 'An http:// or https:// URL.' },
  headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Request headers.' },
  timeoutMs: { type: 'integer', minimum: 1, description: 'Deadline in ms (capped by the adapter settings).' },
  maxResponseBytes: { type: 'integer', minimum: 1, description: 'Most body bytes to read (capped by the adapter settings).' },
  responseEncoding: {
    enum: ['auto', 'utf8', 'base64'],
    default: 'auto',
    description: '"auto": text for textual content types (text/*, JSON, XML, JavaScript), base64 otherwise.',
  },
} as const;

/** `builtin.http.get`: a read-only GET or HEAD request. */
export const httpGetTool: BuiltinToolSpec = {
  name: 'builtin.http.get',
  description:
    'Fetch a URL with GET (or HEAD) over http or https and return the status, headers and body. Redirects are followed (each hop checked against the allowed hosts and addresses; Authorization and Cookie are not sent to another origin). ' +
    'Private, loopback, link-local and cloud metadata addresses are refused unless the adapter settings allow them. ' +
    'The body is read up to a size cap; truncated says when it was cut. A status of 400 or more is reported as a failure that still carries the response. Use builtin.http.request to send data.',
  capability: { writes: false, checkpointable: true, idempotent: true, openWorld: true },
  inputSchema: schema({
    type: 'object',
    properties: { ...COMMON_PROPERTIES, method: { enum: ['GET', 'HEAD'], default: 'GET' } },
    required: ['url'],
    additionalProperties: false,
  }),
  outputSchema: OUTPUT_SCHEMA,
  run: (input, call) => request(input, call, ['GET', 'HEAD']),
};

/** `builtin.http.request`: any HTTP method, with a body. */
export const httpRequestTool: BuiltinToolSpec = {
  name: 'builtin.http.request',
  description:
    'Send an HTTP request (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS) over http or https, with optional headers and a body (text, or base64 with bodyEncoding "base64"), and return the status, headers and body. ' +
    'Redirects are followed (each hop checked against the allowed hosts and addresses; Authorization and Cookie are not sent to another origin; 303, and 301/302 after POST, continue as GET without a body). ' +
    'Private, loopback, link-local and cloud metadata addresses are refused unless the adapter settings allow them. The body is read up to a size cap; truncated says when it was cut. ' +
    'A status of 400 or more is reported as a failure that still carries the response. It may change remote state and cannot be rolled back; prefer builtin.http.get for reading.',
  capability: { writes: true, checkpointable: false, idempotent: false, destructive: true, openWorld: true },
  inputSchema: schema({
    type: 'object',
    properties: {
      ...COMMON_PROPERTIES,
      method: { enum: [...METHODS], default: 'GET' },
      body: { type: 'string', description: 'Request body.' },
      bodyEncoding: { enum: ['utf8', 'base64'], default: 'utf8' },
    },
    required: ['url'],
    additionalProperties: false,
  }),
  outputSchema: OUTPUT_SCHEMA,
  run: (input, call) => request(input, call, METHODS),
};

async function request(input: Record<string, unknown>, call: ToolCall, methods: readonly string[]): Promise<ToolResult> {
  const settings = call.settings.http;
  let method = typeof input['method'] === 'string' ? input['method'].toUpperCase() : 'GET';
  if (!methods.includes(method)) {
    throw call.fail('BUILTIN_INVALID_INPUT', `does not send ${method} requests; use one of ${methods.join(', ')}.`);
  }
  let url = checkUrl(String(input['url']), call);
  let headers = withIdempotencyKey(checkHeaders(input['headers'], call), method, call);
  let body: Buffer | undefined =
    typeof input['body'] === 'string' ? Buffer.from(input['body'], input['bodyEncoding'] === 'base64' ? 'base64' : 'utf8') : undefined;
  if (body !== undefined && (method === 'GET' || method === 'HEAD')) {
    throw call.fail('BUILTIN_INVALID_INPUT', `cannot send a body with ${method}; use POST, PUT or PATCH.`);
  }
  const timeoutMs = Math.min(typeof input['timeoutMs'] === 'number' ? input['timeoutMs'] : settings.defaultTimeoutMs, settings.maxTimeoutMs);
  const maxBytes = Math.min(typeof input['maxResponseBytes'] === 'number' ? input['maxResponseBytes'] : settings.maxResponseBytes, settings.maxResponseBytes);
  const token = call.ctx.cancellationToken.child({ timeoutMs, reason: `request timed out after ${timeoutMs} ms` });
  // One agent per call: its connections resolve each name once, through the
  // guarded lookup, and go to the addresses that were checked; none outlives the call.
  const dispatcher = new Agent({ connect: { lookup: createGuardedLookup(settings.addresses, settings.lookup) } });
  let redirectedFrom: URL | undefined;
  try {
    let redirects = 0;
    for (;;) {
      const response = await settings.fetch(withoutUserinfo(url), {
        method,
        headers: withBasicAuthorization(headers, url),
        ...(body === undefined ? {} : { body }),
        redirect: 'manual',
        signal: token.signal,
        dispatcher,
      } as RequestInit);
      const location = response.headers.get('location');
      if (REDIRECT_STATUSES.has(response.status) && location !== null) {
        await response.body?.cancel().catch(() => undefined);
        if (redirects === settings.maxRedirects) {
          throw call.fail('BUILTIN_HTTP_FAILED', `stopped after ${redirects} redirects at ${url.href} (http.maxRedirects).`, url.href);
        }
        redirects++;
        const next = checkUrl(resolveLocation(location, url, call), call, url);
        if (next.origin !== url.origin) headers = withoutHeaders(headers, CREDENTIAL_HEADERS);
        redirectedFrom = url;
        url = next;
        if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
          if (method !== 'HEAD') method = 'GET';
          body = undefined;
          headers = withoutHeaders(withoutHeaders(headers, BODY_HEADERS), IDEMPOTENCY_HEADER);
        }
        continue;
      }
      const { bytes, truncated } = await readCapped(response, maxBytes);
      const encoding = chooseEncoding(input['responseEncoding'], response.headers.get('content-type'));
      const output: HttpOutput = {
        url: url.href,
        status: response.status,
        statusText: response.statusText,
        headers: Object.fromEntries(response.headers),
        body: bytes.toString(encoding),
        bodyEncoding: encoding,
        bytesRead: bytes.length,
        truncated,
        redirects,
      };
      if (response.status >= 400) {
        const retry = RETRYABLE_STATUSES.has(response.status) ? retryAdvice(response.headers.get('retry-after')) : undefined;
        return toolFailure(
          call.fail(
            'BUILTIN_HTTP_STATUS',
            `got HTTP ${response.status} ${response.statusText} from ${url.href}. The response is in the output; ${retry === undefined ? 'check the URL, method, headers and body.' : 'the server may answer later: the call can be retried.'}`,
            url.href,
            undefined,
            retry,
          ),
          { output },
        );
      }
      return toolSuccess(output);
    }
  } catch (error) {
    if (call.ctx.cancellationToken.isCancelled) {
      throw ToolCancelledError.isInstance(error)
        ? error
        : new ToolCancelledError({ reason: call.ctx.cancellationToken.reason, toolName: call.toolName, planId: call.planId, cause: error });
    }
    if (BuiltinToolError.isInstance(error)) throw error;
    const refused = AddressRefusedError.find(error);
    if (refused !== undefined) throw addressRefusal(call, url, refused.hostname, refused.address, refused.category, error, redirectedFrom);
    if (token.isCancelled) {
      throw call.fail(
        'BUILTIN_HTTP_TIMED_OUT',
        `gave up on ${url.href} after ${timeoutMs} ms. Raise timeoutMs, or check that the server answers.`,
        url.href,
        error,
        { retryable: true },
      );
    }
    const cause = (error as { cause?: { message?: string } }).cause;
    // The request did not get an answer (refused, reset, closed): the same request may get one later.
    throw call.fail(
      'BUILTIN_HTTP_FAILED',
      `could not reach ${url.href}: ${(error as Error).message}${cause?.message === undefined ? '' : ` (${cause.message})`}. Check the URL and the network.`,
      url.href,
      error,
      { retryable: true },
    );
  } finally {
    token.dispose();
    await dispatcher.destroy().catch(() => undefined);
  }
}

/** Parses and checks a URL of the call, or of a redirect from `redirectedFrom`. */
function checkUrl(text: string, call: ToolCall, redirectedFrom?: URL): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch (error) {
    throw call.fail('BUILTIN_INVALID_INPUT', `got "${text}", which is not an absolute URL; pass e.g. "https://example.com/path".`, text, error);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw call.fail('BUILTIN_HTTP_URL_NOT_ALLOWED', `refused ${describeUrl(url, redirectedFrom)}: only http and https URLs are allowed.`, url.href);
  }
  const allowHosts = call.settings.http.allowHosts;
  if (allowHosts !== undefined && !hostAllowed(url, allowHosts)) {
    throw call.fail(
      'BUILTIN_HTTP_URL_NOT_ALLOWED',
      `refused ${describeUrl(url, redirectedFrom)}: the host "${url.host}" is not in the allowed hosts (${allowHosts.join(', ')}). Add it to http.allowHosts in the adapter settings.`,
      url.href,
    );
  }
  // A literal address is connected to as it is (no lookup): check it here.
  // A name is checked when it is resolved, in the guarded lookup of the connection.
  const literal = literalAddress(url.hostname);
  if (literal !== undefined) {
    const category = refusedCategory(literal, call.settings.http.addresses);
    if (category !== undefined) throw addressRefusal(call, url, undefined, literal, category, undefined, redirectedFrom);
  } else if (isMetadataHostName(url.hostname)) {
    throw addressRefusal(call, url, url.hostname, undefined, 'metadata', undefined, redirectedFrom);
  }
  return url;
}

function addressRefusal(
  call: ToolCall,
  url: URL,
  hostname: string | undefined,
  address: string | undefined,
  category: Parameters<typeof describeCategory>[0],
  cause?: unknown,
  redirectedFrom?: URL,
): BuiltinToolError {
  const what =
    address === undefined
      ? `"${hostname}" is ${describeCategory(category)}`
      : hostname === undefined
        ? `${address} is ${describeCategory(category)}`
        : `"${hostname}" resolves to ${address}, ${describeCategory(category)}`;
  const remedy =
    category === 'metadata'
      ? 'Cloud metadata services are refused even where private networks are allowed; list the address in http.allowAddresses and request it by address if a tool truly needs it.'
      : 'Set http.allowPrivateNetworks: true, or list the address or its range in http.allowAddresses (e.g. "10.0.0.0/8"), in the adapter settings.';
  return call.fail('BUILTIN_HTTP_ADDRESS_NOT_ALLOWED', `refused ${describeUrl(url, redirectedFrom)}: ${what}. ${remedy}`, url.href, cause);
}

function describeUrl(url: URL, redirectedFrom: URL | undefined): string {
  return redirectedFrom === undefined ? url.href : `${url.href} (a redirect from ${redirectedFrom.href})`;
}

function resolveLocation(location: string, base: URL, call: ToolCall): string {
  try {
    return new URL(location, base).href;
  } catch (error) {
    throw call.fail('BUILTIN_HTTP_FAILED', `got a redirect from ${base.href} to "${location}", which is not a URL.`, base.href, error);
  }
}

function checkHeaders(value: unknown, call: ToolCall): Record<string, string> {
  if (value === undefined) return {};
  const headers: Record<string, string> = {};
  for (const [name, text] of Object.entries(value as Record<string, unknown>)) {
    if (typeof text !== 'string') throw call.fail('BUILTIN_INVALID_INPUT', `expects header values as strings; "${name}" is not one.`);
    headers[name] = text;
  }
  return headers;
}

/**
 * `headers` plus `Idempotency-Key` for a method that changes something, as
 * the IETF draft writes it (a quoted string): the execution's key, the same
 * on every retry. A key the caller set is kept.
 */
function withIdempotencyKey(headers: Record<string, string>, method: string, call: ToolCall): Record<string, string> {
  if (!UNSAFE_METHODS.has(method) || Object.keys(headers).some((name) => name.toLowerCase() === 'idempotency-key')) return headers;
  const key = call.ctx.idempotencyKey;
  return key === undefined ? headers : { ...headers, 'idempotency-key': `"${key}"` };
}

/** A failure marked retryable, waiting what `Retry-After` asks (seconds or an HTTP date; at most an hour). */
function retryAdvice(retryAfter: string | null): { readonly retryable: true; readonly retryAfterMs?: number } {
  if (retryAfter === null) return { retryable: true };
  const text = retryAfter.trim();
  const milliseconds = /^\d{1,10}$/.test(text) ? Number(text) * 1_000 : Date.parse(text) - Date.now();
  if (!Number.isFinite(milliseconds)) return { retryable: true };
  return { retryable: true, retryAfterMs: Math.min(Math.max(milliseconds, 0), LONGEST_RETRY_AFTER_MS) };
}

function withoutHeaders(headers: Record<string, string>, names: ReadonlySet<string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !names.has(name.toLowerCase())));
}

/** The URL without `user:password@`, which fetch refuses; the credentials travel as Basic authorization instead. */
function withoutUserinfo(url: URL): string {
  if (url.username === '' && url.password === '') return url.href;
  const bare = new URL(url.href);
  bare.username = '';
  bare.password = '';
  return bare.href;
}

/** `headers`, plus `Authorization: Basic …` from the URL's userinfo when the URL has one and the headers none. */
function withBasicAuthorization(headers: Record<string, string>, url: URL): Record<string, string> {
  if ((url.username === '' && url.password === '') || Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) return headers;
  const credentials = `${decodePart(url.username)}:${decodePart(url.password)}`;
  return { ...headers, authorization: `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}` };
}

function hostAllowed(url: URL, allowHosts: readonly string[]): boolean {
  const hostname = url.hostname.toLowerCase();
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port;
  return allowHosts.some((entry) => {
    const [pattern, wantedPort] = splitHostPort(entry);
    if (wantedPort !== undefined && wantedPort !== port) return false;
    if (pattern.startsWith('*.')) return hostname.endsWith(pattern.slice(1));
    return hostname === pattern;
  });
}

function splitHostPort(entry: string): [string, string | undefined] {
  // "[::1]:8080", "example.com:8080", "example.com", "[::1]"
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry);
  return match === null ? [entry, undefined] : [match[1], match[2]];
}

async function readCapped(response: Response, maxBytes: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  if (response.body === null) return { bytes: Buffer.alloc(0), truncated: false };
  const reader = response.body.getReader();
  const parts: Buffer[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes: Buffer.concat(parts), truncated: false };
      const room = maxBytes - total;
      if (value.length > room) {
        parts.push(Buffer.from(value.buffer, value.byteOffset, room));
        // Stop reading: cancelling the stream closes the connection.
        await reader.cancel().catch(() => undefined);
        return { bytes: Buffer.concat(parts), truncated: true };
      }
      parts.push(Buffer.from(value.buffer, value.byteOffset, value.length));
      total += value.length;
    }
  } finally {
    reader.releaseLock();
  }
}

function decodePart(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function chooseEncoding(requested: unknown, contentType: string | null): 'utf8' | 'base64' {
  if (requested === 'utf8' || requested === 'base64') return requested;
  if (contentType === null) return 'utf8';
  const type = contentType.toLowerCase();
  return /^text\/|[/+](json|xml)\b|javascript|x-www-form-urlencoded|^application\/(yaml|toml)/.test(type) ? 'utf8' : 'base64';
}
