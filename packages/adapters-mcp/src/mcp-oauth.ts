import { messageOf } from '@ca/domain';
import { constants, createHash, createPrivateKey, randomBytes, randomUUID, sign, type KeyObject } from 'node:crypto';
import type { InteractionHandler, RuntimeLogger } from '@ca/tool-lifecycle';
import {
  auth,
  UnauthorizedError,
  type AddClientAuthentication,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type ParsedMcpOAuth, type ParsedMcpServer } from './mcp-config';
import { McpServerError } from './mcp-server-error';
import { listenForRedirect, RedirectError, type RedirectListener } from './redirect-listener';
import { warnOnce } from './warn-once';

/**
 * What is kept about one server's OAuth authorization: the client the
 * authorization server registered (dynamically, or as configured, stamped with
 * its issuer), and the tokens. Secrets: store them where only the user can
 * read them.
 */
export interface McpStoredCredentials {
  /** The registered client: `client_id`, maybe `client_secret`, `issuer`, … as the authorization server returned them. */
  readonly clientInformation?: Readonly<Record<string, unknown>>;
  /** The tokens: `access_token`, `token_type`, maybe `refresh_token`, `expires_in`, `scope`, `issuer`. */
  readonly tokens?: Readonly<Record<string, unknown>>;
}

/**
 * Where the MCP adapter keeps OAuth credentials between sessions (and, with a
 * persistent store, between processes). Keys are opaque strings, one per
 * server URL and client. Each method may be synchronous or return a promise.
 */
export interface McpTokenStore {
  load(key: string): Promise<McpStoredCredentials | undefined> | McpStoredCredentials | undefined;
  save(key: string, credentials: McpStoredCredentials): Promise<void> | void;
  delete(key: string): Promise<void> | void;
}

/** The default {@link McpTokenStore}: credentials live as long as the source. */
export class MemoryTokenStore implements McpTokenStore {
  readonly #entries = new Map<string, McpStoredCredentials>();

  load(key: string): McpStoredCredentials | undefined {
    return this.#entries.get(key);
  }

  save(key: string, credentials: McpStoredCredentials): void {
    this.#entries.set(key, credentials);
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }
}

/** Default time a person has to sign in, in ms. */
export const DEFAULT_AUTHORIZATION_TIMEOUT_MS = 300_000;

/**
 * The key of a server's credentials in a {@link McpTokenStore}: its URL, the
 * grant and the configured client, so that tokens never go to another server
 * or another client.
 *
 * @internal
 */
export function credentialsKey(server: ParsedMcpServer): string {
  const oauth = server.oauth as ParsedMcpOAuth;
  const client = oauth.clientId ?? oauth.clientMetadataUrl;
  return `${server.url} ${oauth.grant}${client === undefined ? '' : ` ${client}`}`;
}

/** How long a client assertion is valid, in seconds. */
const ASSERTION_LIFETIME_S = 300;

/**
 * Client authentication with a JWT assertion signed by the client's private
 * key (`private_key_jwt`, RFC 7523 section 2.2): issuer and subject are the
 * client id, the audience the authorization server's issuer (its token
 * endpoint when the metadata names none), a fresh `jti` each time. Signed
 * with `node:crypto`, so no JOSE library has to load (the SDK's helper
 * imports an ES module, which a CommonJS test runner cannot).
 */
function privateKeyJwt(clientId: string, pem: string, algorithm: string): AddClientAuthentication {
  const key: KeyObject = createPrivateKey(pem);
  const hash = `sha${algorithm.slice(2)}`;
  const options = algorithm.startsWith('ES')
    ? { key, dsaEncoding: 'ieee-p1363' as const }
    : algorithm.startsWith('PS')
      ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }
      : { key };
  const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  return (_headers, params, url, metadata) => {
    const now = Math.floor(Date.now() / 1000);
    const audience = String(metadata?.issuer ?? url);
    const claims = { iss: clientId, sub: clientId, aud: audience, iat: now, exp: now + ASSERTION_LIFETIME_S, jti: randomUUID() };
    const signed = `${encode({ alg: algorithm, typ: 'JWT' })}.${encode(claims)}`;
    const signature = sign(hash, Buffer.from(signed), options).toString('base64url');
    params.set('client_assertion', `${signed}.${signature}`);
    params.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
  };
}

/** How many authorization requests of one session are remembered, to find the one a sign-in completes. */
const MAX_PENDING_AUTHORIZATIONS = 8;

