import type { InjectionToken } from 'tsyringe';
import type { ApprovalRequest } from '../approval';

/**
 * A form a person is asked to fill in: `schema` is a flat JSON Schema object
 * (string, number, integer, boolean and enum properties), as MCP elicitation
 * sends it. It comes from a source the service may not control (an MCP
 * server): show it, never execute anything it says.
 */
export interface FormInteraction {
  readonly kind: 'form';
  /** What the person is asked, in the words of the source. */
  readonly message: string;
  /** The fields wanted: `{ type: 'object', properties: { … }, required?: [...] }`. */
  readonly schema: Readonly<Record<string, unknown>>;
  /**
   * Set when the runtime asks whether a tool call may run (see
   * `approvalThroughInteraction`): the request itself, for a handler that
   * shows approvals its own way (the tool, its capability, the arguments).
   * A handler that does not look at it asks the form as any other.
   */
  readonly approval?: ApprovalRequest;
}

/**
 * A page a person is asked to open in a browser (MCP URL-mode elicitation, or
 * the sign-in page of an OAuth authorization). Accepting means the person
 * agreed to open it; what happens there is between them and the page.
 */
export interface UrlInteraction {
  readonly kind: 'url';
  /** Why the page should be opened, in the words of the source (or the adapter's, for `authorization`). */
  readonly message: string;
  /** The absolute `http:` or `https:` URL to open. */
  readonly url: string;
  /** `elicitation`: a source asked the person to visit a page; `authorization`: sign in to grant access (OAuth). */
  readonly purpose: 'elicitation' | 'authorization';
  /** The source's id of the request (MCP `elicitationId`), when it has one. */
  readonly id?: string;
}

/**
 * What a person is asked. A union so that further kinds can join without
 * changing the handler's signature: a handler answers `decline` to a kind it
 * does not know. Approving a tool call is a form (with `approval` set), so
 * every handler that asks forms can answer it.
 */
export type InteractionRequest = FormInteraction | UrlInteraction;

/** Values of an accepted form: strings, numbers, booleans, or lists of strings (multi-select). */
export type InteractionValues = Readonly<Record<string, string | number | boolean | readonly string[]>>;

/**
 * The person's answer: `accept` (with the form's values, for a form),
 * `decline` (they said no, or nobody could be asked), or `cancel` (they
 * dismissed the question without choosing).
 */
export type InteractionResponse =
  { readonly action: 'accept'; readonly content?: InteractionValues } | { readonly action: 'decline' } | { readonly action: 'cancel' };

/** Where a request comes from, so that a service can route it to the right person. */
export interface InteractionContext {
  /** The kind of source asking (`mcp`, …), or `runtime` for an approval. */
  readonly source: string;
  /** Which one of that kind: the MCP server's name; `approval` for an approval. */
  readonly origin: string;
  /** The plan the request belongs to, when the source can tell. */
  readonly planId?: string;
  /** The tool whose call caused it, when the source can tell. */
  readonly toolName?: string;
  /** Aborts when the request is withdrawn (the call ended, the plan was cancelled). */
  readonly signal: AbortSignal;
}

/**
 * Asks a person something on behalf of a tool source or the runtime: an MCP
 * server's elicitation (form or URL), an OAuth sign-in page, and — through
 * `approvalThroughInteraction` — whether a tool call may run. The service
 * injects one (a terminal prompt, a web dialog, a chat message); without one,
 * sources do not offer what needs it (an MCP client declares no elicitation
 * capability).
 *
 * It lives in this layer, the lowest that adapters and the runtime both
 * import, so that one handler answers every question put to a person:
 * `registerToolRuntime` asks approvals through the `INTERACTION_HANDLER`
 * when the service registered no `APPROVAL_HANDLER`.
 */
export interface InteractionHandler {
  /**
   * Asks and resolves with the answer. Resolve `decline` when nobody can be
   * asked; stop asking and resolve `cancel` when `context.signal` aborts.
   * @throws anything — the source treats it as `cancel` and logs it.
   */
  interact(request: InteractionRequest, context: InteractionContext): Promise<InteractionResponse>;
}

/** The service's {@link InteractionHandler}, when it registers one. */
export const INTERACTION_HANDLER: InjectionToken<InteractionHandler> = Symbol.for('ca.tool-lifecycle.InteractionHandler');
