// Package testfile reads the test files of several packages: one home for
// what their tests would each write again. Tests use it; production code
// does not.
package testfile

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/heapest/heapest/parse"
)

// Gunzip reads a gzip-compressed file whole, failing t on any error.
func Gunzip(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Gzip is data gzip-compressed.
func Gzip(data []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}

// Records is a parse.Sink that keeps a copy of every record it is sent:
// a parser reuses the Record, its Stack and its Pre.
type Records []parse.Record

// Record keeps a copy of r.
func (rs *Records) Record(r *parse.Record) {
	c := *r
	c.Stack = slices.Clone(r.Stack)
	if r.Pre != nil {
		pre := *r.Pre
		c.Pre = &pre
	}
	*rs = append(*rs, c)
}
