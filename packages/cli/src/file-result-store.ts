import { createHash } from 'node:crypto';
import type { ConfinedDirectory } from '@ca/tool-context';
import { isResultHandle, type ResultRecord, type ResultStore, type ResultSummary, type ResultWriter, type StoredResult } from '@ca/tool-lifecycle';
import type { FileHandle } from 'node:fs/promises';
import { openStateDirectory, openStateSubfolder, readStateFile } from './state-files';

const ROLE = 'stored results of plans';

/**
 * The runtime's result store in the command's state folder: `results/` holds
 * a folder per plan (named by a hash of the plan id, mode 0700) and, per
 * result, `<handle>.data` (the redacted output) and `<handle>.json` (its
 * record and summary), of mode 0600. A document appears whole or not at all:
 * its data is written to a temporary file renamed into place by `finish`,
 * and its record after it. Every folder is checked like the state folder and
 * opened through its descriptor, every file through its verified folder and
 * never through a link, so a folder swapped for a link is refused
 * (`CLI_STATE_UNSAFE`), not followed. `dropPlan` deletes the plan's folder.
 */
export class FileResultStore implements ResultStore {
  readonly description: string;

  constructor(readonly folder: string) {
    this.description = `files in ${folder}`;
  }

  async create(record: ResultRecord): Promise<ResultWriter> {
    checkHandle(record.handle);
    const root = (await openStateDirectory(this.folder, ROLE, true)) as ConfinedDirectory;
    let plan: ConfinedDirectory;
    try {
      plan = (await openStateSubfolder(root, planFolderName(record.planId), ROLE, true)) as ConfinedDirectory;
    } finally {
      await root.close();
    }
    let file: FileHandle | undefined;
    let opened!: (handle: FileHandle) => void;
    const ready = new Promise<FileHandle>((resolve) => (opened = resolve));
    let finishWriting!: () => void;
    let failWriting!: (error: Error) => void;
    const done = new Promise<void>((resolve, reject) => {
      finishWriting = resolve;
      failWriting = reject;
    });
    // Given up before the writing started: the rejection is handled by the writing, when it starts.
    done.catch(() => undefined);
    // The data goes to a temporary file of the verified folder, renamed into place once done.
    const writing = plan.writeFile(
      `${record.handle}.data`,
      async (handle) => {
        opened(handle);
        await done;
      },
      { mode: 0o600, exclusive: true },
    );
    const failed = writing.then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    const firstOf = async (): Promise<FileHandle> => {
      const outcome = await Promise.race([ready, failed.then((error) => error ?? new Error('the data file was closed'))]);
      if (outcome instanceof Error) throw outcome;
      return outcome;
    };
    let closed = false;
    const close = async (): Promise<void> => {
      if (closed) return;
      closed = true;
      await plan.close();
    };
    return {
      append: async (chunk) => {
        file ??= await firstOf();
        await file.write(chunk);
      },
      finish: async (summary: ResultSummary) => {
        try {
          finishWriting();
          await writing;
          const stored: StoredResult = { ...record, ...summary };
          await plan.writeFile(`${record.handle}.json`, Buffer.from(`${JSON.stringify(stored)}\n`), { mode: 0o600 });
        } finally {
          await close();
        }
      },
      abort: async () => {
        failWriting(new Error('the document was given up'));
        await writing.catch(() => undefined);
        await close();
      },
    };
  }

  async get(planId: string, handle: string): Promise<StoredResult | undefined> {
    if (!isResultHandle(handle)) return undefined;
    return this.withPlan(planId, async (plan) => {
      const bytes = await readStateFile(plan, `${handle}.json`);
      if (bytes === undefined) return undefined;
      const stored = JSON.parse(bytes.toString('utf8')) as StoredResult;
      return stored.planId === planId && stored.handle === handle && Number.isSafeInteger(stored.bytes) ? stored : undefined;
    });
  }

  async read(planId: string, handle: string, start: number, end: number): Promise<Uint8Array> {
    checkHandle(handle);
    const bytes = await this.withPlan(planId, async (plan) => {
      const file = await plan.openFile(`${handle}.data`);
      try {
        const from = Math.max(0, Math.min(start, file.stats.size));
        const length = Math.max(0, Math.min(end, file.stats.size) - from);
        const buffer = Buffer.alloc(length);
        let read = 0;
        while (read < length) {
          const { bytesRead } = await file.handle.read(buffer, read, length - read, from + read);
          if (bytesRead === 0) break;
          read += bytesRead;
        }
        return buffer.subarray(0, read);
      } finally {
        await file.close();
      }
    });
    if (bytes === undefined) throw new Error(`plan '${planId}' has no stored results`);
    return bytes;
  }

  async dropPlan(planId: string): Promise<void> {
    const root = await openStateDirectory(this.folder, ROLE, false);
    if (root === undefined) return;
    try {
      const name = planFolderName(planId);
      const plan = await openStateSubfolder(root, name, ROLE, false);
      if (plan === undefined) return;
      try {
        const entries = await plan.list();
        for await (const entry of entries) {
          if (entry.isDirectory()) continue;
          await plan.remove(entry.name);
        }
      } finally {
        await plan.close();
      }
      await root.removeDirectory(name);
    } finally {
      await root.close();
    }
  }

  private async withPlan<T>(planId: string, work: (plan: ConfinedDirectory) => Promise<T>): Promise<T | undefined> {
    const root = await openStateDirectory(this.folder, ROLE, false);
    if (root === undefined) return undefined;
    let plan: ConfinedDirectory | undefined;
    try {
      plan = await openStateSubfolder(root, planFolderName(planId), ROLE, false);
    } finally {
      await root.close();
    }
    if (plan === undefined) return undefined;
    try {
      return await work(plan);
    } finally {
      await plan.close();
    }
  }
}

/** The folder of a plan: 32 hex digits of a SHA-256 of its id, whatever the id holds. */
function planFolderName(planId: string): string {
  return createHash('sha256').update(planId).digest('hex').slice(0, 32);
}

function checkHandle(handle: string): void {
  if (!isResultHandle(handle)) throw new Error(`'${String(handle).slice(0, 80)}' is not a result handle`);
}
