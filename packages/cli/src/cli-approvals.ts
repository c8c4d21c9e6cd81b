import {
  approvalThroughInteraction,
  compileToolPattern,
  type ApprovalContext,
  type ApprovalDecision,
  type ApprovalHandler,
  type ApprovalRequest,
  type PatternMatcher,
} from '@ca/tool-lifecycle';
import type { TerminalPrompter } from './terminal-prompter';
import { terminalJson, terminalSafe } from './terminal-text';

/** Options of {@link CliApprovals}. */
export interface CliApprovalsOptions {
  /** `--approve` patterns: calls of tools matching one are approved once, without asking. */
  readonly approve: readonly string[];
  /** The person at the terminal, when the command runs on one, and who they are (`ada (terminal)`). */
  readonly terminal?: { readonly prompter: TerminalPrompter; readonly who: string };
  /**
   * Off a terminal: wait for an answer through the plan registry (`agents plan
   * approve|deny`, which the runtime applies) instead of denying at once.
   */
  readonly awaitRegistry?: boolean;
  /** Where to say how to answer a request that waits for the registry (stderr). */
  readonly notify: (text: string) => void;
}

/**
 * How the `agents` command answers approval requests: an `--approve` pattern
 * answers at once; otherwise the person at the terminal is asked, through the
 * command's one interaction channel (the same `TerminalPrompter` that asks an
 * MCP server's questions, so questions never interleave); off a terminal, the
 * request waits for `agents plan approve|deny` when the plan takes answers
 * from the registry, and is denied — saying what would let it run — when not.
 * While a request waits, an answer through the plan registry may come first:
 * the runtime applies it and withdraws the question here.
 */
export class CliApprovals implements ApprovalHandler {
  private readonly patterns: readonly { readonly text: string; readonly matches: PatternMatcher }[];
  private readonly terminal: ApprovalHandler | undefined;

  constructor(private readonly options: CliApprovalsOptions) {
    this.patterns = options.approve.map((text) => ({ text, matches: compileToolPattern(text) }));
    this.terminal = options.terminal === undefined ? undefined : approvalThroughInteraction(options.terminal.prompter, { decidedBy: options.terminal.who });
  }

  requestApproval(request: ApprovalRequest, context: ApprovalContext): ApprovalDecision | Promise<ApprovalDecision> {
    const pattern = this.patterns.find((entry) => entry.matches(request.toolName));
    if (pattern !== undefined) return { decision: 'approve', scope: 'once', decidedBy: `--approve ${pattern.text}` };
    if (this.terminal !== undefined) return this.terminal.requestApproval(request, context);
    if (this.options.awaitRegistry === true) return this.awaitRegistry(request, context);
    return {
      decision: 'deny',
      reason: `no --approve pattern matches '${request.toolName}' and there is no terminal to ask; add --approve '${request.toolName}' (or a pattern), run the command on a terminal, or (plan run) --await-approval to answer with 'agents plan approve'`,
      decidedBy: 'agents (not a terminal)',
    };
  }

  /** Says how to answer, then waits: the answer comes through the registry, and the runtime aborts the signal once it has one. */
  private awaitRegistry(request: ApprovalRequest, context: ApprovalContext): Promise<ApprovalDecision> {
    this.options.notify(
      `approval needed: request ${terminalSafe(request.id, 20)} of plan ${terminalSafe(request.planId, 100)}: ${terminalSafe(request.toolName, 200)} ${terminalJson(request.arguments)} (${terminalSafe(request.reason.text, 300)}). ` +
        `Answer with 'agents plan approve ${terminalSafe(request.planId, 100)} ${terminalSafe(request.id, 20)} [--for tool|call]' or 'agents plan deny ${terminalSafe(request.planId, 100)} ${terminalSafe(request.id, 20)} [--reason …]'.\n`,
    );
    return new Promise((resolve) => {
      const withdrawn = (): void => resolve({ decision: 'deny', reason: 'the request was withdrawn' });
      if (context.signal.aborted) withdrawn();
      else context.signal.addEventListener('abort', withdrawn, { once: true });
    });
  }
}
