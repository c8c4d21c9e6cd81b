import { SCHEMA_VALIDATOR_ERROR_CODES } from './error-codes';
import { createIssue } from './schema-issue';
import { ToolSchemaValidationError } from './tool-schema-validation-error';

describe('ToolSchemaValidationError', () => {
  const issues = [
    createIssue('/a', '#/properties/a/type', 'type', 'must be string', { type: 'string' }),
    createIssue('', '#/required', 'required', "must have required property 'b'", { missingProperty: 'b' }),
  ];

  it('carries a stable code, the direction, the issues, the tool and the plan', () => {
    const cause = new Error('underlying');
    const error = new ToolSchemaValidationError({ direction: 'input', issues, toolName: 'echo', planId: 'plan-1', cause });
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      name: 'ToolSchemaValidationError',
      code: SCHEMA_VALIDATOR_ERROR_CODES.TOOL_SCHEMA_VALIDATION_FAILED,
      direction: 'input',
      toolName: 'echo',
      planId: 'plan-1',
      cause,
    });
    expect(error.issues).toEqual(issues);
    expect(Object.isFrozen(error.issues)).toBe(true);
  });

  it('says which tool, which side, what is wrong and what to do', () => {
    const input = new ToolSchemaValidationError({ direction: 'input', issues, toolName: 'echo', planId: 'plan-1' });
    expect(input.message).toBe(
      "Tool 'echo' input: value at /a must be string (keyword type); value must have required property 'b' (keyword required)" +
        " (plan 'plan-1'). Fix the input to match the tool's inputSchema.",
    );
    const output = new ToolSchemaValidationError({ direction: 'output', issues: issues.slice(0, 1), toolName: 'echo' });
    expect(output.message).toBe(
      "Tool 'echo' output: value at /a must be string (keyword type). The tool returned a value that does not match" +
        " the tool's outputSchema: fix the tool or its outputSchema.",
    );
  });

  it('summarises long issue lists and accepts a message of its own', () => {
    const many = Array.from({ length: 5 }, (_, index) => createIssue(`/${index}`, '#/items/type', 'type', 'must be number'));
    expect(new ToolSchemaValidationError({ direction: 'input', issues: many }).message).toContain('and 2 more issue(s)');
    expect(new ToolSchemaValidationError({ direction: 'input', issues, message: 'custom' }).message).toBe('custom');
    expect(new ToolSchemaValidationError({ direction: 'input', issues: [] }).message).toContain('does not match the schema');
  });

  it('is recognised by its brand, also from another copy of the package', () => {
    expect(ToolSchemaValidationError.isInstance(new ToolSchemaValidationError({ direction: 'input', issues }))).toBe(true);
    const fromOtherCopy = Object.assign(new Error('x'), { [Symbol.for('ca.error.ToolSchemaValidationError')]: true });
    expect(ToolSchemaValidationError.isInstance(fromOtherCopy)).toBe(true);
    expect(ToolSchemaValidationError.isInstance(new Error('x'))).toBe(false);
    expect(ToolSchemaValidationError.isInstance({ code: 'TOOL_SCHEMA_VALIDATION_FAILED' })).toBe(false);
    expect(ToolSchemaValidationError.isInstance(null)).toBe(false);
  });
});
