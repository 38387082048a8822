package memray

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/heapest/heapest/parse"
)

// FuzzParse feeds arbitrary text to the reader (seeded with testdata),
// naming frames by line for a third of the inputs: it must never panic,
// and a row it accepts must have counts it can unbias.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.csv")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
	}
	f.Fuzz(func(t *testing.T, data []byte, sampled bool) {
		opt := parse.Options{KeepGoing: len(data)%2 == 0, Lines: len(data)%3 == 0}
		if sampled {
			opt.Rate = 4096
		}
		_, err := Parse("fuzz.csv", bufio.NewReader(bytes.NewReader(data)), opt, parse.SinkFunc(func(r *parse.Record) {
			if r.InUse.Objects < 0 || r.InUse.Bytes < 0 || r.InUse.Samples < 0 {
				t.Fatalf("negative counts %+v", r.InUse)
			}
		}))
		if err != nil {
			if _, ok := err.(*parse.Error); !ok {
				t.Fatalf("error %v is not a *parse.Error", err)
			}
		}
	})
}
