//go:build bloat

package pagecache

// bufSize is the regression docs/ci.md catches: "round the buffer up to
// 8 KiB in case pages grow" doubles what the cache holds. Build with
// -tags=bloat (GOFLAGS=-tags=bloat) to try it.
const bufSize = 8192
