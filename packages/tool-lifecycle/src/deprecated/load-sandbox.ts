// The main and testing entries keep a few names of the process runner for one
// release. They load `@ca/sandbox` only when one of them is used, so that a
// service that starts no program need not install it.
import type * as SandboxPackage from '@ca/sandbox';
import type * as SandboxTesting from '@ca/sandbox/testing';

/** `@ca/sandbox`, loaded on first use. */
export function loadSandbox(): typeof SandboxPackage {
  return require('@ca/sandbox') as typeof SandboxPackage;
}

/** `@ca/sandbox/testing`, loaded on first use. */
export function loadSandboxTesting(): typeof SandboxTesting {
  return require('@ca/sandbox/testing') as typeof SandboxTesting;
}
