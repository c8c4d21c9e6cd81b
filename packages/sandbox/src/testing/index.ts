export { isProcessAlive, waitUntilProcessesGone } from './processes';
export { sandboxAvailableForTests } from './sandbox';
