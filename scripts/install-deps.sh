#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine: jemalloc with
# profiling (and its jeprof), gperftools, binutils, chromium and chromedriver,
# Node.js with @datadog/pprof, Redis, Valgrind.
# Idempotent; a no-op when everything is present. Needs root (or sudo) for
# apt-get.
set -euo pipefail
need=()
[[ -e /usr/include/jemalloc/jemalloc.h ]] || need+=(libjemalloc-dev)
command -v jeprof >/dev/null || need+=(libjemalloc-dev)
[[ -e /usr/include/gperftools/malloc_extension.h ]] || need+=(libgoogle-perftools-dev)
command -v google-pprof >/dev/null || need+=(google-perftools)
command -v perl >/dev/null || need+=(perl)
command -v addr2line >/dev/null || need+=(binutils)
command -v g++ >/dev/null || need+=(g++)
# engines/duckdb: gcc builds gate.c against jemalloc, and cgo links DuckDB's
# C++ library (libstdc++, from g++ above).
command -v gcc >/dev/null || need+=(gcc)
# symbolize tests build a small Rust program (legacy and v0 mangling).
command -v rustc >/dev/null || need+=(rustc)
# bench/run.sh only: hyperfine times the tools, GNU time measures peak RSS.
command -v hyperfine >/dev/null || need+=(hyperfine)
[[ -x /usr/bin/time ]] || need+=(time)
# e2e/web_test.go drives heapest web in headless chromium through
# chromedriver.
command -v chromium >/dev/null || need+=(chromium)
command -v chromedriver >/dev/null || need+=(chromium-driver)
# e2e/redis_test.go runs Debian's Redis (redis-tools' redis-check-rdb is the
# server too; redis-server would also start a system service).
command -v redis-check-rdb >/dev/null || need+=(redis-tools)
# e2e/dhat_test.go runs a program under Valgrind's DHAT.
command -v valgrind >/dev/null || need+=(valgrind)
# e2e/node_test.go runs Node.js programs under V8's heap profiler.
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
if ((${#need[@]})); then
  sudo=""
  [[ $(id -u) == 0 ]] || sudo="sudo"
  echo "installing: ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
go mod download
# e2e/node_test.go's pprof route: @datadog/pprof (prebuilt for Node 16 and
# later), from the npm registry, where the test looks for it.
node_modules=${HEAPEST_NODE_MODULES:-$HOME/.cache/heapest/node}
if [[ ! -d $node_modules/node_modules/@datadog/pprof ]]; then
  npm install --prefix "$node_modules" --no-audit --no-fund --loglevel=error @datadog/pprof@5.20.0 >/dev/null
fi
