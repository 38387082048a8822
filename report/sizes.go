package report

import (
	"github.com/heapest/heapest/ci"
)

// SizeMix returns, for the report's rows whose keys are given, the
// statistics of the report's value per allocation size (0: sizes mixed
// on one record, or not kept), after the report's filters. Sizes are kept
// apart only when the builder was made with Options.ExtraKeys.Size (or
// --by size). See aggregate.Table.SizeMix.
func (b *Builder) SizeMix(keys []string) (map[string]map[float64]ci.Stats, error) {
	opt, err := b.settle()
	if err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	return b.table.SizeMix(opt.By, b.filter(), b.valueIndex(opt.Value), want), nil
}
