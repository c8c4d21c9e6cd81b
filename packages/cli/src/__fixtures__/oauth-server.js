'use strict';
// A Streamable HTTP MCP server behind OAuth, on 127.0.0.1 and a free port
// (reported on stderr as "FIXTURE_LISTENING <port>"): one process is both the
// MCP server (behind the SDK's requireBearerAuth) and its authorization
// server (the SDK's mcpAuthRouter), which approves every sign-in at once.
// FIXTURE_CLIENT_ID and FIXTURE_CLIENT_SECRET: a pre-registered service client
// for the client_credentials grant.
const crypto = require('node:crypto');
const express = require('express');
const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
const { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } = require('@modelcontextprotocol/sdk/server/auth/router.js');
const { requireBearerAuth } = require('@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js');
const { InvalidTokenError, InvalidGrantError } = require('@modelcontextprotocol/sdk/server/auth/errors.js');
const { CallToolRequestSchema, ListToolsRequestSchema, isInitializeRequest } = require('@modelcontextprotocol/sdk/types.js');

const clients = new Map();
const codes = new Map();
const tokens = new Map();
const provider = {
  clientsStore: { getClient: async (id) => clients.get(id), registerClient: async (client) => (clients.set(client.client_id, client), client) },
  async authorize(client, params, res) {
    const code = crypto.randomBytes(16).toString('hex');
    codes.set(code, { client, params });
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    res.redirect(target.href);
  },
  async challengeForAuthorizationCode(_client, code) {
    if (!codes.has(code)) throw new InvalidGrantError('unknown code');
    return codes.get(code).params.codeChallenge;
  },
  async exchangeAuthorizationCode(client, code) {
    if (!codes.has(code)) throw new InvalidGrantError('unknown code');
    codes.delete(code);
    const token = crypto.randomBytes(16).toString('hex');
    tokens.set(token, client.client_id);
    return { access_token: token, token_type: 'bearer', expires_in: 3600 };
  },
  async exchangeRefreshToken() {
    throw new InvalidGrantError('no refresh tokens here');
  },
  async verifyAccessToken(token) {
    if (!tokens.has(token)) throw new InvalidTokenError('unknown token');
    return { token, clientId: tokens.get(token), scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 3600 };
  },
};

const app = express();
app.use(express.json());
const transports = new Map();
const httpServer = app.listen(0, '127.0.0.1', () => {
  const base = new URL(`http://127.0.0.1:${httpServer.address().port}`);
  const mcpUrl = new URL('/mcp', base);
  const limits = { rateLimit: false };
  // The SDK's token handler knows no client_credentials grant: this route takes it, the router the rest.
  app.post('/token', express.urlencoded({ extended: false }), (req, res, next) => {
    if (req.body.grant_type !== 'client_credentials') return next();
    const basic = (req.headers.authorization || '').startsWith('Basic ')
      ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString().split(':').map(decodeURIComponent)
      : [];
    const id = basic[0] || req.body.client_id;
    const secret = basic[1] || req.body.client_secret;
    if (!process.env.FIXTURE_CLIENT_ID || id !== process.env.FIXTURE_CLIENT_ID || secret !== process.env.FIXTURE_CLIENT_SECRET) {
      return res.status(401).json({ error: 'invalid_client', error_description: 'unknown client or wrong secret' });
    }
    const token = crypto.randomBytes(16).toString('hex');
    tokens.set(token, id);
    res.json({ access_token: token, token_type: 'bearer', expires_in: 3600 });
  });
  app.use(mcpAuthRouter({ provider, issuerUrl: base, resourceServerUrl: mcpUrl, authorizationOptions: limits, clientRegistrationOptions: limits, tokenOptions: limits, revocationOptions: limits }));
  const guard = requireBearerAuth({ verifier: provider, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) });
  app.post('/mcp', guard, async (req, res) => {
    let transport = transports.get(req.headers['mcp-session-id']);
    if (!transport) {
      if (!isInitializeRequest(req.body)) return res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message: 'No valid session' }, id: null });
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => crypto.randomUUID(), onsessioninitialized: (id) => transports.set(id, transport) });
      const server = new Server({ name: 'oauth-fixture', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }] }));
      server.setRequestHandler(CallToolRequestSchema, async (request) => ({ content: [{ type: 'text', text: `echo: ${request.params.arguments.text}` }] }));
      await server.connect(transport);
    }
    await transport.handleRequest(req, res, req.body);
  });
  const existing = async (req, res) => {
    const transport = transports.get(req.headers['mcp-session-id']);
    if (!transport) return res.status(400).send('No valid session');
    await transport.handleRequest(req, res);
  };
  app.get('/mcp', guard, existing);
  app.delete('/mcp', guard, existing);
  process.stderr.write(`FIXTURE_LISTENING ${base.port}\n`);
});
