import { compileToolPattern, type PatternMatcher } from '../approval';
import { ToolInvalidArgumentError } from '../errors';
import type { ToolCapability } from '@ca/domain';
import type { ToolDescriptor } from '../tool';

/**
 * What the service declares about interrupted calls of some tools (the
 * runtime's `options.resume`): `retry` — run it again with the same
 * idempotency key, the other side recognises the key (an HTTP API that
 * honours `Idempotency-Key`, an MCP server that dedups on `_meta`); `ask` —
 * never run it again without a person's decision, whatever the tool claims.
 */
export interface ToolResumeSettings {
  /** Tool-name globs (`builtin.http.*`, `mcp.billing.*`). */
  readonly tools: string | readonly string[];
  readonly interrupted: 'retry' | 'ask';
}

/** What the resume rules decided about an interrupted call before asking the tool itself. */
export type ResumeVerdict = 'retry' | 'ask' | 'reconcile';

/**
 * The resume rules, in order: the service's `options.resume` (first matching
 * entry); the tool's own `reconcile`, when it has one; its capability in the plan — a tool
 * that is idempotent, or writes nothing, is run again with the same key;
 * otherwise a person is asked.
 */
export class ResumeRules {
  private readonly entries: readonly { readonly matches: readonly PatternMatcher[]; readonly interrupted: 'retry' | 'ask' }[];

  /** @throws ToolInvalidArgumentError for an entry of the wrong shape. */
  constructor(settings: readonly ToolResumeSettings[] | undefined) {
    if (settings !== undefined && !Array.isArray(settings)) {
      throw new ToolInvalidArgumentError({ argument: 'resume', expected: 'a list of { tools, interrupted }', received: settings });
    }
    this.entries = (settings ?? []).map((entry, index) => {
      const tools = typeof entry?.tools === 'string' ? [entry.tools] : entry?.tools;
      if (!Array.isArray(tools) || tools.length === 0 || tools.some((tool) => typeof tool !== 'string' || tool.length === 0)) {
        throw new ToolInvalidArgumentError({
          argument: `resume[${index}].tools`,
          expected: 'a tool-name glob or a non-empty list of them',
          received: entry?.tools,
        });
      }
      if (entry.interrupted !== 'retry' && entry.interrupted !== 'ask') {
        throw new ToolInvalidArgumentError({ argument: `resume[${index}].interrupted`, expected: "'retry' or 'ask'", received: entry.interrupted });
      }
      return { matches: tools.map((tool) => compileToolPattern(tool)), interrupted: entry.interrupted };
    });
  }

  /** What to do about an interrupted call of this tool (`reconcile`: ask the tool's reconciliation first). */
  verdict(descriptor: ToolDescriptor, capability: ToolCapability, reconciles: boolean): ResumeVerdict {
    for (const entry of this.entries) if (entry.matches.some((matches) => matches(descriptor.name))) return entry.interrupted;
    if (reconciles) return 'reconcile';
    const { idempotent, writes } = capability;
    return idempotent || !writes ? 'retry' : 'ask';
  }
}
