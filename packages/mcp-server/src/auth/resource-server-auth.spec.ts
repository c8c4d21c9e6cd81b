import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TestTool } from '@ca/tool-lifecycle/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import express from 'express';
import type * as Jose from 'jose' with { 'resolution-mode': 'import' };
import { gatewayOver } from '../gateway/gateway.test-helper';
import { serveHttp, type McpHttpServer } from '../http/serve-http';
import { createResourceServerAuth } from './resource-server-auth';

/**
 * An authorization server on 127.0.0.1, as a company's identity provider
 * would be: RFC 8414 metadata, its signing keys (JWKS), and token
 * introspection (RFC 7662) for the tokens it lists as active.
 */
async function startAuthorizationServer(): Promise<{
  issuer: string;
  sign: (claims: Record<string, unknown>, options?: { expiresIn?: string; key?: 'own' | 'stranger' }) => Promise<string>;
  activeTokens: Map<string, Record<string, unknown>>;
  introspections: () => number;
  close: () => Promise<void>;
}> {
  const own = await generateKeyPair('RS256');
  const stranger = await generateKeyPair('RS256');
  const jwk: Jose.JWK = { ...(await exportJWK(own.publicKey)), kid: 'own', alg: 'RS256', use: 'sig' };
  const activeTokens = new Map<string, Record<string, unknown>>();
  let introspected = 0;
  const app = express();
  let issuer = '';
  app.get('/.well-known/oauth-authorization-server', (_request, response) => {
    response.json({
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      introspection_endpoint: `${issuer}/introspect`,
      response_types_supported: ['code'],
    });
  });
  app.get('/jwks', (_request, response) => response.json({ keys: [jwk] }));
  app.post('/introspect', express.urlencoded({ extended: false }), (request, response) => {
    introspected++;
    if (request.headers.authorization !== `Basic ${Buffer.from('gateway:s3cret').toString('base64')}`)
      return void response.status(401).json({ error: 'invalid_client' });
    const claims = activeTokens.get(String(request.body.token));
    response.json(claims === undefined ? { active: false } : { active: true, ...claims });
  });
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    activeTokens,
    introspections: () => introspected,
    sign: (claims, options = {}) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'own' })
        .setIssuer(String(claims['iss'] ?? issuer))
        .setIssuedAt()
        .setExpirationTime(options.expiresIn ?? '5m')
        .sign(options.key === 'stranger' ? stranger.privateKey : own.privateKey),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The address the server listens on (its URL is the public one, behind a proxy). */
function localUrl(server: McpHttpServer): URL {
  return new URL(`http://127.0.0.1:${server.address.port}/mcp`);
}

// jose ships ES modules only; the test loads it as the package does (require, Node 20.19 and later; compiled by ts-jest here).
const { SignJWT, exportJWK, generateKeyPair } = require('jose') as typeof Jose;

const reader = { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false };

