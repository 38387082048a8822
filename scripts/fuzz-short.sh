#!/usr/bin/env bash
# Runs every fuzz target in the module for a short time (FUZZTIME, default
# 10s each): enough to catch regressions on the seed corpus and a little more.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${FUZZTIME:-10s}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz $pkg $f ($t)"
    go test -run '^$' -fuzz "^$f\$" -fuzztime "$t" "$pkg"
  done
done
