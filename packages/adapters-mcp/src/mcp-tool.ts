import { messageOf } from '@ca/domain';
import { ToolCancelledError, type ToolExecutionContext } from '@ca/tool-context';
import {
  toolFailure,
  type InteractionHandler,
  type RuntimeLogger,
  type ToolCallOptions,
  type ToolContent,
  type ToolDescriptor,
  type ToolInstance,
  type ToolResult,
} from '@ca/tool-lifecycle';
import { ErrorCode, McpError, type CallToolResult, type Progress, type Task } from '@modelcontextprotocol/sdk/types.js';
import { linkCall, linkToken } from './cancellation-link';
import { type ParsedMcpServer } from './mcp-config';
import { McpServerError } from './mcp-server-error';
import { authFailure, type InFlightCall, type McpSession } from './mcp-session';
import { McpToolError, type McpToolErrorCode } from './mcp-tool-error';
import { sanitizeText } from './sanitize-text';
import { callToolAsTask, TaskCancelledByServerError } from './task-call';

/** The `_meta` key of `tools/call` that carries the call's idempotency key. */
export const IDEMPOTENCY_META_KEY = 'internal.ca/idempotency-key';

/** What a tool needs from its source: the session of a plan, and who to ask. @internal */
export interface McpSessionProvider {
  acquire(server: string, ctx: ToolExecutionContext): Promise<void>;
  release(server: string, ctx: ToolExecutionContext): Promise<void>;
  sessionFor(server: string, planId: string): McpSession | undefined;
  /** A live session for a plan whose session with a shared server ended (undefined: none, or scope `plan`). */
  replacementFor(server: string, planId: string): Promise<McpSession | undefined>;
  /** The service's interaction handler, for a server that asks a person to open a page before a call (URL elicitation). */
  readonly interactionHandler: InteractionHandler | undefined;
}

/**
 * One tool of one MCP server, as a `ToolInstance`: `activate` opens (or
 * leases) the server's session for the plan, `execute` sends `tools/call`
 * (as a task when the tool asks for one), `deactivate` releases the session.
 *
 * @internal Obtained from `McpToolSource.get`.
 */
export class McpTool implements ToolInstance<Record<string, unknown>, unknown> {
  readonly descriptor: ToolDescriptor;
  /** The tool's name on its server. */
  readonly mcpName: string;
  /** True when the tool runs as an MCP task (`execution.taskSupport` required, or optional on a server that runs tasks). */
  readonly runsAsTask: boolean;
  readonly #server: ParsedMcpServer;
  readonly #provider: McpSessionProvider;
  readonly #logger: RuntimeLogger;
  readonly #hasOutputSchema: boolean;

  constructor(options: {
    readonly descriptor: ToolDescriptor;
    readonly mcpName: string;
    readonly server: ParsedMcpServer;
    readonly provider: McpSessionProvider;
    readonly logger: RuntimeLogger;
    readonly runsAsTask?: boolean;
  }) {
    this.descriptor = options.descriptor;
    this.mcpName = options.mcpName;
    this.runsAsTask = options.runsAsTask === true;
    this.#server = options.server;
    this.#provider = options.provider;
    this.#logger = options.logger;
    this.#hasOutputSchema = options.descriptor.outputSchema !== undefined;
  }

  /** Opens the server's session for the plan (scope `plan`) or leases the shared one. */
  activate(ctx: ToolExecutionContext): Promise<void> {
    return this.#provider.acquire(this.#server.name, ctx);
  }

  /** Releases the session: the last tool of a plan closes a plan-scoped session. */
  deactivate(ctx: ToolExecutionContext): Promise<void> {
    return this.#provider.release(this.#server.name, ctx);
  }

  /**
   * Calls the tool with the plan's cancellation, the server's timeouts and
   * progress. Every answer of the server (an error included) is a result;
   * only cancellation and a missing activation throw.
   */
  execute(input: Record<string, unknown>, ctx: ToolExecutionContext, options?: ToolCallOptions): Promise<ToolResult> {
    return this.#execute(input, ctx, options, false);
  }

