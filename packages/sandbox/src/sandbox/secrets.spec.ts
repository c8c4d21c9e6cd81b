import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { resourceFromPath } from '@ca/tool-context';
import { runProcess } from '../process';
import { makeTemporaryFolder, removeTemporaryFolders, sandboxAvailableForTests } from '../testing';
import { createSandbox, type SandboxWrites } from './index';
import { MAY_CHANGE_USER, runNodeAsAnotherUser } from './another-user.test-helper';

const describeSandboxed = sandboxAvailableForTests('@ca/sandbox secrets kept off command lines') ? describe : describe.skip;

// Reads every /proc/<pid>/cmdline but its own, a few times over, and says which held the secret (given in its
// environment, which no other user can read) and which held the marker (the sandboxed program's argument).
const SCANNER = `
const fs = require('fs');
const secret = process.env.SECRET_TO_FIND;
const marker = process.env.MARKER_TO_FIND;
const found = new Set();
let markerSeen = false;
for (let round = 0; round < 5; round++) {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let text;
    try { text = fs.readFileSync('/proc/' + entry + '/cmdline', 'latin1'); } catch { continue; }
    if (text.includes(marker)) markerSeen = true;
    if (text.includes(secret)) found.add(text.split('\\0')[0]);
  }
}
process.stdout.write(JSON.stringify({ uid: process.getuid(), markerSeen, found: [...found] }));
`;

/** Runs the scanner as another user (nobody) when this process may change users; as this one otherwise (a command line is readable by every user alike). */
async function scanCommandLines(secret: string, marker: string): Promise<{ uid: number; markerSeen: boolean; found: string[] }> {
  return (await runNodeAsAnotherUser(SCANNER, { SECRET_TO_FIND: secret, MARKER_TO_FIND: marker })) as { uid: number; markerSeen: boolean; found: string[] };
}

describeSandboxed('the environment of a sandboxed program is on no command line (real bwrap, another user scanning /proc)', () => {
  const sandbox = createSandbox('required');

  afterEach(removeTemporaryFolders);

  it.each<SandboxWrites>(['in-place', 'overlay'])(
    'writes %s: the value reaches the program, and no /proc/<pid>/cmdline holds it while it runs',
    async (writes) => {
      const work = await makeTemporaryFolder();
      const secret = `ca-secret-${randomBytes(12).toString('hex')}`;
      const marker = `ca-marker-${randomBytes(6).toString('hex')}`;
      // The program says it runs by connecting here, and ends when told to: no guess at how long a scan takes.
      const connected: Socket[] = [];
      const server = createServer((socket) => connected.push(socket));
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const port = (server.address() as { port: number }).port;
      try {
        const launcher = await sandbox.launcher({ resources: [resourceFromPath({ id: 'work', path: work, access: 'write' })], writes, network: true });
        const run = runProcess({
          command: process.execPath,
          args: [
            '-e',
            `const socket = require('net').connect(${port}, '127.0.0.1'); socket.on('data', () => { process.stdout.write(process.env.CA_TEST_TOKEN); socket.end(); });`,
            marker,
          ],
          cwd: work,
          env: { CA_TEST_TOKEN: secret },
          timeoutMs: 60_000,
          ...(launcher === undefined ? {} : { launcher }),
        });
        while (connected.length === 0) await once(server, 'connection');
        const scan = await scanCommandLines(secret, marker);
        (connected[0] as Socket).write('go');
        const result = await run;
        await launcher?.overlay()?.discard();

        expect(result.exitCode).toBe(0);
        expect(result.stdout.text).toBe(secret);
        if (MAY_CHANGE_USER) expect(scan.uid).toBe(65534);
        expect(scan.markerSeen).toBe(true);
        expect(scan.found).toEqual([]);
      } finally {
        for (const socket of connected) socket.destroy();
        server.close();
      }
    },
  );
});
