package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/heapest/heapest/ci"
)

// benchRows are n rows as a fleet's dumps give them: distinct function
// keys, a few stack frames, statistics of several sizes and rates.
func benchRows(n int) []Row {
	rows := make([]Row, n)
	for i := range rows {
		s := stats(float64(1+i%40), float64(int(16)<<(i%12)), float64(int(65536)<<(i%4)))
		rows[i] = Row{Source: fmt.Sprintf("/var/dumps/host%d/jeprof.%d.0.f.heap", i/500, 1000+i/500), Format: "jemalloc",
			By: "func", Part: PartFlat, Key: fmt.Sprintf("service::component%d::function%d", i%97, i%5000), Value: "inuse_space",
			Columns: ci.ColumnsOf(s)}
	}
	return rows
}

// countingWriter counts the bytes written.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// BenchmarkWriteParquet measures writing rows: rows/s, and the file's
// bytes per row.
func BenchmarkWriteParquet(b *testing.B) {
	rows := benchRows(100000)
	var size int64
	b.ResetTimer()
	for range b.N {
		cw := &countingWriter{}
		writeTo(b, cw, rows)
		size = cw.n
	}
	b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(size)/float64(len(rows)), "bytes/row")
}

// BenchmarkWriteJSON is the same rows as JSON lines, for comparison.
func BenchmarkWriteJSON(b *testing.B) {
	rows := benchRows(100000)
	var size int64
	b.ResetTimer()
	for range b.N {
		cw := &countingWriter{}
		enc := json.NewEncoder(io.Writer(cw))
		for i := range rows {
			if err := enc.Encode(&rows[i]); err != nil {
				b.Fatal(err)
			}
		}
		size = cw.n
	}
	b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(size)/float64(len(rows)), "bytes/row")
}

// BenchmarkRead measures reading rows back.
func BenchmarkRead(b *testing.B) {
	rows := benchRows(100000)
	file := write(b, rows)
	b.ResetTimer()
	for range b.N {
		if _, err := Read(bytes.NewReader(file), int64(len(file)), "bench"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