  async #execute(input: Record<string, unknown>, ctx: ToolExecutionContext, options: ToolCallOptions | undefined, afterPages: boolean): Promise<ToolResult> {
    const toolName = this.descriptor.name;
    const planId = ctx.planId;
    let session = this.#provider.sessionFor(this.#server.name, planId);
    if (session === undefined) throw notActivated(this.#server.name, toolName, planId);
    if (!session.isOpen) {
      // A shared server's session ended: the plan goes on with another session of the pool.
      const next = this.#server.scope === 'shared' ? await this.#provider.replacementFor(this.#server.name, planId) : undefined;
      if (next === undefined) return toolFailure(session.exitedError({ toolName, planId }));
      session = next;
    }
    if (this.runsAsTask) return this.#executeAsTask(session, input, ctx, options);
    const link = linkCall(ctx.cancellationToken, { toolName, planId });
    const onProgress = options?.onProgress;
    const server = this.#server;
    // The SDK puts a progress token in the request when `onprogress` is given:
    // for a caller that listens, or for every call when the configuration asks
    // progress to reset the timeout. A call nobody listens to carries none.
    const onprogress =
      onProgress !== undefined
        ? (progress: Progress) => this.#forwardProgress(onProgress, progress, planId)
        : server.resetTimeoutOnProgress === true
          ? ignoreProgress
          : undefined;
    // Only a session whose server may ask something of the call needs to know which calls run.
    const call: InFlightCall | undefined = session.tracksCalls ? { planId, toolName, signal: ctx.signal } : undefined;
    if (call !== undefined) session.inFlight.push(call);
    try {
      const result = (await session.client.callTool(this.#params(input, ctx), undefined, {
        signal: link.signal,
        timeout: server.callTimeoutMs,
        maxTotalTimeout: server.maxTotalTimeoutMs,
        resetTimeoutOnProgress: server.resetTimeoutOnProgress !== false,
        onprogress,
      })) as CallToolResult;
      return this.#toResult(result, planId);
    } catch (error) {
      if (link.signal.aborted) {
        const reason = link.signal.reason;
        throw ToolCancelledError.isInstance(reason) ? reason : new ToolCancelledError({ toolName, planId, cause: error });
      }
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout && isMaxTotalTimeout(error)) {
        // The SDK sends notifications/cancelled on a plain timeout but not on this one; aborting makes it send one.
        link.abort(error);
      }
      if (isUrlElicitationRequired(error)) return this.#afterUrlElicitation(error, input, ctx, options, afterPages);
      // A request that got no answer over HTTP: the server may be gone; the transport finds out soon.
      if (await session.lostAfterNetworkFailure(error)) return toolFailure(session.exitedError({ toolName, planId }));
      return toolFailure(this.#callFailure(error, session, planId));
    } finally {
      if (call !== undefined) forget(session.inFlight, call);
      link.release();
    }
  }

  /** The `tools/call` parameters: a call that may change something carries the execution's idempotency key, the same on every retry of the call. */
  #params(input: Record<string, unknown>, ctx: ToolExecutionContext): { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> } {
    const key = this.descriptor.capability.writes ? ctx.idempotencyKey : undefined;
    return key === undefined
      ? { name: this.mcpName, arguments: input ?? {} }
      : { name: this.mcpName, arguments: input ?? {}, _meta: { [IDEMPOTENCY_META_KEY]: key } };
  }

  /** A task-based call: created, polled, its result fetched; cancelled on the server when the plan gives up. */
  async #executeAsTask(
    session: McpSession,
    input: Record<string, unknown>,
    ctx: ToolExecutionContext,
    options: ToolCallOptions | undefined,
  ): Promise<ToolResult> {
    const toolName = this.descriptor.name;
    const planId = ctx.planId;
    const link = linkToken(ctx.cancellationToken, { toolName, planId });
    const onProgress = options?.onProgress;
    let step = 0;
    const call: InFlightCall = { planId, toolName, signal: ctx.signal };
    session.inFlight.push(call);
    try {
      const result = await callToolAsTask(session.client, this.#params(input, ctx), {
        signal: link.signal,
        callTimeoutMs: this.#server.callTimeoutMs,
        maxTotalTimeoutMs: this.#server.maxTotalTimeoutMs,
        onStatus: (task: Task) => {
          step++;
          this.#logger.debug(`Tool '${toolName}' in plan '${planId}': task ${task.taskId} is ${task.status}.`, { toolName, planId, taskId: task.taskId });
          if (onProgress !== undefined) {
            const message = task.statusMessage === undefined ? task.status : `${task.status}: ${task.statusMessage}`;
            this.#forwardProgress(onProgress, { progress: step, message }, planId);
          }
        },
      });
      return this.#toResult(result, planId);
    } catch (error) {
      if (link.signal.aborted) {
        const reason = link.signal.reason;
        throw ToolCancelledError.isInstance(reason) ? reason : new ToolCancelledError({ toolName, planId, cause: error });
      }
      if (error instanceof TaskCancelledByServerError) return toolFailure(this.#error('MCP_TOOL_ERROR', planId, `ran as a task that ${error.message}`, error));
      if (await session.lostAfterNetworkFailure(error)) return toolFailure(session.exitedError({ toolName, planId }));
      return toolFailure(this.#callFailure(error, session, planId));
    } finally {
      forget(session.inFlight, call);
      link.release();
    }
  }

  /**
   * The server refused the call until a person opens one or more pages (URL
   * elicitation, error -32042): asks through the interaction handler, and
   * calls once more when every page was accepted.
   */
  async #afterUrlElicitation(
    error: McpError,
    input: Record<string, unknown>,
    ctx: ToolExecutionContext,
    options: ToolCallOptions | undefined,
    afterPages: boolean,
  ): Promise<ToolResult> {
    const planId = ctx.planId;
    const toolName = this.descriptor.name;
    const handler = this.#provider.interactionHandler;
    const pages = ((error.data as { elicitations?: unknown } | undefined)?.elicitations ?? []) as readonly {
      url?: unknown;
      message?: unknown;
      elicitationId?: unknown;
    }[];
    const refuse = (why: string): ToolResult =>
      toolFailure(
        this.#error(
          'MCP_URL_ELICITATION_REQUIRED',
          planId,
          `needs a person to open ${pages.length === 1 ? 'a page' : `${pages.length} pages`} first, and ${why}`,
          error,
          error.code,
        ),
      );
    if (afterPages) return refuse('it asked again after the person opened the pages it named');
    if (handler === undefined) return refuse('no interaction handler was given to ask one');
    for (const page of pages) {
      const url = httpUrl(page.url);
      if (url === undefined) return refuse(`the server sent a page that is not an http(s) URL: ${sanitizeText(String(page.url), 200)}`);
      let action: string;
      try {
        const answer = await handler.interact(
          {
            kind: 'url',
            purpose: 'elicitation',
            url,
            message: typeof page.message === 'string' ? page.message : '',
            ...(typeof page.elicitationId === 'string' ? { id: page.elicitationId } : {}),
          },
          { source: 'mcp', origin: this.#server.name, planId, toolName, signal: ctx.signal },
        );
        action = answer?.action;
      } catch (cause) {
        if (ctx.cancellationToken.isCancelled) throw new ToolCancelledError({ toolName, planId, cause, reason: ctx.cancellationToken.reason ?? 'cancelled' });
        this.#logger.warn(`The interaction handler failed for tool '${toolName}' in plan '${planId}': ${messageOf(cause)}`, { toolName, planId });
        action = 'cancel';
      }
      this.#logger.info(
        `MCP server '${this.#server.name}' (tool '${toolName}', plan '${planId}') asked a person to open ${sanitizeText(url, 300)}: ${action}.`,
        { server: this.#server.name, toolName, planId, interaction: 'url', action },
      );
      if (action !== 'accept') return refuse(`the person ${action === 'cancel' ? 'cancelled' : 'declined'}`);
    }
    return this.#execute(input, ctx, options, true);
  }

  #forwardProgress(onProgress: NonNullable<ToolCallOptions['onProgress']>, progress: Progress, planId: string): void {
    try {
      onProgress({
        progress: progress.progress,
        ...(progress.total === undefined ? {} : { total: progress.total }),
        ...(progress.message === undefined ? {} : { message: progress.message }),
      });
    } catch (error) {
      const toolName = this.descriptor.name;
      this.#logger.warn(`The progress listener of tool '${toolName}' in plan '${planId}' threw: ${messageOf(error)}`, { toolName, planId });
    }
  }

  #toResult(result: CallToolResult, planId: string): ToolResult {
    const content = (Array.isArray(result.content) ? result.content : []) as unknown as ToolContent[];
    const structured = result.structuredContent;
    if (result.isError === true) {
      const text = textOf(content);
      return toolFailure(
        this.#error('MCP_TOOL_ERROR', planId, `reported an error: ${text.length > 0 ? truncate(text, 500) : '(no text content)'}`),
        withMeta({ content, output: structured ?? text }, result),
      );
    }
    if (structured === undefined && this.#hasOutputSchema) {
      return toolFailure(
        this.#error(
          'MCP_STRUCTURED_CONTENT_MISSING',
          planId,
          'declares an outputSchema but returned no structuredContent, as the MCP specification requires. Fix the server, or exclude the tool',
        ),
        withMeta({ content, output: textOf(content) }, result),
      );
    }
    // Built as one literal (no spread): this runs on every call.
    const success: { ok: true; output: unknown; content: ToolContent[]; metadata?: Record<string, unknown> } = {
      ok: true,
      output: structured ?? textOf(content),
      content,
    };
    if (result._meta !== undefined) success.metadata = { _meta: result._meta };
    return success;
  }

  #callFailure(error: unknown, session: McpSession, planId: string): McpToolError | McpServerError {
    const toolName = this.descriptor.name;
    if (!session.isOpen || (error instanceof McpError && error.code === ErrorCode.ConnectionClosed)) return session.exitedError({ toolName, planId });
    const auth = authFailure(this.#server, error, undefined, { toolName, planId });
    if (auth !== undefined) return auth;
    return callFailure(error, {
      server: this.#server,
      toolName,
      mcpToolName: this.mcpName,
      planId,
      describeInvalidOutput: () => session.describeInvalidOutput(),
    });
  }

  #error(code: McpToolErrorCode, planId: string, what: string, cause?: unknown, rpcCode?: number): McpToolError {
    return toolError({ server: this.#server, toolName: this.descriptor.name, mcpToolName: this.mcpName, planId }, code, what, cause, rpcCode);
  }
}

