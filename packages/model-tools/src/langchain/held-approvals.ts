import { canonicalJson } from '@ca/tool-lifecycle';
import type { FrameworkApprovals } from '../approval/framework-approvals';

/** A call a person approved (or edited, then approved) in LangChain's human-in-the-loop middleware, waiting for the tool to run. */
export interface HeldApproval {
  /** Who decided, for the trace. */
  readonly decidedBy: string;
}

interface Entry extends HeldApproval {
  readonly key: string;
  /** The tool's name as the model knows it, and the arguments approved, canonical. */
  readonly call: string;
}

/** Approvals given but not yet used, per bridge: more than this is a graph that never ran its tools; the oldest go. */
const MAX_HELD = 1_000;

/**
 * The approvals the middleware saw given, bound to the tool call they were
 * given for — plan, thread, tool call id, tool and arguments — and used once,
 * when that very call runs. The middleware and the tools share them through
 * the `FrameworkApprovals` both were given. An approval whose call never ran
 * is never used for another call: the id, the tool and the arguments must
 * all match.
 */
export class HeldApprovals {
  private readonly entries: Entry[] = [];

  hold(planId: string, threadId: unknown, toolCallId: string, toolName: string, args: unknown, approval: HeldApproval): void {
    const call = callText(toolName, args);
    if (call === undefined) return;
    this.entries.push({ key: keyOf(planId, threadId, toolCallId), call, ...approval });
    if (this.entries.length > MAX_HELD) this.entries.splice(0, this.entries.length - MAX_HELD);
  }

  /** The approval held for this call, taken (it is used once), or `undefined`. */
  take(planId: string, threadId: unknown, toolCallId: string | undefined, toolName: string, args: unknown): HeldApproval | undefined {
    if (toolCallId === undefined || this.entries.length === 0) return undefined;
    const key = keyOf(planId, threadId, toolCallId);
    const call = callText(toolName, args);
    const index = this.entries.findIndex((entry) => entry.key === key && entry.call === call);
    if (index < 0) return undefined;
    const [entry] = this.entries.splice(index, 1);
    return entry === undefined ? undefined : { decidedBy: entry.decidedBy };
  }
}

const held = new WeakMap<FrameworkApprovals, HeldApprovals>();

/** The approvals held for the tools of this bridge. */
export function heldApprovalsOf(approvals: FrameworkApprovals): HeldApprovals {
  let found = held.get(approvals);
  if (found === undefined) {
    found = new HeldApprovals();
    held.set(approvals, found);
  }
  return found;
}

function keyOf(planId: string, threadId: unknown, toolCallId: string): string {
  return JSON.stringify([planId, typeof threadId === 'string' || typeof threadId === 'number' ? String(threadId) : '', toolCallId]);
}

function callText(toolName: string, args: unknown): string | undefined {
  try {
    return `${toolName}\0${canonicalJson(args ?? {})}`;
  } catch {
    return undefined;
  }
}
