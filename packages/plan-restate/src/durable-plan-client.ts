import type { DurableApprovalAnswer, DurableApprovalRequest } from './durable-approvals';
import type { JournalValueCodec } from '@restatedev/restate-sdk';
import { DurablePlanError } from './durable-plan-error';
import { createJournalCodec } from './journal-codec';
import { statusObjectName, type DurablePlanRequest, type DurablePlanStatus } from './plan-workflow';

/** Settings of a {@link DurablePlanClient}. */
export interface DurablePlanClientSettings {
  /** Restate's ingress, e.g. `http://127.0.0.1:8080`. */
  readonly ingressUrl: string;
  /** Restate's admin API, e.g. `http://127.0.0.1:9070`. */
  readonly adminUrl: string;
  /** The workflow's name (default `plans`). */
  readonly workflow?: string;
  /** How long one request may take, in ms (default 10,000). */
  readonly timeoutMs?: number;
  /**
   * The hosts' `journalKey`, when they encrypt what they write to Restate:
   * the plan's output, its pending requests and its status then come back as
   * ciphertext, which the client decrypts with it.
   */
  readonly journalKey?: string | Uint8Array;
}

/** A durable plan as `list()` shows it. */
export interface DurablePlanSummary {
  readonly planId: string;
  readonly invocationId: string;
  /** Restate's status of the run: `running`, `suspended`, `backing-off`, `completed`, … */
  readonly invocation: string;
  readonly createdAt: string;
  /** What the plan's hosts reported (host, running / waiting for approval / …, resumed N times), when they report. */
  readonly status?: DurablePlanStatus;
  /** The approval requests it waits for. */
  readonly pending: readonly DurableApprovalRequest[];
}

const PLAN_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Starts, answers, cancels and lists durable plans from any host that reaches
 * Restate: what `agents plan run --durable`, `agents plan approve|cancel|list`
 * and a service's own code use.
 */
export class DurablePlanClient {
  private readonly workflow: string;
  private readonly timeoutMs: number;
  private readonly codec: JournalValueCodec | undefined;

  constructor(private readonly settings: DurablePlanClientSettings) {
    for (const field of ['ingressUrl', 'adminUrl'] as const) {
      if (typeof settings?.[field] !== 'string' || !/^https?:\/\//.test(settings[field])) {
        throw new DurablePlanError({ code: 'DURABLE_PLAN_INVALID_ARGUMENT', message: `${field} must be an http(s) URL; got ${String(settings?.[field])}.` });
      }
    }
    this.workflow = settings.workflow ?? 'plans';
    this.timeoutMs = settings.timeoutMs ?? 10_000;
    this.codec = settings.journalKey === undefined ? undefined : createJournalCodec(settings.journalKey);
  }

  /** A handler's response as text, decrypted when the hosts encrypt (values they did not encrypt pass as they are). */
  private async textOf(response: Response): Promise<string> {
    if (this.codec === undefined) return response.text();
    const bytes = new Uint8Array(await response.arrayBuffer());
    try {
      return Buffer.from(await this.codec.decode(bytes)).toString('utf8');
    } catch (error) {
      throw new DurablePlanError({
        code: 'DURABLE_PLAN_FAILED',
        message: `A value from Restate could not be decrypted with the journalKey given: ${error instanceof Error ? error.message : String(error)}.`,
        advice: "Give the client the same journalKey as the hosts (the configuration's durable.journalKey).",
        cause: error,
      });
    }
  }

  /** Registers a host's (or the forwarder's) URL with Restate; registering the same URL again is harmless. */
  async register(uri: string): Promise<void> {
    await this.request(`${this.settings.adminUrl}/deployments`, { method: 'POST', body: { uri, force: true } }, 'register hosts');
  }

  /**
   * Starts a plan; resolves once Restate has it (not when it ends).
   * @throws DurablePlanError `DURABLE_PLAN_DUPLICATE` when a plan with this id exists (running or done).
   */
  async start(planId: string, request: DurablePlanRequest): Promise<{ readonly invocationId: string }> {
    checkPlanId(planId);
    const response = await this.request(
      `${this.settings.ingressUrl}/${this.workflow}/${encodeURIComponent(planId)}/run/send`,
      { method: 'POST', body: request, encrypt: true },
      'start plans',
    );
    const body = (await response.json()) as { invocationId?: string; status?: string };
    if (body.status === 'PreviouslyAccepted') {
      throw new DurablePlanError({
        code: 'DURABLE_PLAN_DUPLICATE',
        planId,
        message: `A durable plan with id '${planId}' exists already.`,
        advice: 'Give the plan another id, or wait for its output.',
      });
    }
    return { invocationId: String(body.invocationId) };
  }

