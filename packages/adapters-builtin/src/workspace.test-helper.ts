// Shared by the specs (excluded from the build): a strict runtime over the
// built-in source; temporary folders and byte-exact snapshots of a tree, from
// @ca/sandbox/testing (the sandbox's tests use the same).
import { resourceFromPath, type BoundResource, type ResourceAccess } from '@ca/tool-context';
import { ToolRuntime, type ToolRuntimeSettings } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import type { BuiltinAdapterSettings } from './builtin-adapter-settings';
import { createBuiltinAdapter } from './builtin-tool-source';

export { makeTemporaryFolder, removeTemporaryFolders, snapshotTree } from '@ca/sandbox/testing';

/** A file resource. */
export function folderResource(id: string, path: string, access: ResourceAccess = 'write'): BoundResource {
  return resourceFromPath({ id, path, access });
}

/** A runtime whose only source is the built-in one (logging to the runtime's logger), failing any output that does not match its schema. */
export function strictRuntime(
  settings: BuiltinAdapterSettings = {},
  runtimeSettings: Pick<ToolRuntimeSettings, 'approvalHandler'> = {},
): { runtime: ToolRuntime; logger: RecordingLogger } {
  const logger = new RecordingLogger();
  const runtime = new ToolRuntime({ sources: [createBuiltinAdapter({ logger, ...settings })], logger, options: { strictOutput: true }, ...runtimeSettings });
  return { runtime, logger };
}

/** The failure code of a result, or `'ok'`. */
export function codeOf(result: { ok: boolean; error?: { code?: string } }): string | undefined {
  return result.ok ? 'ok' : result.error?.code;
}
