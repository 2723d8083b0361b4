#!/usr/bin/env bash
# Lets the runner binary create user namespaces where AppArmor restricts
# them (GitHub's ubuntu-24.04 runners: kernel.apparmor_restrict_
# unprivileged_userns=1), so commands get the namespaces layer and not
# Landlock only. It is Ubuntu's own way for one program: a profile that
# attaches to that binary's path only, unconfined but for the "userns,"
# rule, loaded with sudo. What it changes on the machine: one file,
# /etc/apparmor.d/runner-userns-<hash of the path>, and that profile in
# the kernel (docs/sandbox.md).
#
#   apparmor-userns.sh profile BIN   print the profile for BIN
#   apparmor-userns.sh load BIN      install and load it, where needed
#
# load never fails the step: where the profile cannot be loaded (no sudo,
# no apparmor_parser, a parser that refuses it) it says so and the run
# goes on with Landlock only. Its outcome, one line, is the step output
# "setup", which the run step passes to the runner (run.started records
# it as sandbox.host_setup).
#
# Tests point APPARMOR_USERNS_SYSCTL and APPARMOR_USERNS_DIR elsewhere
# (defaults: the kernel's sysctl file and /etc/apparmor.d).
set -uo pipefail
sysctl_file="${APPARMOR_USERNS_SYSCTL:-/proc/sys/kernel/apparmor_restrict_unprivileged_userns}"
profile_dir="${APPARMOR_USERNS_DIR:-/etc/apparmor.d}"

# profile_name is the profile's name for the binary path $1.
profile_name() {
  printf 'runner-userns-%s' "$(printf '%s' "$1" | sha256sum | cut -c1-12)"
}

# profile prints the profile for the binary path $1: the path quoted, and
# AppArmor's pattern characters in it escaped so it names that file only.
profile() {
  local bin="$1" quoted
  case "$bin" in /*) ;; *) echo "apparmor-userns.sh: $bin is not an absolute path" >&2; return 2 ;; esac
  case "$bin" in *$'\n'* | *'"'*) echo "apparmor-userns.sh: $bin holds a newline or a quote" >&2; return 2 ;; esac
  quoted="$(printf '%s' "$bin" | sed -e 's/[][\\*?{}^,@]/\\&/g')"
  if [ -e /etc/apparmor.d/abi/4.0 ]; then
    printf 'abi <abi/4.0>,\n'
  fi
  printf 'include <tunables/global>\n\n'
  printf '# Written by the runner action: only %s may create user namespaces.\n' "$(profile_name "$bin")"
  printf 'profile %s "%s" flags=(unconfined) {\n  userns,\n}\n' "$(profile_name "$bin")" "$quoted"
}

# say prints the outcome and writes it as the step output "setup".
say() {
  echo "runner: $1"
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf 'setup=%s\n' "$1" >> "$GITHUB_OUTPUT"
  fi
}

load() {
  local bin="$1" restrict="$sysctl_file" name file tmp err
  if [ "$(uname -s)" != Linux ]; then
    say "no AppArmor profile: not Linux"
    return 0
  fi
  if [ ! -r "$restrict" ] || [ "$(cat "$restrict")" = 0 ]; then
    say "no AppArmor profile: AppArmor does not restrict user namespaces here (nothing changed)"
    return 0
  fi
  if ! sudo -n true 2>/dev/null; then
    echo "::warning title=runner::no passwordless sudo to load an AppArmor profile; commands run under Landlock only"
    say "AppArmor profile not loaded: no passwordless sudo; commands run under Landlock only"
    return 0
  fi
  if ! sudo -n sh -c 'command -v apparmor_parser' >/dev/null 2>&1; then
    echo "::warning title=runner::apparmor_parser is missing; commands run under Landlock only"
    say "AppArmor profile not loaded: apparmor_parser is missing; commands run under Landlock only"
    return 0
  fi
  name="$(profile_name "$bin")"
  file="$profile_dir/$name"
  tmp="$(mktemp)"
  if ! profile "$bin" > "$tmp"; then
    rm -f "$tmp"
    say "AppArmor profile not loaded: the binary path cannot be named in a profile; commands run under Landlock only"
    return 0
  fi
  if ! err="$(sudo -n install -m 0644 "$tmp" "$file" 2>&1 && sudo -n apparmor_parser -r "$file" 2>&1)"; then
    rm -f "$tmp"
    err="$(printf '%s' "$err" | tr '\n' ' ' | cut -c1-300)"
    echo "::warning title=runner::could not load the AppArmor profile $file ($err); commands run under Landlock only"
    say "AppArmor profile $name not loaded ($err); commands run under Landlock only"
    return 0
  fi
  rm -f "$tmp"
  say "AppArmor profile $name loaded from $file: $bin may create user namespaces (the namespaces layer)"
}

case "${1:-}" in
  profile) profile "${2:?usage: apparmor-userns.sh profile BIN}" ;;
  load) load "${2:?usage: apparmor-userns.sh load BIN}" ;;
  *) echo "usage: apparmor-userns.sh profile|load BIN" >&2; exit 2 ;;
esac