async function signedInClient(url: URL, token: string): Promise<Client> {
  const client = new Client({ name: 'signed-in', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

function post(url: URL, headers: Record<string, string>, body: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

describe('OAuth 2.1 resource-server mode', () => {
  let authorization: Awaited<ReturnType<typeof startAuthorizationServer>>;
  let server: McpHttpServer | undefined;
  beforeAll(async () => {
    authorization = await startAuthorizationServer();
  });
  afterAll(() => authorization.close());
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function serve(
    settings: Partial<Parameters<typeof createResourceServerAuth>[0]> = {},
    audience = 'https://tools.example.com/mcp',
  ): Promise<McpHttpServer> {
    const tool = new TestTool({ name: 'whoami', capability: reader, execute: (_input, ctx) => ctx.planId });
    const { gateway } = gatewayOver([tool], { profile: (session) => ({ labels: { client: session.authInfo?.clientId ?? 'none' } }) });
    const auth = await createResourceServerAuth({ issuer: authorization.issuer, audience, requiredScopes: ['mcp:tools'], ...settings });
    server = await serveHttp(gateway, { auth, publicUrl: 'https://tools.example.com/mcp' });
    return server;
  }

  it('answers a request without a token 401, naming its protected-resource metadata (RFC 9728), which names the issuer', async () => {
    const local = localUrl(await serve());
    const response = await post(local, {}, initialize);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(
      /^Bearer error="invalid_token".*resource_metadata="https:\/\/tools.example.com\/.well-known\/oauth-protected-resource\/mcp"/,
    );
    const metadata = await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', local))).json();
    expect(metadata).toMatchObject({
      resource: 'https://tools.example.com/mcp',
      authorization_servers: [authorization.issuer],
      scopes_supported: ['mcp:tools'],
    });
  });

  it('serves a client whose token the issuer signed for this audience, with the scope; refuses every other token', async () => {
    const local = localUrl(await serve());
    const good = await authorization.sign({ sub: 'alice', client_id: 'claude', aud: 'https://tools.example.com/mcp', scope: 'mcp:tools openid' });
    const client = await signedInClient(local, good);
    expect(((await client.callTool({ name: 'whoami', arguments: {} })).content as { text: string }[])[0]?.text).toMatch(/^mcp-/);
    await client.close();
    const refusals = {
      otherAudience: await authorization.sign({ sub: 'alice', client_id: 'claude', aud: 'https://elsewhere.example.com', scope: 'mcp:tools' }),
      expired: await authorization.sign({ sub: 'alice', client_id: 'claude', aud: 'https://tools.example.com/mcp', scope: 'mcp:tools' }, { expiresIn: '-10m' }),
      strangerKey: await authorization.sign(
        { sub: 'alice', client_id: 'claude', aud: 'https://tools.example.com/mcp', scope: 'mcp:tools' },
        { key: 'stranger' },
      ),
      otherIssuer: await authorization.sign({ iss: 'https://evil.example.com', sub: 'alice', aud: 'https://tools.example.com/mcp', scope: 'mcp:tools' }),
      garbage: 'not.a.token',
    };
    for (const [name, token] of Object.entries(refusals)) {
      const response = await post(local, { authorization: `Bearer ${token}` }, initialize);
      expect({ name, status: response.status }).toEqual({ name, status: 401 });
    }
    const noScope = await authorization.sign({ sub: 'alice', client_id: 'claude', aud: 'https://tools.example.com/mcp', scope: 'openid' });
    const forbidden = await post(local, { authorization: `Bearer ${noScope}` }, initialize);
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers.get('www-authenticate')).toMatch(/insufficient_scope/);
  });

  it("binds a session to the client that opened it: another client's valid token cannot use it", async () => {
    const local = localUrl(await serve());
    const alice = await authorization.sign({ sub: 'alice', client_id: 'claude', aud: 'https://tools.example.com/mcp', scope: 'mcp:tools' });
    const mallory = await authorization.sign({ sub: 'mallory', client_id: 'claude', aud: 'https://tools.example.com/mcp', scope: 'mcp:tools' });
    const opened = await post(local, { authorization: `Bearer ${alice}` }, initialize);
    const sessionId = opened.headers.get('mcp-session-id') as string;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const hijack = await post(
      local,
      { authorization: `Bearer ${mallory}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/list',
      },
    );
    expect(hijack.status).toBe(403);
    expect(await hijack.text()).toMatch(/belongs to another client/);
  });

  it('checks tokens by introspection (RFC 7662) when asked, with its client credentials', async () => {
    const local = localUrl(await serve({ introspection: { clientId: 'gateway', clientSecret: 's3cret' } }, 'tools'));
    authorization.activeTokens.set('opaque-good', {
      client_id: 'claude',
      sub: 'alice',
      aud: 'tools',
      scope: 'mcp:tools',
      exp: Math.floor(Date.now() / 1000) + 300,
    });
    authorization.activeTokens.set('opaque-other-audience', {
      client_id: 'claude',
      sub: 'alice',
      aud: 'billing',
      scope: 'mcp:tools',
      exp: Math.floor(Date.now() / 1000) + 300,
    });
    const before = authorization.introspections();
    const client = await signedInClient(local, 'opaque-good');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['whoami']);
    await client.close();
    expect(authorization.introspections()).toBeGreaterThan(before);
    expect((await post(local, { authorization: 'Bearer opaque-revoked' }, initialize)).status).toBe(401);
    expect((await post(local, { authorization: 'Bearer opaque-other-audience' }, initialize)).status).toBe(401);
  });

  it('refuses to start with an issuer it cannot read, or settings it cannot use', async () => {
    await expect(createResourceServerAuth({ issuer: 'http://127.0.0.1:1', audience: 'x' })).rejects.toMatchObject({ code: 'GATEWAY_AUTH_SETUP_FAILED' });
    await expect(createResourceServerAuth({ issuer: 'http://idp.example.com', audience: 'x' })).rejects.toMatchObject({ code: 'GATEWAY_INVALID_ARGUMENT' });
    await expect(createResourceServerAuth({ issuer: authorization.issuer, audience: [] })).rejects.toMatchObject({ code: 'GATEWAY_INVALID_ARGUMENT' });
  });
});
