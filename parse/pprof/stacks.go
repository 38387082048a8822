package pprof

import (
	"errors"
	"fmt"
	"slices"

	"github.com/heapest/heapest/parse"
)

// idIndex maps the ids of a table (functions, locations) to positions in
// it: a slice when the ids are small (writers number them 1…n), else a map.
type idIndex struct {
	dense  []int32 // id → position+1, 0 when absent
	sparse map[uint64]int32
	// full is set when every id from 1 to len(dense)-1 is present.
	full bool
}

// newIDIndex indexes n ids given by id(i); dup is the first position whose
// id repeats an earlier one, zero the first whose id is 0 (reserved), -1
// when none.
func newIDIndex(n int, id func(i int) uint64) (x idIndex, zero, dup int) {
	zero, dup = -1, -1
	var top uint64
	for i := range n {
		top = max(top, id(i))
	}
	if top <= 4*uint64(n)+64 {
		x.dense = make([]int32, top+1)
	} else {
		x.sparse = make(map[uint64]int32, n)
	}
	distinct := 0
	for i := range n {
		v := id(i)
		if v == 0 {
			if zero < 0 {
				zero = i
			}
			continue
		}
		if _, ok := x.get(v); ok {
			if dup < 0 {
				dup = i
			}
			continue
		}
		distinct++
		if x.dense != nil {
			x.dense[v] = int32(i) + 1
		} else {
			x.sparse[v] = int32(i)
		}
	}
	x.full = x.dense != nil && distinct == len(x.dense)-1
	return x, zero, dup
}

func (x *idIndex) get(id uint64) (int32, bool) {
	if x.dense != nil {
		if id < uint64(len(x.dense)) && x.dense[id] != 0 {
			return x.dense[id] - 1, true
		}
		return 0, false
	}
	i, ok := x.sparse[id]
	return i, ok
}

// covers reports whether every id from 1 to top is present.
func (x *idIndex) covers(top uint64) bool { return x.full && top < uint64(len(x.dense)) }

// stackTable turns location ids into leaf-first frames, expanding inlined
// calls (a location's first line is the innermost): each location's frames
// are made once, and a sample's stack is the concatenation of its
// locations' frames.
type stackTable struct {
	locs   idIndex
	start  []int32 // frames of location i: frames[start[i]:start[i+1]]
	frames []parse.Frame
	named  bool // every frame has a function name
}

// newStackTable checks the function and location tables, as
// google/pprof's decoder does, and makes each location's frames.
func newStackTable(d *decoded) (*stackTable, error) {
	names, files, fns, err := functionNames(d)
	if err != nil {
		return nil, err
	}
	locs, zero, dup := newIDIndex(len(d.locations), func(i int) uint64 { return d.locations[i].id })
	if err := idError("location", zero, dup, func(i int) uint64 { return d.locations[i].id }); err != nil {
		return nil, err
	}
	t := &stackTable{locs: locs, start: make([]int32, 0, len(d.locations)+1)}
	for i, l := range d.locations {
		t.start = append(t.start, int32(len(t.frames)))
		for j, fn := range d.lines[l.start:l.end] {
			name := ""
			if fn != 0 {
				k, ok := fns.get(fn)
				if !ok {
					return nil, fmt.Errorf("location %d: line refers to unknown function %d", i, fn)
				}
				name = names[k]
				if d.wantLines {
					name = parse.LineName(name, files[k], d.lineNos[int(l.start)+j])
				}
			}
			t.frames = append(t.frames, parse.Frame{Addr: l.addr, Func: name})
		}
		if l.start == l.end {
			t.frames = append(t.frames, parse.Frame{Addr: l.addr})
		}
	}
	t.start = append(t.start, int32(len(t.frames)))
	t.named = !slices.ContainsFunc(t.frames, func(f parse.Frame) bool { return f.Func == "" })
	d.lines, d.lineNos = nil, nil // all in frames now
	return t, nil
}

// functionNames checks the function table and returns its names and,
// when lines are wanted, its file names, by position, with the index of
// its ids.
func functionNames(d *decoded) (names, files []string, _ idIndex, _ error) {
	names = make([]string, len(d.functions))
	if d.wantLines {
		files = make([]string, len(d.functions))
	}
	for i, f := range d.functions {
		name, err1 := d.str(int64(f.name))
		file, err2 := d.strBytes(int64(f.file))
		if err := errors.Join(err1, err2); err != nil {
			return nil, nil, idIndex{}, fmt.Errorf("function %d: %v", i, err)
		}
		names[i] = name
		if files != nil {
			files[i] = string(file)
		}
	}
	fns, zero, dup := newIDIndex(len(d.functions), func(i int) uint64 { return d.functions[i].id })
	err := idError("function", zero, dup, func(i int) uint64 { return d.functions[i].id })
	return names, files, fns, err
}

