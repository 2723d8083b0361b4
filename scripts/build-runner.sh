#!/usr/bin/env bash
# Builds the runner from the action's own source ($GITHUB_ACTION_PATH) into
# a private directory, $RUNNER_TEMP/runner-bin, and writes its path to the
# step output "bin". It leaves the caller's PATH and Go as they were: it
# writes neither GITHUB_PATH nor GITHUB_ENV, and every setting below is for
# this build's process only.
#
# - A go on PATH is used as it is. GOTOOLCHAIN=auto lets an older go fetch
#   the release go.mod asks for from the Go proxy (into the module cache,
#   not onto PATH), whatever GOTOOLCHAIN the caller set.
# - Without a go, the go.mod's release is downloaded from go.dev into
#   $RUNNER_TEMP/runner-go and called by its absolute path.
# - The version is stamped: the checkout's tag or a pseudo-version naming
#   its commit when the action is a checkout (go's VCS stamping, with git
#   trusting the checkout whoever owns it), else the ref the action was
#   used at (the last element of $GITHUB_ACTION_PATH,
#   .../_actions/OWNER/REPO/REF).
set -euo pipefail
src="${GITHUB_ACTION_PATH:?}"
bin="${RUNNER_TEMP:?}/runner-bin"
mkdir -p "$bin"
want="$(sed -n 's/^go \([0-9][0-9.]*\).*/\1/p' "$src/go.mod" | head -n 1)"
go_cmd="$(command -v go || true)"
if [ -z "$go_cmd" ]; then
  case "${RUNNER_OS:-Linux}" in Linux) os=linux ;; macOS) os=darwin ;; *) echo "::error title=runner::no go on PATH and no Go download for ${RUNNER_OS}" >&2; exit 3 ;; esac
  case "${RUNNER_ARCH:-X64}" in X64) arch=amd64 ;; ARM64) arch=arm64 ;; *) echo "::error title=runner::no Go download for ${RUNNER_ARCH}" >&2; exit 3 ;; esac
  mkdir -p "$RUNNER_TEMP/runner-go"
  curl -fsSL --retry 3 "https://go.dev/dl/go${want}.${os}-${arch}.tar.gz" | tar -xz -C "$RUNNER_TEMP/runner-go"
  go_cmd="$RUNNER_TEMP/runner-go/go/bin/go"
fi
ldflags=""
if [ ! -e "$src/.git" ]; then
  ldflags="-X github.com/seed43ef5acb/runner/pipeline.stampedVersion=$(basename "$src")"
else
  # go's VCS stamping runs git in the checkout, which refuses a repository
  # owned by another user ("dubious ownership": a container job, or a
  # runner user other than the checkout's) and fails the build. The build
  # compiles and runs this checkout's code anyway, so git may trust it:
  # safe.directory for this process only, after any GIT_CONFIG_* pairs the
  # caller set.
  n="${GIT_CONFIG_COUNT:-0}"
  export GIT_CONFIG_COUNT="$((n + 1))" "GIT_CONFIG_KEY_$n=safe.directory" "GIT_CONFIG_VALUE_$n=$src"
fi
cd "$src"
GOTOOLCHAIN=auto GOFLAGS=-mod=readonly CGO_ENABLED=0 \
  "$go_cmd" build -trimpath -ldflags="$ldflags" -o "$bin/runner" ./cmd/runner
echo "bin=$bin/runner" >> "$GITHUB_OUTPUT"
