#!/bin/sh
# Creates the three small git repositories batch.yaml points at, under
# demo/ next to this script.
set -eu
cd "$(dirname "$0")"
for name in svc-a svc-b svc-c; do
  dir="demo/$name"
  [ -d "$dir/.git" ] && continue
  mkdir -p "$dir"
  printf 'package main\n\nfunc main() {\n\tprintln("%s")\n}\n' "$name" >"$dir/main.go"
  printf '# %s\n' "$name" >"$dir/README.md"
  git -C "$dir" init -q -b main
  git -C "$dir" add -A
  git -C "$dir" -c user.name=demo -c user.email=demo@example.com commit -q -m "initial"
done
echo "demo repositories are in $(pwd)/demo"
