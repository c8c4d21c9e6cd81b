import type { RenderedResult } from '../render/render-result';
import { toGeminiSchema } from '../schema/gemini-schema';
import type { DefinitionInput } from './definition-input';
import { callField, type ProviderToolCall } from './provider-call';

/** A function declaration of the Gemini API (`tools[].functionDeclarations[]`). */
export interface GeminiFunctionDeclaration {
  readonly name: string;
  readonly description: string;
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** A `functionCall` part of a candidate's content. */
export interface GeminiFunctionCall {
  readonly name: string;
  readonly args?: Readonly<Record<string, unknown>>;
  readonly id?: string;
}

/** The `functionResponse` part that answers a call. */
export interface GeminiFunctionResponsePart {
  readonly functionResponse: {
    readonly name: string;
    readonly response: { readonly output: unknown } | { readonly error: string };
    readonly id?: string;
  };
}

/** The declaration: the input schema in Gemini's OpenAPI subset (see `toGeminiSchema`). */
export function toGeminiFunctionDeclaration(input: DefinitionInput): GeminiFunctionDeclaration {
  return { name: input.providerName, description: input.description, parameters: toGeminiSchema(input.inputSchema).schema };
}

/**
 * Reads a `functionCall` (the object itself, or a part holding it).
 * @throws ModelToolsError (`MODEL_TOOLS_INVALID_CALL`) when it has no `name`.
 */
export function readGeminiFunctionCall(call: unknown): ProviderToolCall {
  const inner = typeof call === 'object' && call !== null && 'functionCall' in call ? (call as { functionCall: unknown }).functionCall : call;
  return {
    format: 'gemini',
    name: callField(inner, ['name'], 'string', 'gemini') as string,
    callId: callField(inner, ['id'], 'optional-string', 'gemini') as string | undefined,
    arguments: { value: callField(inner, ['args'], 'any', 'gemini') ?? {} },
  };
}

/**
 * The `functionResponse` part: `{ output }` (the structured output when there
 * is one and nothing was cut, else the text) or `{ error }`, with the call's
 * name as the model wrote it and its id when it had one.
 */
export function toGeminiFunctionResponse(rendered: RenderedResult, call: ProviderToolCall): GeminiFunctionResponsePart {
  const response = rendered.isError ? { error: rendered.text } : { output: rendered.structured ?? rendered.text };
  return { functionResponse: call.callId === undefined ? { name: call.name, response } : { name: call.name, response, id: call.callId } };
}
