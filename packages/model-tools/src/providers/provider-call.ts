import { describeValue } from '@ca/domain';
import { ModelToolsError } from '../errors/model-tools-error';
import type { ModelToolFormat } from '../names/provider-names';

/** A provider's tool call, read: the name the model used, its call id, and the arguments as sent. */
export interface ProviderToolCall {
  readonly format: ModelToolFormat;
  /** The tool's name as the model wrote it (a provider name). */
  readonly name: string;
  /** The provider's id of the call (`call_…`, `toolu_…`), when it has one. */
  readonly callId: string | undefined;
  /** Argument text (OpenAI) to parse, or an already parsed value (Anthropic, Gemini, MCP). */
  readonly arguments: { readonly text: string } | { readonly value: unknown };
}

/** @internal A field of a provider call, checked. */
export function callField(call: unknown, path: readonly string[], kind: 'string' | 'optional-string' | 'any', format: ModelToolFormat): unknown {
  let value: unknown = call;
  for (const key of path) value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  if (
    kind === 'any' ||
    (kind === 'string' && typeof value === 'string') ||
    (kind === 'optional-string' && (value === undefined || value === null || typeof value === 'string'))
  ) {
    return value ?? undefined;
  }
  throw new ModelToolsError({
    problem: 'invalid-call',
    field: `call.${path.join('.')}`,
    expected: kind === 'string' ? 'a string' : 'a string or nothing',
    received: describeValue(value),
    advice: `Pass the ${format} tool call as the provider returned it.`,
  });
}
