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
});
