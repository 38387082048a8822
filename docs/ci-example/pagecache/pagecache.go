// Package pagecache keeps rendered pages in memory. It is the example that
// docs/ci.md gates: its memory is budgeted in CI with heapest.
package pagecache

import "fmt"

// Cache maps a page's path to its rendered bytes.
type Cache struct {
	pages map[string][]byte
}

// New returns an empty cache.
func New() *Cache { return &Cache{pages: make(map[string][]byte)} }

// Warm renders and keeps n pages.
func (c *Cache) Warm(n int) {
	for i := 0; i < n; i++ {
		path := fmt.Sprintf("/item/%d", i)
		c.pages[path] = render(path)
	}
}

// Len is the number of cached pages.
func (c *Cache) Len() int { return len(c.pages) }

// render stands in for a template: it fills a buffer of bufSize bytes (see
// bufsize.go, and bufsize_bloat.go for the regression docs/ci.md makes).
func render(path string) []byte {
	buf := make([]byte, 0, bufSize)
	buf = append(buf, "<html><body>"...)
	buf = append(buf, path...)
	for len(buf) < 3000 {
		buf = append(buf, " lorem ipsum"...)
	}
	return append(buf, "</body></html>"...)
}
