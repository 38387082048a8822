// Package testfile reads the test files of several packages: one home for
// what their tests would each write again. Tests use it; production code
// does not.
package testfile

import (
	"compress/gzip"
	"io"
	"os"
	"testing"
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
