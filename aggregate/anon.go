package aggregate

import (
	"slices"
	"strconv"

	"github.com/heapest/heapest/internal/grow"
	"github.com/heapest/heapest/parse"
)

// Functions no namer named are keyed by integers, not names: a dump whose
// binary is absent has hundreds of thousands of them, and a name is made
// only for the few a report shows or a filter matches.

// anonKey identifies an unnamed function: a frame address (mod 0), or an
// offset in a module (mod: Table.modules' id of the module's name).
type anonKey struct {
	mod uint32
	off uint64
}

func (k anonKey) hash() uint64 { return mix(k.off ^ mix(uint64(k.mod))) }

// anonFunc is what a table knows of an unnamed function: its id and, for
// a module function, where it lies in the first input that had it (the
// mapping's index in Table.mappings, and the address there).
type anonFunc struct {
	fn      uint32
	mapping int32
	addr    uint64
}

// anonTable is a Table's unnamed functions.
type anonTable struct {
	keys *keyTable[anonKey]
	// placed is how many of keys.keys its slots hold: the first input's
	// functions are known distinct and are stored without lookups
	// (addDistinct), to be placed only when something looks one up.
	placed int
	funcs  []anonFunc // per key
	// of maps a function id to its key's index+1 (0: a named function);
	// it may be shorter than the function table, the rest being named.
	of []uint32
	// modules names the modules (id 0: none), mappings holds the
	// mappings module functions lie in, and mappingOf finds a namer's
	// mapping there.
	modules   *strTable
	mappings  []parse.Mapping
	mappingOf map[*parse.Mapping]int32
	// lastMod is the module name module interned last, and lastModID its
	// id: one module's addresses come one after another.
	lastMod   string
	lastModID uint32
}

// module returns the id of module name mod, adding it when new.
func (a *anonTable) module(mod string) uint32 {
	if mod == a.lastMod && a.lastModID != 0 {
		return a.lastModID
	}
	if a.modules == nil {
		a.modules = newStrTable()
	}
	a.lastMod, a.lastModID = mod, a.modules.internShared(mod)
	return a.lastModID
}

// anon returns function id's key and facts when it is unnamed.
func (t *Table) anon(id uint32) (anonKey, *anonFunc, bool) {
	a := &t.anons
	if int(id) >= len(a.of) || a.of[id] == 0 {
		return anonKey{}, nil, false
	}
	i := a.of[id] - 1
	return a.keys.keys[i], &a.funcs[i], true
}

// index places the keys no slot holds yet (see placed).
func (a *anonTable) index() {
	if a.keys != nil && a.placed < len(a.keys.keys) {
		a.keys.rehash(len(a.keys.keys))
		a.placed = len(a.keys.keys)
	}
}

// reserveAnon makes room for n more unnamed functions.
func (t *Table) reserveAnon(n int) {
	a := &t.anons
	a.index()
	// Growing these by doubling copies them a dozen times on a dump of
	// hundreds of thousands of unnamed functions.
	a.funcs = slices.Grow(a.funcs, n)
	t.funcs.names = slices.Grow(t.funcs.names, n)
	a.of = slices.Grow(a.of, max(0, len(t.funcs.names)+n-len(a.of)))
	if a.keys == nil {
		a.keys = newKeyTable[anonKey](n)
		return
	}
	a.keys.reserve(n) // placed already (index), and reserving adds no key
}

// anonFuncID returns the function id of unnamed function k, adding it
// (as lying at addr in mapping m, for a module function) when new.
func (t *Table) anonFuncID(k anonKey, m *parse.Mapping, addr uint64) uint32 {
	a := &t.anons
	if a.keys == nil {
		a.keys = newKeyTable[anonKey](1024)
	}
	a.index()
	i, added := a.keys.intern(k)
	if !added {
		return a.funcs[i].fn
	}
	a.placed++
	return t.newAnon(i, m, addr)
}

// newAnon adds function id for unnamed function key i.
func (t *Table) newAnon(i uint32, m *parse.Mapping, addr uint64) uint32 {
	a := &t.anons
	id := uint32(len(t.funcs.names))
	t.funcs.names = append(t.funcs.names, "")
	if n := int(id) + 1; len(a.of) < n {
		a.of = grow.Room(a.of, n-len(a.of))[:n]
	}
	a.of[id] = i + 1
	f := anonFunc{fn: id, mapping: -1, addr: addr}
	if m != nil {
		f.mapping = t.mappingIndex(m)
	}
	a.funcs = append(grow.Room(a.funcs, 1), f)
	return id
}

// mappingIndex is m's index in the table's mappings, added when new.
func (t *Table) mappingIndex(m *parse.Mapping) int32 {
	a := &t.anons
	if i, ok := a.mappingOf[m]; ok {
		return i
	}
	if a.mappingOf == nil {
		a.mappingOf = map[*parse.Mapping]int32{}
	}
	i := int32(len(a.mappings))
	a.mappings = append(a.mappings, *m)
	a.mappingOf[m] = i
	return i
}

// addrFunc is the function id of an unnamed frame address.
func (t *Table) addrFunc(addr uint64) uint32 { return t.anonFuncID(anonKey{off: addr}, nil, addr) }

