// Lets Node load this plugin's TypeScript sources when Nx runs a generator.
//
// Nx transpiles a local plugin's `.ts` files only through @swc-node/register
// or ts-node, and Node 20 cannot strip types itself; this workspace installs
// neither. Rather than add a transpiler (or a build step before every
// `nx g`), the plugin compiles its own files on load with the TypeScript
// compiler the workspace already has. Only files under this plugin's folder
// are handled, and only when no other `.ts` loader is registered, so the hook
// never changes how anything else in the Nx process is loaded.
const fs = require('node:fs');
const path = require('node:path');

const pluginRoot = path.resolve(__dirname, '..') + path.sep;

function registerTypeScript() {
  if (require.extensions['.ts'] !== undefined) return;
  const ts = require('typescript');
  const compilerOptions = {
    module: ts.ModuleKind.CommonJS,
    target: ts.ScriptTarget.ES2022,
    esModuleInterop: true,
    inlineSourceMap: true,
    inlineSources: true,
  };
  const fallback = require.extensions['.js'];
  function loadTypeScript(module, filename) {
    if (!filename.startsWith(pluginRoot)) return fallback(module, filename);
    const source = fs.readFileSync(filename, 'utf8');
    const { outputText } = ts.transpileModule(source, { compilerOptions, fileName: filename, reportDiagnostics: false });
    module._compile(outputText, filename);
  }
  require.extensions['.ts'] = loadTypeScript;
}

module.exports = { registerTypeScript };
