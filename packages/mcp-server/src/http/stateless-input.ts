import { createHash } from 'node:crypto';
import { canonicalJson, type ApprovalRequest, type InteractionRequest, type InteractionResponse, type InteractionValues } from '@ca/tool-lifecycle';
import { macMatches, macOf } from './fleet-keys';

/**
 * MCP 2026-07-28 has no requests from the server to the client: a question
 * (an approval asked by elicitation) travels in the answer instead. The
 * request is answered `resultType: "input_required"` with the question in
 * `inputRequests`; the client asks its person and sends the same request
 * again with the answer in `inputResponses` and the `requestState` it was
 * given. The retry may reach any replica: the state carries the answers of
 * the earlier rounds, signed with the server's key (the fleet's, or one of
 * the process), so that a client cannot slip in answers to questions it was
 * never asked — an answer counts only for the question it was asked for: the
 * same tool, definition and arguments.
 */

/** Answers one request of a client may carry, over all its rounds. */
const MAX_ANSWERS = 32;
/** The longest `requestState` taken back. */
const MAX_STATE_CHARS = 64 * 1024;

/** What a 2026-07-28 client answered before, and what it is being asked now, for one request. @internal */
export class StatelessInputs {
  /** The question of this round, when the plan asked one: the answer becomes `input_required`. */
  private asked: { readonly id: string; readonly form: Extract<InteractionRequest, { kind: 'form' }> } | undefined;

  private constructor(
    private readonly key: Buffer,
    private readonly answers: ReadonlyMap<string, InteractionResponse>,
  ) {}

  /**
   * The inputs of a request: the answers its `requestState` (when signed by
   * `key`) and `inputResponses` carry. A state that does not verify counts as
   * none: the question is asked again.
   */
  static of(key: Buffer, params: Record<string, unknown>): StatelessInputs {
    const answers = new Map<string, InteractionResponse>();
    const state = verifiedState(key, params['requestState']);
    if (state !== undefined) {
      for (const [id, answer] of Object.entries(state.answers)) if (answers.size < MAX_ANSWERS) answers.set(id, answer);
      const responses = params['inputResponses'];
      if (typeof responses === 'object' && responses !== null) {
        for (const id of state.asked) {
          const answer = responseOf((responses as Record<string, unknown>)[id]);
          if (answer !== undefined && answers.size < MAX_ANSWERS) answers.set(id, answer);
        }
      }
    }
    return new StatelessInputs(key, answers);
  }

  /** The client's answer to this approval's form, from an earlier round; else the question is kept for the answer and `undefined` returned. */
  answer(form: InteractionRequest, approval: ApprovalRequest): InteractionResponse | undefined {
    const id = questionId(approval);
    const known = this.answers.get(id);
    if (known !== undefined) return known;
    if (form.kind === 'form' && this.asked === undefined) this.asked = { id, form };
    return undefined;
  }

  /** True when the plan asked a question this round. */
  get pending(): boolean {
    return this.asked !== undefined;
  }

  /** The `input_required` result of this round (with the server's identity in `_meta`). */
  result(serverInfo: { readonly name: string; readonly version: string }): Record<string, unknown> {
    const asked = this.asked;
    if (asked === undefined) throw new Error('no question was asked');
    const state = { v: 1, answers: Object.fromEntries(this.answers), asked: [asked.id] };
    const body = Buffer.from(JSON.stringify(state), 'utf8').toString('base64url');
    return {
      resultType: 'input_required',
      inputRequests: {
        [asked.id]: { method: 'elicitation/create', params: { mode: 'form', message: asked.form.message, requestedSchema: asked.form.schema } },
      },
      requestState: `${body}.${macOf(this.key, body).toString('base64url')}`,
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: serverInfo.name, version: serverInfo.version } },
    };
  }
}

/** Whether a client's declared capabilities take form elicitation (`elicitation: {}` is form, as in 2025-06-18). */
export function asksByForm(capabilities: Record<string, unknown> | undefined): boolean {
  const elicitation = capabilities?.['elicitation'];
  if (typeof elicitation !== 'object' || elicitation === null) return false;
  const record = elicitation as Record<string, unknown>;
  return record['form'] !== undefined || record['url'] === undefined;
}

/** The key of one question: the call it approves (tool, definition, arguments). */
function questionId(approval: ApprovalRequest): string {
  let args: string;
  try {
    args = canonicalJson(approval.arguments);
  } catch {
    args = '<not JSON>';
  }
  const text = [approval.toolName, approval.fingerprint, args].map((part) => JSON.stringify(part)).join('\n');
  return `approval-${createHash('sha256').update(text, 'utf8').digest('base64url').slice(0, 32)}`;
}

function verifiedState(key: Buffer, state: unknown): { answers: Record<string, InteractionResponse>; asked: string[] } | undefined {
  if (typeof state !== 'string' || state.length > MAX_STATE_CHARS) return undefined;
  const dot = state.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const body = state.slice(0, dot);
  if (!macMatches(state.slice(dot + 1), macOf(key, body))) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { v?: unknown; answers?: unknown; asked?: unknown };
    if (parsed.v !== 1 || !Array.isArray(parsed.asked) || typeof parsed.answers !== 'object' || parsed.answers === null) return undefined;
    const answers: Record<string, InteractionResponse> = {};
    for (const [id, answer] of Object.entries(parsed.answers as Record<string, unknown>)) {
      const response = responseOf(answer);
      if (response !== undefined) answers[id] = response;
    }
    return { answers, asked: parsed.asked.filter((id): id is string => typeof id === 'string').slice(0, MAX_ANSWERS) };
  } catch {
    return undefined;
  }
}

/** A client's answer (an elicitation result) as the runtime reads it; `undefined` for anything else. */
function responseOf(value: unknown): InteractionResponse | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { action, content } = value as { action?: unknown; content?: unknown };
  if (action === 'decline' || action === 'cancel') return { action };
  if (action !== 'accept') return undefined;
  if (content === undefined) return { action: 'accept' };
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return undefined;
  return { action: 'accept', content: content as InteractionValues };
}
