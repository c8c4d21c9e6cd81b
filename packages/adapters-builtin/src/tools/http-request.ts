import { ToolCancelledError } from '@ca/tool-context';
import { toolFailure, toolSuccess, type ToolResult } from '@ca/tool-lifecycle';
import { schema, type BuiltinToolSpec, type ToolCall } from '../builtin-tool';
import { BuiltinToolError } from '../builtin-tool-error';

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
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

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
    'Fetch a URL with GET (or HEAD) over http or https and return the status, headers and body. Redirects are followed (each hop checked against the allowed hosts). ' +
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
    'Redirects are followed (each hop checked against the allowed hosts; 303, and 301/302 after POST, continue as GET without a body). The body is read up to a size cap; truncated says when it was cut. ' +
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
  const headers = (input['headers'] as Record<string, string> | undefined) ?? {};
  let body: Buffer | undefined =
    typeof input['body'] === 'string' ? Buffer.from(input['body'], input['bodyEncoding'] === 'base64' ? 'base64' : 'utf8') : undefined;
  if (body !== undefined && (method === 'GET' || method === 'HEAD')) {
    throw call.fail('BUILTIN_INVALID_INPUT', `cannot send a body with ${method}; use POST, PUT or PATCH.`);
  }
  const timeoutMs = Math.min(typeof input['timeoutMs'] === 'number' ? input['timeoutMs'] : settings.defaultTimeoutMs, settings.maxTimeoutMs);
  const maxBytes = Math.min(typeof input['maxResponseBytes'] === 'number' ? input['maxResponseBytes'] : settings.maxResponseBytes, settings.maxResponseBytes);
  const token = call.ctx.cancellationToken.child({ timeoutMs, reason: `request timed out after ${timeoutMs} ms` });
  try {
    let redirects = 0;
    for (;;) {
      const response = await settings.fetch(url.href, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        redirect: 'manual',
        signal: token.signal,
      });
      const location = response.headers.get('location');
      if (REDIRECT_STATUSES.has(response.status) && location !== null) {
        await response.body?.cancel().catch(() => undefined);
        if (redirects === settings.maxRedirects) {
          throw call.fail('BUILTIN_HTTP_FAILED', `stopped after ${redirects} redirects at ${url.href} (http.maxRedirects).`, url.href);
        }
        redirects++;
        url = checkUrl(new URL(location, url).href, call);
        if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
          if (method !== 'HEAD') method = 'GET';
          body = undefined;
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
        return toolFailure(
          call.fail('BUILTIN_HTTP_STATUS', `got HTTP ${response.status} ${response.statusText} from ${url.href}. The response is in the output; check the URL, method, headers and body.`, url.href),
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
    if (token.isCancelled) {
      throw call.fail('BUILTIN_HTTP_TIMED_OUT', `gave up on ${url.href} after ${timeoutMs} ms. Raise timeoutMs, or check that the server answers.`, url.href, error);
    }
    if (BuiltinToolError.isInstance(error)) throw error;
    const cause = (error as { cause?: { message?: string } }).cause;
    throw call.fail(
      'BUILTIN_HTTP_FAILED',
      `could not reach ${url.href}: ${(error as Error).message}${cause?.message === undefined ? '' : ` (${cause.message})`}. Check the URL and the network.`,
      url.href,
      error,
    );
  } finally {
    token.dispose();
  }
}

function checkUrl(text: string, call: ToolCall): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch (error) {
    throw call.fail('BUILTIN_INVALID_INPUT', `got "${text}", which is not an absolute URL; pass e.g. "https://example.com/path".`, text, error);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw call.fail('BUILTIN_HTTP_URL_NOT_ALLOWED', `refused ${url.href}: only http and https URLs are allowed.`, url.href);
  }
  const allowHosts = call.settings.http.allowHosts;
  if (allowHosts !== undefined && !hostAllowed(url, allowHosts)) {
    throw call.fail(
      'BUILTIN_HTTP_URL_NOT_ALLOWED',
      `refused ${url.href}: the host "${url.host}" is not in the allowed hosts (${allowHosts.join(', ')}). Add it to http.allowHosts in the adapter settings.`,
      url.href,
    );
  }
  return url;
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

function chooseEncoding(requested: unknown, contentType: string | null): 'utf8' | 'base64' {
  if (requested === 'utf8' || requested === 'base64') return requested;
  if (contentType === null) return 'utf8';
  const type = contentType.toLowerCase();
  return /^text\/|[/+](json|xml)\b|javascript|x-www-form-urlencoded|^application\/(yaml|toml)/.test(type) ? 'utf8' : 'base64';
}
