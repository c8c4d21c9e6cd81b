'use strict';
// A Streamable HTTP MCP server for the adapter's tests, listening on 127.0.0.1
// and a free port (reported on stderr as "FIXTURE_LISTENING <port>"). One
// process can also be its own OAuth authorization server, built with the
// SDK's auth router. Behaviour by environment variables:
//   FIXTURE_AUTH            none (default) | token | oauth
//   FIXTURE_TOKEN           the bearer token `token` mode accepts
//   FIXTURE_CLIENT_ID       a pre-registered confidential client (oauth mode: client_credentials)
//   FIXTURE_CLIENT_SECRET   its secret
//   FIXTURE_TOKEN_TTL_S     lifetime of access tokens in seconds (default 3600)
//   FIXTURE_RECORD_FILE     where to append what the server saw (grants, registrations, calls, event streams opened)
//   FIXTURE_RESUMABLE       "0": no event store, so a broken stream cannot be resumed
//   FIXTURE_GUARD           oauth mode: "after-handshake" lets initialize and notifications through
//                           without a token (every other request needs one)
//   FIXTURE_CALL_SCOPE      oauth mode: a scope tools/call needs besides mcp:tools (403 insufficient_scope
//                           without it); "mcp:admin" is one the authorization server never grants
//   FIXTURE_REJECT_TOKENS   "1": the MCP server refuses every token (401) and no refresh token is issued
//   FIXTURE_CIMD            "1": the authorization server accepts an https: URL as a client id (SEP-991)
//   FIXTURE_NO_REGISTRATION "1": the authorization server offers no dynamic client registration
//   FIXTURE_CLIENT_PUBLIC_KEY  the pre-registered client authenticates with a JWT signed by the private key
//                           of this public key (PEM; private_key_jwt) instead of its secret
const crypto = require('node:crypto');
const fs = require('node:fs');
const express = require('express');
const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
const { InMemoryEventStore } = require('@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js');
const { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } = require('@modelcontextprotocol/sdk/server/auth/router.js');
const { requireBearerAuth } = require('@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js');
const { InvalidTokenError, InvalidGrantError } = require('@modelcontextprotocol/sdk/server/auth/errors.js');
const { CallToolRequestSchema, ListToolsRequestSchema, isInitializeRequest } = require('@modelcontextprotocol/sdk/types.js');

const env = process.env;
const mode = env.FIXTURE_AUTH || 'none';
const ttlSeconds = Number(env.FIXTURE_TOKEN_TTL_S || 3600);

function record(line) {
  if (env.FIXTURE_RECORD_FILE) fs.appendFileSync(env.FIXTURE_RECORD_FILE, `${line}\n`);
}

// --- The authorization server's provider: clients, codes and tokens in memory. ---
const clients = new Map();
/** Scopes the authorization server never grants, whatever a client asks for. */
const NEVER_GRANTED = new Set(['mcp:admin']);
if (env.FIXTURE_CLIENT_ID) {
  clients.set(env.FIXTURE_CLIENT_ID, {
    client_id: env.FIXTURE_CLIENT_ID,
    client_secret: env.FIXTURE_CLIENT_SECRET,
    redirect_uris: [],
    grant_types: ['client_credentials'],
    token_endpoint_auth_method: 'client_secret_post',
  });
}
const codes = new Map();
const accessTokens = new Map();
const refreshTokens = new Map();

function issue(clientId, scopes, withRefresh) {
  const access = crypto.randomBytes(16).toString('hex');
  accessTokens.set(access, { clientId, scopes, expiresAt: Date.now() + ttlSeconds * 1000 });
  const tokens = { access_token: access, token_type: 'bearer', expires_in: ttlSeconds, scope: scopes.join(' ') };
  if (withRefresh) {
    const refresh = crypto.randomBytes(16).toString('hex');
    refreshTokens.set(refresh, { clientId, scopes });
    tokens.refresh_token = refresh;
  }
  return tokens;
}

