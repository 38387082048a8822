// Package aggregate groups unbiased contributions by a key (function, stack,
// leaf, thread, size, type). A group's statistics are sums and maxima of its
// contributions (ci.Stats.Add), so groups merge in any order.
package aggregate

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// By is what a row is.
type By uint8

const (
	// ByFunc is pprof-style: flat by leaf function, cum by every function
	// on the stack.
	ByFunc By = iota
	// ByStack is one row per whole call stack.
	ByStack
	// ByLeaf is one row per leaf function (flat only).
	ByLeaf
	// ByThread is one row per thread.
	ByThread
	// BySize is one row per allocation size.
	BySize
	// ByType is one row per allocated type.
	ByType
)

var byNames = [...]string{"func", "stack", "leaf", "thread", "size", "type"}

func (b By) String() string { return byNames[b] }

// ParseBy parses a --by argument.
func ParseBy(s string) (By, error) {
	for i, n := range byNames {
		if n == s {
			return By(i), nil
		}
	}
	return 0, fmt.Errorf("unknown --by %q (want func, stack, leaf, thread, size or type)", s)
}

// Group is one row's statistics.
type Group struct {
	Key string
	// Stack is the whole stack, leaf first, for ByStack.
	Stack []string
	// Flat are the statistics of the group itself; Cum, for ByFunc, those
	// of every stack the function appears in.
	Flat, Cum ci.Stats
	// stamp is the last record whose cum this group took, so that a
	// recursive stack counts once per function.
	stamp uint64
}

// Filter selects records by their frames (pprof's -focus and -ignore) and,
// for traces, by time.
type Filter struct {
	Focus, Ignore *regexp.Regexp
	// From and To bound Record.Time (ns from the trace start) to [From,
	// To) when Window is set; To ≤ 0 means the trace's end.
	From, To int64
	Window   bool
}

// keep reports whether a record passes the filter.
func (f Filter) keep(rec *parse.Record) bool {
	if f.Window && (rec.Time < f.From || f.To > 0 && rec.Time >= f.To) {
		return false
	}
	if f.Focus == nil && f.Ignore == nil {
		return true
	}
	focus := f.Focus == nil
	for i := range rec.Stack {
		name := FrameName(&rec.Stack[i])
		if f.Ignore != nil && f.Ignore.MatchString(name) {
			return false
		}
		if !focus && f.Focus.MatchString(name) {
			focus = true
		}
	}
	if rec.Type != "" {
		if f.Ignore != nil && f.Ignore.MatchString(rec.Type) {
			return false
		}
		if !focus && f.Focus.MatchString(rec.Type) {
			focus = true
		}
	}
	return focus
}

// FrameName is a frame's function name, or its address as 0x… when it is
// unsymbolized.
func FrameName(f *parse.Frame) string {
	if f.Func != "" {
		return f.Func
	}
	return "0x" + strconv.FormatUint(f.Addr, 16)
}

// Aggregator sums contributions into groups.
type Aggregator struct {
	by     By
	value  unbias.Value
	filter Filter
	groups map[string]*Group
	total  ci.Stats
	gen    uint64 // records added, for Group.stamp
	// byAddr caches the group of a frame address within one profile
	// (AddProfile): it spares a string hash per frame. Inlined frames
	// share an address, so an entry holds only while the name matches.
	byAddr *addrTable
}

// New returns an empty Aggregator.
func New(by By, value unbias.Value, filter Filter) *Aggregator {
	return &Aggregator{by: by, value: value, filter: filter, groups: map[string]*Group{}}
}

// Fork returns an empty Aggregator with a's settings, for adding part of
// the records concurrently and merging the part back with Merge.
func (a *Aggregator) Fork() *Aggregator { return New(a.by, a.value, a.filter) }

// AddProfile adds every record of one profile.
func (a *Aggregator) AddProfile(recs []parse.Record) {
	a.byAddr = newAddrTable(1024)
	for i := range recs {
		a.Add(&recs[i])
	}
	a.byAddr = nil
}

// frameGroup is the group of a frame's function.
func (a *Aggregator) frameGroup(f *parse.Frame) *Group {
	if a.byAddr == nil || f.Addr == 0 {
		return a.group(FrameName(f), nil)
	}
	e := a.byAddr.slot(f.Addr)
	if e.g != nil && e.fn == f.Func {
		return e.g
	}
	if e.g == nil {
		a.byAddr.n++
	}
	e.fn, e.g = f.Func, a.group(FrameName(f), nil)
	g := e.g
	a.byAddr.grow()
	return g
}

