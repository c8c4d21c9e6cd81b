import type { Tool } from '@ca/domain';

/**
 * Lightweight metadata of a tool as a source offers it. Discovery produces
 * descriptors without activating anything or loading heavy content.
 */
export interface ToolDescriptor extends Tool {
  /**
   * Default deadline of one execution, in milliseconds. A runtime-wide
   * default applies when absent; a per-call `timeoutMs` overrides both.
   */
  readonly timeoutMs?: number;
}