/** Who an error of a call is about. @internal */
export interface CallSubject {
  readonly server: ParsedMcpServer;
  readonly toolName: string;
  /** The tool's name on the server, or the MCP method for an operation (`resources/read`). */
  readonly mcpToolName: string;
  readonly planId: string;
  readonly describeInvalidOutput?: () => string;
}

/** `McpToolError` about `subject`, with the standard wording. @internal */
export function toolError(subject: CallSubject, code: McpToolErrorCode, what: string, cause?: unknown, rpcCode?: number): McpToolError {
  const { server, toolName, mcpToolName, planId } = subject;
  return new McpToolError({
    code,
    server: server.name,
    toolName,
    mcpToolName,
    planId,
    ...(cause === undefined ? {} : { cause }),
    ...(rpcCode === undefined ? {} : { rpcCode }),
    message: `Tool '${toolName}' (MCP ${mcpToolName.includes('/') ? 'method' : 'tool'} '${mcpToolName}' of server '${server.name}') in plan '${planId}' ${what}${what.endsWith('.') ? '' : '.'}`,
  });
}

/**
 * The server's own text of a JSON-RPC error. The SDK's `McpError` prefixes
 * "MCP error <code>: " to the message it is given, and an SDK server sends
 * its errors' messages with that prefix already: without this, a refusal
 * reads "MCP error -32602: MCP error -32602: Resource … not found".
 *
 * @internal
 */