// Add unbiases one record and adds it to its group(s) and to the total.
func (a *Aggregator) Add(rec *parse.Record) {
	if !a.filter.keep(rec) {
		return
	}
	c := unbias.Contribute(rec, a.value)
	if c.N == 0 {
		return
	}
	if a.filter.Window && a.filter.From > 0 && c.HasOffset {
		c.OpenStart = true // the window starts between samples
	}
	a.total.Merge(&c.Stats)
	switch a.by {
	case ByFunc:
		a.gen++
		if len(rec.Stack) == 0 {
			g := a.group(leafName(rec), nil)
			g.Flat.Merge(&c.Stats)
			g.Cum.Merge(&c.Stats)
			break
		}
		leaf := a.frameGroup(&rec.Stack[0])
		leaf.Flat.Merge(&c.Stats)
		for i := range rec.Stack {
			g := a.frameGroup(&rec.Stack[i])
			if g.stamp == a.gen {
				continue // recursion: count a stack once per function
			}
			g.stamp = a.gen
			g.Cum.Merge(&c.Stats)
		}
	case ByStack:
		names := make([]string, len(rec.Stack))
		for i := range rec.Stack {
			names[i] = FrameName(&rec.Stack[i])
		}
		g := a.group(stackKey(names), names)
		g.Flat.Merge(&c.Stats)
	default:
		g := a.group(a.key(rec, c), nil)
		g.Flat.Merge(&c.Stats)
	}
}

func (a *Aggregator) key(rec *parse.Record, c unbias.Contribution) string {
	switch a.by {
	case ByThread:
		if rec.Thread == "" {
			return "(no thread)"
		}
		return rec.Thread
	case BySize:
		if c.Size > 0 {
			return strconv.FormatFloat(c.Size, 'f', -1, 64)
		}
		return "mixed"
	case ByType:
		if rec.Type == "" {
			return "(no type)"
		}
		return rec.Type
	}
	return leafName(rec)
}

func leafName(rec *parse.Record) string {
	if len(rec.Stack) == 0 {
		return "(no stack)"
	}
	return FrameName(&rec.Stack[0])
}

// stackKey is the folded form: root first, frames joined by ";".
func stackKey(leafFirst []string) string {
	var b strings.Builder
	for i := len(leafFirst) - 1; i >= 0; i-- {
		b.WriteString(leafFirst[i])
		if i > 0 {
			b.WriteByte(';')
		}
	}
	if len(leafFirst) == 0 {
		return "(no stack)"
	}
	return b.String()
}

func (a *Aggregator) group(key string, stack []string) *Group {
	g := a.groups[key]
	if g == nil {
		g = &Group{Key: key, Stack: stack}
		a.groups[key] = g
	}
	return g
}

// Merge adds another aggregator's groups (same By and value) into a.
func (a *Aggregator) Merge(o *Aggregator) {
	a.total.Merge(&o.total)
	for k, og := range o.groups {
		g := a.group(k, og.Stack)
		g.Flat.Merge(&og.Flat)
		g.Cum.Merge(&og.Cum)
	}
}

// Total is the statistics of everything added.
func (a *Aggregator) Total() ci.Stats { return a.total }

// Groups returns the groups sorted by flat estimate (then cum, then key),
// largest first.
func (a *Aggregator) Groups() []*Group {
	out := make([]*Group, 0, len(a.groups))
	for _, g := range a.groups {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		x, y := out[i], out[j]
		if x.Flat.Estimate != y.Flat.Estimate {
			return x.Flat.Estimate > y.Flat.Estimate
		}
		if x.Cum.Estimate != y.Cum.Estimate {
			return x.Cum.Estimate > y.Cum.Estimate
		}
		return x.Key < y.Key
	})
	return out
}

// addrTable is an open-addressing hash table from frame address to group:
// the per-frame lookup of aggregation, where a Go map's generality costs
// a third of the time.
type addrTable struct {
	slots []addrSlot
	n     int // slots in use
}

type addrSlot struct {
	addr uint64
	fn   string // Frame.Func the entry was made for
	g    *Group // nil: empty slot
}

func newAddrTable(size int) *addrTable {
	return &addrTable{slots: make([]addrSlot, size)} // size: a power of two
}

// slot returns addr's slot: its entry, or the empty slot where it goes.
func (t *addrTable) slot(addr uint64) *addrSlot {
	mask := uint64(len(t.slots) - 1)
	for i := (addr * 0x9e3779b97f4a7c15) >> 20 & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.g == nil || s.addr == addr {
			s.addr = addr
			return s
		}
	}
}

// grow doubles the table when it is half full.
func (t *addrTable) grow() {
	if 2*t.n < len(t.slots) {
		return
	}
	old := t.slots
	t.slots = make([]addrSlot, 2*len(old))
	for _, s := range old {
		if s.g != nil {
			*t.slot(s.addr) = s
		}
	}
}
