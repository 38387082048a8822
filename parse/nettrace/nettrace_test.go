package nettrace

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	nt "github.com/heapest/heapest/internal/nettracetest"
	"github.com/heapest/heapest/internal/testfile"
	"github.com/heapest/heapest/parse"
)

// nettraceSamples holds the real traces (shared/samples beside the repository).
var nettraceSamples = filepath.Join("..", "..", "..", "shared", "samples", "nettrace")

func init() {
	// Package-level flag vars of other test files initialise before init
	// functions, so this never registers -update twice.
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func ntUpdateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// readSample returns a real trace, skipping the test when the shared
// samples are absent (outside CI).
func readSample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(nettraceSamples, name))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("real sample missing under CI: %v", err)
		}
		t.Skipf("real sample not available: %v", err)
	}
	return b
}

// collector is a test sink: it keeps a copy of every record, since the
// parser reuses the record and its stack.
type collector struct{ recs []parse.Record }

func (c *collector) Record(r *parse.Record) {
	cp := *r
	cp.Stack = slices.Clone(r.Stack)
	c.recs = append(c.recs, cp)
}

// parseBytes parses a trace held in memory and returns the profile and the
// records it sent.
func parseBytes(t testing.TB, name string, b []byte, opt parse.Options) (*parse.Profile, []parse.Record, error) {
	t.Helper()
	var c collector
	p, err := Parse(name, bufio.NewReader(bytes.NewReader(b)), opt, &c)
	return p, c.recs, err
}

// frameName names a frame as the report does: through Profile.Names,
// callers (return addresses) one byte earlier.
func frameName(p *parse.Profile, f parse.Frame, leaf bool) string {
	if f.Func != "" || p.Names == nil {
		return f.Func
	}
	addr := f.Addr
	if !leaf && addr > 0 {
		addr--
	}
	return p.Names(addr)
}

// stackNames names a stack's frames, leaf first.
func stackNames(p *parse.Profile, stack []parse.Frame) []string {
	names := make([]string, len(stack))
	for i, f := range stack {
		names[i] = frameName(p, f, i == 0)
	}
	return names
}

