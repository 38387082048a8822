package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// stats are the statistics of n samples of z bytes at period rate, as
// the pipeline writes them (ci's own constructor is unbias.Samples).
func stats(n, z, rate float64) ci.Stats {
	p := 1 - 1/(1+z/rate) // any value in (0,1) will do here
	return ci.Stats{N: 1, Estimate: n * z / p, Var: n * z * z * (1 - p) / (p * p), Samples: n,
		MaxWeight: z * (1 - p) / p, P: p, Unit: z, Rate: rate}
}

func sampleRows() []Row {
	a, b := stats(3, 64, 524288), stats(2, 4096, 65536)
	tot := a.Add(b)
	label := Row{Source: "a.heap", Format: "jemalloc", By: "func", Value: "inuse_space"}
	rows := []Row{label, label, label}
	rows[0].Part, rows[0].Key, rows[0].Columns = PartTotal, "total", ci.ColumnsOf(tot)
	rows[1].Part, rows[1].Key, rows[1].Columns = PartFlat, "f", ci.ColumnsOf(a)
	rows[2].Part, rows[2].Key, rows[2].Stack, rows[2].Columns = PartCum, "g", []string{"g", "main"}, ci.ColumnsOf(b)
	return rows
}

// write is the Parquet file of rows.
func write(t testing.TB, rows []Row) []byte {
	t.Helper()
	var buf bytes.Buffer
	writeTo(t, &buf, rows)
	return buf.Bytes()
}

// writeTo writes the Parquet file of rows to out.
func writeTo(t testing.TB, out io.Writer, rows []Row) {
	t.Helper()
	w := NewWriter(out)
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRoundTrip checks that Read gives back the rows Write wrote, and
// that the file names its schema.
func TestRoundTrip(t *testing.T) {
	rows := sampleRows()
	b := write(t, rows)
	got, err := Read(bytes.NewReader(b), int64(len(b)), "x")
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if len(got[i].Stack) == 0 && len(rows[i].Stack) == 0 {
			got[i].Stack = rows[i].Stack
		}
	}
	if !reflect.DeepEqual(got, rows) {
		t.Errorf("read\n%+v\nwrote\n%+v", got, rows)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := f.Lookup(SchemaKey); !ok || v != Schema {
		t.Errorf("metadata %s = %q, %v; want %q", SchemaKey, v, ok, Schema)
	}
}

// Read keeps one copy of each text the rows repeat (a frame's name in
// every stack, a label in every row).
func TestReadSharesText(t *testing.T) {
	rows := append(sampleRows(), sampleRows()...)
	b := write(t, rows)
	got, err := Read(bytes.NewReader(b), int64(len(b)), "x")
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b string) bool { return a == b && unsafe.StringData(a) == unsafe.StringData(b) }
	if a, b := got[2], got[5]; !same(a.Stack[1], b.Stack[1]) || !same(a.Key, b.Key) || !same(got[0].Source, got[4].Source) {
		t.Errorf("rows %+v and %+v hold copies of the same text", a, b)
	}
	// A stack the row before had too is that row's (sample rows come a
	// row per value of each stack).
	twice := []Row{rows[2], rows[2], rows[1]}
	twice[1].Value = "alloc_space"
	b = write(t, twice)
	if got, err = Read(bytes.NewReader(b), int64(len(b)), "x"); err != nil {
		t.Fatal(err)
	}
	if &got[0].Stack[0] != &got[1].Stack[0] || got[2].Stack != nil || fmt.Sprint(got[1].Stack) != "[g main]" {
		t.Errorf("stacks %q, %q and %q: want the first two shared, the third nil", got[0].Stack, got[1].Stack, got[2].Stack)
	}
}

