import type { Command } from 'commander';
import { definitionDiff, type DefinitionLock, type PinnedDefinition, type RuntimeLogger } from '@ca/tool-lifecycle';
import { buildRuntime } from './build-runtime';
import type { CliIo } from './cli-io';
import type { AgentsConfig } from './config';
import { lockfilePath, readLockfile, writeLockfile } from './definition-lock-file';
import { EXIT_CODES, type ExitCode } from './exit-codes';

/** What the command needs from `main`. */
export interface ToolsLockSupport {
  readonly io: CliIo;
  readonly loadConfiguration: () => AgentsConfig;
  readonly createLogger: () => RuntimeLogger;
  readonly setExitCode: (code: ExitCode) => void;
}

/** What changed between two locks, one line per tool (and per field of a changed tool). */
export function describeLockChanges(previous: DefinitionLock | undefined, next: DefinitionLock): string[] {
  const lines: string[] = [];
  const scopes = [...new Set([...Object.keys(previous?.scopes ?? {}), ...Object.keys(next.scopes)])].sort();
  for (const sourceId of scopes) {
    const before = previous?.scopes[sourceId] ?? {};
    const after = next.scopes[sourceId] ?? {};
    for (const tool of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
      const old = before[tool];
      const now = after[tool];
      if (old === undefined && now !== undefined) lines.push(`+ ${tool} (${sourceId}): new`);
      else if (old !== undefined && now === undefined) lines.push(`- ${tool} (${sourceId}): no longer offered`);
      else if (old !== undefined && now !== undefined && (old.fingerprint !== now.fingerprint || old.annotations !== now.annotations)) {
        lines.push(`~ ${tool} (${sourceId}): changed`);
        for (const line of definitionDiff(old, descriptorOf(tool, now))) lines.push(`    ${line}`);
      }
    }
  }
  return lines;
}

/** The descriptor a pin was made from (what `definitionDiff` compares against). */
function descriptorOf(name: string, pin: PinnedDefinition) {
  const { description, source, capability, inputSchema, outputSchema, annotations } = pin.definition;
  return Object.freeze({
    name,
    description,
    source,
    capability: capability as never,
    ...(inputSchema === undefined ? {} : { inputSchema: inputSchema as never }),
    ...(outputSchema === undefined ? {} : { outputSchema: outputSchema as never }),
    ...(annotations === undefined ? {} : { annotations }),
  });
}

/**
 * `agents tools lock [--check]`: pins every tool's definition (fingerprint,
 * description, schemas, capability, annotations; per MCP server, and per
 * source for the others)
 * in the lockfile beside the configuration, like a package lock; or, with
 * `--check`, says what no longer matches it and exits 1, writing nothing.
 */
export function addToolsLockCommand(tools: Command, support: ToolsLockSupport): void {
  tools
    .command('lock')
    .description(
      'pin every tool definition in the lockfile beside the configuration (agents.lock.json); a tool that later differs is quarantined until locked again',
    )
    .option('--check', 'write nothing: say what differs from the lockfile, and exit 1 when anything does')
    .action(async (local: { check?: boolean }) => {
      const { io } = support;
      const config = support.loadConfiguration();
      const previous = readLockfile(config);
      // Without the pins: every tool as its source offers it now.
      const built = await buildRuntime(config, support.createLogger(), { pins: false });
      try {
        const discovery = await built.runtime.discover();
        const lock = await built.runtime.lockDefinitions(previous === undefined ? {} : { previous });
        const changes = describeLockChanges(previous, lock);
        for (const failure of discovery.sourceErrors)
          io.stderr(`warning: source ${failure.sourceId} could not be listed; its pins are kept as they were: ${failure.error.message}\n`);
        const file = lockfilePath(config);
        if (local.check === true) {
          io.stdout(
            changes.length === 0
              ? `Every tool matches ${file}.\n`
              : `${changes.length === 0 ? '' : `${changes.join('\n')}\n`}Tool definitions differ from ${file}; 'agents tools lock' accepts them.\n`,
          );
          support.setExitCode(changes.length === 0 ? EXIT_CODES.ok : EXIT_CODES.failed);
          return;
        }
        writeLockfile(config, lock);
        const count = Object.values(lock.scopes).reduce((sum, entries) => sum + Object.keys(entries).length, 0);
        io.stdout(
          `${changes.length === 0 ? '' : `${changes.join('\n')}\n`}Locked ${count} tool(s) of ${Object.keys(lock.scopes).length} pin scope(s) in ${file}.\n`,
        );
      } finally {
        await built.dispose();
      }
    });
}
