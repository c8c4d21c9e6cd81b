import { messageOf } from '@ca/domain';
import { randomBytes } from 'node:crypto';
import type { InteractionHandler, RuntimeLogger } from '@ca/tool-lifecycle';
import { auth, UnauthorizedError, type OAuthClientProvider, type OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type ParsedMcpOAuth, type ParsedMcpServer } from './mcp-config';
import { McpServerError } from './mcp-server-error';
import { listenForRedirect, RedirectError, type RedirectListener } from './redirect-listener';

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
  return `${server.url} ${oauth.grant}${oauth.clientId === undefined ? '' : ` ${oauth.clientId}`}`;
}

/** The SDK's client provider, backed by a token store. */
class StoredOAuthProvider implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  #state: string | undefined;
  #codeVerifier: string | undefined;
  #discovery: OAuthDiscoveryState | undefined;
  #credentials: McpStoredCredentials;

  constructor(
    private readonly oauth: ParsedMcpOAuth,
    private readonly store: McpTokenStore,
    private readonly key: string,
    private readonly redirect: string | undefined,
    stored: McpStoredCredentials | undefined,
  ) {
    this.#credentials = stored ?? {};
  }

  get redirectUrl(): string | undefined {
    return this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    const interactive = this.oauth.grant === 'authorization_code';
    return {
      client_name: this.oauth.clientName,
      redirect_uris: this.redirect === undefined ? [] : [this.redirect],
      grant_types: interactive ? ['authorization_code', 'refresh_token'] : ['client_credentials'],
      response_types: interactive ? ['code'] : [],
      token_endpoint_auth_method: this.oauth.clientSecret === undefined ? 'none' : 'client_secret_post',
      ...(this.oauth.scope === undefined ? {} : { scope: this.oauth.scope }),
    };
  }

  get expectedState(): string | undefined {
    return this.#state;
  }

  state(): string {
    this.#state = randomBytes(16).toString('hex');
    return this.#state;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const stored = this.#credentials.clientInformation as OAuthClientInformationMixed | undefined;
    const configured = this.oauth.clientId;
    if (configured === undefined) return stored;
    // The configured client, stamped with its issuer once an authorization server accepted it.
    if (stored?.client_id === configured) return stored;
    return { client_id: configured, ...(this.oauth.clientSecret === undefined ? {} : { client_secret: this.oauth.clientSecret }) };
  }

  async saveClientInformation(information: OAuthClientInformationMixed): Promise<void> {
    await this.#save({ ...this.#credentials, clientInformation: { ...information } });
  }

  tokens(): OAuthTokens | undefined {
    return this.#credentials.tokens as OAuthTokens | undefined;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    await this.#save({ ...this.#credentials, tokens: { ...tokens } });
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    // The session takes the person there (through the interaction handler) once connect has given up.
    this.authorizationUrl = authorizationUrl;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.#codeVerifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.#codeVerifier === undefined) throw new Error('No authorization was started, so there is no PKCE code verifier.');
    return this.#codeVerifier;
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

  async #save(credentials: McpStoredCredentials): Promise<void> {
    this.#credentials = credentials;
    await this.store.save(this.key, credentials);
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
    return new OAuthSession(options, new StoredOAuthProvider(oauth, store, key, listener?.url, stored), listener);
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
  async signIn(signal: AbortSignal | undefined): Promise<void> {
    const { server, interaction, logger } = this.options;
    const url = this.provider.authorizationUrl as URL;
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
      this.provider.expectedState ?? '',
      signal === undefined ? withdraw.signal : AbortSignal.any([signal, withdraw.signal]),
      this.options.timeoutMs ?? DEFAULT_AUTHORIZATION_TIMEOUT_MS,
    );
    waiting.catch(() => undefined);
    let answer;
    try {
      answer = await (interaction as InteractionHandler).interact(
        { kind: 'url', purpose: 'authorization', url: url.href, message: `Sign in to allow access to MCP server '${server.name}' (${server.url}).` },
        { source: 'mcp', origin: server.name, signal: signal ?? withdraw.signal },
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
    logger.info(`Signed in to MCP server '${server.name}'.`, { server: server.name });
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
