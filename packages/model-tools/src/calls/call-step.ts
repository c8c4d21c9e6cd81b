/** Longest step id the runtime takes (`ExecuteOptions.step`). */
const MAX_STEP_LENGTH = 1_000;

/** Ids that name nothing: what a serializer writes for a missing id. */
const PLACEHOLDERS = new Set(['null', 'undefined', 'none', 'nil', 'nan']);

/** A small number (a counter of the response's calls), with at most a short word before it: `0`, `call_0`, `tool-12`, `fc_1`. */
const NUMBERED = /^[A-Za-z]{0,12}[-_:.]?\d{1,4}$/;
/** What name-derived ids put before the name: `call-get_weather`, `tool_get_weather`. */
const NAME_PREFIX = /^(?:call|tool|function|func|fc)[-_:.]?/i;
/** What they put after it: `get_weather_0`. */
const NUMBER_SUFFIX = /[-_:.]?\d{1,4}$/;

/**
 * The step key of a model's call (`ExecuteOptions.step` of the runtime): the
 * provider's or the framework's call id, when it can tell this call from
 * every other call of the plan — else `undefined`, and the runtime keys the
 * call by its ordinal as it does any call without a step.
 *
 * A call id is only unique where its provider makes it so. Some are not:
 * integrations number the calls of each response from 0 again (`call_0`,
 * `call_1` — `@langchain/google` did until early 2026, and so do some
 * OpenAI-compatible servers), derive the id from the tool's name
 * (`call-get_weather`, or the name itself, for Gemini calls without an id),
 * or send an empty one. With such an id as the step, a later call of the same
 * tool with the same arguments would be answered with the first one's result
 * instead of running. So an id is not used when it is empty, a placeholder
 * (`null`, `undefined`), a number of at most four digits with at most a short word before it,
 * or the tool's name with at most a `call`/`tool` prefix and a number after
 * it; nor when it is longer than the runtime takes (1,000 characters).
 */
export function stepOfCallId(callId: string | undefined, names: readonly string[]): string | undefined {
  if (callId === undefined || callId.length === 0 || callId.length > MAX_STEP_LENGTH) return undefined;
  const id = callId.trim();
  if (id.length === 0 || PLACEHOLDERS.has(id.toLowerCase()) || NUMBERED.test(id)) return undefined;
  const bare = id.replace(NAME_PREFIX, '').replace(NUMBER_SUFFIX, '').toLowerCase();
  for (const name of names) if (name.toLowerCase() === bare || name.toLowerCase() === id.toLowerCase()) return undefined;
  return callId;
}
