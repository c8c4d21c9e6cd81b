import { messageOf } from '@ca/domain';
import type {
  InteractionHandler,
  InteractionRequest,
  InteractionResponse,
  RuntimeLogger,
  SamplingHandler,
  SamplingRequest,
  SamplingResult,
} from '@ca/tool-lifecycle';
import { ErrorCode, type CreateMessageResult, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { sanitizeText } from './sanitize-text';

/** The sampling handler with the per-plan limit the source keeps. */
export interface SamplingGate {
  readonly handler: SamplingHandler;
  /** Most sampling requests one plan may make (across the source's servers). */
  readonly maxRequestsPerPlan: number;
  /** Counts one request of `planId`; false when the plan has used its allowance. */
  take(planId: string): boolean;
}

const ACTIONS = new Set(['accept', 'decline', 'cancel']);

/**
 * What answering a server's request needs of the session it came on: the
 * server's name, whom the request belongs to (the plan and tool of the one
 * call in flight), and holding the calls' timeouts while a person answers.
 * The session passes itself; this module needs no more of it.
 */
export interface RequestingSession {
  readonly server: { readonly name: string };
  attribute(): { readonly planId?: string; readonly toolName?: string; readonly signal?: AbortSignal };
  holdTimeouts(): () => void;
}

/**
 * Answers a server's `elicitation/create` through the service's interaction
 * handler: a form, or a page to open. A request that cannot be attributed to
 * one plan (a shared session serving several plans at once, or no call in
 * flight) is declined: the handler could not tell whom to ask.
 *
 * @internal
 */
export async function answerElicitation(
  session: RequestingSession,
  handler: InteractionHandler,
  params: ElicitRequest['params'],
  signal: AbortSignal,
  logger: RuntimeLogger,
): Promise<ElicitResult> {
  const server = session.server.name;
  const { planId, toolName, signal: callSignal } = session.attribute();
  const fields = { server, ...(planId === undefined ? {} : { planId }), ...(toolName === undefined ? {} : { toolName }) };
  const during = describeOrigin(server, toolName, planId);
  const request = toInteraction(params);
  if (typeof request === 'string') {
    logger.warn(`${during} sent an elicitation that was declined: ${request}`, fields);
    return { action: 'decline' };
  }
  if (planId === undefined) {
    logger.warn(`${during} asked a person something (${request.kind}) outside any one plan's call; it was declined.`, fields);
    return { action: 'decline' };
  }
  const release = session.holdTimeouts();
  let answer: InteractionResponse;
  try {
    answer = checkAnswer(
      await handler.interact(request, {
        source: 'mcp',
        origin: server,
        planId,
        ...(toolName === undefined ? {} : { toolName }),
        signal: either(signal, callSignal),
      }),
    );
  } catch (error) {
    logger.warn(`${during}: the interaction handler failed; the elicitation counts as cancelled: ${messageOf(error)}`, fields);
    answer = { action: 'cancel' };
  } finally {
    release();
  }
  logger.info(`${during} asked a person (${request.kind}: ${sanitizeText(request.message, 200)}): ${answer.action}.`, {
    ...fields,
    interaction: request.kind,
    action: answer.action,
  });
  if (answer.action !== 'accept') return { action: answer.action };
  // An accepted form always carries its values (none, when the person filled in nothing): the SDK then adds the schema's defaults for the fields left out.
  return request.kind === 'form' ? { action: 'accept', content: { ...(answer.content ?? {}) } as ElicitResult['content'] } : { action: 'accept' };
}

/**
 * Answers a server's `sampling/createMessage` through the service's sampling
 * handler, counted against the plan's allowance. A request that cannot be
 * attributed to one plan, or that exceeds the allowance, is refused with a
 * JSON-RPC error the server sees.
 *
 * @internal
 */
export async function answerSampling(
  session: RequestingSession,
  gate: SamplingGate,
  params: Record<string, unknown> & { readonly messages: readonly unknown[]; readonly maxTokens: number },
  signal: AbortSignal,
  logger: RuntimeLogger,
): Promise<CreateMessageResult> {
  const server = session.server.name;
  const { planId, toolName, signal: callSignal } = session.attribute();
  const fields = { server, ...(planId === undefined ? {} : { planId }), ...(toolName === undefined ? {} : { toolName }) };
  const during = describeOrigin(server, toolName, planId);
  if (planId === undefined) {
    logger.warn(`${during} asked for a sampled message outside any one plan's call; it was refused.`, fields);
    throw refusal(ErrorCode.InvalidRequest, 'Sampling refused: the request cannot be attributed to one plan (it came outside a tool call).');
  }
  if (!gate.take(planId)) {
    logger.warn(`${during} asked for more than ${gate.maxRequestsPerPlan} sampled message(s) in plan '${planId}'; it was refused.`, fields);
    throw refusal(ErrorCode.InvalidRequest, `Sampling refused: the plan's limit of ${gate.maxRequestsPerPlan} sampling request(s) is reached.`);
  }
  const request = toSamplingRequest(params);
  const started = performance.now();
  const release = session.holdTimeouts();
  let result: SamplingResult;
  try {
    result = await gate.handler.createMessage(request, {
      source: 'mcp',
      origin: server,
      planId,
      ...(toolName === undefined ? {} : { toolName }),
      signal: either(signal, callSignal),
    });
  } catch (error) {
    logger.warn(`${during}: the sampling handler failed: ${messageOf(error)}`, fields);
    throw refusal(ErrorCode.InternalError, `Sampling failed: ${messageOf(error)}`);
  } finally {
    release();
  }
  if (typeof result !== 'object' || result === null || typeof result.model !== 'string' || result.content === undefined) {
    logger.warn(`${during}: the sampling handler returned no message (expected { role, content, model }).`, fields);
    throw refusal(ErrorCode.InternalError, 'Sampling failed: the client produced no message.');
  }
  const durationMs = Math.round(performance.now() - started);
  logger.info(
    `${during} sampled a message with model ${sanitizeText(result.model, 100)} (${request.messages.length} message(s) in, at most ${request.maxTokens} tokens, ${durationMs} ms).`,
    {
      ...fields,
      sampling: true,
      model: result.model,
      stopReason: result.stopReason,
      durationMs,
    },
  );
  return {
    role: 'assistant',
    content: result.content as CreateMessageResult['content'],
    model: result.model,
    ...(result.stopReason === undefined ? {} : { stopReason: result.stopReason }),
  } as CreateMessageResult;
}

/**
 * The error a request handler throws to answer the server with a JSON-RPC
 * error of `code` whose message is `message` as written: the SDK sends the
 * thrown error's `message`, and an `McpError`'s starts with "MCP error
 * <code>: ", which the server's SDK then prefixes again.
 */
function refusal(code: ErrorCode, message: string): Error & { readonly code: number } {
  return Object.assign(new Error(message), { code });
}

/** Aborts when the server withdraws its request or the call it belongs to is cancelled. */
function either(request: AbortSignal, call: AbortSignal | undefined): AbortSignal {
  return call === undefined ? request : AbortSignal.any([request, call]);
}

function toInteraction(params: ElicitRequest['params']): InteractionRequest | string {
  const message = typeof params.message === 'string' ? params.message : '';
  if (params.mode === 'url') {
    let url: URL;
    try {
      url = new URL(params.url);
    } catch {
      return `its URL ${JSON.stringify(sanitizeText(String(params.url), 200))} is not a URL.`;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return `its URL uses the scheme ${url.protocol}, not http: or https:.`;
    return { kind: 'url', message, url: url.href, purpose: 'elicitation', id: params.elicitationId };
  }
  return { kind: 'form', message, schema: (params.requestedSchema ?? { type: 'object', properties: {} }) as Record<string, unknown> };
}

function checkAnswer(answer: unknown): InteractionResponse {
  const action = (answer as { action?: unknown } | null)?.action;
  if (typeof action !== 'string' || !ACTIONS.has(action))
    throw new TypeError(`expected { action: 'accept' | 'decline' | 'cancel' }, got ${JSON.stringify(answer)}`);
  return answer as InteractionResponse;
}

function toSamplingRequest(params: Record<string, unknown> & { readonly messages: readonly unknown[]; readonly maxTokens: number }): SamplingRequest {
  const optional = <K extends keyof SamplingRequest>(key: K): Partial<SamplingRequest> => (params[key] === undefined ? {} : { [key]: params[key] });
  return {
    messages: params.messages as SamplingRequest['messages'],
    maxTokens: params.maxTokens,
    ...optional('systemPrompt'),
    ...optional('temperature'),
    ...optional('stopSequences'),
    ...optional('modelPreferences'),
    ...optional('metadata'),
  };
}

function describeOrigin(server: string, toolName: string | undefined, planId: string | undefined): string {
  return `MCP server '${server}'${toolName === undefined ? '' : ` (tool '${toolName}'`}${planId === undefined ? (toolName === undefined ? '' : ')') : `${toolName === undefined ? ' (' : ', '}plan '${planId}')`}`;
}