export function rpcMessageOf(error: McpError): string {
  return error.message.replace(/^(?:MCP error -?\d+: )+/, '');
}

/** The coded failure of a request that did not get an answer it could use. @internal */
export function callFailure(error: unknown, subject: CallSubject): McpToolError {
  const { server } = subject;
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) {
      const total = isMaxTotalTimeout(error);
      return toolError(
        subject,
        'MCP_CALL_TIMEOUT',
        total
          ? `kept running past maxTotalTimeoutMs (${server.maxTotalTimeoutMs} ms) and was cancelled. Raise maxTotalTimeoutMs for this server if the tool needs longer`
          : `did not answer within callTimeoutMs (${server.callTimeoutMs} ms) and was cancelled.${subject.describeInvalidOutput?.() ?? ''} Raise callTimeoutMs for this server if the tool needs longer`,
        error,
        error.code,
      );
    }
    return toolError(subject, 'MCP_REQUEST_FAILED', `was refused by the server (JSON-RPC error ${error.code}): ${rpcMessageOf(error)}`, error, error.code);
  }
  const issues = zodIssuesOf(error);
  if (issues !== undefined) {
    const what = subject.mcpToolName.includes('/') ? 'result' : 'CallToolResult';
    return toolError(subject, 'MCP_INVALID_RESULT', `returned something that is not a valid ${what}: ${truncate(issues, 500)}. Fix the server`, error);
  }
  return toolError(subject, 'MCP_REQUEST_FAILED', `could not be called: ${messageOf(error)}`, error);
}

