import type { Tool } from '@ca/domain';
import { canonicalJson, digest } from './canonical-json';

const fingerprints = new WeakMap<object, string>();

/**
 * The fingerprint of a tool's definition: a SHA-256 (base64url) of the
 * canonical JSON of what a person approves when they approve the tool — its
 * name, description, source kind, the five fields of its capability, and its
 * input and output schemas — and, for a tool that runs its programs in the
 * kernel sandbox, that it does (`sandboxed`), so an approval given to a
 * sandboxed command is asked again once it runs without the sandbox. Any change to one of them (a server that widens a
 * schema, rewrites a description or drops `readOnlyHint`) gives another
 * fingerprint, so approvals bound to it are asked again. Version and
 * free-form annotations are left out: they change without changing what the
 * tool does. Kept per descriptor object, so a call computes it once.
 *
 * @throws TypeError when a schema holds what JSON cannot (see `canonicalJson`).
 */
export function fingerprintTool(
  tool: Pick<Tool, 'name' | 'description' | 'source' | 'capability' | 'inputSchema' | 'outputSchema'> & { readonly sandboxed?: { readonly overlay: boolean } },
): string {
  const known = fingerprints.get(tool);
  if (known !== undefined) return known;
  const { writes, checkpointable, idempotent, destructive, openWorld } = tool.capability;
  const fingerprint = digest(
    canonicalJson({
      fingerprint: 1,
      name: tool.name,
      description: tool.description,
      source: tool.source,
      capability: { writes, checkpointable, idempotent, destructive, openWorld },
      inputSchema: tool.inputSchema ?? null,
      outputSchema: tool.outputSchema ?? null,
      // Only when set, so the fingerprint of every other tool stays what it was.
      ...(tool.sandboxed === undefined ? {} : { sandboxed: { overlay: tool.sandboxed.overlay === true } }),
    }),
  );
  if (Object.isFrozen(tool)) fingerprints.set(tool, fingerprint);
  return fingerprint;
}
