import type { ApprovalDecision, ApprovalRequest } from '@ca/tool-lifecycle';

/** What `agents plan approve` and `agents plan deny` send to a running plan (JSON, one line). */
export interface ApprovalAnswer {
  readonly decision: 'approve' | 'deny';
  /** The request answered; may be left out when exactly one is pending. */
  readonly requestId?: string;
  /** For approve: `once` (default), `tool` or `call`. */
  readonly scope?: 'once' | 'tool' | 'call';
  /** For deny: why. */
  readonly reason?: string;
  /** Who answered (the user name of the answering process). */
  readonly by?: string;
}

interface Waiting {
  readonly request: ApprovalRequest;
  readonly answer: (decision: ApprovalDecision) => void;
}

/** Longest reason kept from an answer. */
const LONGEST_REASON = 500;

/**
 * Approval requests of a running plan that another terminal may answer,
 * through the plan's channel (`agents plan approve <plan-id> [<request-id>]`,
 * `agents plan deny …`). A request is answerable from when it is asked until
 * it is answered (here or at the terminal) or withdrawn.
 */
export class RemoteApprovals {
  private readonly waiting = new Map<string, Waiting>();

  /** Waits for an answer to `request` from another terminal; `undefined` when `signal` aborts first. */
  wait(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const done = (decision: ApprovalDecision | undefined): void => {
        this.waiting.delete(request.id);
        signal.removeEventListener('abort', onAbort);
        resolve(decision);
      };
      const onAbort = (): void => done(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.set(request.id, { request, answer: done });
    });
  }

  /** The requests waiting, oldest first. */
  pending(): readonly ApprovalRequest[] {
    return [...this.waiting.values()].map((waiting) => waiting.request);
  }

  /**
   * Applies an answer received on the channel and returns the reply line:
   * `ok <request-id> <tool>`, or `error <what is wrong>`.
   */
  answer(payload: string): string {
    let answer: ApprovalAnswer;
    try {
      answer = JSON.parse(payload) as ApprovalAnswer;
    } catch {
      return 'error the answer is not JSON';
    }
    if (typeof answer !== 'object' || answer === null || (answer.decision !== 'approve' && answer.decision !== 'deny')) return "error the answer's decision must be approve or deny";
    if (answer.scope !== undefined && answer.scope !== 'once' && answer.scope !== 'tool' && answer.scope !== 'call') return 'error the scope must be once, tool or call';
    if (answer.requestId !== undefined && typeof answer.requestId !== 'string') return 'error the request id must be a string';
    let waiting: Waiting | undefined;
    if (answer.requestId === undefined) {
      if (this.waiting.size === 0) return 'error no approval request is pending';
      if (this.waiting.size > 1) return `error ${this.waiting.size} requests are pending; name one: ${this.describePending()}`;
      waiting = [...this.waiting.values()][0];
    } else {
      waiting = this.waiting.get(answer.requestId);
      if (waiting === undefined) {
        return `error no pending request has id ${JSON.stringify(answer.requestId).slice(0, 60)}${this.waiting.size === 0 ? '; none is pending' : `; pending: ${this.describePending()}`}`;
      }
    }
    const who = `${typeof answer.by === 'string' && answer.by.trim() !== '' ? answer.by.trim().slice(0, 100) : 'someone'} (agents plan ${answer.decision})`;
    const { request } = waiting as Waiting;
    const reason = typeof answer.reason === 'string' && answer.reason.trim() !== '' ? answer.reason.trim().slice(0, LONGEST_REASON) : undefined;
    (waiting as Waiting).answer(
      answer.decision === 'approve'
        ? { decision: 'approve', scope: answer.scope ?? 'once', decidedBy: who }
        : { decision: 'deny', ...(reason === undefined ? {} : { reason }), decidedBy: who },
    );
    return `ok ${request.id} ${request.toolName}`;
  }

  private describePending(): string {
    return [...this.waiting.values()].map(({ request }) => `${request.id} (${request.toolName})`).join(', ');
  }
}
