import { ToolCancelledError, type ToolExecutionContext } from '@ca/tool-context';
import {
  toolFailure,
  type RuntimeLogger,
  type ToolCallOptions,
  type ToolContent,
  type ToolDescriptor,
  type ToolInstance,
  type ToolResult,
} from '@ca/tool-lifecycle';
import { ErrorCode, McpError, type CallToolResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { linkCall } from './cancellation-link';
import { messageOf, type ParsedMcpServer } from './mcp-config';
import { McpServerError } from './mcp-server-error';
import type { McpSession } from './mcp-session';
import { McpToolError, type McpToolErrorCode } from './mcp-tool-error';

/** The `_meta` key of `tools/call` that carries the call's idempotency key. */
export const IDEMPOTENCY_META_KEY = 'internal.ca/idempotency-key';

/** What a tool needs from its source: the session of a plan. @internal */
export interface McpSessionProvider {
  acquire(server: string, ctx: ToolExecutionContext): Promise<void>;
  release(server: string, ctx: ToolExecutionContext): Promise<void>;
  sessionFor(server: string, planId: string): McpSession | undefined;
}

/**
 * One tool of one MCP server, as a `ToolInstance`: `activate` opens (or
 * leases) the server's session for the plan, `execute` sends `tools/call`,
 * `deactivate` releases the session.
 *
 * @internal Obtained from `McpToolSource.get`.
 */
export class McpTool implements ToolInstance<Record<string, unknown>, unknown> {
  readonly descriptor: ToolDescriptor;
  /** The tool's name on its server. */
  readonly mcpName: string;
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
  }) {
    this.descriptor = options.descriptor;
    this.mcpName = options.mcpName;
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
  async execute(input: Record<string, unknown>, ctx: ToolExecutionContext, options?: ToolCallOptions): Promise<ToolResult> {
    const toolName = this.descriptor.name;
    const planId = ctx.planId;
    const session = this.#provider.sessionFor(this.#server.name, planId);
    if (session === undefined) {
      throw new McpServerError({
        code: 'MCP_SESSION_NOT_ACTIVE',
        server: this.#server.name,
        toolName,
        planId,
        message: `Tool '${toolName}' has no session with MCP server '${this.#server.name}' in plan '${planId}': it was not activated. Run it through ToolRuntime.execute (which activates it), or call activate(ctx) first.`,
      });
    }
    if (!session.isOpen) return toolFailure(session.exitedError({ toolName, planId }));
    const link = linkCall(ctx.cancellationToken, { toolName, planId });
    const onProgress = options?.onProgress;
    const server = this.#server;
    // The SDK puts a progress token in the request when `onprogress` is given:
    // always with resetTimeoutOnProgress, so that progress can reset the timeout.
    const onprogress =
      onProgress !== undefined
        ? (progress: Progress) => this.#forwardProgress(onProgress, progress, planId)
        : server.resetTimeoutOnProgress
          ? ignoreProgress
          : undefined;
    try {
      // A call that may change something carries the execution's idempotency key, the same on every retry of the call.
      const key = this.descriptor.capability.writes ? ctx.idempotencyKey : undefined;
      const params = key === undefined ? { name: this.mcpName, arguments: input ?? {} } : { name: this.mcpName, arguments: input ?? {}, _meta: { [IDEMPOTENCY_META_KEY]: key } };
      const result = (await session.client.callTool(params, undefined, {
        signal: link.signal,
        timeout: server.callTimeoutMs,
        maxTotalTimeout: server.maxTotalTimeoutMs,
        resetTimeoutOnProgress: server.resetTimeoutOnProgress,
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
      if (!session.isOpen || (error instanceof McpError && error.code === ErrorCode.ConnectionClosed)) {
        return toolFailure(session.exitedError({ toolName, planId }));
      }
      return toolFailure(this.#callFailure(error, session, planId));
    } finally {
      link.release();
    }
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

  #callFailure(error: unknown, session: McpSession, planId: string): McpToolError {
    if (error instanceof McpError) {
      if (error.code === ErrorCode.RequestTimeout) {
        const total = isMaxTotalTimeout(error);
        return this.#error(
          'MCP_CALL_TIMEOUT',
          planId,
          total
            ? `kept reporting progress past maxTotalTimeoutMs (${this.#server.maxTotalTimeoutMs} ms) and was cancelled. Raise maxTotalTimeoutMs for this server if the tool needs longer`
            : `did not answer within callTimeoutMs (${this.#server.callTimeoutMs} ms) and was cancelled.${session.describeInvalidOutput()} Raise callTimeoutMs for this server if the tool needs longer`,
          error,
          error.code,
        );
      }
      return this.#error('MCP_REQUEST_FAILED', planId, `was refused by the server (JSON-RPC error ${error.code}): ${error.message}`, error, error.code);
    }
    if (isZodError(error)) {
      return this.#error('MCP_INVALID_RESULT', planId, `returned something that is not a valid CallToolResult: ${truncate(messageOf(error), 500)}`, error);
    }
    return this.#error('MCP_REQUEST_FAILED', planId, `could not be called: ${messageOf(error)}`, error);
  }

  #error(code: McpToolErrorCode, planId: string, what: string, cause?: unknown, rpcCode?: number): McpToolError {
    const toolName = this.descriptor.name;
    return new McpToolError({
      code,
      server: this.#server.name,
      toolName,
      mcpToolName: this.mcpName,
      planId,
      ...(cause === undefined ? {} : { cause }),
      ...(rpcCode === undefined ? {} : { rpcCode }),
      message: `Tool '${toolName}' (MCP tool '${this.mcpName}' of server '${this.#server.name}') in plan '${planId}' ${what}.`,
    });
  }
}

/** The listener given when only the progress token matters (progress resets the timeout). */
function ignoreProgress(): void {
  // Nothing to forward: no caller listens.
}

/** `extra` with `metadata: { _meta }` when the result has `_meta`. */
function withMeta<T extends object>(extra: T, result: CallToolResult): T & { metadata?: Record<string, unknown> } {
  return result._meta === undefined ? extra : { ...extra, metadata: { _meta: result._meta } };
}

function isMaxTotalTimeout(error: McpError): boolean {
  const data = error.data as { maxTotalTimeout?: unknown } | undefined;
  return typeof data === 'object' && data !== null && data.maxTotalTimeout !== undefined;
}

function isZodError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'ZodError';
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
