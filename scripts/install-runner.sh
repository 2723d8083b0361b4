#!/usr/bin/env bash
# Installs the runner for the action into $RUNNER_TEMP/runner-bin and
# writes its path to the step output "bin"; the log says which way:
#
# - At a release tag (vX.Y.Z, the action's own ref), it downloads that
#   release's archive for this OS and architecture and its checksums.txt,
#   and refuses (exit 1, saying why) an archive whose SHA-256 is not the
#   one checksums.txt lists, or a binary that reports another version.
# - At a branch, a commit, a major tag such as v1, or a tag whose release
#   has no archive to download, it builds from source (build-runner.sh).
#
# `install-runner.sh plan` only decides: it writes the outputs "source"
# (true or false), and for a source build the Go cache paths and a cache
# key, for the action's actions/cache step.
#
# Inputs (env): RUNNER_ACTION_REF and RUNNER_ACTION_REPOSITORY
# (github.action_ref and github.action_repository, empty for `uses: ./`;
# else read from $GITHUB_ACTION_PATH, .../_actions/OWNER/REPO/REF),
# GITHUB_SERVER_URL (releases are at
# $GITHUB_SERVER_URL/OWNER/REPO/releases/download/TAG/), RUNNER_OS and
# RUNNER_ARCH. Like build-runner.sh it changes no PATH and no environment
# of the caller's later steps.
set -euo pipefail
ref="${RUNNER_ACTION_REF:-}"
repo="${RUNNER_ACTION_REPOSITORY:-}"
action="${GITHUB_ACTION_PATH:-}"
if [ -z "$ref" ] && [[ "$action" == */_actions/*/*/* ]]; then
  ref="$(basename "$action")"
  repo="$(basename "$(dirname "$(dirname "$action")")")/$(basename "$(dirname "$action")")"
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# why_source says why this ref is built from source; empty for a release.
why_source() {
  if [ -z "$ref" ] || [ -z "$repo" ]; then
    echo "the action is used from a path, not a release"
  elif ! [[ "$ref" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
    echo "$ref is not a release tag (vX.Y.Z)"
  elif [ "${RUNNER_OS:-Linux}" != Linux ] && [ "${RUNNER_OS:-}" != macOS ]; then
    echo "no release archive for ${RUNNER_OS}"
  elif [ "${RUNNER_ARCH:-X64}" != X64 ] && [ "${RUNNER_ARCH:-}" != ARM64 ]; then
    echo "no release archive for ${RUNNER_ARCH}"
  fi
}
why="$(why_source)"

if [ "${1:-}" = plan ]; then
  if [ -z "$why" ]; then
    echo "source=false" >> "$GITHUB_OUTPUT"
    exit 0
  fi
  if command -v go >/dev/null; then
    modcache="$(go env GOMODCACHE)" buildcache="$(go env GOCACHE)"
  else # build-runner.sh downloads a Go, which uses the defaults
    modcache="$HOME/go/pkg/mod" buildcache="$HOME/.cache/go-build"
  fi
  if command -v sha256sum >/dev/null; then
    sum="$(sha256sum "$action/go.sum" | cut -c1-16)"
  else
    sum="$(shasum -a 256 "$action/go.sum" | cut -c1-16)"
  fi
  {
    echo "source=true"
    echo "gomodcache=$modcache"
    echo "gocache=$buildcache"
    echo "key=runner-go-${RUNNER_OS:-Linux}-${RUNNER_ARCH:-X64}-$sum"
  } >> "$GITHUB_OUTPUT"
  exit 0
fi

from_source() {
  echo "runner: building from source at ${ref:-this checkout}: $1"
  exec "$here/build-runner.sh"
}
if [ -n "$why" ]; then
  from_source "$why"
fi
os=linux arch=amd64
[ "${RUNNER_OS:-Linux}" = macOS ] && os=darwin
[ "${RUNNER_ARCH:-X64}" = ARM64 ] && arch=arm64

archive="runner_${ref#v}_${os}_${arch}.tar.gz"
url="${GITHUB_SERVER_URL:-https://github.com}/$repo/releases/download/$ref"
dl="$(mktemp -d "${RUNNER_TEMP:?}/runner-download.XXXXXX")"
trap 'rm -rf "$dl"' EXIT
fetch() { curl -fsSL --retry 3 --retry-connrefused -o "$dl/$1" "$url/$1" 2>"$dl/$1.err"; }
if ! fetch checksums.txt; then
  from_source "could not download $url/checksums.txt ($(tr '\n' ' ' < "$dl/checksums.txt.err"))"
fi
if ! fetch "$archive"; then
  from_source "could not download $url/$archive ($(tr '\n' ' ' < "$dl/$archive.err"))"
fi

refuse() {
  echo "::error title=runner::$1"
  exit 1
}
want="$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1 }' "$dl/checksums.txt")"
if [ -z "$want" ]; then
  refuse "checksums.txt of $ref lists no $archive: refusing an archive that cannot be verified"
fi
if command -v sha256sum >/dev/null; then
  got="$(sha256sum "$dl/$archive" | cut -d' ' -f1)"
else
  got="$(shasum -a 256 "$dl/$archive" | cut -d' ' -f1)"
fi
if [ "$got" != "$want" ]; then
  refuse "$archive from $url has SHA-256 $got, but checksums.txt says $want: the archive was altered or damaged; refusing it"
fi

bin="$RUNNER_TEMP/runner-bin"
mkdir -p "$bin"
tar -xzf "$dl/$archive" -C "$bin" runner
version="$("$bin/runner" version)"
if [ "$version" != "runner $ref" ]; then
  refuse "the runner in $archive reports \"$version\", not \"runner $ref\"; refusing it"
fi
echo "runner: installed the release $ref ($archive, SHA-256 $got as checksums.txt lists)"
echo "bin=$bin/runner" >> "$GITHUB_OUTPUT"
