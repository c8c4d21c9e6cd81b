import type { IncomingMessage } from 'node:http';

/** Host names every loopback server answers to. */
const LOOPBACK_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** True for a host (as given to listen) that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/** The host name of a `Host` header, without its port, lower case; IPv6 in brackets. */
export function hostNameOf(header: string | undefined): string | undefined {
  if (header === undefined || header.length === 0 || header.length > 300) return undefined;
  const text = header.trim().toLowerCase();
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    return end === -1 ? undefined : text.slice(0, end + 1);
  }
  const colon = text.indexOf(':');
  return colon === -1 ? text : text.slice(0, colon);
}

/**
 * Which `Host` and `Origin` values a server accepts (DNS rebinding: a web page
 * whose name resolves to 127.0.0.1 must not reach the tools). Hosts: the
 * loopback names and `allowedHosts`. Origins (sent by browsers): the server's
 * own, for each accepted host on its port and scheme, and `allowedOrigins`;
 * a request without `Origin` (a native client) is judged by its `Host` alone.
 * @internal
 */
export class RequestGuards {
  private readonly hosts: ReadonlySet<string>;
  private readonly origins: ReadonlySet<string>;

  constructor(
    allowedHosts: readonly string[],
    private readonly allowedOrigins: readonly string[],
  ) {
    this.hosts = new Set([...LOOPBACK_NAMES, ...allowedHosts.map((host) => hostNameOf(host) ?? host.toLowerCase())]);
    this.origins = new Set(allowedOrigins.map((origin) => origin.replace(/\/$/, '').toLowerCase()));
  }

  /** The reason to refuse the request, or undefined when it may go on. `port` and `scheme` are the server's own. */
  refusal(request: IncomingMessage, port: number, scheme: 'http' | 'https'): string | undefined {
    const host = hostNameOf(request.headers.host);
    if (host === undefined || !this.hosts.has(host))
      return `the Host header ${JSON.stringify(String(request.headers.host ?? '')).slice(0, 120)} is not one this server answers to`;
    const origin = request.headers.origin;
    if (origin === undefined) return undefined;
    const text = origin.toLowerCase();
    if (this.origins.has(text)) return undefined;
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return 'the Origin header is not a URL';
    }
    const ownPort = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    const name = url.hostname.startsWith('[') ? url.hostname : hostNameOf(url.host);
    if (name !== undefined && this.hosts.has(name) && url.protocol === `${scheme}:` && ownPort === port) return undefined;
    return `the Origin ${JSON.stringify(origin).slice(0, 120)} is not allowed (allowedOrigins names the web pages that may call this server)`;
  }

  /** The configured origins, for messages. */
  get configuredOrigins(): readonly string[] {
    return this.allowedOrigins;
  }
}
