import type { BoundResource, PlanPolicy } from '@ca/tool-context';
import type { ToolDescriptor } from '@ca/tool-lifecycle';

/** What every provider's definition is made from. */
export interface DefinitionInput {
  readonly descriptor: ToolDescriptor;
  /** The tool's name under the provider's rules. */
  readonly providerName: string;
  /** The description to send (the tool's, marked when the plan refuses the tool). */
  readonly description: string;
  /** The tool's input schema, or an empty object schema when it has none. */
  readonly inputSchema: Readonly<Record<string, unknown>>;
  /** Whether strict mode is wanted where the provider has one and the schema allows it. */
  readonly strict: boolean;
  /** The plan the definition is for: what a tool can do in it (MCP's `readOnlyHint`). */
  readonly plan?: { readonly policy: PlanPolicy; readonly resources?: readonly BoundResource[] };
}
