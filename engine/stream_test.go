package engine

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// values are the four values, in their order.
var values = []unbias.Value{unbias.InUseSpace, unbias.InUseObjects, unbias.AllocSpace, unbias.AllocObjects}

// mergeSink merges the records it is sent per stack and type, and per
// value, in the order they come: what the collector makes of them.
type mergeSink struct {
	keys  []string
	cells map[string]*[4]ci.Stats
	begun *parse.Profile
}

func (m *mergeSink) Begin(p *parse.Profile) { m.begun = p }

func (m *mergeSink) Record(rec *parse.Record) {
	var names []string
	for _, f := range rec.Stack {
		names = append(names, f.Func)
	}
	k := strings.Join(names, ";") + "|" + rec.Type
	if m.cells == nil {
		m.cells = map[string]*[4]ci.Stats{}
	}
	c := m.cells[k]
	if c == nil {
		c = new([4]ci.Stats)
		m.cells[k] = c
		m.keys = append(m.keys, k)
	}
	for v := range c {
		if rec.Pre.Has[v] {
			c[v].Merge(&rec.Pre.Stats[v])
		}
	}
}

// sampleFile is a file of sample rows: stacks with one to four values,
// some of a type, and a stack whose rows are apart.
func sampleFile(t *testing.T) ([]Row, *Input) {
	var rows []Row
	for i := range 700 {
		stack := []string{fmt.Sprintf("f%d", i%300), "main"}
		for v := range 1 + i%len(values) {
			r := Row{Source: "a.heap", Format: "jemalloc", By: "stack", Part: PartSample,
				Key: strings.Join([]string{"main", stack[0]}, ";"), Stack: stack, Value: values[v].String(),
				Columns: ci.ColumnsOf(stats(float64(1+i%7), float64(int(64)<<(i%5)), 524288))}
			if i%3 == 0 {
				r.Type = "T"
			}
			rows = append(rows, r)
		}
	}
	b := write(t, rows)
	return rows, &Input{bytes.NewReader(b), int64(len(b)), "a.parquet", func() error { return nil }}
}

// TestSampleRecords: the sample rows of one source, read again a record
// per row (SampleRecords), make the cells Records makes of the rows kept
// (a record per stack and type), in the same order, with the same
// statistics bit for bit, and the same profile.
func TestSampleRecords(t *testing.T) {
	rows, in := sampleFile(t)
	sv, err := SurveyRows(in, "a.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if !sv.Samples || !sv.OneSource || sv.Source != "a.heap" {
		t.Fatalf("survey: samples %v, one source %v (%q)", sv.Samples, sv.OneSource, sv.Source)
	}
	var got, want mergeSink
	pg, err := SampleRecords(in, sv)(&got, false)
	if err != nil {
		t.Fatal(err)
	}
	pw, err := Records(rows, "a.heap")(&want, false)
	if err != nil {
		t.Fatal(err)
	}
	if pg.Records != len(rows) {
		t.Errorf("%d records, want one per row (%d)", pg.Records, len(rows))
	}
	pg.Records = pw.Records
	if fmt.Sprint(*pg) != fmt.Sprint(*pw) || got.begun != pg {
		t.Errorf("profile %+v, want %+v", *pg, *pw)
	}
	if !slices.Equal(got.keys, want.keys) {
		t.Fatalf("cells %v, want %v", got.keys, want.keys)
	}
	for _, k := range want.keys {
		for v := range want.cells[k] {
			if g, w := got.cells[k][v], want.cells[k][v]; !g.SameBits(&w) {
				t.Fatalf("cell %s value %d: %+v, want %+v", k, v, g, w)
			}
		}
	}
}

// TestSurveyRows: a file of groups, or of several sources, is not read as
// one source's records; a bad row is reported as Records reports it,
// before any record is sent.
func TestSurveyRows(t *testing.T) {
	groups := write(t, sampleRows())
	sv, err := SurveyRows(&Input{bytes.NewReader(groups), int64(len(groups)), "g.parquet", nil}, "g.parquet")
	if err != nil || sv.Samples {
		t.Errorf("groups: samples %v, error %v", sv != nil && sv.Samples, err)
	}
	rows, _ := sampleFile(t)
	two := slices.Clone(rows)
	two[len(two)-1].Source = "b.heap"
	b := write(t, two)
	sv, err = SurveyRows(&Input{bytes.NewReader(b), int64(len(b)), "two.parquet", nil}, "two.parquet")
	if err != nil || !sv.Samples || sv.OneSource {
		t.Errorf("two sources: samples %v, one source %v, error %v", sv.Samples, sv.OneSource, err)
	}
	bad := slices.Clone(rows)
	bad[5].Value = "resident_space"
	bad[9].Part = PartFlat
	b = write(t, bad)
	in := &Input{bytes.NewReader(b), int64(len(b)), "bad.parquet", nil}
	sv, err = SurveyRows(in, "bad.parquet")
	if err != nil {
		t.Fatal(err)
	}
	var sink mergeSink
	_, got := SampleRecords(in, sv)(&sink, false)
	_, want := Records(bad, "a.heap")(nopSink{}, false)
	if got == nil || want == nil || got.Error() != want.Error() || len(sink.keys) > 0 || sink.begun != nil {
		t.Errorf("bad row: %v, want %v (%d cells sent)", got, want, len(sink.keys))
	}
}
