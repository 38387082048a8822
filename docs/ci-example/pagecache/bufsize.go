//go:build !bloat

package pagecache

// bufSize holds a rendered page (about 3 KB) without growing.
const bufSize = 4096
