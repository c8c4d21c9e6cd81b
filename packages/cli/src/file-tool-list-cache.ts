import type { McpCachedToolList, McpToolListCache } from '@ca/adapters-mcp';
import { openStateDirectory, readStateFile } from './state-files';

const KEY = /^[0-9a-f]{64}$/;

/**
 * The MCP adapter's tool-list cache in the command's state folder:
 * `mcp-tools/<key>.json`, one file per server configuration (the key is the
 * adapter's SHA-256 of what decides the list), of mode 0600 in a folder of
 * mode 0700, written to a temporary file and renamed. The folder is checked
 * like the state folder (`CLI_STATE_UNSAFE` for a link, another user's folder
 * or one others may write) and every file is opened through the verified
 * folder, never through a link. With `refresh`, nothing is read (every server
 * is listed anew) and what is listed is saved.
 */
export class FileToolListCache implements McpToolListCache {
  constructor(
    readonly folder: string,
    private readonly options: { readonly refresh?: boolean } = {},
  ) {}

  async load(key: string): Promise<McpCachedToolList | undefined> {
    if (this.options.refresh === true || !KEY.test(key)) return undefined;
    const folder = await openStateDirectory(this.folder, 'cached MCP tool lists', false);
    if (folder === undefined) return undefined;
    try {
      const bytes = await readStateFile(folder, `${key}.json`);
      if (bytes === undefined) return undefined;
      // The adapter checks the entry's form: a file that is not one is listed again, never trusted.
      return JSON.parse(bytes.toString('utf8')) as McpCachedToolList;
    } catch (error) {
      if (error instanceof SyntaxError) return undefined;
      throw error;
    } finally {
      await folder.close();
    }
  }

  async save(key: string, entry: McpCachedToolList): Promise<void> {
    if (!KEY.test(key)) throw new Error(`'${key.slice(0, 80)}' is not a key of the tool-list cache`);
    const folder = await openStateDirectory(this.folder, 'cached MCP tool lists', true);
    try {
      await folder?.writeFile(`${key}.json`, Buffer.from(`${JSON.stringify(entry)}\n`), { mode: 0o600 });
    } finally {
      await folder?.close();
    }
  }
}
