#!/usr/bin/env bash
# make-demo.sh: creates demo/calc, a one-commit git repository with the bug
# that batch.yaml's demo instance describes, so the example runs offline.
set -euo pipefail
cd "$(dirname "$0")"
rm -rf demo/calc
mkdir -p demo/calc
cat >demo/calc/calc.py <<'PY'
def add(a, b):
    return a - b
PY
git -C demo/calc init -q -b main
git -C demo/calc add -A
git -C demo/calc -c user.name=demo -c user.email=demo@example.com commit -q -m "calc: add"
echo "demo/calc at $(git -C demo/calc rev-parse HEAD)"
