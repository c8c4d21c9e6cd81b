import type { JsonSchema, ToolCapabilityInput } from '@ca/domain';
import type { ToolExecutionContext } from '@ca/tool-context';
import type { ToolCallOptions } from '@ca/tool-lifecycle';
import type { InjectionToken } from 'tsyringe';
import type { CustomToolReturn } from './define-tool';

/**
 * Base of class-based custom tools, resolved through dependency injection.
 * Declare the fields, implement `execute`, mark the class `@injectable()` with
 * `@inject(TOKEN)` on each constructor parameter, and register it under
 * {@link CUSTOM_TOOL}:
 *
 * @example
 * \@injectable()
 * class WeatherTool extends CustomTool<{ city: string }, { celsius: number }> {
 *   readonly name = 'custom.weather';
 *   readonly description = 'Current temperature of a city.';
 *   readonly capability = { writes: false, openWorld: true };
 *   readonly inputSchema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
 *   constructor(\@inject(WEATHER_API) private readonly api: WeatherApi) { super(); }
 *   async execute({ city }: { city: string }, ctx: ToolExecutionContext) {
 *     return { celsius: await this.api.temperature(city, ctx.cancellationToken.signal) };
 *   }
 * }
 * container.register(CUSTOM_TOOL, { useClass: WeatherTool });
 *
 * Extending the class is optional: anything registered under `CUSTOM_TOOL`
 * with these members works. The fields are read when the source first
 * discovers its tools, with the same checks as `defineTool`; methods are
 * called on the instance (`this` is the tool).
 */
export abstract class CustomTool<Input = unknown, Output = unknown> {
  /** Name of the tool, used as given; must satisfy `isValidToolName`. */
  abstract readonly name: string;
  /** What the tool does, for a model and a person. */
  abstract readonly description: string;
  /** What the tool may do (required; see `defineTool`). */
  abstract readonly capability: ToolCapabilityInput;
  /** JSON Schema of the input; none means any input is accepted. */
  declare readonly inputSchema?: JsonSchema;
  /** JSON Schema of the output. */
  declare readonly outputSchema?: JsonSchema;
  /** Default deadline of one execution, in ms. */
  declare readonly timeoutMs?: number;
  /** Fail the result when the output does not match `outputSchema`. */
  declare readonly strictOutput?: boolean;
  /** Version of the tool. */
  declare readonly version?: string;
  /** Free-form JSON-serialisable annotations. */
  declare readonly annotations?: Readonly<Record<string, unknown>>;

  /** Prepares the tool for one plan (optional; at most once per plan). */
  activate?(ctx: ToolExecutionContext): Promise<void> | void;

  /**
   * Runs the tool: return the output or a `ToolResult` (see `CustomToolReturn`);
   * throw only for unexpected failures.
   */
  abstract execute(input: Input, ctx: ToolExecutionContext, options?: ToolCallOptions): CustomToolReturn<Output>;

  /** Releases what `activate` acquired for the plan (optional). */
  deactivate?(ctx: ToolExecutionContext): Promise<void> | void;
}

/**
 * Injection token of class-based custom tools (multi-registration):
 * `container.register(CUSTOM_TOOL, { useClass: MyTool })`. Every registration
 * is resolved once, when the `CustomToolSource` made by `registerCustomAdapter`
 * first discovers its tools.
 */
export const CUSTOM_TOOL: InjectionToken<CustomTool> = Symbol.for('ca.adapters-custom.CustomTool');
