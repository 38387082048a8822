package heapprofile

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/heapest/heapest/parse"
)

// FuzzParse feeds arbitrary bytes to the reader (seeded with the real
// profiles of testdata; a third named by line): it must never panic, fail only with a
// *parse.Error, and send records whose counts can be unbiased.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.heapprofile")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint32(0))
	}
	f.Add([]byte(`{"head":{"callFrame":{"functionName":"(root)"},"id":1,"children":[{"callFrame":{"functionName":"f"},"selfSize":131088,"id":2,"children":[]}]},"samples":[{"size":131088,"nodeId":2}]}`), uint32(131072))
	f.Fuzz(func(t *testing.T, data []byte, rate uint32) {
		opt := parse.Options{Rate: float64(rate), Lines: len(data)%3 == 0}
		p, err := Parse("fuzz.heapprofile", bufio.NewReader(bytes.NewReader(data)), opt, parse.SinkFunc(func(r *parse.Record) {
			c := r.InUse
			if c.Objects < 0 || c.Bytes < 0 || c.Samples < 0 || math.IsNaN(c.Bytes) || math.IsInf(c.Bytes, 0) {
				t.Fatalf("counts %+v", c)
			}
			if r.Scheme == parse.Bernoulli && !(r.Rate > 0) {
				t.Fatalf("rate %v", r.Rate)
			}
		}))
		var pe *parse.Error
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("error %v is not a *parse.Error", err)
		}
		if err == nil && p.Source.Format != "heapprofile" {
			t.Fatalf("format %q", p.Source.Format)
		}
	})
}
