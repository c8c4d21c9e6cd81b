'use strict';
// A command hook in Claude Code's contract: the call as JSON on stdin, the
// answer as JSON on stdout. Refuses reads of `.env` files, rewrites the
// greeting's name to upper case, and says whether it could write beside its
// working folder (in the sandbox it cannot: the file system is read-only).
const fs = require('node:fs');
const path = require('node:path');

let text = '';
process.stdin.on('data', (chunk) => (text += chunk));
process.stdin.on('end', () => {
  const call = JSON.parse(text);
  let wrote;
  try {
    fs.writeFileSync(path.join(process.cwd(), 'hook-was-here'), 'x');
    wrote = 'wrote its file';
  } catch (error) {
    wrote = `could not write: ${error.code}`;
  }
  const input = call.tool_input ?? {};
  if (typeof input.path === 'string' && input.path.endsWith('.env')) {
    process.stdout.write(
      JSON.stringify({
        hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: `${call.hook_event_name}: no .env files` },
      }),
    );
    return;
  }
  process.stdout.write(
    JSON.stringify({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        ...(typeof input.path === 'string' ? { updatedInput: { ...input, path: input.path.replace('lower', 'upper') } } : {}),
        additionalContext: `hook ${wrote}; plan ${call.session_id}`,
      },
    }),
  );
});
