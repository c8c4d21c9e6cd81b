// Helpers for the tests of tools that start programs and change files.
export { isProcessAlive, killProcesses, processesWithArgument, uniqueSleep, waitUntil, waitUntilProcessesGone } from './processes';
export { sandboxAvailableForTests } from './sandbox';
export { makeTemporaryFolder, removeTemporaryFolders, snapshotTree } from './files';