// moduleKey is the key of an unnamed frame address by module and offset,
// with the mapping it lies in, or by address (nil mapping) when the namer
// cannot say.
func (t *Table) moduleKey(namer Namer, addr uint64) (anonKey, *parse.Mapping) {
	if mn, ok := namer.(ModuleNamer); ok {
		if mod, off, m := mn.ModuleKey(addr); m != nil {
			return anonKey{mod: t.anons.module(mod), off: off}, m
		}
	}
	return anonKey{off: addr}, nil
}

// anonBatch is how many unnamed functions nameAnons keys before it looks
// any up.
const anonBatch = 16

// nameAnons sets each frame's function to that of its address (addrs, by
// frame id), unnamed: keyed by module and offset with byModule (and a
// namer), else by address. The keys of a batch are made and their table
// slots read before any is looked up, so that the cache misses of a table
// of hundreds of thousands of functions overlap. distinct says the
// frames' addresses are (see addDistinct).
func (t *Table) nameAnons(namer Namer, info *[2][]frameInfo, frames []frameRef, addrs []uint64, distinct bool) {
	if distinct && t.addDistinct(namer, info, frames, addrs) {
		return
	}
	t.reserveAnon(len(frames))
	var keys [anonBatch]anonKey
	var maps [anonBatch]*parse.Mapping
	for start := 0; start < len(frames); start += anonBatch {
		end := min(start+anonBatch, len(frames))
		for i := start; i < end; i++ {
			if addr := addrs[frames[i].id()]; t.byModule && addr != 0 {
				keys[i-start], maps[i-start] = t.moduleKey(namer, addr)
			} else {
				keys[i-start], maps[i-start] = anonKey{off: addr}, nil
			}
			t.anons.keys.touch(keys[i-start].hash())
		}
		for i := start; i < end; i++ {
			frames[i].at(info).fn = t.anonFuncID(keys[i-start], maps[i-start], addrs[frames[i].id()])
		}
	}
}

// addDistinct is nameAnons for the first unnamed functions of a table
// (it has none yet, so none of their facts either) when their addresses
// are distinct: their keys are then distinct too, unless a module is
// mapped twice (then it does nothing and returns false), and are stored
// without a lookup each: placing a hundred thousand keys in a table of
// slots nothing reads was a sixth of reading a dump no binary names.
func (t *Table) addDistinct(namer Namer, info *[2][]frameInfo, frames []frameRef, addrs []uint64) bool {
	a := &t.anons
	if a.keys != nil && len(a.keys.keys) > 0 {
		return false
	}
	keys := make([]anonKey, len(frames))
	funcs := slices.Grow(a.funcs, len(frames))[:len(frames)]
	first := uint32(len(t.funcs.names))
	var seen []int32 // per module id, the mapping its keys lie in (index+1)
	for i, r := range frames {
		addr := addrs[r.id()]
		funcs[i] = anonFunc{fn: first + uint32(i), mapping: -1, addr: addr}
		if !t.byModule || addr == 0 {
			keys[i] = anonKey{off: addr}
			continue
		}
		k, m := t.moduleKey(namer, addr)
		if keys[i] = k; m == nil {
			continue
		}
		funcs[i].mapping = t.mappingIndex(m)
		if int(k.mod) >= len(seen) {
			seen = append(seen, make([]int32, int(k.mod)+1-len(seen))...)
		}
		if at := seen[k.mod]; at != 0 && at != funcs[i].mapping+1 {
			return false // two mappings of one module: offsets may repeat
		}
		seen[k.mod] = funcs[i].mapping + 1
	}
	a.keys, a.funcs = &keyTable[anonKey]{slots: newSlots(0), keys: keys}, funcs
	n := int(first) + len(keys)
	t.funcs.names = growNames(t.funcs.names, n) // unnamed: ""
	if len(a.of) < n {
		a.of = slices.Grow(a.of, n-len(a.of))[:n]
	}
	for i, r := range frames {
		a.of[int(first)+i] = uint32(i) + 1
		r.at(info).fn = first + uint32(i)
	}
	return true
}

// growNames returns names lengthened to n with "" (unnamed). slices.Grow
// would write its new room (zeros) to copy it in: a megabyte of pages on
// a dump of a hundred thousand unnamed addresses, which nothing reads
// but the names shown.
func growNames(names []string, n int) []string {
	if n <= cap(names) {
		return names[:n] // names only ever grows: its room was never written
	}
	out := make([]string, n)
	copy(out, names)
	return out
}

// anonName is an unnamed function's name: 0x… for an address,
// "module+0x…" for a module offset.
func (t *Table) anonName(k anonKey) string {
	if k.mod == 0 {
		return FrameName(&parse.Frame{Addr: k.off})
	}
	return t.anons.modules.names[k.mod] + "+0x" + strconv.FormatUint(k.off, 16)
}

// mergeAnon returns the function id in t of o's unnamed function k.
func (t *Table) mergeAnon(o *Table, k anonKey, f *anonFunc) uint32 {
	if k.mod == 0 {
		return t.addrFunc(k.off)
	}
	if t.anons.modules == nil {
		t.anons.modules = newStrTable()
	}
	k.mod = t.anons.modules.intern(o.anons.modules.names[k.mod])
	var m *parse.Mapping
	if f.mapping >= 0 {
		m = &o.anons.mappings[f.mapping] // the first input's mapping stays
	}
	return t.anonFuncID(k, m, f.addr)
}
