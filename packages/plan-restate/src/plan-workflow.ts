import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import * as restate from '@restatedev/restate-sdk';
import { CancellationToken, type BoundResource, type PlanContext, type PlanPolicy } from '@ca/tool-context';
import type { ToolRuntime } from '@ca/tool-lifecycle';
import { DurableApprovalRouter, DurableApprovals, PENDING_STATE, type DurableApprovalAnswer, type DurableApprovalRequest } from './durable-approvals';
import { RestateCallJournal, untilSettled } from './restate-call-journal';

/** What starts a durable plan: which plan function, its input, and the plan's policy and resources. */
export interface DurablePlanRequest {
  /** The name of a plan function every host registered (`plans` of `createPlanWorkflow`). */
  readonly plan: string;
  /** JSON input handed to the function. */
  readonly input?: unknown;
  readonly policy?: Partial<PlanPolicy>;
  readonly resources?: readonly BoundResource[];
  /** Shown by `list()`. */
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * A plan as code: runs in the plan `ctx` of the runtime, and must make every
 * call with a step id (`runtime.execute(name, input, ctx, { step })`) and
 * decide only from its input and the results of earlier calls — the same code
 * runs again on another host to resume it, and the journal answers the calls
 * already made. Resolves to JSON, the plan's output.
 */
export type DurablePlanFunction = (ctx: PlanContext, input: unknown, runtime: ToolRuntime, steps: DurableSteps) => Promise<unknown>;

/**
 * Journaled steps of a durable plan other than tool calls: work whose effect
 * must not happen again on a replay (a rollback of the plan's changes, a
 * message sent by the plan itself). `run(name, fn)` runs `fn` once and
 * journals its JSON result; a replay answers it from the journal. Names are
 * unique in the plan and stable across hosts (a step id, not a counter).
 */
export interface DurableSteps {
  run<T>(name: string, fn: () => Promise<T> | T): Promise<T>;
}

/** Where a durable plan is, as its hosts report it. */
export interface DurablePlanStatus {
  readonly host: string;
  readonly state: 'running' | 'waiting for approval' | 'succeeded' | 'failed' | 'cancelled';
  /** How many times it was resumed in a new attempt (its host died, or it waited and was woken). */
  readonly resumes: number;
  readonly updatedAt: string;
  readonly attempts: readonly string[];
}

/** A report a host sends about a plan it runs. */
interface StatusReport {
  readonly host: string;
  readonly attempt: string;
  readonly state: DurablePlanStatus['state'];
  readonly at: string;
}

/** Settings of {@link createPlanWorkflow}. */
export interface PlanWorkflowSettings {
  /** The runtime every plan of this host runs in: the same configuration on every host. */
  readonly runtime: ToolRuntime;
  /** The runtime's approval handler (give it as `approvalHandler` when building the runtime). */
  readonly approvals: DurableApprovalRouter;
  /** The plan functions, by name: the same on every host. */
  readonly plans: Readonly<Record<string, DurablePlanFunction>>;
  /** The workflow's name in Restate (default `plans`). */
  readonly name?: string;
  /** How this host names itself in journal entries and statuses (default `<hostname> pid <pid>`). */
  readonly host?: string;
  /** Where hosts report where each plan is (the ingress URL, e.g. `http://127.0.0.1:8080`); none: no statuses. */
  readonly ingressUrl?: string;
  /** Sends a status report (default: `fetch` to the ingress); for tests. */
  readonly report?: (planId: string, report: StatusReport) => void;
}

/** The workflow and the status object a host binds to its Restate endpoint. */
export interface PlanWorkflow {
  readonly workflow: restate.WorkflowDefinition<string, unknown>;
  readonly status: restate.VirtualObjectDefinition<string, unknown>;
  readonly name: string;
  readonly statusName: string;
}

/** The status object's name for a workflow. */
export function statusObjectName(workflowName: string): string {
  return `${workflowName}-status`;
}

/**
 * The Restate workflow of durable plans: `run` runs a plan function in a plan
 * of the runtime whose journal is Restate's (`RestateCallJournal`) and whose
 * approvals are durable promises (`DurableApprovals`); `answer` answers an
 * approval request from any host; `pending` lists the requests it waits for.
 * Cancelling the invocation (`agents plan cancel`, the admin API) cancels the
 * plan's token: the running tool sees its signal, the plan ends cancelled.
 */
export function createPlanWorkflow(settings: PlanWorkflowSettings): PlanWorkflow {
  const name = settings.name ?? 'plans';
  const statusName = statusObjectName(name);
  const host = settings.host ?? `${hostname()} pid ${process.pid}`;
  const report =
    settings.report ??
    ((planId: string, body: StatusReport) => {
      if (settings.ingressUrl === undefined) return;
      void fetch(`${settings.ingressUrl}/${statusName}/${encodeURIComponent(planId)}/report/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(5_000),
      }).catch(() => undefined);
    });

  const workflow = restate.workflow({
    name,
    handlers: {
      run: async (ctx: restate.WorkflowContext, request: DurablePlanRequest): Promise<unknown> => {
        const planId = ctx.key;
        const attempt = randomUUID();
        const say = (state: StatusReport['state']) => report(planId, { host, attempt, state, at: new Date().toISOString() });
        const plan = settings.plans[request?.plan];
        if (plan === undefined) {
          throw new restate.TerminalError(
            `No plan function '${String(request?.plan)}' is registered on this host; the hosts register: ${Object.keys(settings.plans).join(', ') || 'none'}.`,
            {
              errorCode: 400,
            },
          );
        }
        const token = new CancellationToken();
        let cancelled = false;
        const cancel = () => {
          cancelled = true;
          token.cancel(`plan '${planId}' was cancelled through Restate`);
        };
        const journal = new RestateCallJournal(ctx, attempt, host, cancel);
        const steps: DurableSteps = {
          run: <T>(stepName: string, fn: () => Promise<T> | T) =>
            untilSettled(
              ctx,
              ctx.run<T>(`plan ${stepName}`, async () => await fn()),
              cancel,
            ),
        };
        const approvals = new DurableApprovals(ctx, cancel, (waiting) => say(waiting ? 'waiting for approval' : 'running'));
        settings.approvals.attach(planId, approvals);
        say('running');
        try {
          const output = await settings.runtime.runPlan(
            {
              planId,
              journal,
              cancellationToken: token,
              registry: false,
              ...(request.policy === undefined ? {} : { policy: request.policy }),
              ...(request.resources === undefined ? {} : { resources: request.resources }),
            },
            (planCtx) => plan(planCtx, request.input, settings.runtime, steps),
          );
          if (cancelled) throw new restate.TerminalError(`plan '${planId}' was cancelled`, { errorCode: 409 });
          say('succeeded');
          return output === undefined ? null : output;
        } catch (error) {
          if (cancelled) {
            say('cancelled');
            throw new restate.TerminalError(`plan '${planId}' was cancelled`, { errorCode: 409 });
          }
          say('failed');
          // A plan function's failure is the plan's outcome: terminal, not retried by Restate.
          throw error instanceof restate.TerminalError
            ? error
            : new restate.TerminalError(error instanceof Error ? error.message : String(error), { errorCode: 500 });
        } finally {
          settings.approvals.detach(planId);
        }
      },
      answer: restate.handlers.workflow.shared(async (ctx: restate.WorkflowSharedContext, answer: DurableApprovalAnswer): Promise<{ answered: string }> => {
        const pending = (await ctx.get<DurableApprovalRequest[]>(PENDING_STATE)) ?? [];
        if (typeof answer?.requestId !== 'string' || !pending.some((request) => request.requestId === answer.requestId)) {
          throw new restate.TerminalError(
            `Plan '${ctx.key}' waits for no approval request '${String(answer?.requestId)}'${pending.length === 0 ? '' : `; it waits for ${pending.map((request) => request.requestId).join(', ')}`}.`,
            { errorCode: 404 },
          );
        }
        if (answer.decision !== 'approve' && answer.decision !== 'deny')
          throw new restate.TerminalError(`decision must be 'approve' or 'deny'.`, { errorCode: 400 });
        await ctx.promise<DurableApprovalAnswer>(answer.requestId).resolve(answer);
        return { answered: answer.requestId };
      }),
      pending: restate.handlers.workflow.shared(async (ctx: restate.WorkflowSharedContext): Promise<DurableApprovalRequest[]> => {
        return (await ctx.get<DurableApprovalRequest[]>(PENDING_STATE)) ?? [];
      }),
    },
    options: { explicitCancellation: true },
  });

  const status = restate.object({
    name: statusName,
    handlers: {
      report: async (ctx: restate.ObjectContext, body: StatusReport): Promise<void> => {
        const previous = (await ctx.get<DurablePlanStatus>('status')) ?? undefined;
        const attempts = previous?.attempts ?? [];
        const known = attempts.includes(body.attempt);
        // A report older than the one kept (sent late by a host that has since died) is not kept.
        if (previous !== undefined && body.at < previous.updatedAt && known) return;
        const next: DurablePlanStatus = {
          host: body.host,
          state: body.state,
          resumes: (previous?.resumes ?? 0) + (known || attempts.length === 0 ? 0 : 1),
          updatedAt: body.at,
          attempts: known ? attempts : [...attempts, body.attempt].slice(-20),
        };
        ctx.set('status', next);
      },
      get: restate.handlers.object.shared(
        async (ctx: restate.ObjectSharedContext): Promise<DurablePlanStatus | null> => (await ctx.get<DurablePlanStatus>('status')) ?? null,
      ),
    },
  });
  return { workflow: workflow as never, status: status as never, name, statusName };
}
