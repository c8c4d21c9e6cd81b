#!/usr/bin/env bash
# The project's test command (`npm test`): lint, type-check, build and test
# every project, failing on the first failure. Run from a clean clone after
# `npm ci`; it needs no network and no running services (tests that need a
# server start and stop it themselves).
set -euo pipefail
cd "$(dirname "$0")/../.."
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false
npx nx run-many -t lint typecheck build test --parallel=2 --outputStyle=static "$@"