/** `MCP_SESSION_NOT_ACTIVE` for a tool executed without activation. @internal */
export function notActivated(server: string, toolName: string, planId: string): McpServerError {
  return new McpServerError({
    code: 'MCP_SESSION_NOT_ACTIVE',
    server,
    toolName,
    planId,
    message: `Tool '${toolName}' has no session with MCP server '${server}' in plan '${planId}': it was not activated. Run it through ToolRuntime.execute (which activates it), or call activate(ctx) first.`,
  });
}

/** Removes `call` from the calls in flight. @internal */
export function forget(inFlight: InFlightCall[], call: InFlightCall): void {
  const index = inFlight.indexOf(call);
  if (index >= 0) inFlight.splice(index, 1);
}

/** The listener given when only the progress token matters (progress resets the timeout). */
function ignoreProgress(): void {
  // Nothing to forward: no caller listens.
}

/** The normalised `http:`/`https:` URL in `value`, or undefined. */
function httpUrl(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** Error -32042 naming the pages to open; without them it is an ordinary refusal. */
function isUrlElicitationRequired(error: unknown): error is McpError {
  if (!(error instanceof McpError) || error.code !== ErrorCode.UrlElicitationRequired) return false;
  const pages = (error.data as { elicitations?: unknown } | undefined)?.elicitations;
  return Array.isArray(pages) && pages.length > 0;
}

/** `extra` with `metadata: { _meta }` when the result has `_meta`. */
function withMeta<T extends object>(extra: T, result: CallToolResult): T & { metadata?: Record<string, unknown> } {
  return result._meta === undefined ? extra : { ...extra, metadata: { _meta: result._meta } };
}

function isMaxTotalTimeout(error: McpError): boolean {
  const data = error.data as { maxTotalTimeout?: unknown } | undefined;
  return typeof data === 'object' && data !== null && data.maxTotalTimeout !== undefined;
}

/**
 * The issues of the error the SDK rejects with when an answer does not parse
 * as a result, as `path: message` lines; undefined for any other error. The
 * SDK parses with zod's core (`$ZodError`) or classic API (`ZodError`),
 * depending on its version, so both names count.
 */
function zodIssuesOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { name, issues } = error as { name?: unknown; issues?: unknown };
  if ((name !== 'ZodError' && name !== '$ZodError') || !Array.isArray(issues)) return undefined;
  return issues
    .map((issue: { path?: unknown; message?: unknown }) => {
      const path = Array.isArray(issue?.path) && issue.path.length > 0 ? issue.path.map(String).join('.') : '(the result)';
      return `${path}: ${typeof issue?.message === 'string' ? issue.message : 'invalid'}`;
    })
    .join('; ');
}

/** The text of the `text` blocks, joined by newlines. */
function textOf(content: readonly ToolContent[]): string {
  let text = '';
  for (const block of content) {
    if (block.type === 'text' && typeof block['text'] === 'string') text = text.length === 0 ? block['text'] : `${text}\n${block['text']}`;
  }
  return text;
}

function truncate(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length)}…` : text;
}
