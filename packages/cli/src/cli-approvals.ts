import { compileToolPattern, type ApprovalContext, type ApprovalDecision, type ApprovalHandler, type ApprovalRequest, type PatternMatcher } from '@ca/tool-lifecycle';
import type { RemoteApprovals } from './remote-approvals';
import type { TerminalPrompter } from './terminal-prompter';
import { terminalJson, terminalSafe } from './terminal-text';

/** Options of {@link CliApprovals}. */
export interface CliApprovalsOptions {
  /** `--approve` patterns: calls of tools matching one are approved once, without asking. */
  readonly approve: readonly string[];
  /** The person at the terminal, when the command runs on one. */
  readonly prompter?: TerminalPrompter;
  /** Answers from another terminal (`agents plan approve`), for a plan that listens for them. */
  readonly remote?: RemoteApprovals;
  /** Where to say that a request waits for an answer from another terminal (stderr). */
  readonly notify: (text: string) => void;
}

/**
 * How the `agents` command answers approval requests: an `--approve`
 * pattern answers at once; otherwise the person at the terminal is asked
 * and, for a plan that listens, another terminal may answer first
 * (`agents plan approve <plan-id> <request-id>`). With neither, the call is
 * denied, saying what would let it run.
 */
export class CliApprovals implements ApprovalHandler {
  private readonly patterns: readonly { readonly text: string; readonly matches: PatternMatcher }[];

  constructor(private readonly options: CliApprovalsOptions) {
    this.patterns = options.approve.map((text) => ({ text, matches: compileToolPattern(text) }));
  }

  async requestApproval(request: ApprovalRequest, context: ApprovalContext): Promise<ApprovalDecision> {
    const pattern = this.patterns.find((entry) => entry.matches(request.toolName));
    if (pattern !== undefined) return { decision: 'approve', scope: 'once', decidedBy: `--approve ${pattern.text}` };
    const { prompter, remote, notify } = this.options;
    if (prompter === undefined && remote === undefined) {
      return {
        decision: 'deny',
        reason: `no --approve pattern matches '${request.toolName}' and there is no terminal to ask; add --approve '${request.toolName}' (or a pattern), or run the command on a terminal`,
        decidedBy: 'agents (not a terminal)',
      };
    }
    const answered = new AbortController();
    const withdraw = (): void => answered.abort();
    context.signal.addEventListener('abort', withdraw, { once: true });
    try {
      const answers: Promise<ApprovalDecision>[] = [];
      if (remote !== undefined) {
        if (prompter === undefined) {
          notify(
            `approval needed: request ${terminalSafe(request.id, 20)} of plan ${terminalSafe(request.planId, 100)}: ${terminalSafe(request.toolName, 200)} ${terminalJson(request.arguments)} (${terminalSafe(request.reason.text, 300)}). ` +
              `Answer with 'agents plan approve ${request.planId} ${request.id} [--for tool|call]' or 'agents plan deny ${request.planId} ${request.id} [--reason …]'.\n`,
          );
        }
        answers.push(
          remote.wait(request, answered.signal).then((decision) => {
            if (decision !== undefined && prompter !== undefined) notify(`request ${request.id} was answered from another terminal: ${decision.decision === 'approve' ? 'approved' : 'denied'} by ${decision.decidedBy ?? 'someone'}\n`);
            return decision ?? { decision: 'deny', reason: 'the request was withdrawn' };
          }),
        );
      }
      if (prompter !== undefined) answers.push(prompter.requestApproval(request, { signal: answered.signal }));
      return await Promise.race(answers);
    } finally {
      context.signal.removeEventListener('abort', withdraw);
      answered.abort();
    }
  }
}
