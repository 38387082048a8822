package dhat

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/heapest/heapest/parse"
)

// FuzzParse feeds arbitrary bytes to the reader (seeded with the real
// profiles of testdata; a third named by line): it must never panic, fail
// only with a *parse.Error naming the file, and send exact records whose
// counts are whole and not negative, in use no more than allocated.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.dhat.json")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		opt := parse.Options{Lines: len(data)%3 == 0}
		_, err := Parse("fuzz.json", bufio.NewReader(bytes.NewReader(data)), opt, parse.SinkFunc(func(r *parse.Record) {
			in, all := r.InUse, r.Alloc
			if r.Scheme != parse.Exact || in.Bytes < 0 || in.Objects < 0 || in.Bytes > all.Bytes || in.Objects > all.Objects {
				t.Fatalf("record %+v", r)
			}
		}))
		var pe *parse.Error
		if err != nil && (!errors.As(err, &pe) || pe.File != "fuzz.json") {
			t.Fatalf("error %v is not a *parse.Error naming the file", err)
		}
	})
}