// Frames are read against the stack of the row before (the same frame in
// the same place is that row's string): stacks that share some frames,
// differ in others or in length, and follow an empty one read back as
// written, one string per distinct frame; a survey reads none.
func TestReadStacksAgainstLast(t *testing.T) {
	stacks := [][]string{{"a", "b", "c"}, {"a", "x", "c", "d"}, {"a", "b"}, nil, {"a", "b", "c"}, {"c", "b", "a"}, {"d"}}
	var rows []Row
	for i, st := range stacks {
		r := sampleRows()[0]
		r.Key, r.Stack = fmt.Sprint(i, st), st
		rows = append(rows, r)
	}
	b := write(t, rows)
	for _, mode := range []scanMode{keepRows, transient, noStacks} {
		seen := map[string]*byte{}
		i := 0
		err := scan(bytes.NewReader(b), int64(len(b)), "x", mode, func(r *Row) error {
			want := stacks[i]
			if mode == noStacks {
				want = nil
			}
			if fmt.Sprint(r.Stack) != fmt.Sprint(want) {
				t.Errorf("mode %d: row %d: stack %q, want %q", mode, i, r.Stack, want)
			}
			for _, f := range r.Stack {
				if p, ok := seen[f]; ok && p != unsafe.StringData(f) {
					t.Errorf("mode %d: row %d: frame %q is a second copy", mode, i, f)
				}
				seen[f] = unsafe.StringData(f)
			}
			i++
			return nil
		})
		if err != nil || i != len(stacks) {
			t.Fatalf("mode %d: %d rows, %v", mode, i, err)
		}
	}
}

// TestGroupSums checks that rows of one key from several inputs sum as
// their statistics merge, and that the total is kept apart.
func TestGroupSums(t *testing.T) {
	rows := append(sampleRows(), sampleRows()...)
	rows[3].Source = "b.heap"
	g, err := Group(rows, "")
	if err != nil {
		t.Fatal(err)
	}
	a := stats(3, 64, 524288)
	want := a.Add(a)
	if len(g.Groups) != 2 || g.Groups[0].Key != "f" || g.Groups[0].Flat != want {
		t.Errorf("groups %+v, want f with %+v", g.Groups, want)
	}
	if g.Groups[1].Key != "g" || g.Groups[1].Cum.N != 2 || g.Groups[1].Flat.N != 0 {
		t.Errorf("g: %+v, want only cum statistics, of two rows", g.Groups[1])
	}
	if g.Total.N != 4 || g.Rows != 6 || g.By.String() != "func" {
		t.Errorf("total %+v, %d rows, by %v", g.Total, g.Rows, g.By)
	}
}

// TestGroupErrors pins the messages of rows no heapest file or engine
// grouping of one has.
func TestGroupErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func([]Row) []Row
		value string
		want  string
	}{
		{"negative estimate", func(r []Row) []Row { r[1].EstimateSum = -5; return r }, "", "row 2 (flat f): invalid statistics: estimate_sum -5"},
		{"no group", func(r []Row) []Row { r[1].NSum = 0; return r }, "", "n_sum 0"},
		{"min above max", func(r []Row) []Row { r[2].RateMin = 1e9; return r }, "", "rate_min"},
		{"unknown part", func(r []Row) []Row { r[1].Part = "leaf"; return r }, "", `part "leaf"`},
		{"two groupings", func(r []Row) []Row { r[2].By = "stack"; return r }, "", `grouped by "stack"`},
		{"unknown grouping", func(r []Row) []Row {
			for i := range r {
				r[i].By = "color"
			}
			return r
		}, "", "column by"},
		{"no total", func(r []Row) []Row { return r[1:] }, "", "no total row"},
		{"other value", func(r []Row) []Row { return r }, "alloc_space", "no rows of value alloc_space"},
		{"two values", func(r []Row) []Row {
			r[0].Value, r[1].Value, r[2].Value = "inuse_objects", "inuse_objects", "alloc_objects"
			return r
		}, "", "several values"},
	} {
		rows := c.edit(sampleRows())
		_, err := Group(rows, c.value)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
		// Read from a file as it is summed, the same error, of the file.
		b := write(t, rows)
		_, ferr := GroupFile(&Input{bytes.NewReader(b), int64(len(b)), "g.parquet", nil}, "g.parquet", c.value, func() error { return nil })
		if ferr == nil || err == nil || ferr.Error() != "g.parquet: "+err.Error() {
			t.Errorf("%s: GroupFile: %v, want g.parquet: %v", c.name, ferr, err)
		}
	}
}

