package heapprofile

import (
	"bufio"
	"bytes"
	"fmt"
	"testing"

	"github.com/heapest/heapest/parse"
)

// BenchmarkParse reads a simulated profile of 2,000 nodes of 40 samples
// each (objects of 16 bytes to 16 KiB, every 32 KiB, the interval found
// from the samples): MB/s of JSON.
func BenchmarkParse(b *testing.B) {
	nodes := make([]simNode, 2000)
	for i := range nodes {
		size := int64(16 << (i % 11))
		nodes[i] = simNode{name: fmt.Sprintf("f%d", i), sizes: map[int64]int64{size: 30, size + 8: 10}}
	}
	data := simulate(b, 32768, nodes)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := Parse("bench.heapprofile", bufio.NewReader(bytes.NewReader(data)), parse.Options{}, parse.SinkFunc(func(*parse.Record) {}))
		if err != nil {
			b.Fatal(err)
		}
		if p.Source.Rate != 32768 {
			b.Fatalf("rate %v", p.Source.Rate)
		}
	}
}