// TestNettraceRealSamples checks the four real traces against the counts
// TraceEvent and the sample README derived from them.
func TestNettraceRealSamples(t *testing.T) {
	tests := []struct {
		file    string
		pid     string
		records int
		// types are TraceEvent's per-type counts (README).
		types    map[string]int
		stacks   int
		detail   string
		warnings []string
	}{
		{
			file: "perfview-dotnetcore3.0-win-x64-objver4.nettrace", pid: "pid 10064", records: 35458,
			types:    map[string]int{"System.Char[]": 23133, "System.Xml.BitStack": 6154, "System.String": 5935},
			stacks:   35457,
			detail:   "35458 GCAllocationTick",
			warnings: []string{"fixed-stride", "no object size"},
		},
		{
			file: "dotnetdiag-dotnet-5.0-SampleProfiler-single-thread.golden.nettrace", pid: "pid 55960",
			detail: "104 method ranges, 3 modules", warnings: []string{"no AllocationSampled"},
		},
		{
			file: "perfview-dotnetcore5.0-win-x64-arraytypes.nettrace", pid: "pid 26240",
			detail: "1499 method ranges", warnings: []string{"no AllocationSampled"},
		},
		{
			file: "perfview-dotnetcore6.0-win-x64-executioncheckpoints.nettrace", pid: "pid 9832",
			warnings: []string{"no AllocationSampled"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p, recs, err := parseBytes(t, tt.file, readSample(t, tt.file), parse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Source.Format != "nettrace" || !p.HasAlloc || p.HasInUse {
				t.Errorf("format %q alloc %v inuse %v", p.Source.Format, p.HasAlloc, p.HasInUse)
			}
			for _, want := range []string{tt.pid, tt.detail} {
				if !strings.Contains(p.Source.Detail, want) {
					t.Errorf("detail %q lacks %q", p.Source.Detail, want)
				}
			}
			if p.Records != tt.records || len(recs) != tt.records {
				t.Errorf("%d records (%d received), want %d", p.Records, len(recs), tt.records)
			}
			types := map[string]int{}
			stacks := 0
			for _, r := range recs {
				types[r.Type]++
				if len(r.Stack) > 0 {
					stacks++
				}
			}
			for ty, n := range tt.types {
				if types[ty] != n {
					t.Errorf("%s: %d events, want %d", ty, types[ty], n)
				}
			}
			if stacks != tt.stacks {
				t.Errorf("%d records with stacks, want %d", stacks, tt.stacks)
			}
			for _, w := range tt.warnings {
				if !hasWarning(p, w) {
					t.Errorf("no warning with %q in %q", w, p.Warnings)
				}
			}
		})
	}
}

// TestNettraceTickFields checks the earliest GCAllocationTick of the .NET
// Core 3.0 trace against TraceEvent's baseline file: MSec 2331.8048, TID
// 6920, AllocationAmount64 104,096, TypeName System.Object[].
func TestNettraceTickFields(t *testing.T) {
	name := "perfview-dotnetcore3.0-win-x64-objver4.nettrace"
	_, recs, err := parseBytes(t, name, readSample(t, name), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := slices.MinFunc(recs, func(a, b parse.Record) int { return cmp.Compare(a.Time, b.Time) })
	if math.Abs(float64(first.Time)-2331.8048e6) > 100 {
		t.Errorf("first tick at %d ns, want 2331.8048 ms", first.Time)
	}
	want := parse.Record{Thread: "6920", Type: "System.Object[]", Scheme: parse.FixedStride, Rate: tickStride,
		Alloc: parse.Counts{Bytes: 104096, Enc: parse.Scaled, Samples: 1}}
	got := first
	got.Stack, got.StackID, got.Time = nil, 0, 0
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("first tick\n got %+v\nwant %+v", got, want)
	}
}

// TestNettraceRundownSymbols resolves the CPU-sample stacks of dotnetdiag's
// golden trace through its rundown events and compares the folded stacks
// with dotnetdiag's expected output (root first, time per stack).
func TestNettraceRundownSymbols(t *testing.T) {
	name := "dotnetdiag-dotnet-5.0-SampleProfiler-single-thread.golden.nettrace"
	data := readSample(t, name)
	want := expectedFolded(t, readSample(t, "dotnetdiag-dotnet-5.0-SampleProfiler-single-thread.expected.txt"))
	d := newDecoder(name, bufio.NewReader(bytes.NewReader(data)), parse.Options{}, &collector{})
	var cpu [][]parse.Frame
	d.onCPU = func(stack []parse.Frame) {
		if len(stack) > 0 {
			cpu = append(cpu, slices.Clone(stack))
		}
	}
	if err := d.run(); err != nil {
		t.Fatal(err)
	}
	p := d.profile()
	set := d.allStacks.distinct()
	resolved, distinct := newSymbols(d.methods).resolved(set), set.len()
	if resolved != distinct || distinct == 0 {
		t.Errorf("%d of %d distinct frames resolved", resolved, distinct)
	}
	if want := fmt.Sprintf("%d of %d distinct frames symbolized", resolved, distinct); !strings.Contains(p.Source.Detail, want) {
		t.Errorf("detail %q lacks %q", p.Source.Detail, want)
	}
	got := map[string]float64{}
	for _, stack := range cpu {
		names := stackNames(p, stack)
		slices.Reverse(names)
		got[strings.Join(names, ";")]++
	}
	if !slices.Equal(ntKeys(got), ntKeys(want)) {
		t.Fatalf("folded stacks\n got %v\nwant %v", ntKeys(got), ntKeys(want))
	}
	// Shares of samples and of dotnetdiag's sampled time agree.
	gt, wt := ntSum(got), ntSum(want)
	for k := range want {
		if math.Abs(got[k]/gt-want[k]/wt) > 0.01 {
			t.Errorf("%s: %.4f of samples, %.4f of time", k, got[k]/gt, want[k]/wt)
		}
	}
	for _, w := range []string{"Example.Program.Work", "Example.Program.Fast", "Example.Program.Slow", "Example.Program.Main"} {
		if !strings.Contains(strings.Join(ntKeys(got), ";"), w) {
			t.Errorf("%s never resolved", w)
		}
	}
}

// expectedFolded reads dotnetdiag's folded stacks, reduced to heapest's
// frame names: "module!Namespace.Type.Method(signature)" → the middle part.
func expectedFolded(t *testing.T, b []byte) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		i := strings.LastIndexByte(line, ' ')
		var v float64
		if _, err := fmt.Sscan(line[i+1:], &v); err != nil {
			t.Fatalf("expected file line %q: %v", line, err)
		}
		var names []string
		for _, f := range strings.Split(line[:i], ";") {
			f = f[strings.IndexByte(f, '!')+1:]
			names = append(names, f[:strings.IndexByte(f, '(')])
		}
		out[strings.Join(names, ";")] += v
	}
	return out
}

func ntKeys(m map[string]float64) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

func ntSum(m map[string]float64) float64 {
	s := 0.0
	for _, v := range m {
		s += v
	}
	return s
}

