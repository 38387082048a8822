package jfr

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heapest/heapest/parse"

	"github.com/heapest/heapest/internal/testfile"
)

// rec is a copy of what a test checks of one record.
type rec struct {
	spill   float64
	excess  float64
	stack   []string
	stackID uint64
	thread  string
	typ     string
	scheme  parse.Scheme
	alloc   parse.Counts
	inUse   parse.Counts
	time    int64
}

// collect parses data and copies every record.
func collect(t testing.TB, name string, data []byte, opt parse.Options) ([]rec, *parse.Profile, error) {
	t.Helper()
	var out []rec
	p, err := Parse(name, bufio.NewReader(bytes.NewReader(data)), opt, parse.SinkFunc(func(r *parse.Record) {
		c := rec{spill: r.Spill, excess: r.Excess, stackID: r.StackID, thread: r.Thread, typ: r.Type, scheme: r.Scheme, alloc: r.Alloc, inUse: r.InUse, time: r.Time}
		for _, f := range r.Stack {
			c.stack = append(c.stack, f.Func)
		}
		out = append(out, c)
	}))
	return out, p, err
}

// sharedSamples is the directory of the real JFR files beside the
// repository, or "" (the test skips) when it is absent.
func sharedSamples(t *testing.T) string {
	dir := filepath.Join("..", "..", "..", "shared", "samples", "jfr")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared samples not found at %s (CI has them beside the repo): %v", dir, err)
	}
	return dir
}

// TestSharedSamples reads the three public recordings and checks what
// their README (verified there with jfr-parser v0.14.0) says they hold:
// event counts, the sum of the weights, threads and classes.
func TestSharedSamples(t *testing.T) {
	dir := sharedSamples(t)
	tests := []struct {
		file                      string
		samples                   int
		weight                    float64
		threads, classes, oldObjs int
		jdk                       string
	}{
		{"object-allocation-sample.jfr.gz", 10694, 32922398872, 13, 58, 0, "17.0.2+8-86"},
		{"cpool-uint64-constant-index.jfr.gz", 786, 1075719696, 12, 37, 109, "17.0.2+8-86"},
		{"uint64-ref-id.jfr.gz", 373, 175195696, 9, 29, 65, "21.0.4+7-LTS"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			recs, p, err := collect(t, tc.file, testfile.Gunzip(t, filepath.Join(dir, tc.file)), parse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var n, old int
			var w float64
			threads, classes := map[string]bool{}, map[string]bool{}
			for _, r := range recs {
				switch {
				case r.scheme == parse.Weighted:
					n++
					w += r.alloc.Bytes
					threads[r.thread], classes[r.typ] = true, true
				case r.inUse.Objects == 1:
					old++
				default:
					t.Errorf("unexpected record %+v", r)
				}
			}
			if n != tc.samples || w != tc.weight || len(threads) != tc.threads || len(classes) != tc.classes || old != tc.oldObjs {
				t.Errorf("got %d samples weighing %.0f, %d threads, %d classes, %d old objects; want %d, %.0f, %d, %d, %d",
					n, w, len(threads), len(classes), old, tc.samples, tc.weight, tc.threads, tc.classes, tc.oldObjs)
			}
			if !strings.Contains(p.Source.Detail, "JDK "+tc.jdk) || p.Source.Format != "jfr" || !p.HasAlloc || p.HasInUse != (tc.oldObjs > 0) || !p.Timed {
				t.Errorf("profile %+v", p.Source)
			}
			if p.Records != len(recs) {
				t.Errorf("Records = %d, sent %d", p.Records, len(recs))
			}
		})
	}
}