  /** The plan's output, once it has ended (waits for it, at most `timeoutMs` or until `signal`). */
  async output(planId: string, options: { readonly timeoutMs?: number; readonly signal?: AbortSignal } = {}): Promise<unknown> {
    checkPlanId(planId);
    const response = await this.request(
      `${this.settings.ingressUrl}/restate/workflow/${this.workflow}/${encodeURIComponent(planId)}/attach`,
      { method: 'GET', timeoutMs: options.timeoutMs ?? 3_600_000, ...(options.signal === undefined ? {} : { signal: options.signal }), allowFailure: true },
      'wait for plans',
    );
    const text = response.ok ? await this.textOf(response) : await response.text();
    if (!response.ok) {
      throw new DurablePlanError({
        code: response.status === 404 ? 'DURABLE_PLAN_NOT_FOUND' : 'DURABLE_PLAN_FAILED',
        planId,
        message: `Plan '${planId}' ended without an output: ${messageOf(text)}.`,
      });
    }
    return text === '' ? null : JSON.parse(text);
  }

  /** The approval requests the plan waits for. */
  async pending(planId: string): Promise<DurableApprovalRequest[]> {
    checkPlanId(planId);
    const response = await this.request(
      `${this.settings.ingressUrl}/${this.workflow}/${encodeURIComponent(planId)}/pending`,
      { method: 'POST', body: null },
      'read plans',
    );
    return JSON.parse(await this.textOf(response)) as DurableApprovalRequest[];
  }

  /**
   * Answers an approval request of the plan (the only one it waits for, when no id is given).
   * @throws DurablePlanError `DURABLE_PLAN_APPROVAL_NOT_FOUND` when it waits for no such request.
   */
  async answer(planId: string, answer: Omit<DurableApprovalAnswer, 'requestId'> & { readonly requestId?: string }): Promise<string> {
    let requestId = answer.requestId;
    if (requestId === undefined) {
      const pending = await this.pending(planId);
      if (pending.length !== 1) {
        throw new DurablePlanError({
          code: 'DURABLE_PLAN_APPROVAL_NOT_FOUND',
          planId,
          message:
            pending.length === 0
              ? `Plan '${planId}' waits for no approval request.`
              : `Plan '${planId}' waits for ${pending.length} approval requests; name one: ${pending.map((request) => request.requestId).join(', ')}.`,
        });
      }
      requestId = (pending[0] as DurableApprovalRequest).requestId;
    }
    const response = await this.request(
      `${this.settings.ingressUrl}/${this.workflow}/${encodeURIComponent(planId)}/answer`,
      { method: 'POST', body: { ...answer, requestId }, allowFailure: true, encrypt: true },
      'answer plans',
    );
    if (!response.ok) {
      const text = await response.text();
      throw new DurablePlanError({ code: 'DURABLE_PLAN_APPROVAL_NOT_FOUND', planId, message: messageOf(text) });
    }
    return requestId;
  }

  /**
   * Cancels a running plan: Restate cancels its invocation, the plan's token is cancelled on the host that runs it,
   * and the running tool sees its signal.
   * @throws DurablePlanError `DURABLE_PLAN_NOT_FOUND` when no running plan has the id.
   */
  async cancel(planId: string): Promise<void> {
    checkPlanId(planId);
    const running = (await this.invocations()).find((entry) => entry.planId === planId && entry.invocation !== 'completed');
    if (running === undefined) throw new DurablePlanError({ code: 'DURABLE_PLAN_NOT_FOUND', planId, message: `No running durable plan has id '${planId}'.` });
    await this.request(`${this.settings.adminUrl}/invocations/${encodeURIComponent(running.invocationId)}/cancel`, { method: 'PATCH' }, 'cancel plans');
  }

