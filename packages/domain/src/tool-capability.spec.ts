import { isCapabilityAtLeastAsStrict, normalizeCapability } from './tool-capability';

describe('normalizeCapability', () => {
  it('treats a tool that declares nothing as writing, not checkpointable, destructive and open-world', () => {
    expect(normalizeCapability()).toEqual({
      writes: true,
      checkpointable: false,
      idempotent: false,
      destructive: true,
      openWorld: true,
    });
  });

  it.each([null, 42, 'read-only', [], true])('falls back to the conservative capability for %p', (input) => {
    expect(normalizeCapability(input)).toEqual(normalizeCapability({}));
  });

  it('only accepts exact booleans that loosen the defaults', () => {
    const capability = normalizeCapability({ writes: 'false', checkpointable: 'true', idempotent: 1, openWorld: 0 });
    expect(capability).toEqual(normalizeCapability({}));
  });

  it('treats a tool that declares it does not write as checkpointable unless it says otherwise', () => {
    expect(normalizeCapability({ writes: false }).checkpointable).toBe(true);
    expect(normalizeCapability({ writes: false, checkpointable: false }).checkpointable).toBe(false);
    expect(normalizeCapability({ writes: 'no' }).checkpointable).toBe(false);
  });

  it('keeps declared values and clears destructive for a read-only tool', () => {
    expect(normalizeCapability({ writes: false, destructive: true, openWorld: false, idempotent: true })).toEqual({
      writes: false,
      checkpointable: true,
      idempotent: true,
      destructive: false,
      openWorld: false,
    });
    expect(normalizeCapability({ writes: true, checkpointable: true, destructive: false })).toMatchObject({
      writes: true,
      checkpointable: true,
      destructive: false,
    });
  });

  it('returns a frozen object', () => {
    expect(Object.isFrozen(normalizeCapability({ writes: false }))).toBe(true);
  });
});

describe('isCapabilityAtLeastAsStrict', () => {
  const writer = normalizeCapability({ writes: true, checkpointable: true, idempotent: true, openWorld: false });

  it('accepts the same capability and a stricter one', () => {
    expect(isCapabilityAtLeastAsStrict(writer, writer)).toBe(true);
    expect(isCapabilityAtLeastAsStrict({ ...writer, checkpointable: false, idempotent: false, openWorld: true }, writer)).toBe(true);
  });

  it('refuses a capability that claims read-only for a writing tool', () => {
    expect(isCapabilityAtLeastAsStrict({ ...writer, writes: false }, writer)).toBe(false);
  });

  it('refuses a capability that claims checkpointable or idempotent where the base is not', () => {
    const base = normalizeCapability({ writes: true });
    expect(isCapabilityAtLeastAsStrict({ ...base, checkpointable: true }, base)).toBe(false);
    expect(isCapabilityAtLeastAsStrict({ ...base, idempotent: true }, base)).toBe(false);
    expect(isCapabilityAtLeastAsStrict({ ...base, openWorld: false }, base)).toBe(false);
    expect(isCapabilityAtLeastAsStrict({ ...base, destructive: false }, base)).toBe(false);
  });
});
