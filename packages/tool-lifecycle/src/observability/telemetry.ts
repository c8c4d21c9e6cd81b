import { ProxyTracerProvider, SpanKind, SpanStatusCode, trace, type Span, type Tracer, type TracerProvider } from '@opentelemetry/api';
import { safeMessage, type ToolSourceKind } from '@ca/domain';

const TRACER_NAME = '@ca/tool-lifecycle';
// Where @opentelemetry/api 1.x keeps its registered globals.
const OTEL_API_KEY = Symbol.for('opentelemetry.js.api.1');
// The provider the API falls back to when nothing is registered.
const noopProvider = new ProxyTracerProvider().getDelegate();

// `error.type` is a code, a label: a longer one is not a code a reader needs whole.
const MAX_ERROR_TYPE_LENGTH = 200;

let cachedDelegate: TracerProvider | undefined;
let cachedTracer: Tracer | undefined;

/**
 * The tracer to use for an execution, or `undefined` when no OpenTelemetry
 * tracer provider is registered — so that an unobserved runtime does not pay
 * for no-op spans. Checked on every call (cheap, see the fast path), so a
 * provider registered later is picked up.
 */
export function activeTracer(): Tracer | undefined {
  // Fast path: `trace.setGlobalTracerProvider` stores the API's proxy under
  // this key; while nothing is stored there, no provider is registered. One
  // read instead of the API's global lookup and version check, on every call.
  const registry = (globalThis as Record<symbol, { trace?: unknown } | undefined>)[OTEL_API_KEY];
  if (registry?.trace === undefined) return undefined;
  const global = trace.getTracerProvider();
  const delegate = global instanceof ProxyTracerProvider ? global.getDelegate() : global;
  if (delegate === noopProvider) return undefined;
  if (delegate !== cachedDelegate) {
    cachedDelegate = delegate;
    cachedTracer = delegate.getTracer(TRACER_NAME);
  }
  return cachedTracer;
}

/**
 * `gen_ai.tool.type` of the GenAI semantic conventions for a source kind:
 * MCP servers and skills extend the agent (`extension`); the other known
 * kinds, and a team's own kinds, run code the service supplied (`function`).
 */
function toolType(source: ToolSourceKind): string {
  return source === 'mcp' || source === 'skill' ? 'extension' : 'function';
}

/** Starts the `execute_tool {name}` span of one execution. */
export function startToolSpan(tracer: Tracer, toolName: string, executionId: string, source: ToolSourceKind | undefined, planId: string): Span {
  return tracer.startSpan(`execute_tool ${toolName}`, {
    kind: SpanKind.INTERNAL,
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': toolName,
      'gen_ai.tool.call.id': executionId,
      ...(source === undefined ? {} : { 'gen_ai.tool.type': toolType(source) }),
      'ca.plan.id': planId,
    },
  });
}

/**
 * Ends a span, marking it failed with `error.type` when `errorType` is set.
 * The status message is redacted and capped like a trace's (`safeMessage`):
 * spans leave the process, to collectors that keep them.
 */
export function endToolSpan(span: Span, errorType: string | undefined, message: string | undefined): void {
  if (errorType !== undefined) {
    span.setAttribute('error.type', safeMessage(errorType, MAX_ERROR_TYPE_LENGTH));
    span.setStatus({ code: SpanStatusCode.ERROR, ...(message === undefined ? {} : { message: safeMessage(message) }) });
  }
  span.end();
}
