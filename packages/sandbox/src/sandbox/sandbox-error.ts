import { CaError, type CaErrorOptions } from '@ca/domain';

/** Stable codes of the {@link SandboxError} hierarchy. */
export type SandboxErrorCode = 'SANDBOX_UNAVAILABLE' | 'SANDBOX_INVALID_SETTINGS' | 'SANDBOX_OVERLAY_FAILED';

/**
 * Base of the errors of the kernel sandbox (`@ca/sandbox`).
 * Tell them apart by `code` or by the inherited static `isInstance` guards.
 */
export abstract class SandboxError extends CaError {
  declare readonly code: SandboxErrorCode;

  protected constructor(code: SandboxErrorCode, message: string, options: CaErrorOptions) {
    super(code, message, options);
  }
}

/** @internal `Tool 'x' in plan 'p': ` (or less) to start a message. */
export function describeSandboxCaller(toolName: string | undefined, planId: string | undefined): string {
  if (toolName === undefined) return planId === undefined ? '' : `In plan '${planId}': `;
  return planId === undefined ? `Tool '${toolName}': ` : `Tool '${toolName}' in plan '${planId}': `;
}

/** @internal The tool and plan of an error's options, leaving out what is not known. */
export function callerOptions(toolName: string | undefined, planId: string | undefined): { toolName?: string; planId?: string } {
  return { ...(toolName === undefined ? {} : { toolName }), ...(planId === undefined ? {} : { planId }) };
}
