import { describeValue, messageOf } from '@ca/domain';
import { discoverAuthorizationServerMetadata } from '@modelcontextprotocol/sdk/client/auth.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthTokenVerifier } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { OAuthMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type * as Jose from 'jose' with { 'resolution-mode': 'import' };
import { McpGatewayError, invalidArgument } from '../errors/mcp-gateway-error';

type JWTPayload = Jose.JWTPayload;

/** jose ships ES modules only; Node loads them with require() (20.19 and later), and only a gateway that verifies JWTs needs it. */
const loadJose = (): typeof Jose => require('jose') as typeof Jose;

/** How the gateway, as an OAuth 2.1 resource server, checks the bearer tokens clients send. */
export interface ResourceServerAuthSettings {
  /** The authorization server that issues the tokens (its metadata is read from its well-known address at start). */
  readonly issuer: string;
  /**
   * The audience tokens must be issued for (RFC 8707: the gateway's URL, or
   * the identifier the authorization server puts into `aud`). A token for
   * another audience is refused: tokens are never passed through.
   */
  readonly audience: string | readonly string[];
  /** Scopes every token must carry. */
  readonly requiredScopes?: readonly string[];
  /**
   * Check tokens by introspection (RFC 7662) at the issuer's
   * `introspection_endpoint` (or `endpoint`), with these client credentials,
   * instead of verifying them as JWTs against the issuer's keys (`jwks_uri`).
   */
  readonly introspection?: { readonly clientId: string; readonly clientSecret: string; readonly endpoint?: string };
  /** JWT signature algorithms accepted (default: what the keys allow, as jose decides; never `none`). */
  readonly algorithms?: readonly string[];
  /** Seconds of clock skew tolerated for `exp` and `nbf` (default 30). */
  readonly clockToleranceSeconds?: number;
  /** `fetch` for the metadata, the keys and introspection; default the global one. */
  readonly fetch?: FetchLike;
}

/** What `serveHttp` needs to act as a resource server: a verifier and the issuer's metadata (advertised in the protected-resource metadata). */
export interface McpHttpAuth {
  readonly verifier: OAuthTokenVerifier;
  /** The authorization server's metadata (RFC 8414); its `issuer` is named in the RFC 9728 metadata. */
  readonly oauthMetadata: OAuthMetadata;
  readonly requiredScopes?: readonly string[];
  /** Scopes the RFC 9728 metadata lists (default `requiredScopes`). */
  readonly scopesSupported?: readonly string[];
  /** A name for people, in the RFC 9728 metadata. */
  readonly resourceName?: string;
}

/**
 * Reads the issuer's metadata and makes the token verifier: tokens are
 * verified as JWTs against the issuer's published keys (signature, `iss`,
 * `aud`, `exp`, `nbf`), or sent to its introspection endpoint. A token that
 * fails is answered `401 invalid_token` by the SDK's `requireBearerAuth`.
 * @throws McpGatewayError `GATEWAY_AUTH_SETUP_FAILED` when the metadata cannot be read or lacks what the chosen check needs;
 *   `GATEWAY_INVALID_ARGUMENT` for a setting it cannot use.
 */
export async function createResourceServerAuth(settings: ResourceServerAuthSettings): Promise<McpHttpAuth> {
  const issuer = checkUrl(settings?.issuer, 'auth.issuer');
  const audiences = typeof settings.audience === 'string' ? [settings.audience] : [...(settings.audience ?? [])];
  if (audiences.length === 0 || audiences.some((audience) => typeof audience !== 'string' || audience.length === 0)) {
    throw invalidArgument(
      'auth.audience',
      'the audience tokens are issued for (the gateway URL, or the identifier your authorization server uses)',
      describeValue(settings.audience),
    );
  }
  const fetchFn = settings.fetch ?? fetch;
  const setupFailure = (reason: string, cause?: unknown) =>
    new McpGatewayError({ problem: { kind: 'auth-setup', issuer: issuer.href, reason }, ...(cause === undefined ? {} : { cause }) });
  let metadata: OAuthMetadata | undefined;
  try {
    metadata = (await discoverAuthorizationServerMetadata(issuer, { fetchFn })) as OAuthMetadata | undefined;
  } catch (error) {
    throw setupFailure(messageOf(error), error);
  }
  if (metadata === undefined) throw setupFailure('it publishes no OAuth authorization server or OpenID provider metadata');
  if (sameIssuer(metadata.issuer, issuer.href) === false) throw setupFailure(`its metadata names another issuer (${metadata.issuer})`);
  const requiredScopes = settings.requiredScopes ?? [];
  const verifier =
    settings.introspection !== undefined
      ? introspectionVerifier(settings.introspection, metadata, audiences, fetchFn, setupFailure)
      : jwtVerifier(metadata, issuer, audiences, settings, fetchFn, setupFailure);
  return { verifier, oauthMetadata: metadata, requiredScopes };
}

