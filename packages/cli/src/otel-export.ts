import { SpanKind, SpanStatusCode, context, propagation, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { CliError } from './cli-error';

/** The command's spans on their way to a collector. */
export interface TraceExport {
  /** Where the spans go (without credentials or query), for messages. */
  readonly endpoint: string;
  /** Sends what is left and stops; a collector that could not be reached is reported on stderr, not as a failure. */
  shutdown(): Promise<void>;
}

const TRACES_PATH = '/v1/traces';

function describeEndpoint(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function parseEndpoint(text: string, source: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError({
      code: 'CLI_USAGE',
      message: `${source} '${text}' is not a URL: expected the collector's OTLP/HTTP address, e.g. http://127.0.0.1:4318.`,
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError({ code: 'CLI_USAGE', message: `${source} must be an http:// or https:// URL (OTLP over HTTP); got ${url.protocol}//.` });
  }
  return url;
}

/** `http://collector:4318` + `/v1/traces`, unless the path already ends with it. */
function withTracesPath(url: URL): URL {
  if (url.pathname.endsWith(TRACES_PATH)) return url;
  const copy = new URL(url.href);
  copy.pathname = `${copy.pathname.replace(/\/+$/, '')}${TRACES_PATH}`;
  return copy;
}

/**
 * Where the command sends its spans, if anywhere: `--otel-endpoint` (the
 * collector's base URL, like `OTEL_EXPORTER_OTLP_ENDPOINT`), else
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as it is), else
 * `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces` — unless `OTEL_SDK_DISABLED=true`
 * or `OTEL_TRACES_EXPORTER=none` turns the environment's off.
 * @throws CliError (CLI_USAGE) for a value that is not an http(s) URL.
 */
export function resolveOtlpEndpoint(option: string | undefined, env: Readonly<Record<string, string | undefined>>): URL | undefined {
  if (option !== undefined) return withTracesPath(parseEndpoint(option, '--otel-endpoint'));
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true' || env['OTEL_TRACES_EXPORTER']?.trim().toLowerCase() === 'none') return undefined;
  const traces = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'];
  if (traces !== undefined && traces !== '') return parseEndpoint(traces, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  if (base !== undefined && base !== '') return withTracesPath(parseEndpoint(base, 'OTEL_EXPORTER_OTLP_ENDPOINT'));
  return undefined;
}

/** How long the command waits for its spans at exit when the environment does not say: a command that ends should not wait on a collector. */
export const DEFAULT_EXPORT_TIMEOUT_MS = 1_500;
/** Extra time for the SDK to give up once the export's own deadline has passed. */
const SHUTDOWN_MARGIN_MS = 250;

/**
 * The most the command waits for its spans when it ends, in milliseconds:
 * `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, else `OTEL_EXPORTER_OTLP_TIMEOUT`, else
 * {@link DEFAULT_EXPORT_TIMEOUT_MS} — not the SDK's 10 s. Also the exporter's
 * deadline for one export, retries included.
 * @throws CliError (CLI_USAGE) for a value that is not a whole number of milliseconds from 1 to 600,000.
 */
export function exportTimeoutOf(env: Readonly<Record<string, string | undefined>>): number {
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', 'OTEL_EXPORTER_OTLP_TIMEOUT']) {
    const text = env[name]?.trim();
    if (text === undefined || text === '') continue;
    const value = Number(text);
    if (!/^\d+$/.test(text) || value < 1 || value > 600_000) {
      throw new CliError({
        code: 'CLI_USAGE',
        message: `${name} '${text}' is not a number of milliseconds from 1 to 600000 (how long spans may take to send).`,
      });
    }
    return value;
  }
  return DEFAULT_EXPORT_TIMEOUT_MS;
}

/** `key=value,key2=value2` (values URL-encoded), as the OTLP exporter variables write headers. */
function parseHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const equals = pair.indexOf('=');
    if (equals <= 0) continue;
    try {
      headers[decodeURIComponent(pair.slice(0, equals).trim())] = decodeURIComponent(pair.slice(equals + 1).trim());
    } catch {
      // A malformed pair is left out, as the SDK does.
    }
  }
  return headers;
}

/**
 * Registers an OpenTelemetry tracer provider for the command that sends every
 * span — the runtime's `execute_tool` spans and the command's own — to an
 * OTLP/HTTP collector (JSON), through the official exporter. The SDK is
 * loaded only here, so a command without an endpoint pays nothing for it.
 */
export function startTraceExport(
  url: URL,
  options: { readonly env: Readonly<Record<string, string | undefined>>; readonly serviceVersion: string; readonly stderr: (text: string) => void },
): TraceExport {
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const endpoint = describeEndpoint(url);
  const headers = { ...parseHeaders(options.env['OTEL_EXPORTER_OTLP_HEADERS']), ...parseHeaders(options.env['OTEL_EXPORTER_OTLP_TRACES_HEADERS']) };
  const timeoutMs = exportTimeoutOf(options.env);
  // The exporter's deadline bounds its retries too: an unreachable collector costs at most this much.
  const exporter = new OTLPTraceExporter({ url: url.href, headers, timeoutMillis: timeoutMs });
  let dropped = 0;
  let reason: string | undefined;
  // The exporter reports a failed export only to the SDK's diagnostics: count
  // them here, so the user hears of spans that never reached the collector.
  const counting: SpanExporter = {
    export: (spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]) =>
      exporter.export(spans, (result) => {
        // 0 is ExportResultCode.SUCCESS.
        if (result.code !== 0) {
          dropped += spans.length;
          reason ??= result.error?.message ?? 'export failed';
        }
        done(result);
      }),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush(),
  };
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.env['OTEL_SERVICE_NAME'] || 'agents', 'service.version': options.serviceVersion }),
    spanProcessors: [new BatchSpanProcessor(counting, { exportTimeoutMillis: timeoutMs })],
  });
  provider.register();
  return {
    endpoint,
    shutdown: async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        const late = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), timeoutMs + SHUTDOWN_MARGIN_MS);
          timer.unref();
        });
        if ((await Promise.race([provider.shutdown(), late])) === 'late') reason ??= `not sent within ${timeoutMs} ms`;
      } catch (error) {
        // Usually the failed export already counted above; otherwise say why.
        reason ??= (error as Error)?.message ?? String(error);
      } finally {
        if (timer !== undefined) clearTimeout(timer);
        // Unregistered, so that the runtime goes back to creating no spans at all.
        trace.disable();
        context.disable();
        propagation.disable();
      }
      if (reason === undefined) return;
      // Once, whatever number of exports failed.
      const what = dropped > 0 ? `${dropped} span(s) were dropped` : 'the last spans were dropped';
      options.stderr(
        `warning [OTEL_EXPORT_FAILED]: ${what}: they could not be sent to ${endpoint} within ${timeoutMs} ms (${reason.replace(url.href, endpoint)}). Check --otel-endpoint or OTEL_EXPORTER_OTLP_ENDPOINT; OTEL_EXPORTER_OTLP_TIMEOUT sets how long the command waits for its spans (default ${DEFAULT_EXPORT_TIMEOUT_MS} ms).\n`,
      );
    },
  };
}

/**
 * Runs `work` inside a span of the command (`agents plan run`), the parent of
 * the spans of the tools it runs. Without a registered provider the API hands
 * out a span that records nothing.
 */
export async function inCommandSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  return trace.getTracer('@ca/cli').startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
      throw error;
    } finally {
      span.end();
    }
  });
}
