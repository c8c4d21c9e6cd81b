import type { InjectionToken } from 'tsyringe';

/**
 * A piece of a sampled message: text, an image or audio (base64 `data` with
 * its `mimeType`), or a kind the source defines (`type` says which).
 */
export interface SamplingContent {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** One message of the conversation to continue. */
export interface SamplingMessage {
  readonly role: 'user' | 'assistant';
  readonly content: SamplingContent | readonly SamplingContent[];
}

/** What the source would like in a model; advisory, the handler chooses. */
export interface SamplingModelPreferences {
  /** Model names or families to prefer, in order (`claude-3-5-sonnet`, `sonnet`). */
  readonly hints?: readonly { readonly name?: string }[];
  /** 0–1: how much cost matters. */
  readonly costPriority?: number;
  /** 0–1: how much speed matters. */
  readonly speedPriority?: number;
  /** 0–1: how much capability matters. */
  readonly intelligencePriority?: number;
}

/**
 * A request to generate one message with the service's model (MCP
 * `sampling/createMessage`). It comes from a source the service may not
 * control: the prompt is untrusted input, and the handler decides which
 * model runs it, with what limits — or refuses.
 */
export interface SamplingRequest {
  readonly messages: readonly SamplingMessage[];
  readonly systemPrompt?: string;
  /** The most tokens the source wants back. */
  readonly maxTokens: number;
  readonly temperature?: number;
  readonly stopSequences?: readonly string[];
  readonly modelPreferences?: SamplingModelPreferences;
  /** Source-specific parameters for the model, passed through as sent. */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** The generated message. */
export interface SamplingResult {
  readonly role: 'assistant';
  readonly content: SamplingContent | readonly SamplingContent[];
  /** The model that produced it. */
  readonly model: string;
  /** Why generation stopped: `endTurn`, `stopSequence`, `maxTokens`, or the model's own reason. */
  readonly stopReason?: string;
}

/** Where a sampling request comes from. */
export interface SamplingContext {
  /** The kind of source asking (`mcp`, …). */
  readonly source: string;
  /** Which one of that kind: the MCP server's name. */
  readonly origin: string;
  /** The plan the request is counted against. */
  readonly planId: string;
  /** The tool whose call caused it, when the source can tell. */
  readonly toolName?: string;
  /** Aborts when the request is withdrawn (the call ended, the plan was cancelled). */
  readonly signal: AbortSignal;
}

/**
 * Generates messages for tool sources that ask for them (MCP sampling). The
 * runtime has no model: the service injects one. Without a handler, sources
 * do not offer what needs it (an MCP client declares no sampling capability).
 */
export interface SamplingHandler {
  /**
   * Generates one message. Stop and reject when `context.signal` aborts.
   * @throws anything — the source reports it to the server as a failed request.
   */
  createMessage(request: SamplingRequest, context: SamplingContext): Promise<SamplingResult>;
}

/** The service's {@link SamplingHandler}, when it registers one. */
export const SAMPLING_HANDLER: InjectionToken<SamplingHandler> = Symbol.for('ca.tool-lifecycle.SamplingHandler');