/** The PKCE S256 challenge of a verifier. */
function challengeOf(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

/** The SDK's client provider, backed by a token store. */
class StoredOAuthProvider implements OAuthClientProvider {
  /** The last authorization the SDK wanted a person to grant, until a sign-in completes it. */
  authorizationUrl: URL | undefined;
  /** Signs the client's JWT assertion (`private_key_jwt`); absent for clients with a secret, or none. */
  readonly addClientAuthentication?: AddClientAuthentication;
  #state: string | undefined;
  #codeVerifier: string | undefined;
  /**
   * Verifiers by their challenge, and clients registered in this session by
   * id: several requests refused at once each start an authorization (and,
   * for a client not yet registered, a registration), so the sign-in picks
   * the verifier and client of the authorization the person completes.
   */
  readonly #verifiers = new Map<string, string>();
  readonly #registered = new Map<string, OAuthClientInformationMixed>();
  #discovery: OAuthDiscoveryState | undefined;
  #credentials: McpStoredCredentials;
  /** The verifier and registered client of the authorization a sign-in is completing. */
  #exchange: { readonly verifier?: string; readonly client?: OAuthClientInformationMixed } | undefined;
  /** Set by a 403 `insufficient_scope`: the next authorization asks a person for the wider scope instead of refreshing. */
  #widerScopeWanted = false;

  constructor(
    private readonly server: ParsedMcpServer,
    private readonly oauth: ParsedMcpOAuth,
    private readonly store: McpTokenStore,
    private readonly key: string,
    private readonly redirect: string | undefined,
    stored: McpStoredCredentials | undefined,
    /** Told when the client registered dynamically where the authorization server accepts a client metadata document instead. */
    private readonly onRegisteredDespiteDocuments: (issuer: string) => void,
  ) {
    this.#credentials = stored ?? {};
    if (oauth.privateKey !== undefined && oauth.clientId !== undefined) {
      this.addClientAuthentication = privateKeyJwt(oauth.clientId, oauth.privateKey, oauth.signingAlgorithm ?? 'RS256');
    }
  }

  get redirectUrl(): string | undefined {
    return this.redirect;
  }

  /** The client's metadata document (SEP-991): the SDK uses it as the client id where the authorization server accepts one. */
  get clientMetadataUrl(): string | undefined {
    return this.oauth.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const interactive = this.oauth.grant === 'authorization_code';
    return {
      client_name: this.oauth.clientName,
      redirect_uris: this.redirect === undefined ? [] : [this.redirect],
      grant_types: interactive ? ['authorization_code', 'refresh_token'] : ['client_credentials'],
      response_types: interactive ? ['code'] : [],
      token_endpoint_auth_method:
        this.oauth.privateKey !== undefined ? 'private_key_jwt' : this.oauth.clientSecret === undefined ? 'none' : 'client_secret_post',
      ...(this.oauth.scope === undefined ? {} : { scope: this.oauth.scope }),
    };
  }

  state(): string {
    this.#state = randomBytes(16).toString('hex');
    return this.#state;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const exchanging = this.#exchange?.client;
    if (exchanging !== undefined) return exchanging;
    const stored = this.#credentials.clientInformation as OAuthClientInformationMixed | undefined;
    const configured = this.oauth.clientId;
    if (configured === undefined) {
      // Nothing stored: the SDK registers next (or uses the metadata document), which the authorization server may not allow.
      if (stored === undefined) this.#checkClientCanBeMade();
      return stored;
    }
    const secret = this.oauth.clientSecret === undefined ? {} : { client_secret: this.oauth.clientSecret };
    // The configured client, stamped with its issuer once an authorization server accepted it; its secret comes from the configuration only.
    if (stored?.client_id === configured) return { ...stored, ...secret };
    return { client_id: configured, ...secret };
  }

  async saveClientInformation(information: OAuthClientInformationMixed): Promise<void> {
    const metadata = this.#discovery?.authorizationServerMetadata;
    const registered = this.oauth.clientId === undefined && information.client_id !== this.oauth.clientMetadataUrl;
    if (registered && metadata?.client_id_metadata_document_supported === true) this.onRegisteredDespiteDocuments(String(metadata.issuer));
    const kept: Record<string, unknown> = { ...information };
    // A configured secret stays where the configuration keeps it (an environment variable, a secret store), never in the token store.
    if (this.oauth.clientId !== undefined && kept['client_id'] === this.oauth.clientId) delete kept['client_secret'];
    else this.#remember(this.#registered, information.client_id, information);
    await this.#save({ ...this.#credentials, clientInformation: kept });
  }

  tokens(): OAuthTokens | undefined {
    const tokens = this.#credentials.tokens as OAuthTokens | undefined;
    if (!this.#widerScopeWanted || tokens?.refresh_token === undefined) return tokens;
    // A refreshed token has the scope of the old one: hidden, the refresh token makes the SDK start a new authorization.
    const { refresh_token: _refresh, ...withoutRefresh } = tokens;
    return withoutRefresh;
  }

  /** The server refused the token for want of scope (403 `insufficient_scope`): the next authorization must widen it. */
  wantWiderScope(): void {
    this.#widerScopeWanted = true;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    // Tokens from a sign-in belong to the client it was for, which another registration may have replaced meanwhile.
    const client = this.#exchange?.client;
    await this.#save({ ...this.#credentials, ...(client === undefined ? {} : { clientInformation: { ...client } }), tokens: { ...tokens } });
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    // The session takes the person there (through the interaction handler) once the request has given up.
    this.authorizationUrl = authorizationUrl;
    this.#widerScopeWanted = false;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.#codeVerifier = codeVerifier;
    this.#remember(this.#verifiers, challengeOf(codeVerifier), codeVerifier);
  }

  /**
   * Makes the authorization of `url` the one the next code exchange
   * completes: its PKCE verifier, and the client it was asked for when that
   * client was registered in this session. Returns the `state` it carries.
   */
  prepareExchange(url: URL): string | undefined {
    // Pinned until endExchange: a concurrent request's authorization must not swap them meanwhile.
    const verifier = this.#verifiers.get(url.searchParams.get('code_challenge') ?? '');
    const client = this.#registered.get(url.searchParams.get('client_id') ?? '');
    this.#exchange = { ...(verifier === undefined ? {} : { verifier }), ...(client === undefined ? {} : { client }) };
    return url.searchParams.get('state') ?? this.#state;
  }

  /** Ends what {@link StoredOAuthProvider.prepareExchange} pinned. */
  endExchange(): void {
    this.#exchange = undefined;
  }

  codeVerifier(): string {
    const verifier = this.#exchange?.verifier ?? this.#codeVerifier;
    if (verifier === undefined) throw new Error('No authorization was started, so there is no PKCE code verifier.');
    return verifier;
  }

  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (this.oauth.grant !== 'client_credentials') return undefined;
    const params = new URLSearchParams({ grant_type: 'client_credentials' });
    const wanted = scope ?? this.oauth.scope;
    if (wanted !== undefined) params.set('scope', wanted);
    return params;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier' || scope === 'all') this.#codeVerifier = undefined;
    if (scope === 'discovery' || scope === 'all') this.#discovery = undefined;
    if (scope === 'all') {
      this.#credentials = {};
      await this.store.delete(this.key);
      return;
    }
    if (scope === 'client') await this.#save({ ...(this.#credentials.tokens === undefined ? {} : { tokens: this.#credentials.tokens }) });
    if (scope === 'tokens')
      await this.#save(this.#credentials.clientInformation === undefined ? {} : { clientInformation: this.#credentials.clientInformation });
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#discovery;
  }

  /**
   * Fails with a coded error, before the SDK tries, when no client can be
   * had from the authorization server the discovery found: it offers no
   * dynamic registration, and no metadata document it would accept is
   * configured (the SDK would fail with a plain "Incompatible auth server").
   *
   * @throws {McpServerError} `MCP_AUTH_FAILED`, naming the setting to add.
   */
  #checkClientCanBeMade(): void {
    const metadata = this.#discovery?.authorizationServerMetadata;
    if (metadata === undefined || metadata.registration_endpoint !== undefined) return;
    const acceptsDocuments = metadata.client_id_metadata_document_supported === true;
    if (acceptsDocuments && this.oauth.clientMetadataUrl !== undefined) return;
    const server = this.server;
    const remedy = acceptsDocuments
      ? `It accepts a client ID metadata document instead: publish one at an https: URL and set "oauth.clientMetadataUrl" to it, or register a client there and set "oauth.clientId".`
      : `Register a client there and set "oauth.clientId" (and "oauth.clientSecret" for a confidential client).`;
    throw new McpServerError({
      code: 'MCP_AUTH_FAILED',
      server: server.name,
      message: `MCP server '${server.name}' at ${server.url} needs an OAuth client, and its authorization server (${String(metadata.issuer)}) offers no dynamic client registration${this.oauth.clientMetadataUrl === undefined ? '' : ' and does not accept client ID metadata documents'}. ${remedy}`,
    });
  }

  async #save(credentials: McpStoredCredentials): Promise<void> {
    this.#credentials = credentials;
    await this.store.save(this.key, credentials);
  }

  #remember<T>(map: Map<string, T>, key: string, value: T): void {
    map.set(key, value);
    for (const oldest of map.keys()) {
      if (map.size <= MAX_PENDING_AUTHORIZATIONS) break;
      map.delete(oldest);
    }
  }
}

