package aggregate

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// fuzzRecords decodes data into records: two bytes a record (a stack of
// frames from a small set of addresses, some named, some allocator frames,
// some unnamed; in-use counts, zero often; a type; kept for its encoding
// or not), so that stacks repeat, cells share stacks and many are empty.
func fuzzRecords(data []byte) []parse.Record {
	var recs []parse.Record
	for i := 0; i+1 < len(data) && len(recs) < 200; i += 2 {
		a, b := data[i], data[i+1]
		depth := int(a % 5)
		addrs := make([]uint64, depth)
		for d := range addrs {
			addrs[d] = 0x10 * (1 + uint64((a>>3+b*uint8(d+1))%12))
		}
		r := addrRec(float64(b%4), addrs...)
		if b%4 == 0 && b&0x40 != 0 {
			r.Alloc = parse.Counts{Objects: 1, Bytes: 48} // empty for in-use only
		}
		r.Type = [...]string{"", "", "X", "Y"}[(b>>2)%4]
		if b&0x80 != 0 {
			r.InUse.Enc, r.Alloc.Enc = parse.Unresolved, parse.Unresolved
		}
		recs = append(recs, r)
		if a&0x80 != 0 { // a breakdown of it by thread, as a jemalloc dump's
			bd := r
			bd.Breakdown, bd.Thread = true, [...]string{"t1", "t2"}[a>>6&1]
			recs = append(recs, bd)
		}
	}
	return recs
}

// fuzzNamer names some addresses (je_… ones are allocator frames) and, for
// module keys, maps them in one module or in two mappings of one module.
func fuzzNamer(twice bool) *moduleNamer {
	nm := &moduleNamer{fakeNamer: fakeNamer{needed: map[string]int{},
		names: map[uint64]string{0x10: "je_malloc", 0x20: "main", 0x30: "f", 0x40: "g", 0x50: "f"}}}
	nm.maps = []parse.Mapping{{Start: 0, Limit: 0x80, File: "a.so"}, {Start: 0x80, Limit: 0x100, File: "b.so"}}
	if twice {
		nm.maps[1].File = "a.so" // offsets 0x80 apart collide
		nm.maps[1].Offset = 0x80 - 0x40
	}
	return nm
}

// summary is what a table reports, rounded where sums may be added up in
// another order: per stack, function, type (and thread when kept),
// samples and estimate of the first value. No two rows of one grouping may
// have one key.
func summary(t *testing.T, tb *Table) string {
	var out []string
	by := []By{ByStack, ByFunc, ByType}
	if tb.keys.Thread {
		by = append(by, ByThread)
	}
	for _, by := range by {
		groups, _, total := tb.Groups(by, Filter{}, 0, 0)
		keys := map[string]bool{}
		for _, g := range groups {
			if keys[g.Key] {
				t.Fatalf("by %v: two rows %q", by, g.Key)
			}
			keys[g.Key] = true
			out = append(out, fmt.Sprintf("%v %s flat %g %.6g cum %g %.6g", by, g.Key,
				g.Flat.Samples, g.Flat.Estimate, g.Cum.Samples, g.Cum.Estimate))
		}
		out = append(out, fmt.Sprintf("%v total %g %.6g", by, total[0].Samples, total[0].Estimate))
	}
	slices.Sort(out)
	return fmt.Sprint(out)
}