func hasWarning(p *parse.Profile, sub string) bool {
	for _, w := range p.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

// simWorkload has small, medium, variable and huge objects on 3 threads.
func simWorkload(seed uint64) nt.Workload {
	return nt.Workload{Seed: seed, Threads: 3, Types: []nt.TypeSpec{
		{Name: "System.String", Size: 32, Objects: 40000},
		{Name: "System.Byte[]", Size: 1000, MaxSize: 9000, Objects: 600},
		{Name: "System.Collections.Generic.List`1[System.Int32]", Size: 40, Objects: 20000},
		{Name: "Huge", Size: 300000, Objects: 5},
	}}
}

// TestNettraceSimulated writes simulated traces in every variant and checks
// that each event comes back exactly: per type the number of samples, the
// offsets, the allocating method; threads, times and sampling parameters.
func TestNettraceSimulated(t *testing.T) {
	for _, v := range []nt.Version{nt.V4, nt.V5, nt.V6} {
		for _, unc := range []bool{false, true} {
			for _, ptr := range []int{8, 4} {
				opt := nt.Options{Version: v, Uncompressed: unc, PointerSize: ptr, PID: 4242, Labels: true, RegionEvents: 37}
				t.Run(fmt.Sprintf("V%d/uncompressed=%v/ptr%d", v, unc, ptr), func(t *testing.T) {
					checkSimulated(t, opt, simWorkload(uint64(v)*10+uint64(ptr)))
				})
			}
		}
	}
}

func checkSimulated(t *testing.T, opt nt.Options, wl nt.Workload) {
	data, truth := nt.Simulate(wl, opt)
	p, recs, err := parseBytes(t, "sim.nettrace", data, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) > 0 {
		t.Errorf("warnings: %q", p.Warnings)
	}
	if len(recs) != truth.Events || p.Records != truth.Events || p.Source.Samples != float64(truth.Events) {
		t.Errorf("%d records (profile %d, source %v), want %d", len(recs), p.Records, p.Source.Samples, truth.Events)
	}
	samples := map[string]int{}
	offsets := map[string]float64{}
	lastTime := map[string]int64{}
	for _, r := range recs {
		samples[r.Type]++
		offsets[r.Type] += r.Offset
		if r.Scheme != parse.Geometric || r.Rate != samplingRate || !r.HasOffset {
			t.Fatalf("record %+v: want Geometric, rate 102400, offset", r)
		}
		if r.Alloc.Objects != 1 || r.Alloc.Samples != 1 || r.Alloc.Size != r.Alloc.Bytes || r.Alloc.Enc != parse.Raw {
			t.Fatalf("record counts %+v", r.Alloc)
		}
		if !(r.Offset > 0 && r.Offset <= r.Alloc.Size) {
			t.Fatalf("offset %v outside (0, %v]", r.Offset, r.Alloc.Size)
		}
		if names := stackNames(p, r.Stack); len(names) != 3 || names[0] != truth.Method[r.Type] ||
			names[1] != "Sim.Worker.Run" || names[2] != "Sim.Program.Main" {
			t.Fatalf("%s: stack %+v (%q), want %s ← Sim.Worker.Run ← Sim.Program.Main", r.Type, r.Stack, names, truth.Method[r.Type])
		}
		if r.Time < lastTime[r.Thread] || r.Time <= 0 {
			t.Fatalf("thread %s: time %d after %d", r.Thread, r.Time, lastTime[r.Thread])
		}
		lastTime[r.Thread] = r.Time
	}
	checkStackIDs(t, recs)
	for ty, n := range truth.Samples {
		if samples[ty] != n || offsets[ty] != truth.Offset[ty] {
			t.Errorf("%s: %d samples Σoffset %v, want %d and %v", ty, samples[ty], offsets[ty], n, truth.Offset[ty])
		}
	}
	if got := ntKeysInt(lastTime); !slices.Equal(got, []string{"1000", "1001", "1002"}) {
		t.Errorf("threads %v", got)
	}
}

// checkStackIDs asserts that records with one StackID have one stack, and
// records with different ones different stacks.
func checkStackIDs(t *testing.T, recs []parse.Record) {
	t.Helper()
	byID := map[uint64]string{}
	ids := map[string]uint64{}
	for _, r := range recs {
		key := fmt.Sprint(r.Stack)
		if r.StackID == 0 {
			if len(r.Stack) > 0 {
				t.Fatalf("stack %s without an id", key)
			}
			continue
		}
		if s, ok := byID[r.StackID]; ok && s != key {
			t.Fatalf("StackID %d is %s and %s", r.StackID, s, key)
		}
		if id, ok := ids[key]; ok && id != r.StackID {
			t.Fatalf("stack %s has ids %d and %d", key, id, r.StackID)
		}
		byID[r.StackID], ids[key] = key, r.StackID
	}
}

func ntKeysInt[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

// TestNettraceTicks writes GCAllocationTick events of every version and
// reads their amounts, types and sizes back.
func TestNettraceTicks(t *testing.T) {
	for version := 0; version <= 4; version++ {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			w := nt.NewWriter(nt.Options{PID: 1})
			w.Write(nt.Event{Provider: nt.RuntimeProvider, ID: 10, Version: version, Thread: 9, Time: 2_000_000,
				Stack: []uint64{0x1000}, Payload: nt.AllocationTick(8, version, 104096, 0, 0x55, "System.Object[]", 0x77, 64)})
			p, recs, err := parseBytes(t, "tick.nettrace", w.Finish(), parse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 1 || p.Records != 1 {
				t.Fatalf("%d records (profile %d)", len(recs), p.Records)
			}
			r := recs[0]
			want := parse.Counts{Bytes: 104096, Enc: parse.Scaled, Samples: 1}
			wantType := ""
			if version >= 2 {
				wantType = "System.Object[]"
			}
			if version >= 4 {
				want.Size, want.Objects = 64, 104096.0/64
			}
			if r.Alloc != want || r.Type != wantType || r.Scheme != parse.FixedStride || r.Thread != "9" || r.Time != 100_000_000 {
				t.Errorf("got %+v", r)
			}
			if !hasWarning(p, "fixed-stride") {
				t.Errorf("warnings %q", p.Warnings)
			}
		})
	}
}

// TestNettraceRecording: a trace is told apart by its process id and the
// counter at its start (parse.Source.Recording), the same in every copy
// and different in every other trace; its start (SyncTimeUTC) is its
// time. A trace without a process (pid 0) has no recording. Each
// version writes the trace's fields its own way.
func TestNettraceRecording(t *testing.T) {
	start := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC).UnixNano() // the writer's SyncTimeUTC
	for _, c := range []struct {
		opt  nt.Options
		want string
	}{
		{nt.Options{Version: nt.V4, PID: 4242, SyncTicks: 981234567890}, "4242@981234567890"},
		{nt.Options{Version: nt.V5, PID: 7, SyncTicks: 5}, "7@5"},
		{nt.Options{Version: nt.V6, PID: 4242, SyncTicks: 981234567891}, "4242@981234567891"},
		{nt.Options{Version: nt.V6, PID: 0, SyncTicks: 981234567890}, ""},
	} {
		w := nt.NewWriter(c.opt)
		w.Write(nt.Event{Provider: nt.RuntimeProvider, ID: 303, Thread: 1, Time: 2e6,
			Payload: nt.AllocationSampled(8, 0, 1, "A", 0, 24, 3)})
		p, _, err := parseBytes(t, "r.nettrace", w.Finish(), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Source.Recording != c.want || p.Source.Time != start {
			t.Errorf("%+v: recording %q, time %v; want %q, %v", c.opt, p.Source.Recording, time.Unix(0, p.Source.Time).UTC(), c.want, time.Unix(0, start).UTC())
		}
	}
	for _, name := range []string{"perfview-dotnetcore3.0-win-x64-objver4.nettrace", "perfview-dotnetcore5.0-win-x64-arraytypes.nettrace"} {
		p, _, err := parseBytes(t, name, readSample(t, name), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		when := time.Unix(0, p.Source.Time).UTC()
		pid, _, _ := strings.Cut(p.Source.Recording, "@")
		if !strings.Contains(p.Source.Detail, "pid "+pid+";") || when.Year() < 2019 || when.Year() > 2022 {
			t.Errorf("%s: recording %q, time %v (detail %q): want its pid and a start in 2019–2022", name, p.Source.Recording, when, p.Source.Detail)
		}
	}
}

// TestNettraceBothEvents: a trace with AllocationSampled and
// GCAllocationTick keeps the samples only.
func TestNettraceBothEvents(t *testing.T) {
	w := nt.NewWriter(nt.Options{})
	w.Write(nt.Event{Provider: nt.RuntimeProvider, ID: 10, Version: 3, Thread: 1, Time: 2e6,
		Payload: nt.AllocationTick(8, 3, 100000, 0, 1, "A", 0, 0)})
	w.Write(nt.Event{Provider: nt.RuntimeProvider, ID: 303, Thread: 1, Time: 2e6,
		Payload: nt.AllocationSampled(8, 0, 1, "A", 0, 24, 3)})
	p, recs, err := parseBytes(t, "both.nettrace", w.Finish(), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || p.Records != 1 || recs[0].Scheme != parse.Geometric || !hasWarning(p, "GCAllocationTick events were ignored") {
		t.Errorf("records %+v warnings %q", recs, p.Warnings)
	}
}

// TestNettraceGolden renders the records of a small simulated trace of each
// version; the three must agree with each other and with the golden file.
func TestNettraceGolden(t *testing.T) {
	wl := nt.Workload{Seed: 3, Threads: 2, Types: []nt.TypeSpec{
		{Name: "System.String", Size: 32, Objects: 9000},
		{Name: "System.Int32[]", Size: 24, MaxSize: 40000, Objects: 20},
	}}
	var outs []string
	for _, v := range []nt.Version{nt.V4, nt.V5, nt.V6} {
		data, _ := nt.Simulate(wl, nt.Options{Version: v, PID: 7})
		p, recs, err := parseBytes(t, "golden.nettrace", data, parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, r := range recs {
			var fr []string
			for i, f := range r.Stack {
				fr = append(fr, fmt.Sprintf("%#x %s", f.Addr, frameName(p, f, i == 0)))
			}
			fmt.Fprintf(&b, "%s thread=%s t=%dns size=%v u=%v [%s]\n", r.Type, r.Thread, r.Time, r.Alloc.Size, r.Offset, strings.Join(fr, " | "))
		}
		outs = append(outs, b.String())
	}
	if outs[0] != outs[1] || outs[0] != outs[2] {
		t.Fatal("V4, V5 and V6 traces of one workload read differently")
	}
	path := filepath.Join("testdata", "sim.golden")
	if ntUpdateGolden() {
		if err := os.WriteFile(path, []byte(outs[0]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != outs[0] {
		t.Errorf("records differ from %s (run with -update to accept)", path)
	}
}

// ---- bad input ----

// ntHeaderV4 is the stream header and Trace object, 102 bytes, with the
// given pointer size and tick frequency.
func ntHeaderV4(ptr int32, freq int64) []byte {
	var b bytes.Buffer
	b.WriteString("Nettrace")
	binary.Write(&b, binary.LittleEndian, int32(20))
	b.WriteString("!FastSerialization.1")
	ntObjectType(&b, "Trace", 4)
	b.Write(make([]byte, 16))
	binary.Write(&b, binary.LittleEndian, int64(0))
	binary.Write(&b, binary.LittleEndian, freq)
	binary.Write(&b, binary.LittleEndian, ptr)
	b.Write(make([]byte, 12))
	b.WriteByte(6)
	return b.Bytes()
}

func ntObjectType(b *bytes.Buffer, name string, version int32) {
	b.Write([]byte{5, 5, 1})
	binary.Write(b, binary.LittleEndian, version)
	binary.Write(b, binary.LittleEndian, version)
	binary.Write(b, binary.LittleEndian, int32(len(name)))
	b.WriteString(name)
	b.WriteByte(6)
}

// ntBlockV4 appends a block object with a declared size and body; the body
// starts at the returned offset.
func ntBlockV4(b *bytes.Buffer, name string, size int32, body []byte) int {
	ntObjectType(b, name, 2)
	binary.Write(b, binary.LittleEndian, size)
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
	at := b.Len()
	b.Write(body)
	b.WriteByte(6)
	return at
}

func le32(vs ...uint32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return b
}

// eventBody is an event block body: a 20-byte header and rows.
func eventBody(compressed bool, rows ...[]byte) []byte {
	flags := uint16(0)
	if compressed {
		flags = 1
	}
	b := binary.LittleEndian.AppendUint16(nil, 20)
	b = binary.LittleEndian.AppendUint16(b, flags)
	b = append(b, make([]byte, 16)...)
	return append(b, bytes.Join(rows, nil)...)
}

// withSample is a valid V4 trace with one AllocationSampled event (metadata
// id 1), then whatever extra adds, then the end of the stream.
func withSample(opt nt.Options, extra func(w *nt.Writer)) []byte {
	w := nt.NewWriter(opt)
	w.Write(nt.Event{Provider: nt.RuntimeProvider, ID: 303, Thread: 5, Time: 2e6, Stack: []uint64{0x10},
		Payload: nt.AllocationSampled(8, 0, 1, "T", 0, 48, 7)})
	if extra != nil {
		extra(w)
	}
	return w.Finish()
}

type badCase struct {
	name string
	data func() []byte
	// err is a substring of the expected error ("" when parsing succeeds);
	// off is the expected byte offset (-1: any).
	err  string
	off  int64
	warn string // expected warning when parsing succeeds
}

func badCases() []badCase {
	h := ntHeaderV4(8, 1e7)
	return []badCase{
		{name: "wrong magic", err: "expected magic", off: 0, data: func() []byte {
			return append([]byte("Nettracf"), h[8:]...)
		}},
		{name: "not FastSerialization", err: `expected "!FastSerialization.1"`, off: 12, data: func() []byte {
			b := slices.Clone(h)
			b[30] = '2'
			return b
		}},
		{name: "V6 major version 7", err: "major version 7", off: 12, data: func() []byte {
			return append([]byte("Nettrace"), le32(0, 7, 0)...)
		}},
		{name: "perfview#2444 negative object type-name length", err: "type name length -1", off: 43, data: func() []byte {
			var b bytes.Buffer
			b.Write(h[:32])
			b.Write([]byte{5, 5, 1})
			b.Write(le32(4, 4, 0xFFFFFFFF))
			return b.Bytes()
		}},
		{name: "huge declared block length", err: "declared 2147483632 bytes, 6 remain", off: 132, data: func() []byte {
			b := bytes.NewBuffer(slices.Clone(h))
			ntBlockV4(b, "EventBlock", 0x7FFFFFF0, []byte{1, 2, 3, 4, 5})
			return b.Bytes()
		}},
		{name: "negative block size", err: "size -5 is negative", off: 128, data: func() []byte {
			b := bytes.NewBuffer(slices.Clone(h))
			ntBlockV4(b, "EventBlock", -5, nil)
			return b.Bytes()
		}},
		{name: "huge V6 block", err: "declared 16777215 bytes, 3 remain", off: -1, data: func() []byte {
			w := nt.NewWriter(nt.Options{Version: nt.V6})
			w.Raw(le32(0x02FFFFFF))
			w.Raw([]byte{1, 2, 3})
			n := w.Len()
			return w.Finish()[:n]
		}},
		{name: "unknown V4 object type", warn: `skipped 1 blocks of unknown type "FutureBlock"`, data: func() []byte {
			return withSample(nt.Options{}, func(w *nt.Writer) { w.Block("FutureBlock", []byte("anything")) })
		}},
		{name: "unknown V6 block kind", warn: "unknown kind 42", data: func() []byte {
			return withSample(nt.Options{Version: nt.V6}, func(w *nt.Writer) { w.Block6(42, []byte("anything")) })
		}},
		{name: "stack id that does not exist", warn: "stack ids not defined", data: func() []byte {
			return withSample(nt.Options{}, func(w *nt.Writer) {
				w.Write(nt.Event{Provider: nt.RuntimeProvider, ID: 303, Thread: 5, Time: 3e6, StackID: 99,
					Payload: nt.AllocationSampled(8, 0, 1, "T", 0, 48, 7)})
			})
		}},
		{name: "event with undefined metadata", warn: "metadata ids never defined", data: func() []byte {
			return withSample(nt.Options{}, func(w *nt.Writer) {
				w.Write(nt.Event{MetadataID: 77, Thread: 5, Time: 3e6, Payload: []byte{1}})
			})
		}},
		{name: "metadata for an unknown event", warn: "", data: func() []byte {
			return withSample(nt.Options{Version: nt.V6}, func(w *nt.Writer) {
				w.Write(nt.Event{Provider: "My-EventSource", ID: 303, Thread: 5, Time: 3e6, Payload: []byte{1, 2}})
			})
		}},
		{name: "metadata id defined twice", err: "metadata id 1 defined twice", off: -1, data: func() []byte {
			return withSample(nt.Options{}, func(w *nt.Writer) {
				var p bytes.Buffer
				p.Write(le32(1))
				p.Write([]byte{'X', 0, 0, 0})
				p.Write(make([]byte, 4+2+8+4+4+4))
				row := append([]byte{0x80, 0, byte(p.Len())}, p.Bytes()...)
				w.Block("MetadataBlock", eventBody(true, row))
			})
		}},
		{name: "perfview a8191b08 event size smaller than its payload", err: "event size 10 does not hold", off: -1, data: func() []byte {
			return withSample(nt.Options{}, func(w *nt.Writer) {
				row := append(le32(10, 1, 1), make([]byte, 8+8+4+4+8+32)...)
				row = append(row, le32(5)...)
				w.Block("EventBlock", eventBody(false, row))
			})
		}},
		{name: "payload size past the block", err: "needs 1000 bytes, 2 remain", off: -1, data: func() []byte {
			return withSample(nt.Options{}, func(w *nt.Writer) {
				w.Block("EventBlock", eventBody(true, []byte{0x81, 1, 0, 0xE8, 0x07, 1, 2}))
			})
		}},
		{name: "perfview 3ea3634d type name runs past the payload", warn: "1 AllocationSampled events have a malformed payload", data: func() []byte {
			return withSample(nt.Options{}, func(w *nt.Writer) {
				p := nt.AllocationSampled(8, 0, 1, "Type", 0, 48, 7)
				w.Write(nt.Event{Provider: nt.RuntimeProvider, ID: 303, Thread: 5, Time: 3e6, Payload: p[:20]})
			})
		}},
		{name: "sampled offset beyond the object", warn: "1 AllocationSampled events have a malformed payload", data: func() []byte {
			return withSample(nt.Options{}, func(w *nt.Writer) {
				w.Write(nt.Event{Provider: nt.RuntimeProvider, ID: 303, Thread: 5, Time: 3e6,
					Payload: nt.AllocationSampled(8, 0, 1, "T", 0, 48, 48)})
			})
		}},
		{name: "perfview 2d3da12f method event shorter than its fields", warn: "method load/rundown events have a malformed payload", data: func() []byte {
			return withSample(nt.Options{}, func(w *nt.Writer) {
				w.Write(nt.Event{Provider: nt.RundownProvider, ID: 144, Version: 1, Thread: 5, Time: 3e6,
					Payload: nt.Method(1, 2, 3, 4, "N", "M", "S")[:30]})
			})
		}},
		{name: "stack count beyond the block", err: "declares 1000000000 stacks", off: -1, data: func() []byte {
			return withSample(nt.Options{}, func(w *nt.Writer) { w.Block("StackBlock", le32(1, 1e9)) })
		}},
		{name: "stack size not a multiple of the pointer", err: "not a multiple of the pointer size 8", off: -1, data: func() []byte {
			return withSample(nt.Options{}, func(w *nt.Writer) {
				w.Block("StackBlock", append(le32(1, 1, 7), 1, 2, 3, 4, 5, 6, 7))
			})
		}},
		{name: "varint overflow", err: "overflows 64 bits", off: -1, data: func() []byte {
			return withSample(nt.Options{}, func(w *nt.Writer) {
				w.Block("EventBlock", eventBody(true, append([]byte{0x04}, bytes.Repeat([]byte{0xFF}, 11)...)))
			})
		}},
		{name: "V6 string longer than its row", err: "string of 1000 bytes", off: -1, data: func() []byte {
			return withSample(nt.Options{Version: nt.V6}, func(w *nt.Writer) {
				w.Block6(3, []byte{0, 0, 6, 0, 9, 0xE8, 0x07, 'a', 'b', 'c'})
			})
		}},
		{name: "V6 thread defined twice", err: "thread index 1 defined twice", off: -1, data: func() []byte {
			return withSample(nt.Options{Version: nt.V6}, func(w *nt.Writer) { w.Block6(6, []byte{1, 0, 1}) })
		}},
		{name: "event block header too small", err: "header size 4", off: -1, data: func() []byte {
			return withSample(nt.Options{}, func(w *nt.Writer) { w.Block("EventBlock", []byte{4, 0, 1, 0}) })
		}},
		{name: "pointer size 3", err: "pointer size 3", off: 85, data: func() []byte { return append(ntHeaderV4(3, 1e7), 1) }},
		{name: "zero tick frequency", err: "timestamp frequency 0", off: 77, data: func() []byte { return append(ntHeaderV4(8, 0), 1) }},
		{name: "block before the Trace object", err: "EventBlock object before the Trace object", off: -1, data: func() []byte {
			var b bytes.Buffer
			b.Write(h[:32])
			ntBlockV4(&b, "EventBlock", 0, nil)
			return b.Bytes()
		}},
		{name: "second Trace object", err: "second Trace object", off: 102 + 21, data: func() []byte {
			return append(slices.Clone(h), h[32:]...)
		}},
		{name: "no end-of-stream tag", err: "truncated: expected the next object", off: -1, data: func() []byte {
			b := withSample(nt.Options{}, nil)
			return b[:len(b)-1]
		}},
		{name: "wrong tag between objects", err: "expected BeginPrivateObject tag (5) or NullReference (1), got 9", off: 102, data: func() []byte {
			return append(slices.Clone(h), 9)
		}},
	}
}

// TestNettraceBadInput: malformed traces give an error naming the file and
// the byte offset, or a warning where the format lets the reader skip.
func TestNettraceBadInput(t *testing.T) {
	for _, tc := range badCases() {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.data()
			// The parser itself, past format detection (tested separately).
			p, _, err := parseBytes(t, "bad.nettrace", data, parse.Options{})
			if tc.err == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if tc.warn != "" && !hasWarning(p, tc.warn) {
					t.Errorf("no warning with %q in %q", tc.warn, p.Warnings)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.err)
			}
			checkLocated(t, err, int64(len(data)))
			var pe *parse.Error
			errors.As(err, &pe)
			if !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %q lacks %q", err, tc.err)
			}
			if tc.off >= 0 && pe.Offset != tc.off {
				t.Errorf("error at byte %d, want %d: %v", pe.Offset, tc.off, err)
			}
		})
	}
}

// checkLocated asserts err is a *parse.Error naming the file and a byte offset
// inside the input.
func checkLocated(t *testing.T, err error, size int64) {
	t.Helper()
	var pe *parse.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v is %T, want *parse.Error", err, err)
	}
	if pe.File != "bad.nettrace" || pe.Offset < 0 || pe.Offset > size || !strings.Contains(err.Error(), "bad.nettrace: byte ") {
		t.Errorf("error %q: file %q offset %d (input %d bytes)", err, pe.File, pe.Offset, size)
	}
}

// TestNettraceNotDetected: without the magic, the format is not claimed.
func TestNettraceNotDetected(t *testing.T) {
	if Detect([]byte("Nettracf and more")) {
		t.Error("a head without the magic is detected as nettrace")
	}
	for name, data := range ntSeeds() {
		if !Detect(data[:min(len(data), 4096)]) {
			t.Errorf("%s is not detected", name)
		}
	}
}

// TestNettraceHugeLengthAllocation: a block declaring 2 GB on a small file
// allocates about what the file holds, not what it declares.
func TestNettraceHugeLengthAllocation(t *testing.T) {
	b := bytes.NewBuffer(ntHeaderV4(8, 1e7))
	ntBlockV4(b, "EventBlock", 0x7FFFFFF0, bytes.Repeat([]byte{7}, 1000))
	data := b.Bytes()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := parseBytes(t, "bad.nettrace", data, parse.Options{})
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("no error")
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("allocated %d bytes for a %d-byte input", grew, len(data))
	}
}

// TestNettraceTruncated cuts traces at every length (the small real one)
// or at many (generated ones): always an error, never a panic; with
// --keep-going the events before the cut are kept, with a warning.
func TestNettraceTruncated(t *testing.T) {
	inputs := map[string][]byte{
		"V4": withSample(nt.Options{}, nil),
		"V6": withSample(nt.Options{Version: nt.V6, Labels: true}, nil),
	}
	if b, err := os.ReadFile(filepath.Join(nettraceSamples, "perfview-dotnetcore6.0-win-x64-executioncheckpoints.nettrace")); err == nil {
		inputs["real"] = b
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			for n := 0; n < len(data); n++ {
				_, _, err := parseBytes(t, "bad.nettrace", data[:n], parse.Options{})
				if err == nil {
					t.Fatalf("prefix of %d bytes parsed without error", n)
				}
				if n >= 8 {
					checkLocated(t, err, int64(n))
				}
				p, _, err := parseBytes(t, "bad.nettrace", data[:n], parse.Options{KeepGoing: true})
				if err == nil && !hasWarning(p, "stopped early") {
					t.Fatalf("prefix of %d bytes: keep-going without a warning", n)
				}
			}
		})
	}
	// The sample survives a cut after it was read.
	data := inputs["V4"]
	p, recs, err := parseBytes(t, "bad.nettrace", data[:len(data)-1], parse.Options{KeepGoing: true})
	if err != nil || len(recs) != 1 || p.Records != 1 || !hasWarning(p, "the 1 allocation events before it were kept") {
		t.Errorf("keep-going: %v, %d records", err, len(recs))
	}
}