// idError reports the first reserved or repeated id of a table.
func idError(table string, zero, dup int, id func(int) uint64) error {
	switch {
	case zero >= 0 && (dup < 0 || zero < dup):
		return fmt.Errorf("%s %d: reserved id 0", table, zero)
	case dup >= 0:
		return fmt.Errorf("%s %d: duplicate id %d", table, dup, id(dup))
	}
	return nil
}

// appendStack appends the frames of a location list to dst, their ids
// (parse.Record.FrameIDs: index in t.frames+1) to ids, and to ends the
// length of dst after each location; ok is false when a location is
// unknown.
func (t *stackTable) appendStack(dst []parse.Frame, ids []uint32, ends []int32, locs []uint64) (_ []parse.Frame, _ []uint32, _ []int32, ok bool) {
	for _, id := range locs {
		i, ok := t.locs.get(id)
		if !ok {
			return dst, ids, ends, false
		}
		from, to := t.start[i], t.start[i+1]
		if to == from+1 {
			// One frame (no inlining), as most are: appended as a value
			// instead of through a slice copy, which costs a call per
			// location.
			dst = append(dst, t.frames[from])
			ids = append(ids, uint32(from)+1)
		} else {
			dst = append(dst, t.frames[from:to]...)
			for j := from; j < to; j++ {
				ids = append(ids, uint32(j)+1)
			}
		}
		ends = append(ends, int32(len(dst)))
	}
	return dst, ids, ends, true
}

// check validates a sample against the tables: label strings, the number
// of values, and (when locs is set) its locations.
func (d *decoded) check(s *sample, locs bool) error {
	for _, l := range s.labels {
		_, err1 := d.strBytes(int64(l.key))
		_, err2 := d.strBytes(int64(l.str))
		var err3 error
		if l.str == 0 {
			// A unit is read only for a number, as pprof reads it (a
			// label with a string has no unit to check).
			_, err3 = d.strBytes(int64(l.unit))
		}
		if err := errors.Join(err1, err2, err3); err != nil {
			return err
		}
	}
	if len(s.Value) != len(d.SampleType) {
		return fmt.Errorf("%d values for %d sample types", len(s.Value), len(d.SampleType))
	}
	if locs {
		for _, id := range s.locs {
			if _, ok := d.stacks.locs.get(id); !ok {
				return fmt.Errorf("unknown location %d", id)
			}
		}
	}
	return nil
}

// needsCheck reports whether some sample may not match the tables, or
// has negative values: then the samples are all checked before the first
// record is sent, so that a bad profile gives an error and no records.
func (d *decoded) needsCheck() bool {
	b := &d.samples
	return b.n > 0 && (b.minVals != len(d.SampleType) || b.maxVals != len(d.SampleType) ||
		b.maxStr >= uint64(d.strs.len()) || b.anyNeg || b.zeroLoc || !d.stacks.locs.covers(b.maxLoc))
}

// numLabel returns the first numeric value of a label with a role. As
// pprof reads labels: a string when str is set, else a number when the
// number or its unit is set, else nothing.
func (d *decoded) numLabel(s *sample, role uint8) (int64, bool) {
	for _, l := range s.labels {
		if l.str == 0 && (l.num != 0 || l.unit != 0) && d.labelRole[l.key] == role {
			return l.num, true
		}
	}
	return 0, false
}

// strLabelIndex returns the string table index of the first string value
// of a label with a role.
func (d *decoded) strLabelIndex(s *sample, role uint8) (uint64, bool) {
	for _, l := range s.labels {
		if l.str != 0 && d.labelRole[l.key] == role {
			return uint64(l.str), true
		}
	}
	return 0, false
}

// strLabel returns the first string value of a label with a role.
func (d *decoded) strLabel(s *sample, role uint8) ([]byte, bool) {
	for _, l := range s.labels {
		if l.str != 0 && d.labelRole[l.key] == role {
			return d.strs.at(int(l.str)), true
		}
	}
	return nil, false
}
