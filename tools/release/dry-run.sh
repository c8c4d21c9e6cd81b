#!/usr/bin/env bash
# CI step: preview the next release without changing anything — the version
# each @ca package would get from its conventional commits since its last tag
# (`<project>@<version>`), the CHANGELOG.md entries, the commit and tags that
# `nx release` would make. Nothing is written, committed, tagged or published.
#
# Works on a fresh clone with no release tags yet (the version on disk is the
# starting point, the changelog starts at the first commit) and on a shallow
# clone (fewer commits are seen, so a bump may be missed: fetch full history,
# e.g. actions/checkout with fetch-depth: 0, to see the real preview).
#
#   bash tools/release/dry-run.sh                 # every package
#   bash tools/release/dry-run.sh -p @ca/domain   # extra arguments go to nx release
set -euo pipefail
cd "$(dirname "$0")/../.."
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false

if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "release dry run: $(pwd) is not a git repository; nx release reads versions and changes from git history." >&2
  exit 1
fi
if [ "$(git rev-parse --is-shallow-repository)" = "true" ]; then
  echo "release dry run: shallow clone — only $(git rev-list --count HEAD) commit(s) visible; versions and changelogs are computed from those. Fetch full history for an exact preview." >&2
fi

# `nx release` = version + changelog (+ publish, skipped here); --dry-run makes
# every step print what it would do instead of doing it.
npx nx release --dry-run --skip-publish "$@"
