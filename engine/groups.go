package engine

import (
	"fmt"
	"strings"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// WriteGroups writes one input's groups of value v, grouped by by, and
// its total: a flat row per group with samples, a cum row per function
// with samples under it (by func), and a total row.
func (w *Writer) WriteGroups(src parse.Source, v unbias.Value, by aggregate.By, groups []*aggregate.Group, total ci.Stats) error {
	label := Row{Source: src.Path, Format: src.Format, Process: src.Process, BuildID: src.Build, Time: src.Time, By: by.String(), Value: v.String()}
	put := func(part, key string, stack []string, s ci.Stats) error {
		if s.N == 0 {
			return nil
		}
		r := label
		r.Part, r.Key, r.Stack, r.Columns = part, key, stack, ci.ColumnsOf(s)
		return w.Write(r)
	}
	if err := put(PartTotal, "total", nil, total); err != nil {
		return err
	}
	for _, g := range groups {
		if err := put(PartFlat, g.Key, g.Stack, g.Flat); err != nil {
			return err
		}
		if by == aggregate.ByFunc {
			if err := put(PartCum, g.Key, nil, g.Cum); err != nil {
				return err
			}
		}
	}
	return nil
}

// Grouped are rows read back, summed per part and key for one value.
type Grouped struct {
	By     aggregate.By
	Value  unbias.Value
	Groups []*aggregate.Group
	Total  ci.Stats
	// Rows is how many rows were read for the value.
	Rows int
}

// Group sums the rows of value v (or, with v empty, of the one value
// the rows have; where they have several, the one report would show,
// unbias.DefaultValue) per part and key:
// rows an engine grouped are summed again only where the engine left
// several of one key (as when it kept a label column), so heapest's own
// files, ungrouped, give the merge of their inputs.
func Group(rows []Row, v string) (*Grouped, error) {
	if v == "" {
		var err error
		if v, err = defaultValue(rows); err != nil {
			return nil, err
		}
	}
	val, err := unbias.ParseValue(v)
	if err != nil {
		return nil, err
	}
	g := &Grouped{Value: val}
	byName := ""
	index := map[string]*aggregate.Group{}
	for i := range rows {
		r := &rows[i]
		if r.Value != v {
			continue
		}
		if r.Part == PartSample {
			return nil, fmt.Errorf("row %d: sample rows are records, not groups (read them with the records of the file)", i+1)
		}
		if byName == "" {
			byName = r.By
		} else if r.By != byName {
			return nil, fmt.Errorf("row %d: grouped by %q where earlier rows are by %q: one file is one grouping", i+1, r.By, byName)
		}
		s, err := r.Columns.Stats()
		if err != nil {
			return nil, fmt.Errorf("row %d (%s %s): %w", i+1, r.Part, r.Key, err)
		}
		g.Rows++
		switch r.Part {
		case PartTotal:
			g.Total.Merge(&s)
			continue
		case PartFlat, PartCum:
		default:
			return nil, fmt.Errorf("row %d: part %q (want %s, %s, %s or %s)", i+1, r.Part, PartTotal, PartFlat, PartCum, PartSample)
		}
		grp := index[r.Key]
		if grp == nil {
			grp = &aggregate.Group{Key: r.Key, Stack: r.Stack}
			index[r.Key] = grp
			g.Groups = append(g.Groups, grp)
		}
		if r.Part == PartFlat {
			grp.Flat.Merge(&s)
		} else {
			grp.Cum.Merge(&s)
		}
	}
	if g.Rows == 0 {
		return nil, fmt.Errorf("no rows of value %s (the inputs had no samples of it)", v)
	}
	if g.Total.N == 0 {
		return nil, fmt.Errorf("no %s row of value %s: the total is what percentages and the header rest on", PartTotal, v)
	}
	if g.By, err = aggregate.ParseBy(byName); err != nil {
		return nil, fmt.Errorf("column by: %w", err)
	}
	return g, nil
}

// defaultValue is the value the rows have, inuse_space where several.
func defaultValue(rows []Row) (string, error) {
	seen := map[string]bool{}
	var list []string
	// The rows as the profile unbias.DefaultValue chooses for: which
	// kinds of value they have, and whether they are JFR's.
	var p parse.Profile
	for _, r := range rows {
		if r.Format == "jfr" {
			p.Source.Format = "jfr"
		}
		if !seen[r.Value] {
			seen[r.Value] = true
			list = append(list, r.Value)
			v, err := unbias.ParseValue(r.Value)
			p.HasInUse = p.HasInUse || err == nil && !v.IsAlloc()
			p.HasAlloc = p.HasAlloc || err == nil && v.IsAlloc()
		}
	}
	switch d := unbias.DefaultValue(&p).String(); {
	case len(list) == 0:
		return "", fmt.Errorf("no rows")
	case len(list) == 1:
		return list[0], nil
	case seen[d]:
		return d, nil
	}
	return "", fmt.Errorf("rows of several values (%s): choose one with --value", strings.Join(list, ", "))
}
