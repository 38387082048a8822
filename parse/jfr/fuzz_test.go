package jfr

import (
	"bufio"
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/heapest/heapest/parse"

	"github.com/heapest/heapest/internal/testfile"
)

// FuzzParse feeds damaged recordings to the reader (seeded with the
// testdata recordings, whole and cut short), naming frames by line for a
// third of them: the library it uses can panic on malformed input, and
// Parse must turn that into an error naming the file; it must never panic
// itself.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.jfr.gz")
	for _, p := range files {
		b := testfile.Gunzip(f, p)
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		opt := parse.Options{KeepGoing: len(data)%2 == 0, Lines: len(data)%3 == 0, SizeHint: int64(len(data))}
		_, err := Parse("fuzz.jfr", bufio.NewReader(bytes.NewReader(data)), opt, parse.SinkFunc(func(r *parse.Record) {
			if r.Alloc.Bytes < 0 || r.InUse.Bytes < 0 {
				t.Fatalf("negative counts %+v", r)
			}
		}))
		var pe *parse.Error
		if err != nil && (!errors.As(err, &pe) || pe.File != "fuzz.jfr") {
			t.Fatalf("error %v is not a *parse.Error naming the file", err)
		}
	})
}