// ntSeeds are small generated traces kept in testdata as fuzz
// seeds: every container variant, ticks, and runtime rundown.
func ntSeeds() map[string][]byte {
	wl := nt.Workload{Seed: 11, Threads: 2, Types: []nt.TypeSpec{
		{Name: "System.String", Size: 32, Objects: 6000},
		{Name: "System.Byte[]", Size: 100000, Objects: 2},
	}}
	seeds := map[string][]byte{}
	for name, opt := range map[string]nt.Options{
		"v4":              {Version: nt.V4, RegionEvents: 3},
		"v4-uncompressed": {Version: nt.V4, Uncompressed: true},
		"v5-ptr4":         {Version: nt.V5, PointerSize: 4},
		"v6-labels":       {Version: nt.V6, Labels: true, RegionEvents: 3},
		"v6-uncompressed": {Version: nt.V6, Uncompressed: true},
	} {
		seeds["seed-"+name+".nettrace"], _ = nt.Simulate(wl, opt)
	}
	w := nt.NewWriter(nt.Options{})
	for v := 2; v <= 4; v++ {
		w.Write(nt.Event{Provider: nt.RuntimeProvider, ID: 10, Version: v, Thread: 3, Time: 2e6, Stack: []uint64{0x20, 0x30},
			Payload: nt.AllocationTick(8, v, 104000, 1, 0x99, "System.Char[]", 0x5000, 88)})
	}
	seeds["seed-ticks.nettrace"] = w.Finish()
	return seeds
}

