import type { BoundResource, Change, PlanPolicy, ToolHookStage } from '@ca/tool-context';
import type { Execution } from '../observability';
import type { ToolDescriptor } from '../tool';
import type { ToolHookContext } from './tool-hook';

/**
 * The read-only view a hook gets of its call: getters over the plan's frozen
 * fields, nothing that writes. Its signal is made on first read (most hooks
 * never wait on anything) and aborted when the hook's deadline passes.
 */
export class HookCallContext implements ToolHookContext {
  private controller: AbortController | undefined = undefined;
  private combined: AbortSignal | undefined = undefined;
  private abortedWith: unknown = undefined;

  constructor(
    private readonly execution: Execution,
    readonly tool: ToolDescriptor,
    readonly stage: ToolHookStage,
  ) {}

  get planId(): string {
    return this.execution.ctx.planId;
  }

  get executionId(): string {
    return this.execution.executionId;
  }

  get toolName(): string {
    return this.execution.toolName;
  }

  get policy(): PlanPolicy {
    return this.execution.ctx.policy;
  }

  get resources(): readonly BoundResource[] {
    return this.execution.ctx.resources;
  }

  get metadata(): Readonly<Record<string, unknown>> {
    return this.execution.ctx.metadata;
  }

  get changes(): readonly Change[] {
    return this.execution.ctx.changes;
  }

  get signal(): AbortSignal {
    if (this.combined === undefined) {
      this.controller = new AbortController();
      if (this.abortedWith !== undefined) this.controller.abort(this.abortedWith);
      this.combined = AbortSignal.any([this.execution.ctx.signal, this.controller.signal]);
    }
    return this.combined;
  }

  /** Ends the hook's wait: its deadline passed or the plan was cancelled. */
  abort(reason: unknown): void {
    this.abortedWith = reason;
    this.controller?.abort(reason);
  }

  /** Not the plan's records: a hook that logs its context shows only what it may read. */
  toJSON(): Record<string, unknown> {
    return { planId: this.planId, executionId: this.executionId, toolName: this.toolName, stage: this.stage };
  }
}