// TestMultiChunk reads a real two-chunk recording: stacks are numbered per
// chunk (a constant pool reference means nothing in the next chunk), event
// times run on from the first chunk's start, and the names a sink keeps
// are the same strings across chunks.
func TestMultiChunk(t *testing.T) {
	recs, p, err := collect(t, "2chunks", testfile.Gunzip(t, "testdata/jdk17-2chunks.jfr.gz"), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Source.Detail, "2 chunks") {
		t.Errorf("detail %q does not say 2 chunks", p.Source.Detail)
	}
	byID := map[uint64]string{}
	var last int64
	var back int
	lab := map[string]float64{}
	for _, r := range recs {
		key := strings.Join(r.stack, "<")
		if prev, ok := byID[r.stackID]; ok && prev != key {
			t.Fatalf("stack id %d names two stacks: %q and %q", r.stackID, prev, key)
		}
		byID[r.stackID] = key
		if r.time < 0 {
			t.Errorf("negative time %d", r.time)
		}
		if r.time < last {
			back++
		}
		last = r.time
		if r.scheme == parse.Weighted && len(r.stack) > 0 && strings.HasPrefix(r.stack[0], "Lab.") {
			lab[r.stack[0]] += r.alloc.Bytes
		}
	}
	// Events are written per thread buffer, so time goes back at buffer
	// boundaries, but not at every event.
	if back > len(recs)/4 {
		t.Errorf("time went back %d times in %d records", back, len(recs))
	}
	for _, f := range []string{"Lab.small", "Lab.big", "Lab.phase1", "Lab.twin"} {
		if lab[f] == 0 {
			t.Errorf("no weight for %s: %v", f, lab)
		}
	}
}

