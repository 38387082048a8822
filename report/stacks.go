package report

import (
	"fmt"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// Stacks is the per-stack view of the inputs that pprof output writes:
// every stack (Options.By and Top do not apply) with the statistics of
// each value all the inputs have, the chosen one first. It reads the
// merged table in place, so that writing a merge of a million stacks
// builds no row or key per stack.
type Stacks struct {
	// Values are the values written, the report's own first.
	Values  []unbias.Value
	Sources []parse.Source
	Merged  *parse.Merged
	Skipped []Skip
	// Lines says frames are named by source line (parse.LineName): pprof
	// output writes each as its function and its line.
	Lines bool
	// Notices say what is wrong with the view itself (a report's Notices):
	// delta profiles summed with cumulative ones.
	Notices []string

	table  *aggregate.Table
	filter aggregate.Filter
	index  []int // the table's value index of each of Values
}

// Stacks returns the per-stack view. It needs Options.AllValues.
func (b *Builder) Stacks() (*Stacks, error) {
	opt, err := b.settle()
	if err != nil {
		return nil, err
	}
	s := &Stacks{Merged: b.merged(), Skipped: b.skipped, Lines: opt.Lines,
		table: b.table, filter: b.filter()}
	profiles := b.profiles()
	for _, v := range allValues {
		if v == opt.Value || v != opt.Value && HasValue(profiles, v) {
			s.Values = append(s.Values, v)
		}
	}
	// The chosen value first: it becomes the default sample type.
	for i, v := range s.Values {
		if v == opt.Value {
			copy(s.Values[1:i+1], s.Values[:i])
			s.Values[0] = v
		}
	}
	for _, v := range s.Values {
		vi := b.valueIndex(v)
		if vi < 0 {
			return nil, fmt.Errorf("internal error: value %s was not collected", v)
		}
		s.index = append(s.index, vi)
	}
	s.Sources = b.sources(s.index[0])
	if forced := forcedSamples(s.Merged); forced != "" {
		s.Notices = append(s.Notices, forced)
	}
	for _, v := range s.Values {
		if v.IsAlloc() {
			if mixed := mixedWindows(v, s.Sources); mixed != "" {
				s.Notices = append(s.Notices, mixed)
			}
			break // one alloc_* value says it for both
		}
	}
	return s, nil
}

// Each calls fn with every stack and allocated type ("" for inputs
// without types) that has something for one of the values, largest first
// by the first value: its function ids, leaf first (FuncName names them),
// the type, and its statistics per value in Values order (N == 0: nothing
// for that value). fn must not keep st.
func (s *Stacks) Each(fn func(stack []uint32, typ string, st []ci.Stats) error) error {
	out := make([]ci.Stats, len(s.Values))
	return s.table.EachStack(s.filter, s.index[0], func(stack []uint32, typ string, st []ci.Stats) error {
		any := false
		for i, vi := range s.index {
			out[i] = st[vi]
			any = any || out[i].N > 0
		}
		if !any {
			return nil // only values that are not written
		}
		return fn(stack, typ, out)
	})
}

// FuncName is a function id's name.
func (s *Stacks) FuncName(id uint32) string { return s.table.FuncName(id) }

// Address reports whether function id is a frame address nothing named,
// and which.
func (s *Stacks) Address(id uint32) (uint64, bool) { return s.table.IsAddress(id) }

// Module reports whether function id is a frame keyed by module and
// offset (a file's code no symbol names), and where it lies.
func (s *Stacks) Module(id uint32) (aggregate.ModuleFrame, bool) { return s.table.Module(id) }