const provider = {
  clientsStore: {
    getClient: async (id) => {
      // A client id metadata document (SEP-991): the server accepts the URL as it is (it does not fetch it),
      // with a loopback redirect (any port, RFC 8252).
      if (env.FIXTURE_CIMD === '1' && /^https:\/\//.test(id) && !clients.has(id)) {
        record(`cimd ${id}`);
        clients.set(id, { client_id: id, redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' });
      }
      return clients.get(id);
    },
    ...(env.FIXTURE_NO_REGISTRATION === '1'
      ? {}
      : {
          registerClient: async (client) => {
            clients.set(client.client_id, client);
            record(`register ${client.client_id} ${client.client_name || ''}`);
            return client;
          },
        }),
  },
  // The consent page: this test server approves at once and sends the browser back with a code.
  async authorize(client, params, res) {
    const code = crypto.randomBytes(16).toString('hex');
    codes.set(code, { client, params });
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    record(`authorize ${client.client_id} ${(params.scopes || []).join(',')}`);
    res.redirect(target.href);
  },
  async challengeForAuthorizationCode(_client, code) {
    const entry = codes.get(code);
    if (!entry) throw new InvalidGrantError('unknown authorization code');
    return entry.params.codeChallenge;
  },
  async exchangeAuthorizationCode(client, code) {
    const entry = codes.get(code);
    if (!entry || entry.client.client_id !== client.client_id) throw new InvalidGrantError('unknown authorization code');
    codes.delete(code);
    record('token authorization_code');
    return issue(
      client.client_id,
      (entry.params.scopes || []).filter((scope) => !NEVER_GRANTED.has(scope)),
      env.FIXTURE_REJECT_TOKENS !== '1',
    );
  },
  async exchangeRefreshToken(client, refreshToken) {
    const entry = refreshTokens.get(refreshToken);
    if (!entry || entry.clientId !== client.client_id) throw new InvalidGrantError('unknown refresh token');
    refreshTokens.delete(refreshToken);
    record('token refresh_token');
    return issue(client.client_id, entry.scopes, true);
  },
  async verifyAccessToken(token) {
    if (env.FIXTURE_REJECT_TOKENS === '1') throw new InvalidTokenError('this server accepts no token');
    const entry = accessTokens.get(token);
    if (!entry || entry.expiresAt <= Date.now()) throw new InvalidTokenError('the token is unknown or expired');
    return { token, clientId: entry.clientId, scopes: entry.scopes, expiresAt: Math.floor(entry.expiresAt / 1000) };
  },
};

/**
 * The client id of a valid private_key_jwt assertion (RFC 7523: signed with
 * the client's key, issued by and about the client, for this authorization
 * server, not expired), or undefined.
 */
function verifyAssertion(body, issuer) {
  if (body.client_assertion_type !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer' || typeof body.client_assertion !== 'string') return undefined;
  const [header, payload, signature] = body.client_assertion.split('.');
  if (signature === undefined) return undefined;
  const { alg } = JSON.parse(Buffer.from(header, 'base64url').toString());
  const hash = { ES256: 'sha256', RS256: 'sha256' }[alg];
  if (hash === undefined) return undefined;
  const valid = crypto.verify(
    hash,
    Buffer.from(`${header}.${payload}`),
    { key: env.FIXTURE_CLIENT_PUBLIC_KEY, ...(alg.startsWith('ES') ? { dsaEncoding: 'ieee-p1363' } : {}) },
    Buffer.from(signature, 'base64url'),
  );
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  const audience = [issuer, issuer.replace(/\/$/, '')];
  if (!valid || claims.iss !== env.FIXTURE_CLIENT_ID || claims.sub !== env.FIXTURE_CLIENT_ID) return undefined;
  if (!audience.includes(claims.aud) || !(claims.exp * 1000 > Date.now())) return undefined;
  return claims.iss;
}

// --- The MCP server: one Server and transport per session. ---
const tools = [
  { name: 'echo', description: 'Echoes the text back.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  { name: 'hang', description: 'Never answers.', inputSchema: { type: 'object' } },
  { name: 'whoami', description: 'Returns the OAuth client of the request.', inputSchema: { type: 'object' } },
  {
    name: 'add-tool',
    description: 'Adds the tool "added" and announces tools/list_changed on the event stream (the GET stream), not on the answer.',
    inputSchema: { type: 'object' },
  },
];

function newServer() {
  const server = new Server({ name: 'http-fixture', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    record(`call ${name}`);
    if (name === 'echo') return { content: [{ type: 'text', text: `echo: ${request.params.arguments && request.params.arguments.text}` }] };
    if (name === 'whoami') return { content: [{ type: 'text', text: extra.authInfo ? extra.authInfo.clientId : 'nobody' }] };
    if (name === 'hang') return new Promise(() => undefined);
    if (name === 'add-tool') {
      if (!tools.some((tool) => tool.name === 'added')) tools.push({ name: 'added', description: 'Added at run time.', inputSchema: { type: 'object' } });
      // Not related to the request: the SDK sends it on the session's event stream, and drops it when none is open.
      await server.sendToolListChanged();
      return { content: [{ type: 'text', text: 'added' }] };
    }
    if (name === 'added') return { content: [{ type: 'text', text: 'I was added' }] };
    return { content: [{ type: 'text', text: `unknown tool ${name}` }], isError: true };
  });
  return server;
}

const transports = new Map();
const app = express();
app.use(express.json());

const httpServer = app.listen(0, '127.0.0.1', () => {
  const port = httpServer.address().port;
  const base = new URL(`http://127.0.0.1:${port}`);
  const mcpUrl = new URL('/mcp', base);
  const guards = [];
  if (mode === 'token') {
    guards.push((req, res, next) => {
      if (req.headers.authorization === `Bearer ${env.FIXTURE_TOKEN}`) return next();
      res.status(401).set('WWW-Authenticate', 'Bearer').json({ error: 'invalid_token' });
    });
  }
  if (mode === 'oauth') {
    // The SDK's token handler knows no client_credentials grant: this route takes it, the router the rest.
    app.post('/token', express.urlencoded({ extended: false }), (req, res, next) => {
      if (req.body.grant_type !== 'client_credentials') return next();
      if (env.FIXTURE_CLIENT_PUBLIC_KEY) {
        const id = verifyAssertion(req.body, base.href);
        if (id === undefined) {
          record('token client_credentials private_key_jwt refused');
          return res.status(401).json({ error: 'invalid_client', error_description: 'the client assertion is missing or invalid' });
        }
        record(`token client_credentials private_key_jwt ${req.body.client_secret === undefined ? 'without' : 'with'} a secret`);
        return res.json(issue(id, (req.body.scope || '').split(' ').filter(Boolean), false));
      }
      const basic = (req.headers.authorization || '').startsWith('Basic ')
        ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString().split(':').map(decodeURIComponent)
        : [];
      const id = basic[0] || req.body.client_id;
      const secret = basic[1] || req.body.client_secret;
      const client = clients.get(id);
      if (!client || !client.client_secret || client.client_secret !== secret) {
        record('token client_credentials refused');
        return res.status(401).json({ error: 'invalid_client', error_description: 'unknown client or wrong secret' });
      }
      record('token client_credentials');
      res.json(issue(id, (req.body.scope || '').split(' ').filter(Boolean), false));
    });
    if (env.FIXTURE_CIMD === '1') {
      // The router's metadata, plus the flag that says URL client ids are accepted.
      app.get('/.well-known/oauth-authorization-server', (req, res, next) => {
        const json = res.json.bind(res);
        res.json = (body) => json({ ...body, client_id_metadata_document_supported: true });
        next();
      });
    }
    app.use(
      mcpAuthRouter({
        provider,
        issuerUrl: base,
        resourceServerUrl: mcpUrl,
        scopesSupported: ['mcp:tools'],
        authorizationOptions: { rateLimit: false },
        clientRegistrationOptions: { rateLimit: false },
        tokenOptions: { rateLimit: false },
        revocationOptions: { rateLimit: false },
      }),
    );
    const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(mcpUrl);
    const bearer = requireBearerAuth({ verifier: provider, resourceMetadataUrl });
    guards.push((req, res, next) => {
      const method = req.method === 'POST' && req.body ? req.body.method : undefined;
      if (env.FIXTURE_GUARD === 'after-handshake' && (method === 'initialize' || (typeof method === 'string' && method.startsWith('notifications/')))) {
        return next();
      }
      bearer(req, res, (error) => {
        if (error) return next(error);
        const wanted = env.FIXTURE_CALL_SCOPE;
        if (method === 'tools/call' && wanted && !req.auth.scopes.includes(wanted)) {
          record(`insufficient_scope ${method}`);
          return res
            .status(403)
            .set('WWW-Authenticate', `Bearer error="insufficient_scope", scope="mcp:tools ${wanted}", resource_metadata="${resourceMetadataUrl}"`)
            .json({ error: 'insufficient_scope', error_description: `tools/call needs the scope ${wanted}` });
        }
        next();
      });
    });
  }
  app.post('/mcp', ...guards, async (req, res) => {
    const sessionId = req.headers['mcp-session-id'];
    let transport = sessionId ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId || !isInitializeRequest(req.body)) {
        res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message: 'No valid session' }, id: null });
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        ...(env.FIXTURE_RESUMABLE === '0' ? {} : { eventStore: new InMemoryEventStore() }),
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res, req.body);
  });
  const existing = async (req, res) => {
    const transport = transports.get(req.headers['mcp-session-id']);
    if (!transport) {
      res.status(400).send('No valid session');
      return;
    }
    if (req.method === 'DELETE') record('terminate');
    // Past the guards: the event stream opens (with a valid token, where one is needed).
    if (req.method === 'GET') record('events');
    await transport.handleRequest(req, res);
  };
  app.get('/mcp', ...guards, existing);
  app.delete('/mcp', ...guards, existing);
  process.stderr.write(`FIXTURE_LISTENING ${port}\n`);
});
