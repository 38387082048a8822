package pprof_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/heapest/heapest/parse"
)

// TestLegacyTextAndProtoAgree: the same gperftools samples, as text and as
// the proto pprof converts the text to, give the same records: one rule
// for a line's size (known for one object, else of unknown sizes), so
// object counts get an interval from both forms or from neither.
func TestLegacyTextAndProtoAgree(t *testing.T) {
	tests := []struct{ name, line string }{
		{"one object", "1: 4096 [1: 4096] @ 0x401000"},
		{"three of average 100", "3: 300 [3: 300] @ 0x401000"},
		{"four of a size class", "4: 256 [4: 256] @ 0x401000"},
		{"bytes not a multiple", "2: 301 [2: 301] @ 0x401000"},
		{"one object below its class", "1: 65 [1: 65] @ 0x401000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, b, _ := strings.Cut(tt.line, ":")
			b, _, _ = strings.Cut(b, "[")
			n, b = strings.TrimSpace(n), strings.TrimSpace(b)
			// Padded as GetHeapSample pads its header.
			text := fmt.Sprintf("heap profile: %6s: %8s [%6s: %8s] @ heap_v2/524288\n", n, b, n, b) + tt.line + "\n"
			fromText, err := read("text", strings.NewReader(text), parse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			converted, err := profile.ParseData([]byte(text)) // pprof's own conversion
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := converted.Write(&buf); err != nil {
				t.Fatal(err)
			}
			fromProto, err := read("proto", &buf, parse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			a, p := fromText.Records[0].InUse, fromProto.Records[0].InUse
			if a != p {
				t.Errorf("text %+v, proto %+v", a, p)
			}
			if a.Classes != parse.TcmallocClasses {
				t.Errorf("a heap sample's counts %+v: not sampled by tcmalloc's classes", a)
			}
		})
	}
}

// TestHeapSampleClasses: a heap_v2 file whose header repeats its pair is
// gperftools' heap sample, sampled by tcmalloc's size classes; jemalloc
// 3's, whose second pair is cumulative (or zero, or the same when nothing
// was freed, but its counts unpadded), and gperftools' full heap
// profiler, which records every allocation, are not.
func TestHeapSampleClasses(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   parse.SizeClasses
	}{
		{"heap profile:      1:       65 [     1:       65] @ heap_v2/524288", parse.TcmallocClasses},
		{"heap profile: 1: 65 [0: 0] @ heap_v2/524288", parse.Recorded},
		{"heap profile: 1: 65 [1: 65] @ heap_v2/524288", parse.Recorded},
		{"heap profile: 123456: 12345678 [123456: 12345678] @ heap_v2/524288", parse.TcmallocClasses},
		{"heap profile: 1: 65 [3: 300] @ heap_v2/524288", parse.Recorded},
		{"heap profile: 1: 65 [1: 65] @ heapprofile", parse.Recorded},
	} {
		body := "1: 65 [1: 65] @ 0x401000"
		if strings.Contains(tc.header, "123456") {
			body = "123456: 12345678 [123456: 12345678] @ 0x401000"
		}
		got, err := read("sample.heap", strings.NewReader(tc.header+"\n"+body+"\n"), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if c := got.Records[0].InUse; c.Classes != tc.want {
			t.Errorf("%s: counts %+v, want classes %d", tc.header, c, tc.want)
		}
		// The gperftools warning, and only for a file gperftools may
		// have written.
		warned := strings.Contains(strings.Join(got.Warnings, "\n"), "if this heap sample comes from gperftools")
		if maybe := strings.Contains(tc.header, "heap_v2") && (strings.Contains(tc.header, "    ") || strings.Contains(tc.header, "123456")); warned != maybe {
			t.Errorf("%s: gperftools warning %v, want %v (%q)", tc.header, warned, maybe, got.Source.Detail)
		}
	}
}

// TestHeapProfilerAllocValues: gperftools' full heap profiler records the
// allocation totals; a dump taken before anything was freed, whose two
// pairs are equal, has them too.
func TestHeapProfilerAllocValues(t *testing.T) {
	got, err := read("early.heap", strings.NewReader("heap profile:      6: 33000000 [     6: 33000000] @ heapprofile\n     6: 33000000 [     6: 33000000] @ 0x401000\n"), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.HasAlloc || got.Records[0].Alloc.Bytes != 33000000 {
		t.Errorf("HasAlloc %v, record %+v: the allocation totals are lost", got.HasAlloc, got.Records[0].Alloc)
	}
}