// TestNettraceSeeds keeps the fuzz seeds in testdata equal to what the
// writer produces (rewritten with -update) and checks that they parse.
func TestNettraceSeeds(t *testing.T) {
	for name, data := range ntSeeds() {
		path := filepath.Join("testdata", name)
		if ntUpdateGolden() {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s differs from the writer's output (run with -update)", path)
		}
		if _, recs, err := parseBytes(t, name, got, parse.Options{}); err != nil || len(recs) == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzNettrace: any input gives a profile or a located *parse.Error,
// never a panic; records that come out are well formed, and as many as
// the profile counts. Seeds: testdata and the first 64 KiB of each real
// sample.
func FuzzNettrace(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.nettrace"))
	real, _ := filepath.Glob(filepath.Join(nettraceSamples, "*.nettrace"))
	for _, path := range append(files, real...) {
		if b, err := os.ReadFile(path); err == nil {
			f.Add(b[:min(len(b), 64<<10)])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, keep := range []bool{false, true} {
			n := 0
			check := parse.SinkFunc(func(r *parse.Record) {
				n++
				if !(r.Rate > 0) || r.Alloc.Bytes < 0 || math.IsInf(r.Alloc.Bytes, 0) ||
					(r.HasOffset && !(r.Offset > 0 && r.Offset <= r.Alloc.Size)) {
					t.Fatalf("malformed record %+v", r)
				}
			})
			p, err := Parse("fuzz.nettrace", bufio.NewReader(bytes.NewReader(data)), parse.Options{KeepGoing: keep}, check)
			if err != nil {
				var pe *parse.Error
				if !errors.As(err, &pe) || pe.File != "fuzz.nettrace" || pe.Offset < 0 || pe.Offset > int64(len(data)) {
					t.Fatalf("error %v (%T) not located in the input", err, err)
				}
				continue
			}
			if p.Records != n {
				t.Fatalf("profile counts %d records, %d were sent", p.Records, n)
			}
		}
	})
}

// TestNettraceGzip: a trace read through a gzip stream, whose reads come
// in other sizes than a file's, reads like the plain one.
func TestNettraceGzip(t *testing.T) {
	data, _ := nt.Simulate(simWorkload(9), nt.Options{Version: nt.V6})
	z := bytes.NewReader(testfile.Gzip(data))
	_, plain, err := parseBytes(t, "t.nettrace", data, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(z)
	if err != nil {
		t.Fatal(err)
	}
	var c collector
	if _, err := Parse("t.nettrace.gz", bufio.NewReader(zr), parse.Options{}, &c); err != nil {
		t.Fatal(err)
	}
	if len(plain) == 0 || fmt.Sprint(plain) != fmt.Sprint(c.recs) {
		t.Errorf("gzip: %d records, plain %d", len(c.recs), len(plain))
	}
}

// TestAfterTheEnd: bytes after a trace's end (a trace joined to itself,
// garbage) are said in a warning and not read; the trace's own records
// are those of the trace alone.
func TestAfterTheEnd(t *testing.T) {
	for _, v := range []nt.Version{nt.V4, nt.V6} {
		data, _ := nt.Simulate(simWorkload(7), nt.Options{Version: v, PID: 4242})
		p1, once, err := parseBytes(t, "once", data, parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, extra := range [][]byte{data, []byte("garbage")} {
			p2, recs, err := parseBytes(t, "more", append(slices.Clone(data), extra...), parse.Options{})
			want := fmt.Sprintf("%d bytes after the end of the trace at byte %d", len(extra), len(data))
			if err != nil || len(recs) != len(once) || len(p2.Warnings) != len(p1.Warnings)+1 || !strings.Contains(p2.Warnings[len(p2.Warnings)-1], want) {
				t.Errorf("V%d and %d bytes more: %v, %d records of %d, warnings %q", v, len(extra), err, len(recs), len(once), p2.Warnings)
			}
		}
	}
}
