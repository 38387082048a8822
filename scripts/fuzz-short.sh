#!/usr/bin/env bash
# Runs every fuzz target in the module for a short time (FUZZTIME, default
# 3s each: from hundreds of inputs a target to tens of thousands, on 2
# CPUs): enough to catch regressions on the seed corpus and a little more.
# (5 s each took the CI run, with its 21 targets, to its 10-minute mark;
# longer runs are for FUZZTIME=10m by hand.)
# Each new input that widens coverage is minimized for at most a second
# (Go's default is a minute): with it, a target whose first mutations find
# new code, as the Parquet reader's do, spent its whole run minimizing and
# ran 6 inputs in 5 s; it now runs thousands.
#
# Go's fuzzer sometimes ends a run with "context deadline exceeded" and no
# failing input when a worker's last call outlives the time limit (more
# likely on a loaded machine). That is no finding: such a run is tried once
# more, and fails only if it fails again or writes a crasher.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${FUZZTIME:-3s}
fuzz() { # pkg target dir
  local out
  if out=$(go test -run '^$' -fuzz "^$2\$" -fuzztime "$t" -fuzzminimizetime 1s "$1" 2>&1); then
    echo "$out" | tail -1
    return 0
  fi
  echo "$out"
  if grep -q "context deadline exceeded" <<<"$out" && ! grep -q "Failing input written" <<<"$out"; then
    echo "fuzz $1 $2: deadline flake without a failing input; running it again"
    go test -run '^$' -fuzz "^$2\$" -fuzztime "$t" -fuzzminimizetime 1s "$1"
    return
  fi
  return 1
}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz $pkg $f ($t)"
    fuzz "$pkg" "$f"
  done
done