function checkUrl(value: unknown, field: string): URL {
  try {
    const url = new URL(String(value));
    if (url.protocol === 'https:' || (url.protocol === 'http:' && (url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]')))
      return url;
  } catch {
    // reported below
  }
  throw invalidArgument(field, 'an https:// URL (http:// only on localhost)', describeValue(value));
}

function sameIssuer(listed: string, configured: string): boolean {
  return listed.replace(/\/$/, '') === configured.replace(/\/$/, '');
}

function jwtVerifier(
  metadata: OAuthMetadata,
  issuer: URL,
  audiences: string[],
  settings: ResourceServerAuthSettings,
  fetchFn: FetchLike,
  setupFailure: (reason: string) => McpGatewayError,
): OAuthTokenVerifier {
  const jwksUri = (metadata as { jwks_uri?: string }).jwks_uri;
  if (typeof jwksUri !== 'string') throw setupFailure('its metadata has no jwks_uri to verify tokens with; configure introspection instead');
  const { createRemoteJWKSet, customFetch, jwtVerify } = loadJose();
  const keys = createRemoteJWKSet(new URL(jwksUri), { [customFetch]: fetchFn as never });
  const issuerName = metadata.issuer ?? issuer.href;
  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, keys, {
          issuer: issuerName,
          audience: audiences,
          clockTolerance: settings.clockToleranceSeconds ?? 30,
          ...(settings.algorithms === undefined ? {} : { algorithms: [...settings.algorithms] }),
        }));
      } catch (error) {
        throw new InvalidTokenError(`the token is not valid for this server: ${messageOf(error)}`);
      }
      return authInfoOf(token, payload, audiences);
    },
  };
}

function introspectionVerifier(
  introspection: NonNullable<ResourceServerAuthSettings['introspection']>,
  metadata: OAuthMetadata,
  audiences: string[],
  fetchFn: FetchLike,
  setupFailure: (reason: string) => McpGatewayError,
): OAuthTokenVerifier {
  const endpoint = introspection.endpoint ?? (metadata as { introspection_endpoint?: string }).introspection_endpoint;
  if (typeof endpoint !== 'string') throw setupFailure('its metadata has no introspection_endpoint; give one in the settings, or verify tokens as JWTs');
  const credentials = Buffer.from(`${encodeURIComponent(introspection.clientId)}:${encodeURIComponent(introspection.clientSecret)}`).toString('base64');
  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      let answer: Record<string, unknown>;
      try {
        const response = await fetchFn(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization: `Basic ${credentials}` },
          body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
        });
        if (!response.ok) throw new Error(`the introspection endpoint answered HTTP ${response.status}`);
        answer = (await response.json()) as Record<string, unknown>;
      } catch (error) {
        // Not the token's fault: the SDK answers 500 for a plain error, and the client may try again.
        throw new Error(`token introspection failed: ${messageOf(error)}`);
      }
      if (answer['active'] !== true) throw new InvalidTokenError('the token is not active');
      const audience = answer['aud'];
      const listed =
        typeof audience === 'string' ? [audience] : Array.isArray(audience) ? audience.filter((item): item is string => typeof item === 'string') : [];
      if (!listed.some((item) => audiences.includes(item)))
        throw new InvalidTokenError('the token was not issued for this server (its audience does not match)');
      return authInfoOf(token, answer as JWTPayload, audiences);
    },
  };
}

/** The SDK's `AuthInfo` from verified claims: the client, the scopes (`scope` or `scp`), the expiry, the audience as the resource. */
function authInfoOf(token: string, claims: JWTPayload & Record<string, unknown>, audiences: string[]): AuthInfo {
  const scope = claims['scope'];
  const scp = claims['scp'];
  const scopes =
    typeof scope === 'string' ? scope.split(' ').filter(Boolean) : Array.isArray(scp) ? scp.filter((item): item is string => typeof item === 'string') : [];
  const clientId = [claims['client_id'], claims['azp'], claims.sub].find((value): value is string => typeof value === 'string') ?? 'unknown';
  const audience = (typeof claims.aud === 'string' ? [claims.aud] : (claims.aud ?? [])).find((item) => audiences.includes(item));
  let resource: URL | undefined;
  try {
    resource = audience === undefined ? undefined : new URL(audience);
  } catch {
    resource = undefined;
  }
  return {
    token,
    clientId,
    scopes,
    ...(typeof claims.exp === 'number' ? { expiresAt: claims.exp } : {}),
    ...(resource === undefined ? {} : { resource }),
    extra: { ...(typeof claims.sub === 'string' ? { subject: claims.sub } : {}), ...(typeof claims.iss === 'string' ? { issuer: claims.iss } : {}) },
  };
}
