package report

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/heapest/heapest/internal/testfile"
)

// Two dumps of one JFR recording (jcmd JFR.dump, twice) both begin with
// its first chunk: summing them would count that chunk's allocations
// twice, and they are refused as one process. Another recording is not.
// Nor are dumps that share no chunk.
func TestJFRDumpsOfOneRecording(t *testing.T) {
	both := testfile.Gunzip(t, "../parse/jfr/testdata/jdk17-2chunks.jfr.gz")
	size := binary.BigEndian.Uint64(both[8:16]) // the first chunk's header: magic, version, size
	if string(both[:4]) != "FLR\x00" || size == 0 || size >= uint64(len(both)) {
		t.Fatalf("not a recording of two chunks: magic %q, first chunk %d of %d bytes", both[:4], size, len(both))
	}
	first := both[:size]
	other := testfile.Gunzip(t, "../parse/jfr/testdata/first-sample-jdk17.jfr.gz")
	add := func(b *Builder, name string, data []byte) {
		t.Helper()
		if _, _, err := b.AddReader(name, bytes.NewReader(data), Input{}); err != nil {
			t.Fatal(err)
		}
	}
	b := NewBuilder(Options{})
	add(b, "d1.jfr", first)
	add(b, "d2.jfr", both)
	add(b, "other.jfr", other)
	dup := b.Duplicates()
	if dup == nil || len(dup.Groups) != 1 || strings.Join(dup.Groups[0], " ") != "d1.jfr d2.jfr" {
		t.Fatalf("duplicates %+v, want d1.jfr and d2.jfr as one recording", dup)
	}
	if msg := dup.Error(); !strings.Contains(msg, "JFR") || strings.Contains(msg, "--latest-per-process") {
		t.Errorf("message %q: want it to say JFR, and not --latest-per-process (which reads jemalloc's names)", msg)
	}
	b = NewBuilder(Options{})
	add(b, "d2.jfr", both)
	add(b, "other.jfr", other)
	if dup := b.Duplicates(); dup != nil {
		t.Errorf("two recordings refused: %v", dup)
	}

	// A recording with maxage or maxsize drops its oldest chunks: a later
	// dump begins with another chunk, yet shares the chunks between.
	second := both[size:]
	b = NewBuilder(Options{})
	add(b, "d2.jfr", both)
	add(b, "d3.jfr", second)
	dup = b.Duplicates()
	if dup == nil || len(dup.Groups) != 1 || strings.Join(dup.Groups[0], " ") != "d2.jfr d3.jfr" {
		t.Fatalf("duplicates %+v, want d2.jfr and d3.jfr, which share the second chunk, as one recording", dup)
	}
	if msg := dup.Error(); !strings.Contains(msg, "dumps of one recording") {
		t.Errorf("message %q: want dumps of one recording said", msg)
	}
	// The first chunk and the second alone share nothing: their events
	// are different, and they sum.
	b = NewBuilder(Options{})
	add(b, "d1.jfr", first)
	add(b, "d3.jfr", second)
	if dup := b.Duplicates(); dup != nil {
		t.Errorf("dumps of one recording that share no chunk refused: %v", dup)
	}
}