// TestJDK25 reads a recording whose OldObjectSample events carry
// objectSize: the inuse records have sizes, and there is no warning about
// their absence.
func TestJDK25(t *testing.T) {
	recs, p, err := collect(t, "jdk25", testfile.Gunzip(t, "testdata/jdk25.jfr.gz"), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var old, sized int
	for _, r := range recs {
		if r.scheme != parse.Unknown {
			continue
		}
		old++
		if r.inUse.Bytes > 0 && r.alloc.IsZero() && r.typ != "<unknown class>" {
			sized++
		}
	}
	if old == 0 || sized != old {
		t.Errorf("%d old object samples, %d with a size and class", old, sized)
	}
	for _, w := range p.Warnings {
		if strings.Contains(w, "objectSize") {
			t.Errorf("unexpected warning %q", w)
		}
	}
	if !strings.Contains(p.Source.Detail, "JDK 25.0.3") {
		t.Errorf("detail %q", p.Source.Detail)
	}
}

func TestNoAllocationEvents(t *testing.T) {
	_, _, err := collect(t, "noalloc", testfile.Gunzip(t, "testdata/noalloc.jfr.gz"), parse.Options{})
	var pe *parse.Error
	if !errors.As(err, &pe) || pe.File != "noalloc" || !strings.Contains(err.Error(), "no allocation events") {
		t.Fatalf("got %v, want a parse.Error saying there are no allocation events", err)
	}
}

// TestBadInput checks that damaged recordings are errors located in the
// file, and that --keep-going keeps what precedes the damage.
func TestBadInput(t *testing.T) {
	good := testfile.Gunzip(t, "testdata/jdk17-2chunks.jfr.gz")
	first := int(binary.BigEndian.Uint64(good[8:]))
	set := func(off int, b ...byte) []byte {
		c := bytes.Clone(good)
		copy(c[off:], b)
		return c
	}
	u64 := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	tests := []struct {
		name   string
		data   []byte
		opt    parse.Options
		offset int64
		msg    string
	}{
		{"truncated second chunk", good[:first+1000], parse.Options{}, int64(first + 1000), "chunk 2: truncated"},
		{"truncated header", good[:first+20], parse.Options{}, int64(first + 20), "truncated chunk header"},
		{"garbage after the last chunk", append(bytes.Clone(good), "garbage that is longer than sixty-eight bytes, which a chunk header needs........"...), parse.Options{}, int64(len(good)), "expected the JFR magic"},
		{"old format", set(4, 0, 1, 0, 0), parse.Options{}, 4, "JFR file format 1.0"},
		{"unfinished chunk", set(8, u64(0)...), parse.Options{}, 8, "never finished"},
		{"size beyond the file", set(8, u64(1<<28)...), parse.Options{SizeHint: int64(len(good))}, 8, "truncated"},
		{"size beyond the stream", set(8, u64(1<<28)...), parse.Options{}, int64(len(good)), "the input ends after"},
		{"size beyond the limit", set(8, u64(1<<40)...), parse.Options{}, 8, "outside"},
		{"uncompressed integers", set(64, 0, 0, 0, 0), parse.Options{}, 64, "not compressed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := collect(t, "x.jfr", tc.data, tc.opt)
			var pe *parse.Error
			if !errors.As(err, &pe) || pe.File != "x.jfr" || pe.Offset != tc.offset || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v (%#v), want an error at byte %d saying %q", err, pe, tc.offset, tc.msg)
			}
		})
	}
	t.Run("keep going", func(t *testing.T) {
		all, _, err := collect(t, "x.jfr", good, parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		firstOnly, _, err := collect(t, "x.jfr", good[:first], parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		kept, p, err := collect(t, "x.jfr", good[:first+1000], parse.Options{KeepGoing: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(kept) != len(firstOnly) || len(kept) >= len(all) {
			t.Errorf("kept %d records; the first chunk has %d, the file %d", len(kept), len(firstOnly), len(all))
		}
		if w := strings.Join(p.Warnings, "\n"); !strings.Contains(w, "stopped early (--keep-going)") || !strings.Contains(w, "chunk 2: truncated") {
			t.Errorf("warnings %q", w)
		}
	})
}

// TestRateIgnored checks the contract for inputs that carry their own
// weights: --rate is not silently ignored.
func TestRateIgnored(t *testing.T) {
	_, p, err := collect(t, "jdk25", testfile.Gunzip(t, "testdata/jdk25.jfr.gz"), parse.Options{Rate: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(p.Warnings, "\n"); !strings.Contains(w, "--rate 4096 ignored") {
		t.Errorf("warnings %q", w)
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		head string
		want bool
	}{{"FLR\x00\x00\x02\x00\x01", true}, {"FLR", false}, {"FLR\x01", false}, {"heap_v2/524288", false}, {"", false}} {
		if got := Detect([]byte(tc.head)); got != tc.want {
			t.Errorf("Detect(%q) = %v", tc.head, got)
		}
	}
}

func TestJavaName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"java/lang/String", "java.lang.String"},
		{"[B", "byte[]"},
		{"[[I", "int[][]"},
		{"[Ljava/lang/Object;", "java.lang.Object[]"},
		{"[[Ljava/util/regex/IntHashSet;", "java.util.regex.IntHashSet[][]"},
		{"Foo$$Lambda$76+0x00007fa498042338/370869802", "Foo$$Lambda$76"},
		{"[Q", "Q[]"},
		{"", ""},
	} {
		if got := javaName(tc.in); got != tc.want {
			t.Errorf("javaName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestFirstSampleWarning checks which runtimes are warned about the first
// sample's weight (JDK-8307488, JDK-8362573).
func TestFirstSampleWarning(t *testing.T) {
	for _, tc := range []struct {
		version string
		major   int
		bug     string // "" means no warning
	}{
		{"11.0.20+8", 11, ""},
		{"16.0.2+7", 16, "JDK-8307488"},
		{"17.0.2+8-86", 17, "JDK-8307488"},
		{"17.0.15+6-Debian-1deb12u1", 17, "JDK-8307488"},
		{"20.0.2+9", 20, "JDK-8307488"},
		{"21.0.4+7-LTS", 21, "JDK-8362573"},
		{"25.0.3+9-LTS", 25, "JDK-8362573"},
		{"26+35", 26, ""},
		{"1.8.0_292-b10", 8, ""},
		{"", 0, "JDK-8362573"},
	} {
		v := parseJDKVersion(tc.version)
		w := firstSampleWarning(v)
		if v.major != tc.major || tc.bug == "" && w != "" || tc.bug != "" && !strings.Contains(w, tc.bug) {
			t.Errorf("%q: major %d, warning %q; want major %d and %q", tc.version, v.major, w, tc.major, tc.bug)
		}
	}
}

// TestFirstSampleSuspects checks which threads the first-sample warning
// names: those whose first sample is large and far above their later ones,
// but for threads the recording saw start (which allocated nothing before
// it).
func TestFirstSampleSuspects(t *testing.T) {
	var f firstSamples
	for _, w := range []float64{541e6, 2e6, 2.1e6} { // 500 MiB before the recording
		f.add("main (tid 1)", w)
	}
	for _, w := range []float64{3e6, 2e6, 2.5e6} { // an ordinary thread
		f.add("worker (tid 20)", w)
	}
	f.add("lone (tid 30)", 20e6) // one sample only, large
	f.add("tiny (tid 40)", 200e3)
	for _, w := range []float64{41e6, 1e6, 1.2e6} { // started in the recording: the throttle's
		f.add("late (tid 50)", w)
	}
	got := f.suspects(threadTimes{"late (tid 50)": 36e6})
	if !strings.Contains(got, "2 threads weigh 535.0 MiB") || !strings.Contains(got, "main (tid 1) 515.9 MiB") ||
		!strings.Contains(got, "lone (tid 30) 19.1 MiB") || strings.Contains(got, "worker") || strings.Contains(got, "tiny") ||
		strings.Contains(got, "late (tid") {
		t.Errorf("suspects() = %q", got)
	}
	if s := (firstSamples{}).suspects(nil); s != "" {
		t.Errorf("no threads: %q", s)
	}
}

// TestFirstSampleBug reads a real recording of JDK-8307488: main allocated
// 500 MiB before the recording started and 10 MiB during it; its first
// sample weighs the 500 MiB, and the warning names it.
func TestFirstSampleBug(t *testing.T) {
	recs, p, err := collect(t, "first", testfile.Gunzip(t, "testdata/first-sample-jdk17.jfr.gz"), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var first, rest float64
	for _, r := range recs {
		if !strings.HasPrefix(r.thread, "main ") {
			continue
		}
		if first == 0 {
			first = r.alloc.Bytes
		} else {
			rest += r.alloc.Bytes
		}
	}
	if first < 500<<20 || rest > 11<<20 {
		t.Errorf("main's first sample weighs %.0f, the others %.0f; want ≥ 500 MiB and ≤ 11 MiB", first, rest)
	}
	w := strings.Join(p.Warnings, "\n")
	if !strings.Contains(w, "JDK-8307488") || !strings.Contains(w, "first samples of 1 thread weigh 516.3 MiB") || !strings.Contains(w, "main (tid 1)") {
		t.Errorf("warnings %q", w)
	}
}

// TestGaps checks the marking of gaps in a thread's samples on a real
// recording: every gap puts the same bytes on the record before it (Spill)
// and on the one after (Excess), the records of a stack that did not
// change carry none, and every record is still sent once.
func TestGaps(t *testing.T) {
	data := testfile.Gunzip(t, "testdata/jdk17-2chunks.jfr.gz")
	recs, p, err := collect(t, "2chunks", data, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var spill, excess float64
	var marked, samples int
	for _, r := range recs {
		if r.scheme != parse.Weighted {
			if r.spill != 0 || r.excess != 0 {
				t.Errorf("a record of another kind is marked: %+v", r)
			}
			continue
		}
		samples++
		spill += r.spill
		excess += r.excess
		if r.excess > 0 {
			marked++
			if r.excess >= r.alloc.Bytes {
				t.Errorf("excess %v not below the weight %v", r.excess, r.alloc.Bytes)
			}
		}
	}
	if marked == 0 || math.Abs(spill-excess) > 1e-6*spill {
		t.Errorf("%d gaps; spill %v, excess %v", marked, spill, excess)
	}
	if !strings.Contains(p.Source.Detail, fmt.Sprintf("%d ObjectAllocationSample", samples)) {
		t.Errorf("%d samples sent, detail %q", samples, p.Source.Detail)
	}
}

// TestOldObjectsLastChunk: every chunk lists the leak profiler's objects
// alive at its end, most of them listed by the chunks before too (a real
// recording dumped twice: 213 objects, then 208, all 208 among the 213).
// The inuse values are the last list's, as a recording of its last chunk
// alone gives them, not the sum of the lists, which counted the objects
// alive at both ends twice.
func TestOldObjectsLastChunk(t *testing.T) {
	data := testfile.Gunzip(t, "testdata/jdk17-old-objects-2chunks.jfr.gz")
	size := binary.BigEndian.Uint64(data[8:16]) // the first chunk's header: magic, version, size
	if string(data[:4]) != "FLR\x00" || size == 0 || size >= uint64(len(data)) {
		t.Fatalf("not a recording of two chunks: magic %q, first chunk %d of %d bytes", data[:4], size, len(data))
	}
	inUse := func(name string, b []byte) ([]string, *parse.Profile) {
		t.Helper()
		recs, p, err := collect(t, name, b, parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, r := range recs {
			if r.inUse.Objects > 0 {
				keys = append(keys, r.typ+" "+strings.Join(r.stack, ";"))
			}
		}
		slices.Sort(keys)
		return keys, p
	}
	whole, p := inUse("two", data)
	last, _ := inUse("last", data[size:])
	first, _ := inUse("first", data[:size])
	if len(first) != 213 || len(last) != 208 {
		t.Fatalf("the chunks list %d and %d old objects, want 213 and 208", len(first), len(last))
	}
	if !slices.Equal(whole, last) {
		t.Errorf("the recording's inuse records are %d, want the last chunk's %d", len(whole), len(last))
	}
	if w := strings.Join(p.Warnings, "\n"); !strings.Contains(w, "the last chunk's 208 jdk.OldObjectSample events (of 421") {
		t.Errorf("warnings %q: want the last chunk's 208 of 421 said", w)
	}
}

// TestJVMHeap: two recordings of one JVM, one after the other (Snap.java),
// name its heap alike by the JVM's pid and start time (jdk.JVMInformation,
// as `jfr print` shows them: pid 611, started 2026-11-27T11:13:49.562Z), since the
// second lists again the old objects of the first that are still alive; a
// recording without old object samples, or without the event, names none.
func TestJVMHeap(t *testing.T) {
	heap := func(file string) string {
		t.Helper()
		_, p, err := collect(t, file, testfile.Gunzip(t, "testdata/"+file), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return p.Source.Heap
	}
	h0, h1 := heap("jdk17-one-jvm-0.jfr.gz"), heap("jdk17-one-jvm-1.jfr.gz")
	if h0 != "611@1795778029562" || h1 != h0 {
		t.Errorf("heaps %q and %q, want both 611@1795778029562", h0, h1)
	}
	for _, file := range []string{"jdk17-old-objects-2chunks.jfr.gz", "jdk17-2chunks.jfr.gz"} {
		if h := heap(file); h != "" {
			t.Errorf("%s: heap %q, want none (no jdk.JVMInformation, or no old objects)", file, h)
		}
	}
}

// TestStalledTails: real recordings of programs too short for JFR's
// throttle to settle. Burst.java's main allocates 208 MB in about 65 ms:
// the throttle takes all its samples in the first milliseconds and none
// in the 73 ms before main ends. Workers.java's four threads each
// allocate 104 MB in about 0.1 s while main waits for them: one is
// sampled in its first millisecond only, three never. Their weights sum
// to a small part of what they allocated, and heapest names the threads
// and how long each went unsampled; main, whose time after its last
// sample is its wait (jdk.JavaMonitorWait, 102 ms), is not named. The
// recordings whose threads are sampled to their ends say nothing.
func TestStalledTails(t *testing.T) {
	const head = "thread(s) went on long after their last allocation sample, not waiting, before they ended: JFR's throttle, which needs a second or so to settle, " +
		"took no sample of what they allocated then, and it is on no row (the estimates miss it; docs/jfr.md): "
	for _, c := range []struct {
		file  string
		whose func(r rec) bool // the records of the allocations it made
		truth float64
		want  string
	}{
		{"jdk17-burst", func(r rec) bool { return len(r.stack) > 0 && r.stack[0] == "Burst.rec" }, 208e6,
			"1 " + head + "main (tid 1) ran 73ms after its last sample (its 58 samples span 13ms)"},
		{"jdk17-workers", func(r rec) bool { return strings.HasPrefix(r.thread, "worker-") }, 416e6,
			"4 " + head + "worker-0 (tid 15) ran 107ms after its last sample (its 56 samples span 0s); worker-3 (tid 18) ran 97ms with no sample; worker-1 (tid 16) ran 81ms with no sample; and 1 more"},
	} {
		recs, p, err := collect(t, c.file, testfile.Gunzip(t, "testdata/"+c.file+".jfr.gz"), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var weight float64
		for _, r := range recs {
			if c.whose(r) {
				weight += r.alloc.Bytes
			}
		}
		if weight <= 0 || weight > c.truth/4 {
			t.Errorf("%s: weights of %.0f bytes in all, want far below the %.0f allocated", c.file, weight, c.truth)
		}
		if !slices.Contains(p.Warnings, c.want) {
			t.Errorf("%s: warnings %q lack %q", c.file, p.Warnings, c.want)
		}
	}
	for _, f := range []string{"jdk17-2chunks", "jdk25", "first-sample-jdk17", "jdk17-one-jvm-0"} {
		_, p, err := collect(t, f, testfile.Gunzip(t, "testdata/"+f+".jfr.gz"), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(p.Warnings, func(x string) bool { return strings.Contains(x, "after their last allocation sample") }) {
			t.Errorf("%s: %q", f, p.Warnings)
		}
	}
}

// TestStalledTailsRule: which threads are named, from the times alone. A
// thread that ended is named when the time from its last sample (or its
// start, when it had none) to its end, less the time it waited, exceeds
// 40 ms and its samples' span; the longest first, three at most.
func TestStalledTailsRule(t *testing.T) {
	type th struct {
		name       string
		samples    []int64 // ms
		start, end int64   // ms; -1: before or after the recording
		waits      [][2]int64
	}
	every := func(from, to, step int64) []int64 {
		var ts []int64
		for x := from; x <= to; x += step {
			ts = append(ts, x)
		}
		return ts
	}
	const head = "thread(s) went on long after their last allocation sample, not waiting, before they ended: "
	for _, c := range []struct {
		name    string
		threads []th
		want    string // "" for no warning
	}{
		{"burst then silence", []th{{"main", every(0, 9, 1), 0, 80, nil}}, "1 " + head},
		{"burst then silence: the thread", []th{{"main", every(0, 9, 1), 0, 80, nil}}, ": main ran 71ms after its last sample (its 10 samples span 9ms)"},
		{"main waits for its workers, sampled to their ends", []th{
			{"main", every(0, 9, 1), 0, 1500, [][2]int64{{15, 1495}}}, {"worker", every(10, 1490, 10), 10, 1495, nil}}, ""},
		{"sampled to its end", []th{{"main", every(0, 990, 10), 0, 1000, nil}}, ""},
		{"tail shorter than its span", []th{{"main", every(0, 90, 10), 0, 150, nil}}, ""},
		{"tail under 40 ms", []th{{"main", every(0, 4, 1), 0, 40, nil}}, ""},
		{"no sample, from start to end", []th{{"w", nil, 10, 110, nil}}, ": w ran 100ms with no sample"},
		{"no sample, started before the recording", []th{{"w", nil, -1, 110, nil}}, ""},
		{"did not end", []th{{"main", every(0, 9, 1), 0, -1, nil}}, ""},
		{"the longest first, three at most", []th{
			{"a", every(0, 9, 1), 0, 60, nil}, {"b", every(0, 9, 1), 0, 90, nil}, {"c", nil, 0, 55, nil}, {"d", every(0, 9, 1), 0, 70, nil}},
			"4 " + head + "JFR's throttle, which needs a second or so to settle, took no sample of what they allocated then, and it is on no row (the estimates miss it; docs/jfr.md): " +
				"b ran 81ms after its last sample (its 10 samples span 9ms); d ran 61ms after its last sample (its 10 samples span 9ms); c ran 55ms with no sample; and 1 more"},
	} {
		d := &decoder{sink: parse.SinkFunc(func(*parse.Record) {})}
		for _, x := range c.threads {
			for _, ms := range x.samples {
				d.sample(&parse.Record{Thread: x.name, Time: ms * 1e6, Alloc: parse.Counts{Bytes: 1000, Samples: 1}})
			}
			if x.start >= 0 {
				d.started.add(x.name, x.start*1e6)
			}
			if x.end >= 0 {
				d.ended.add(x.name, x.end*1e6)
			}
			for _, w := range x.waits {
				d.blocked.add(x.name, w[0]*1e6, w[1]*1e6)
			}
		}
		got := d.stalledTails()
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestChunkTimeBeforeItsStart: JFR writes an event when it ends, and an
// old object carries its allocation time, so a chunk's event may start
// chunks earlier: its time is that earlier time (a real recording of
// three chunks put a 12 s monitor wait and 163 old objects at the third
// chunk's start, so a thread "ran 9.1 s after its last sample" and
// --to 9s held none of them), never before the recording.
func TestChunkTimeBeforeItsStart(t *testing.T) {
	c := &chunk{d: &decoder{startNanos: 1_000_000_000}}
	c.hdr.StartNanos, c.hdr.StartTicks, c.hdr.TicksPerSecond = 11_000_000_000, 50_000, 1_000_000 // 10 s in, 1 tick a µs
	for _, tc := range []struct {
		ticks uint64
		want  int64
	}{
		{50_000, 10e9},
		{1_050_000, 11e9},
		{47_000, 10e9 - 3e6}, // 3 ms before the chunk
		{0, 10e9 - 50e6},     // 50 ms before it
	} {
		if got := c.time(tc.ticks); got != tc.want {
			t.Errorf("time(%d) = %d, want %d", tc.ticks, got, tc.want)
		}
	}
	c.hdr.StartTicks = 20_000_000_000 // 20,000 s of ticks: before the recording
	if got := c.time(0); got != 0 {
		t.Errorf("a time before the recording: %d, want 0, its start", got)
	}
}

// TestRepeatedChunks: a file joined to itself holds each chunk twice; the
// repeats are read once, with a warning each, so its records are those
// of the file alone (they were all counted twice).
func TestRepeatedChunks(t *testing.T) {
	data := testfile.Gunzip(t, "testdata/jdk17-2chunks.jfr.gz")
	once, p1, err := collect(t, "once", data, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	twice, p2, err := collect(t, "twice", append(slices.Clone(data), data...), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	repeats := 0
	for _, w := range p2.Warnings {
		if strings.Contains(w, "byte for byte (a file joined to itself?): read once") {
			repeats++
		}
	}
	if len(twice) != len(once) || repeats != 2 || len(p2.Warnings) != len(p1.Warnings)+2 || !slices.Equal(p2.Source.Chunks, p1.Source.Chunks) {
		t.Errorf("joined to itself: %d records of %d, %d repeats said, chunks %v of %v", len(twice), len(once), repeats, p2.Source.Chunks, p1.Source.Chunks)
	}
}