/** Options of {@link OAuthSession.start}. */
export interface OAuthSessionOptions {
  readonly server: ParsedMcpServer;
  readonly store: McpTokenStore | undefined;
  readonly logger: RuntimeLogger;
  readonly interaction?: InteractionHandler;
  readonly timeoutMs?: number;
  readonly fetch?: FetchLike;
}

/**
 * One connection attempt's OAuth state: the provider the transport asks for
 * tokens, the loopback listener of an authorization code flow, and the
 * sign-in through the interaction handler when the server wants one.
 *
 * @internal
 */
export class OAuthSession {
  /** A coded failure of the flow itself (the person declined, the authorization server refused), reported instead of the SDK's error. */
  failure: McpServerError | undefined;

  private constructor(
    private readonly options: OAuthSessionOptions,
    readonly provider: StoredOAuthProvider,
    private readonly listener: RedirectListener | undefined,
  ) {}

  static async start(options: OAuthSessionOptions): Promise<OAuthSession> {
    const { server } = options;
    const oauth = server.oauth as ParsedMcpOAuth;
    const store = options.store ?? new MemoryTokenStore();
    const key = credentialsKey(server);
    const stored = await store.load(key);
    // The redirect address must be known before the authorization request (and a registration) is made.
    const listener = oauth.grant === 'authorization_code' ? await listenForRedirect(oauth.redirectPort) : undefined;
    const registeredDespiteDocuments = (issuer: string): void =>
      warnOnce(
        options.logger,
        `cimd\u0000${server.url}\u0000${issuer}`,
        `MCP server '${server.name}': its authorization server (${issuer}) accepts client ID metadata documents (client_id_metadata_document_supported), which MCP prefers to dynamic registration, but "oauth.clientMetadataUrl" is not set, so the client registered dynamically. Publish the client's metadata document at an https: URL and set "oauth.clientMetadataUrl" to it to have that URL as the client id.`,
        { server: server.name },
      );
    return new OAuthSession(options, new StoredOAuthProvider(server, oauth, store, key, listener?.url, stored, registeredDespiteDocuments), listener);
  }

