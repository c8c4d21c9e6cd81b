import { createExecutionId } from './execution-id';

describe('createExecutionId', () => {
  it('makes distinct ids sharing one random per-process prefix', () => {
    const ids = Array.from({ length: 100_000 }, () => createExecutionId());
    expect(new Set(ids).size).toBe(ids.length);
    const prefixes = new Set(ids.map((id) => id.slice(0, id.lastIndexOf('-'))));
    expect([...prefixes]).toEqual([expect.stringMatching(/^exec-[0-9a-f]{16}$/)]);
  });

  it('makes ids that are safe in URLs, file names and log lines', () => {
    expect(createExecutionId()).toMatch(/^exec-[0-9a-f]{16}-[0-9a-z]+$/);
  });
});
