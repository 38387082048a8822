package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A progress line says inputs done of all, megabytes, throughput and time
// left; a writer that is not a terminal gets nothing.
func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	if p := newProgress(&buf, 10); p.w != nil {
		t.Fatal("progress on a writer that is not a terminal")
	}
	start := time.Unix(1000, 0)
	p := &progress{w: &buf, total: 4, start: start, last: start}
	p.n, p.bytes = 1, 50e6
	p.draw(start.Add(2 * time.Second))
	if got, want := buf.String(), "\r1/4 inputs, 50 MB, 25 MB/s, 6s left   "; got != want {
		t.Errorf("progress line %q, want %q", got, want)
	}
	p.finish()
	if !strings.HasSuffix(buf.String(), "\n") {
		t.Error("finish does not end the line")
	}
}
