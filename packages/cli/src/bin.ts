#!/usr/bin/env node
import { processIo } from './cli-io';
import { createCliRedactor } from './cli-redaction';
import { main } from './main';

const argv = process.argv.slice(2);
main(argv, processIo()).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // Not a path the command takes on purpose; still through the redaction of every other message.
    const text = `agents: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`;
    process.stderr.write(createCliRedactor(argv, process.env).redact(text));
    process.exitCode = 1;
  },
);
