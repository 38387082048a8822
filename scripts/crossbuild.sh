#!/usr/bin/env bash
# Builds and vets heapest for the systems it is meant to run on besides this
# one: Windows, macOS, FreeBSD, and 32-bit and big-endian Linux. heapest is
# pure Go, so a cross build catches what only another system's compiler
# sees (syscall.Umask missing on Windows, a constant past a 32-bit int).
# It is not part of .ci/run: a cold build for another system compiles the
# standard library and every dependency again, minutes on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=${TARGETS:-windows/amd64 windows/arm64 darwin/arm64 darwin/amd64 freebsd/amd64 linux/386 linux/arm linux/s390x}
for t in $targets; do
  echo "== $t"
  GOOS=${t%/*} GOARCH=${t#*/} go vet ./...
done
