package symbolize

import (
	"bufio"
	"slices"
	"strings"

	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/parse/jemalloc"
)

// readDump parses a jemalloc dump's text into a testProfile.
func readDump(name, text string) (*testProfile, error) {
	tp := &testProfile{}
	p, err := jemalloc.Parse(name, bufio.NewReader(strings.NewReader(text)), parse.Options{}, parse.SinkFunc(func(r *parse.Record) {
		c := *r
		c.Stack = slices.Clone(r.Stack)
		tp.Records = append(tp.Records, c)
	}))
	if err != nil {
		return nil, err
	}
	tp.Source, tp.Mappings, tp.MapsText, tp.MapsLine, tp.Symbols = p.Source, p.Mappings, p.MapsText, p.MapsLine, p.Symbols
	tp.Source.Path = name // as parse/formats sets it
	return tp, nil
}

// testProfile is a profile with its records at hand, as the tests build
// them: parse.Profile no longer holds records (they stream to a sink).
type testProfile struct {
	Source        parse.Source
	Mappings      []parse.Mapping
	MapsText      []byte
	MapsLine      int
	Symbols       map[uint64]string
	Records       []parse.Record
	ThreadRecords []parse.Record
	ReturnAddrs   bool
}

// Symbolize names the frames of tp's records in place through a Session,
// the way aggregate.Collector.Finish uses one: Need for every distinct
// (address, leaf) without a name, one Resolve, Name for each frame, the
// leading allocator frames dropped (at least one kept), Unresolved for
// the unnamed frames kept. It returns the session's warnings.
func Symbolize(tp *testProfile, opt Options) ([]string, error) {
	p := &parse.Profile{Source: tp.Source, Mappings: tp.Mappings, MapsText: tp.MapsText, MapsLine: tp.MapsLine, Symbols: tp.Symbols, ReturnAddrs: tp.ReturnAddrs}
	s, err := Open(p, opt)
	if err != nil {
		return nil, err
	}
	all := [][]parse.Record{tp.Records, tp.ThreadRecords}
	unnamed := 0
	for _, recs := range all {
		for _, r := range recs {
			for _, f := range r.Stack {
				if f.Func == "" {
					unnamed++
				}
			}
		}
	}
	s.Expect(unnamed) // an upper bound, as Collector.Finish gives
	for _, recs := range all {
		for _, r := range recs {
			for i, f := range r.Stack {
				if f.Func == "" {
					s.Need(f.Addr, i == 0)
				}
			}
		}
	}
	if err := s.Resolve(); err != nil {
		return nil, err
	}
	for _, recs := range all {
		for ri := range recs {
			st := recs[ri].Stack
			kinds := make([]parse.FrameKind, len(st))
			for i := range st {
				st[i].Func, kinds[i] = s.Name(st[i], i == 0)
			}
			drop, lead := 0, parse.AllocatorLead{}
			for drop < len(st)-1 && lead.Drop(kinds[drop]) {
				drop++
			}
			st = st[drop:]
			for _, f := range st {
				if f.Func == "" {
					s.Unresolved(f.Addr)
				}
			}
			recs[ri].Stack = st
		}
	}
	tp.Mappings = p.Mappings
	return s.Warnings(), nil
}