// FuzzFinish reads the same records through Finish's two paths, into a
// fresh table (which takes the collector's room, rewriting its stacks in
// place) and into a table that has a cell (which copies them), and in two
// halves through two collectors into one table: the reports must agree,
// and the namer must hear of the same unnamed addresses.
func FuzzFinish(f *testing.F) {
	f.Add([]byte{0x13, 0x41, 0x22, 0x80, 0x07, 0xc5, 0x13, 0x42, 0x31, 0x0c})
	f.Add([]byte{0xff, 0x00, 0xfe, 0x81, 0x44, 0x44, 0x9a, 0x33, 0x18, 0xc0, 0x27, 0x95})
	f.Fuzz(func(t *testing.T, data []byte) {
		recs := fuzzRecords(data)
		if len(recs) == 0 {
			return
		}
		// Odd lengths map a module twice; every third keeps threads apart
		// (breakdowns count), every second keeps the alloc value too.
		twice := len(data)%2 == 1
		keys := Keys{Thread: len(data)%3 == 0}
		values := []unbias.Value{unbias.InUseSpace}
		if len(data)%4 < 2 {
			values = append(values, unbias.AllocSpace)
		}
		p := &parse.Profile{Encoding: parse.Raw, Breakdowns: 1}
		// Every fifth hides a function (Table.Hide): wherever its frames
		// are, the four ways must still agree.
		var hide *regexp.Regexp
		if len(data)%5 == 0 {
			hide = regexp.MustCompile(`^f$`)
		}
		var got []string
		var told [][]uint64
		for _, how := range []string{"fresh", "seeded", "halves", "handles"} {
			nm := fuzzNamer(twice)
			tb := NewTable(values, keys)
			tb.KeyByModule()
			if hide != nil {
				tb.Hide(hide)
			}
			switch how {
			case "fresh":
				collectInto(t, tb, nm, false, clone(recs), p)
			case "handles":
				collectInto(t, tb, &handles{moduleNamer: nm, t: t, told: map[string]bool{}}, false, clone(recs), p)
			case "seeded":
				collectInto(t, tb, nm, true, clone(recs), p)
			case "halves":
				h := len(recs) / 2
				collectInto(t, tb, nm, false, clone(recs[:h]), p)
				collectInto(t, tb, nm, false, clone(recs[h:]), p)
			}
			got = append(got, summary(t, tb))
			u := slices.Clone(nm.unresolved)
			slices.Sort(u)
			told = append(told, slices.Compact(u))
		}
		if got[0] != got[1] {
			t.Fatalf("fresh table\n%s\nseeded\n%s", got[0], got[1])
		}
		if !approxSame(got[0], got[2]) {
			t.Fatalf("one collector\n%s\ntwo\n%s", got[0], got[2])
		}
		if got[0] != got[3] {
			t.Fatalf("named by address\n%s\nby handle\n%s", got[0], got[3])
		}
		if !slices.Equal(told[0], told[1]) || !slices.Equal(told[0], told[2]) || !slices.Equal(told[0], told[3]) {
			t.Fatalf("unresolved %x, seeded %x, halves %x, by handle %x", told[0], told[1], told[2], told[3])
		}
	})
}

// handles is a handleNamer over a moduleNamer, as symbolize.Session is
// one: it takes the addresses it can name, each once per position (it
// fails the test when told one again), and names them by handle.
type handles struct {
	*moduleNamer
	t     *testing.T
	told  map[string]bool
	addrs []uint64
}

func (h *handles) NeedHandle(addr uint64, leaf bool) (uint32, bool) {
	if k := fmt.Sprintf("%x/%v", addr, leaf); h.told[k] {
		h.t.Fatalf("address %s told twice", k)
	} else {
		h.told[k] = true
	}
	if _, ok := h.names[addr]; !ok {
		return 0, false // as a Session does for an address no file can name
	}
	h.addrs = append(h.addrs, addr)
	return uint32(len(h.addrs) - 1), true
}

func (h *handles) NameHandle(i uint32) (string, parse.FrameKind) {
	return h.Name(parse.Frame{Addr: h.addrs[i]}, false)
}

// clone copies records and their stacks: a collector may be handed the
// same ones only once.
func clone(recs []parse.Record) []parse.Record {
	out := slices.Clone(recs)
	for i := range out {
		out[i].Stack = slices.Clone(out[i].Stack)
	}
	return out
}

// approxSame reports whether two summaries agree but for the last digits
// of sums added in another order: word by word, numbers within 1e-5.
func approxSame(a, b string) bool {
	x, y := strings.Fields(a), strings.Fields(b)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		u, errU := strconv.ParseFloat(x[i], 64)
		v, errV := strconv.ParseFloat(y[i], 64)
		switch {
		case errU != nil || errV != nil:
			if x[i] != y[i] {
				return false
			}
		case math.Abs(u-v) > 1e-5*math.Max(math.Abs(u), 1):
			return false
		}
	}
	return true
}
