import { modelErrorText } from './model-error';

describe('modelErrorText', () => {
  const context = { providerName: 'files_read', allowedRoots: [] };

  it('quotes a message that ends with its own period as a clause: one period before the advice', () => {
    const error = Object.assign(new Error('The output was withheld. The tool ran; its output was not given back.'), { code: 'TOOL_HOOK_REFUSED' });
    const text = modelErrorText(error, context);
    expect(text).toBe(
      "Error TOOL_HOOK_REFUSED: 'files_read' failed: The output was withheld. The tool ran; its output was not given back. Check the arguments; do not repeat the same call unchanged.",
    );
    expect(text).not.toContain('..');
  });

  it('does the same for a failed execution whose cause ends with a period', () => {
    const error = Object.assign(new Error('wrapped'), { code: 'TOOL_EXECUTION_FAILED', cause: new Error('disk full.') });
    expect(modelErrorText(error, context)).not.toContain('..');
  });

  it('says a quarantined tool changed, what changed (capped), and not to call it again — not to check the arguments', () => {
    const diff = Array.from({ length: 10 }, (_, index) => `inputSchema/properties/p${index}: (none) → {"type":"string"}`);
    const changed = modelErrorText(Object.assign(new Error('quarantined'), { code: 'TOOL_DEFINITION_CHANGED', change: 'changed', diff }), context);
    expect(changed).toMatch(
      /^Error TOOL_DEFINITION_CHANGED: 'files_read' changed since its definition was pinned \(locked\), so it is quarantined and was not run\.\n/,
    );
    expect(changed).toContain('  inputSchema/properties/p7: (none) → {"type":"string"}\n  … and 2 more\n');
    expect(changed).not.toContain('Check the arguments');
    expect(modelErrorText({ code: 'TOOL_DEFINITION_CHANGED', change: 'new', diff: [] }, context)).toMatch(
      /'files_read' is new since the tool definitions were pinned/,
    );
    expect(modelErrorText({ code: 'TOOL_DEFINITION_CHANGED', change: 'removed' }, context)).toMatch(/is no longer offered by its server/);
  });
});