// TestGroupFile: a file's rows summed as they are read give what Group
// gives of them kept, bit for bit; the caller's checks run once the file
// is known to be readable, and their error stops the reading.
func TestGroupFile(t *testing.T) {
	rows := append(sampleRows(), sampleRows()...)
	rows[3].Source = "b.heap"
	for i := range rows[:3] {
		r := rows[i]
		r.Value = "alloc_space"
		rows = append(rows, r)
	}
	b := write(t, rows)
	in := &Input{bytes.NewReader(b), int64(len(b)), "g.parquet", nil}
	for _, v := range []string{"", "alloc_space"} {
		want, err := Group(rows, v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := GroupFile(in, "g.parquet", v, func() error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("value %q: %+v, want %+v", v, got, want)
		}
	}
	stop := errors.New("flags")
	if _, err := GroupFile(in, "g.parquet", "", func() error { return stop }); err != stop {
		t.Errorf("before's error: %v", err)
	}
	damaged := slices.Clone(b)
	for i := len(b) / 4; i < len(b)/2; i += 7 {
		damaged[i] ^= 0x5a
	}
	called := false
	_, err := GroupFile(&Input{bytes.NewReader(damaged), int64(len(damaged)), "d.parquet", nil}, "d.parquet", "", func() error { called = true; return nil })
	if err == nil || called || !strings.HasPrefix(err.Error(), "d.parquet: ") || strings.HasPrefix(err.Error(), "d.parquet: d.parquet") {
		t.Errorf("damaged file: %v (checks called: %v)", err, called)
	}
}

// engineFile writes rows as an engine might: Row's columns, flattened,
// with the types of some changed (to a string, or to an optional
// column left null) and some left out.
func engineFile(t *testing.T, rows []Row, asText, asNull, drop []string, asDecimal ...string) []byte {
	t.Helper()
	has := func(list []string, name string) bool {
		for _, x := range list {
			if x == name {
				return true
			}
		}
		return false
	}
	var fields []reflect.StructField
	var from [][]int
	var walk func(typ reflect.Type, index []int)
	walk = func(typ reflect.Type, index []int) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			idx := append(append([]int{}, index...), i)
			if f.Anonymous {
				walk(f.Type, idx)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
			switch {
			case has(drop, name):
				continue
			case has(asText, name):
				f.Type, f.Tag = reflect.TypeOf(""), reflect.StructTag(`parquet:"`+name+`"`)
			case has(asDecimal, name):
				f.Type, f.Tag = reflect.TypeOf(int64(0)), reflect.StructTag(`parquet:"`+name+`,decimal(3:18)"`)
			case has(asNull, name):
				f.Type, f.Tag = reflect.PointerTo(f.Type), reflect.StructTag(`parquet:"`+name+`,optional"`)
			}
			f.Index, f.Offset, f.Anonymous = nil, 0, false
			fields = append(fields, f)
			from = append(from, idx)
		}
	}
	walk(reflect.TypeOf(Row{}), nil)
	typ := reflect.StructOf(fields)
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, parquet.SchemaOf(reflect.New(typ).Interface()))
	for _, r := range rows {
		v := reflect.New(typ).Elem()
		src := reflect.ValueOf(r)
		for i, idx := range from {
			x := src.FieldByIndex(idx)
			switch out := v.Field(i); {
			case out.Kind() == reflect.String && x.Kind() != reflect.String:
				out.SetString(fmt.Sprint(x.Interface()))
			case out.Kind() == reflect.Int64 && x.Kind() == reflect.Float64:
				out.SetInt(int64(math.Round(x.Float() * 1000)))
			case out.Kind() == reflect.Pointer:
				// left nil: null
			default:
				out.Set(x)
			}
		}
		if err := w.Write(v.Addr().Interface()); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadSchemaErrors checks Read's messages on files an engine might
// write: statistics left out, one of the wrong type, a null one.
func TestReadSchemaErrors(t *testing.T) {
	rows := sampleRows()
	for _, c := range []struct {
		name                 string
		asText, asNull, drop []string
		want                 string
	}{
		{"missing columns", nil, nil, []string{"var_sum", "bias_sum"}, "not heapest's Parquet schema (heapest-parquet/1): missing columns bias_sum, var_sum"},
		{"a statistic as text", []string{"var_sum"}, nil, nil, "column var_sum is text (BYTE_ARRAY), want a number"},
		{"a flag as text", []string{"mixed_any"}, nil, nil, "column mixed_any is text (BYTE_ARRAY), want a boolean"},
		{"a null statistic", nil, []string{"var_sum"}, nil, "row 1: column var_sum is null"},
	} {
		b := engineFile(t, rows, c.asText, c.asNull, c.drop)
		_, err := Read(bytes.NewReader(b), int64(len(b)), "f.parquet")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "f.parquet: ") {
			t.Errorf("%s: error %v, want one starting with the file and containing %q", c.name, err, c.want)
		}
	}
	b := []byte("heap_v2/524288\n")
	if _, err := Read(bytes.NewReader(b), int64(len(b)), "f.parquet"); err == nil || !strings.Contains(err.Error(), "f.parquet: not a Parquet file") {
		t.Errorf("a heap dump: error %v", err)
	}
	// A DECIMAL is read at its scale, not as its stored integer.
	b = engineFile(t, rows, nil, nil, nil, "estimate_sum")
	got, err := Read(bytes.NewReader(b), int64(len(b)), "f.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if want := math.Round(rows[1].EstimateSum*1000) / 1000; got[1].EstimateSum != want {
		t.Errorf("DECIMAL(18,3) estimate_sum read as %v, want %v", got[1].EstimateSum, want)
	}
	// Extra columns, and the optional ones left out, are fine.
	b = engineFile(t, rows, nil, nil, []string{"source", "format", "process", "build_id", "stack", "type"})
	got, err = Read(bytes.NewReader(b), int64(len(b)), "f.parquet")
	if err != nil || len(got) != len(rows) || got[1].Columns != rows[1].Columns {
		t.Errorf("labels left out: %v, %d rows", err, len(got))
	}
}

