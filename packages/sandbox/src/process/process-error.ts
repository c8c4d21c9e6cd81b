import { CaError, messageOf, type CaErrorOptions } from '@ca/domain';

/** Stable codes of the {@link ProcessError} hierarchy. */
export type ProcessErrorCode = 'PROCESS_INVALID_OPTIONS' | 'PROCESS_START_FAILED' | 'PROCESS_LAUNCH_FAILED';

/**
 * Base of the errors of the process runner (`@ca/sandbox`).
 * Tell them apart by `code` or by the inherited static `isInstance` guards,
 * which work across two installed copies of the package.
 */
export abstract class ProcessError extends CaError {
  declare readonly code: ProcessErrorCode;

  protected constructor(code: ProcessErrorCode, message: string, options: CaErrorOptions) {
    super(code, message, options);
  }
}

/** @internal `Tool 'x' in plan 'p': ` (or less) to start a message. */
export function describeCaller(toolName: string | undefined, planId: string | undefined): string {
  if (toolName === undefined) return planId === undefined ? '' : `In plan '${planId}': `;
  return planId === undefined ? `Tool '${toolName}': ` : `Tool '${toolName}' in plan '${planId}': `;
}

/**
 * @internal The message of a cause. Errors of Node's own realm (a spawn
 * error seen from a VM context, as under Jest) fail `instanceof Error`, so
 * any object with a string `message` counts.
 */
export function causeMessage(cause: unknown): string {
  const message = (cause as { message?: unknown } | null)?.message;
  return typeof cause === 'object' && cause !== null && typeof message === 'string' ? message : messageOf(cause);
}