  /** True when connecting failed only because a person has to sign in first. */
  wantsSignIn(error: unknown): boolean {
    return error instanceof UnauthorizedError && this.provider.authorizationUrl !== undefined && this.listener !== undefined && this.failure === undefined;
  }

  /**
   * Takes a person to the sign-in page through the interaction handler, waits
   * for the browser's redirect, and exchanges the code for tokens (kept in the
   * store).
   *
   * @throws {McpServerError} `MCP_AUTH_REQUIRED` when nobody can be asked,
   *   the person declines, or nobody signs in in time; `MCP_AUTH_FAILED` when
   *   the authorization server refuses.
   */
  async signIn(signal: AbortSignal | undefined, attribution: { readonly planId?: string; readonly toolName?: string } = {}): Promise<void> {
    const url = this.provider.authorizationUrl as URL;
    const state = this.provider.prepareExchange(url);
    try {
      await this.#completeAuthorization(url, state, signal, attribution);
    } finally {
      this.provider.endExchange();
    }
  }

  async #completeAuthorization(
    url: URL,
    state: string | undefined,
    signal: AbortSignal | undefined,
    attribution: { readonly planId?: string; readonly toolName?: string },
  ): Promise<void> {
    const { server, interaction, logger } = this.options;
    const fail = (code: 'MCP_AUTH_REQUIRED' | 'MCP_AUTH_FAILED', reason: string, cause?: unknown): never => {
      this.failure = new McpServerError({
        code,
        server: server.name,
        ...(cause === undefined ? {} : { cause }),
        message: `MCP server '${server.name}' at ${server.url} needs an OAuth sign-in: ${reason}`,
      });
      throw this.failure;
    };
    // The address comes from the authorization server's metadata: only a web page is shown to a person.
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      fail('MCP_AUTH_FAILED', `the authorization server's sign-in address uses the scheme ${url.protocol}, not https: or http:.`);
    if (interaction === undefined) {
      fail(
        'MCP_AUTH_REQUIRED',
        'no interaction handler was given to take a person to the sign-in page. Sign in ahead of time where one is (McpToolSource.authorize), or use the client_credentials grant for a service.',
      );
    }
    // Listen before asking: the person may finish signing in before the handler returns.
    const withdraw = new AbortController();
    const waiting = (this.listener as RedirectListener).waitForCode(
      state ?? '',
      signal === undefined ? withdraw.signal : AbortSignal.any([signal, withdraw.signal]),
      this.options.timeoutMs ?? DEFAULT_AUTHORIZATION_TIMEOUT_MS,
    );
    waiting.catch(() => undefined);
    let answer;
    try {
      answer = await (interaction as InteractionHandler).interact(
        { kind: 'url', purpose: 'authorization', url: url.href, message: `Sign in to allow access to MCP server '${server.name}' (${server.url}).` },
        {
          source: 'mcp',
          origin: server.name,
          ...(attribution.planId === undefined ? {} : { planId: attribution.planId }),
          ...(attribution.toolName === undefined ? {} : { toolName: attribution.toolName }),
          signal: signal ?? withdraw.signal,
        },
      );
    } catch (error) {
      withdraw.abort(error);
      if (signal?.aborted) throw signal.reason;
      fail('MCP_AUTH_REQUIRED', `the interaction handler failed: ${messageOf(error)}.`, error);
    }
    if (answer?.action !== 'accept') {
      withdraw.abort(new Error('declined'));
      fail(
        'MCP_AUTH_REQUIRED',
        `the sign-in was ${answer?.action === 'cancel' ? 'cancelled' : 'declined'}. Sign in ahead of time (McpToolSource.authorize) to use the server without asking.`,
      );
    }
    logger.info(`Waiting for the OAuth sign-in to MCP server '${server.name}'.`, { server: server.name });
    let code: string;
    try {
      code = await waiting;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof RedirectError && error.reason === 'refused') fail('MCP_AUTH_FAILED', `${error.message}.`, error);
      return fail('MCP_AUTH_REQUIRED', `${messageOf(error)}. Sign in again.`, error);
    }
    try {
      const result = await auth(this.provider, {
        serverUrl: server.url as string,
        authorizationCode: code,
        ...(this.options.fetch === undefined ? {} : { fetchFn: this.options.fetch }),
      });
      if (result !== 'AUTHORIZED') fail('MCP_AUTH_FAILED', 'the authorization code was not exchanged for tokens.');
    } catch (error) {
      if (McpServerError.isInstance(error)) throw error;
      fail('MCP_AUTH_FAILED', `the authorization server refused the code: ${describeOAuthError(error)}.`, error);
    }
    // Done: a later refusal starts a new authorization, with a URL of its own.
    this.provider.authorizationUrl = undefined;
    logger.info(`Signed in to MCP server '${server.name}'.`, { server: server.name });
  }

  /**
   * True when the server's event stream (the GET of Streamable HTTP) was
   * last refused for want of an authorization (401 or 403): the transport
   * does not try again by itself, so a sign-in has to open it again.
   */
  eventStreamRefused = false;

  /**
   * `fetch` for the MCP transport, watching the server's answers: a 403
   * `insufficient_scope` means the next authorization must ask for the
   * wider scope (a refresh keeps the old one); a refused event stream is
   * noted ({@link OAuthSession.eventStreamRefused}).
   */
  watchScopeRefusals(fetch: FetchLike): FetchLike {
    return async (url, init) => {
      const response = await fetch(url, init);
      if (response.status === 403 && /insufficient_scope/.test(response.headers.get('www-authenticate') ?? '')) this.provider.wantWiderScope();
      // The transport's GET asks for text/event-stream only; the GETs of OAuth discovery (through the same fetch) do not.
      if ((init?.method ?? 'GET') === 'GET' && new Headers(init?.headers).get('accept') === 'text/event-stream') {
        this.eventStreamRefused = response.status === 401 || response.status === 403;
      }
      return response;
    };
  }

  /** Stops listening for a redirect. */
  async finish(): Promise<void> {
    await this.listener?.close();
  }
}

/** `invalid_client: …` for an OAuth error, the message otherwise. */
export function describeOAuthError(error: unknown): string {
  if (error instanceof OAuthError) return `${error.errorCode}${error.message.length > 0 ? `: ${error.message}` : ''}`;
  return messageOf(error);
}

/** True when `error` is an error of the OAuth flow (the authorization server refused, or answered something unusable). */
export function isOAuthError(error: unknown): boolean {
  return error instanceof OAuthError;
}
