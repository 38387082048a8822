package engine

import (
	"unsafe"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// WriteSample writes one distinct stack (frames leaf first) and type of
// an input: a row per value it has something for (st in values' order).
// Sample rows can be grouped again by anything heapest groups by.
func (w *Writer) WriteSample(src parse.Source, stack []string, typ string, values []unbias.Value, st []ci.Stats) error {
	// Rows are buffered (Write): their stack and key are kept in the
	// writer's arenas until the batch is written, rather than made for
	// each stack. A 60 MB Go heap profile's 920,000 stacks of 48 frames
	// allocated 1.7 GB of them, which the collector then had to find.
	from := len(w.keys)
	w.keys = aggregate.AppendStackKey(w.keys, stack)
	key := unsafe.String(unsafe.SliceData(w.keys[from:]), len(w.keys)-from)
	at := len(w.names)
	w.names = append(w.names, stack...)
	stack = w.names[at:len(w.names):len(w.names)]
	for i, v := range values {
		if st[i].N == 0 {
			continue
		}
		w.buf = append(w.buf, Row{Source: src.Path, Format: src.Format, Process: src.Process, BuildID: src.Build, Time: src.Time,
			By: aggregate.ByStack.String(), Part: PartSample, Key: key, Stack: stack, Type: typ, Value: v.String(),
			Columns: ci.ColumnsOf(st[i])})
		w.rows++
	}
	if len(w.buf) < batch {
		return nil
	}
	// No row refers to the arenas once the batch is written (the Parquet
	// writer copies what it is given): they are filled again.
	err := w.flush()
	w.keys, w.names = w.keys[:0], w.names[:0]
	return err
}

// oneSource reports whether rows all have the source label of the first.
func oneSource(rows []Row) bool {
	for i := range rows {
		if rows[i].Source != rows[0].Source {
			return false
		}
	}
	return true
}

// HasSamples reports whether the rows are sample rows (all of them must
// be: a file is either groups or samples).
func HasSamples(rows []Row) bool {
	return len(rows) > 0 && rows[0].Part == PartSample
}

// Sources splits sample rows by their source label (rows without one
// are one source, named name), so that each input of the rows is read
// back as one profile: --by source, and a merge's guards, see them.
func Sources(rows []Row, name string) (names []string, split [][]Row) {
	if len(rows) > 0 && oneSource(rows) {
		// One source, as a report's rows have: no copy of them (hundreds
		// of megabytes for a large dump's sample rows).
		src := rows[0].Source
		if src == "" {
			src = name
		}
		return []string{src}, [][]Row{rows}
	}
	index := map[string]int{}
	for _, r := range rows {
		src := r.Source
		if src == "" {
			src = name
		}
		i, ok := index[src]
		if !ok {
			i = len(names)
			index[src] = i
			names = append(names, src)
			split = append(split, nil)
		}
		split[i] = append(split[i], r)
	}
	return names, split
}

// Records returns a reader of sample rows as the records of one profile
// named name: one record per stack and type, with the statistics of each
// value it has, as heapest's pprof output is read back, so that every
// report flag (--by, --focus, …) works on them.
func Records(rows []Row, name string) func(sink parse.Sink, threads bool) (*parse.Profile, error) {
	return func(sink parse.Sink, _ bool) (*parse.Profile, error) {
		type cell struct {
			pre   parse.Precomputed
			stack []string
			typ   string
		}
		var cells []*cell
		index := map[[2]string]*cell{}
		profile := newSampleProfile(name)
		for i := range rows {
			r := &rows[i]
			v, s, err := profile.add(r, i)
			if err != nil {
				return nil, err
			}
			k := [2]string{r.Key, r.Type}
			c := index[k]
			if c == nil {
				c = &cell{stack: r.Stack, typ: r.Type}
				index[k] = c
				cells = append(cells, c)
			}
			c.pre.Stats[v].Merge(&s)
			c.pre.Has[v] = true
		}
		pp := profile.profile()
		p := &pp
		parse.Begin(sink, p)
		var rec parse.Record
		for _, c := range cells {
			sendSample(sink, &rec, c.stack, c.typ, &c.pre)
			p.Records++
		}
		return p, nil
	}
}

// sendSample sends the record of a sample's stack (frame names, leaf
// first), type and statistics, in rec.
func sendSample(sink parse.Sink, rec *parse.Record, stack []string, typ string, pre *parse.Precomputed) {
	rec.Stack = rec.Stack[:0]
	for _, f := range stack {
		rec.Stack = append(rec.Stack, parse.Frame{Func: f})
	}
	rec.SetPrecomputed(pre)
	rec.Type = typ
	sink.Record(rec)
}
