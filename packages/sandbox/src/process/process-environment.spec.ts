import { buildProcessEnvironment, MINIMAL_ENVIRONMENT_VARIABLES } from './process-environment';
import { ProcessOptionsError } from './process-options-error';
import { TailCapture } from './output-capture';

describe('buildProcessEnvironment', () => {
  const parent = {
    PATH: '/usr/bin',
    HOME: '/home/me',
    LANG: 'en_US.UTF-8',
    SHELL: '/bin/bash',
    AWS_SECRET_ACCESS_KEY: 'secret',
    HTTPS_PROXY: 'http://proxy',
    TERM: '() { :; }; echo pwned',
  };

  it('takes only the minimal names from the parent by default, never SHELL or a secret, nor a value that looks like a shell function', () => {
    expect(MINIMAL_ENVIRONMENT_VARIABLES).not.toContain('SHELL');
    expect(Object.isFrozen(MINIMAL_ENVIRONMENT_VARIABLES)).toBe(true);
    expect(buildProcessEnvironment({ parent })).toEqual({ PATH: '/usr/bin', HOME: '/home/me', LANG: 'en_US.UTF-8' });
  });

  it('takes the names asked for instead, then sets and removes variables on top', () => {
    expect(
      buildProcessEnvironment({ parent, inherit: [...MINIMAL_ENVIRONMENT_VARIABLES, 'HTTPS_PROXY'], env: { TOKEN: 'abc', PATH: '/opt/bin', HOME: undefined } }),
    ).toEqual({
      PATH: '/opt/bin',
      LANG: 'en_US.UTF-8',
      HTTPS_PROXY: 'http://proxy',
      TOKEN: 'abc',
    });
    expect(buildProcessEnvironment({ parent, inherit: [] })).toEqual({});
  });

  it('keeps a variable named __proto__ as a plain variable', () => {
    const env = JSON.parse('{"__proto__": "value", "A": "1"}') as Record<string, string>;
    const built = buildProcessEnvironment({ parent: {}, env });
    expect(Object.keys(built).sort()).toEqual(['A', '__proto__']);
    expect(Object.getPrototypeOf(built)).toBe(Object.prototype);
  });

  it('refuses names and values the operating system cannot pass on', () => {
    for (const [options, option] of [
      [{ env: { '': 'x' } }, 'env'],
      [{ env: { 'A=B': 'x' } }, 'env'],
      [{ env: { A: 'x\0y' } }, 'env.A'],
      [{ inherit: ['PATH', 'A=B'] }, 'inheritEnv[1]'],
      [{ inherit: 'PATH' }, 'inheritEnv'],
      [{ env: ['A'] }, 'env'],
    ] as const) {
      let thrown: unknown;
      try {
        buildProcessEnvironment(options as never);
      } catch (error) {
        thrown = error;
      }
      expect(ProcessOptionsError.isInstance(thrown)).toBe(true);
      expect(thrown).toMatchObject({ code: 'PROCESS_INVALID_OPTIONS', option });
    }
  });
});

describe('the end of a stream (TailCapture)', () => {
  it('keeps exactly the last bytes whatever the sizes of the chunks', () => {
    const text = Array.from({ length: 200 }, (_, index) => `line ${index}\n`).join('');
    const bytes = Buffer.from(text);
    for (const cap of [0, 1, 7, 64, 1000, bytes.length, bytes.length + 10]) {
      for (const chunkSize of [1, 3, 50, 4096]) {
        const tail = new TailCapture(cap);
        for (let offset = 0; offset < bytes.length; offset += chunkSize) tail.add(bytes.subarray(offset, offset + chunkSize));
        const kept = Math.min(cap, bytes.length);
        expect(tail.result()).toEqual({ text: text.slice(text.length - kept), keptBytes: kept, totalBytes: bytes.length, truncated: kept < bytes.length });
      }
    }
  });
});
