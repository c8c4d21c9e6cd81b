#!/usr/bin/env bash
# The project's test command (`npm test`): lint, type-check, build and test
# every project, failing on any failure. Run from a clean clone after
# `npm ci`. It needs no running services (tests that need a server — MCP
# servers, a local HTTP server, a Verdaccio registry — start and stop it
# themselves) and no network but the npm registry (the publishing test's
# consumer project installs third-party packages from it).
set -euo pipefail
cd "$(dirname "$0")/../.."
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false
# In CI every task really runs: results replayed from a local Nx cache prove
# nothing about a clean clone.
cache_flag=()
if [ "${CI:-}" = "true" ]; then cache_flag=(--skip-nx-cache); fi
# The formatter first: a file Prettier would change fails the run, before
# the long tasks (fix with `npm run format`).
npx prettier --check --log-level warn .
npx nx run-many -t lint typecheck build test --parallel=2 --outputStyle=static "${cache_flag[@]}" "$@"
