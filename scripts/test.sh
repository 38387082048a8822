#!/usr/bin/env bash
# The whole test suite: heapest's own module, then the DuckDB engine module
# (a module of its own, as it links DuckDB with cgo and heapest must not;
# its go.mod keeps `go test ./...` out of it). GOWORK=off keeps a go.work,
# should one appear, from mixing the two builds.
set -euo pipefail
cd "$(dirname "$0")/.."
# An explicit timeout per package: the e2e package runs real programs and
# came close to go test's 10-minute default on a loaded 2-core machine.
go test -timeout 20m ./...
GOWORK=off go -C engines/duckdb test -timeout 20m ./...