  /** Where a plan is, as its hosts reported it (undefined when no host reported). */
  async status(planId: string): Promise<DurablePlanStatus | undefined> {
    checkPlanId(planId);
    const response = await this.request(
      `${this.settings.ingressUrl}/${statusObjectName(this.workflow)}/${encodeURIComponent(planId)}/get`,
      { method: 'POST', body: null },
      'read plans',
    );
    const text = await this.textOf(response);
    const status = (text === '' ? null : JSON.parse(text)) as DurablePlanStatus | null;
    return status ?? undefined;
  }

  /** The durable plans Restate knows, newest first, with their host, state and requests; `all` includes the ended ones. */
  async list(options: { readonly all?: boolean } = {}): Promise<DurablePlanSummary[]> {
    const invocations = (await this.invocations()).filter((entry) => options.all === true || entry.invocation !== 'completed');
    return Promise.all(
      invocations.map(async (entry) => {
        const running = entry.invocation !== 'completed';
        const [status, pending] = await Promise.all([
          this.status(entry.planId).catch(() => undefined),
          running ? this.pending(entry.planId).catch(() => []) : [],
        ]);
        return { ...entry, ...(status === undefined ? {} : { status }), pending };
      }),
    );
  }

  private async invocations(): Promise<Omit<DurablePlanSummary, 'status' | 'pending'>[]> {
    const query = `SELECT id, target_service_key, status, created_at FROM sys_invocation WHERE target_service_name = '${this.workflow.replace(/'/g, "''")}' AND target_handler_name = 'run' ORDER BY created_at DESC`;
    const response = await this.request(`${this.settings.adminUrl}/query`, { method: 'POST', body: { query } }, 'list plans');
    const body = (await response.json()) as { rows?: { id: string; target_service_key: string; status: string; created_at: string }[] };
    return (body.rows ?? []).map((row) => ({
      planId: row.target_service_key,
      invocationId: row.id,
      invocation: row.status,
      createdAt: String(row.created_at),
    }));
  }

  private async request(
    url: string,
    init: { method: string; body?: unknown; timeoutMs?: number; signal?: AbortSignal; allowFailure?: boolean; encrypt?: boolean },
    what: string,
  ): Promise<Response> {
    const signals = [AbortSignal.timeout(init.timeoutMs ?? this.timeoutMs), ...(init.signal === undefined ? [] : [init.signal])];
    let response: Response;
    // A handler's input (the plan's request, an answer) is encrypted as the hosts encrypt what they write: Restate keeps ciphertext.
    const json = init.body === undefined ? undefined : JSON.stringify(init.body);
    const body = json !== undefined && init.encrypt === true && this.codec !== undefined ? Buffer.from(this.codec.encode(Buffer.from(json, 'utf8'))) : json;
    try {
      response = await fetch(url, {
        method: init.method,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        ...(body === undefined ? {} : { body }),
        signal: AbortSignal.any(signals),
      });
    } catch (error) {
      throw new DurablePlanError({
        code: 'DURABLE_PLAN_UNAVAILABLE',
        message: `Restate could not be reached to ${what} (${new URL(url).origin}): ${error instanceof Error ? error.message : String(error)}.`,
        advice: 'Check that restate-server runs and that its ingress and admin URLs are right.',
        cause: error,
      });
    }
    if (!response.ok && init.allowFailure !== true) {
      const text = await response.text().catch(() => '');
      throw new DurablePlanError({
        code: response.status === 404 ? 'DURABLE_PLAN_NOT_FOUND' : 'DURABLE_PLAN_FAILED',
        message: `Restate refused to ${what}: HTTP ${response.status} ${messageOf(text)}.`,
      });
    }
    return response;
  }
}

function checkPlanId(planId: string): void {
  if (typeof planId !== 'string' || !PLAN_ID.test(planId)) {
    throw new DurablePlanError({
      code: 'DURABLE_PLAN_INVALID_ARGUMENT',
      message: `A plan id must be 1–128 letters, digits, '_', '.', ':' or '-'; got ${JSON.stringify(String(planId)).slice(0, 140)}.`,
    });
  }
}

/** The message of a Restate error body (`{ "message": … }`), else the text, one line, capped. */
function messageOf(text: string): string {
  let message = text;
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed?.message === 'string') message = parsed.message;
  } catch {
    // not JSON
  }
  // eslint-disable-next-line no-control-regex
  return message.replace(/[\u0000-\u001f]+/g, ' ').slice(0, 500);
}