// TestPagesClaimingMoreValues: a file whose column's page claims more
// values (85) than its row group has rows (68) is refused before any row
// is read. parquet-go assembled 85 rows from it, the other columns' last
// 17 values taken from whatever its buffers held, different from run to
// run (found by FuzzRead: Read and Scan disagreed on the same bytes).
func TestPagesClaimingMoreValues(t *testing.T) {
	b, err := os.ReadFile("testdata/damaged-page-values.parquet")
	if err != nil {
		t.Fatal(err)
	}
	const want = "f.parquet: damaged Parquet file: row group 0, column 25: its pages hold 85 values, its metadata says 68, in 68 rows"
	for range 5 {
		if _, err := Read(bytes.NewReader(b), int64(len(b)), "f.parquet"); err == nil || err.Error() != want {
			t.Fatalf("error %v, want %q", err, want)
		}
	}
}

// FuzzRead feeds Read and Group damaged files: they must fail with an
// error, never panic. The seeds are the files in testdata: heapest's own,
// and one it refuses.
func FuzzRead(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.parquet")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := Read(bytes.NewReader(b), int64(len(b)), "fuzz")
		checkScan(t, b, rows, err)
		if err != nil {
			return
		}
		if HasSamples(rows) {
			_, _ = Records(rows, "fuzz")(nopSink{}, false)
			return
		}
		want, werr := Group(rows, "")
		got, gerr := GroupFile(&Input{bytes.NewReader(b), int64(len(b)), "fuzz", nil}, "fuzz", "", func() error { return nil })
		if werr != nil && (gerr == nil || gerr.Error() != "fuzz: "+werr.Error()) || werr == nil && (gerr != nil || !reflect.DeepEqual(got, want)) {
			t.Fatalf("GroupFile: %v, Group: %v", gerr, werr)
		}
	})
}

// checkScan checks that Scan gives the rows Read gave, or its error.
func checkScan(t *testing.T, b []byte, rows []Row, err error) {
	var scanned []Row
	errS := Scan(bytes.NewReader(b), int64(len(b)), "fuzz", func(r *Row) error {
		c := *r
		c.Key = strings.Clone(r.Key)
		c.Stack = nil
		if len(r.Stack) > 0 {
			c.Stack = slices.Clone(r.Stack)
		}
		scanned = append(scanned, c)
		return nil
	})
	if fmt.Sprint(err) != fmt.Sprint(errS) {
		t.Fatalf("Read: %v; Scan: %v", err, errS)
	}
	if err == nil && !reflect.DeepEqual(scanned, rows) {
		t.Fatalf("Scan gave %d rows unlike Read's %d", len(scanned), len(rows))
	}
}

type nopSink struct{}

func (nopSink) Record(*parse.Record) {}

// Sources splits rows by their source label, in the order the sources
// first come (no label: the name given); the rows of one source are
// returned as they are, not copied.
func TestSources(t *testing.T) {
	a, b := sampleRows(), sampleRows()
	for i := range b {
		b[i].Source = ""
	}
	mixed := append(append([]Row{}, a[:2]...), append(b, a[2:]...)...)
	names, split := Sources(mixed, "file.parquet")
	if fmt.Sprint(names) != "[a.heap file.parquet]" || len(split) != 2 || len(split[0]) != 3 || len(split[1]) != 3 {
		t.Fatalf("names %v, split into %d and %d rows", names, len(split[0]), len(split[1]))
	}
	names, split = Sources(a, "file.parquet")
	if fmt.Sprint(names) != "[a.heap]" || len(split) != 1 || &split[0][0] != &a[0] || len(split[0]) != len(a) {
		t.Errorf("one source: names %v, rows copied or cut", names)
	}
}

// TestWriteSampleBatches: sample rows written through several batches
// (rows of one to four values, so batches end within no stack) read back
// with each stack's own frames and key, although the writer fills its
// arenas again after each batch.
func TestWriteSampleBatches(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	values := []unbias.Value{unbias.InUseSpace, unbias.InUseObjects, unbias.AllocSpace, unbias.AllocObjects}
	type want struct {
		key   string
		stack []string
	}
	var wants []want
	var frame []string
	for i := range 3 * batch {
		frame = frame[:0]
		for d := range 1 + i%7 {
			frame = append(frame, fmt.Sprintf("f%d_%d", i, d))
		}
		st := make([]ci.Stats, len(values))
		for v := range 1 + i%len(values) {
			st[v] = stats(float64(1+i), 64, 524288)
			wants = append(wants, want{aggregate.StackKey(frame), slices.Clone(frame)})
		}
		if err := w.WriteSample(parse.Source{Path: "a.heap"}, frame, "", values, st); err != nil {
			t.Fatal(err)
		}
		frame[0] = "overwritten" // the caller's slice is its own again
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rows, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "a.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(wants) {
		t.Fatalf("%d rows, want %d", len(rows), len(wants))
	}
	for i, r := range rows {
		if r.Key != wants[i].key || !slices.Equal(r.Stack, wants[i].stack) {
			t.Fatalf("row %d: key %q stack %q, want %q %q", i, r.Key, r.Stack, wants[i].key, wants[i].stack)
		}
	}
}

// TestGroupAllowsUnseen: rows of sources sampled at different periods
// sum to groups that allow one unseen sample of the longest (as a merge
// of the sources does, aggregate.Table.AllowUnseen): g, whose rows come
// from the 64 KiB source alone, may hold 512 KiB more in the other. By
// source, each row is one source's own, and stays as it is.
func TestGroupAllowsUnseen(t *testing.T) {
	rows := sampleRows() // f at 512 KiB, g at 64 KiB
	g, err := Group(rows, "")
	if err != nil {
		t.Fatal(err)
	}
	if w := g.Groups[1].Cum.MaxWeight; g.Groups[1].Key != "g" || w != 524288 {
		t.Errorf("g's MaxWeight %v, want the longest period, 524288", w)
	}
	for i := range rows {
		rows[i].By = "source"
	}
	g, err = Group(rows, "")
	if err != nil {
		t.Fatal(err)
	}
	if w, own := g.Groups[1].Cum.MaxWeight, rows[2].Columns.MaxWeightMax; w != own {
		t.Errorf("by source: g's MaxWeight %v, want its own, %v", w, own)
	}
}
