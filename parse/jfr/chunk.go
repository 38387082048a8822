package jfr

import (
	"slices"
	"strconv"

	"github.com/grafana/jfr-parser/parser"
	"github.com/grafana/jfr-parser/parser/types"
	"github.com/grafana/jfr-parser/parser/types/def"

	"github.com/heapest/heapest/parse"
)

// chunk turns one chunk's events into records. Constant pool references
// are valid within their chunk only, so its name caches are too.
type chunk struct {
	d   *decoder
	p   *parser.Parser
	hdr parser.ChunkHeader
	// useTLAB is set when the chunk has no ObjectAllocationSample
	// events: its TLAB events are then the allocation estimate.
	useTLAB bool

	classes map[types.ClassRef]string
	methods map[types.MethodRef]string
	threads map[types.ThreadRef]string
	stacks  map[types.StackTraceRef]stackEntry
}

// stackEntry is a stack as records carry it, with the id that lets a sink
// intern it once.
type stackEntry struct {
	frames    []parse.Frame
	id        uint64
	truncated bool
}

// newChunk prepares a chunk whose metadata and pools the library has read,
// and sends its old object samples, which the library skips.
func (d *decoder) newChunk(p *parser.Parser, sc *scanned) (*chunk, error) {
	c := &chunk{d: d, p: p, hdr: p.ChunkHeader(),
		classes: map[types.ClassRef]string{}, methods: map[types.MethodRef]string{},
		threads: map[types.ThreadRef]string{}, stacks: map[types.StackTraceRef]stackEntry{}}
	if d.chunks == 0 {
		d.startNanos = c.hdr.StartNanos
	}
	d.chunkStarts = append(d.chunkStarts, strconv.FormatUint(c.hdr.StartNanos, 10))
	tm := &p.TypeMap
	if tm.IDMap == nil {
		return nil, d.errAt(d.off, nil, "chunk %d: no metadata", d.chunks+1)
	}
	if err := checkWeight(tm); err != nil {
		return nil, d.errAt(d.off, err, "chunk %d: jdk.ObjectAllocationSample", d.chunks+1)
	}
	c.useTLAB = tm.T_ALLOC_SAMPLE < 0 || sc.counts[uint64(tm.T_ALLOC_SAMPLE)] == 0
	if len(sc.old) > 0 {
		if err := c.oldSamples(sc); err != nil {
			return nil, err
		}
	}
	if d.jvm == "" && len(sc.jvm) > 0 {
		d.jvm = jvmIdentity(d.buf, sc.jvm[0], sc.tm, sc.kindsOf())
	}
	c.threadTimes(sc)
	return c, nil
}

// threadTimes notes when threads started, ended and were blocked
// (stalledTails), from the chunk's raw events.
func (c *chunk) threadTimes(sc *scanned) {
	d := c.d
	if len(sc.begins)+len(sc.ends)+len(sc.blocked) == 0 {
		return
	}
	k := sc.kindsOf()
	for _, ev := range sc.begins {
		if v, ok := rawFields(d.buf, ev, sc.tm, k, "startTime", "thread"); ok && v[1] != 0 {
			d.started.add(c.thread(types.ThreadRef(v[1])), c.time(v[0]))
		}
	}
	for _, ev := range sc.ends {
		if v, ok := rawFields(d.buf, ev, sc.tm, k, "startTime", "thread"); ok && v[1] != 0 {
			d.ended.add(c.thread(types.ThreadRef(v[1])), c.time(v[0]))
		}
	}
	for _, ev := range sc.blocked {
		if v, ok := rawFields(d.buf, ev, sc.tm, k, "startTime", "duration", "eventThread"); ok && v[2] != 0 && c.hdr.TicksPerSecond > 0 {
			from := c.time(v[0])
			d.blocked.add(c.thread(types.ThreadRef(v[2])), from, from+int64(float64(v[1])*1e9/float64(c.hdr.TicksPerSecond)))
		}
	}
}

// rawFields reads the named fields of an event, each a compressed
// integer (a number, or a constant pool id), in the order named; ok is
// false when one is missing or the event cannot be read (a thread's
// times only say whether bytes it allocated went unsampled).
func rawFields(b []byte, ev event, tm *def.TypeMap, k *kinds, names ...string) (vals []uint64, ok bool) {
	c := tm.IDMap[def.TypeID(ev.typ)]
	if c == nil {
		return nil, false
	}
	vals = make([]uint64, len(names))
	r := rawReader{b: b[:ev.end], pos: ev.start, budget: 1 << 16}
	seen := 0
	for i := range c.Fields {
		f := &c.Fields[i]
		j := slices.Index(names, f.Name)
		if j < 0 || f.Array || !f.ConstantPool && k.byID[f.Type] != kindVarint {
			r.skipField(f, k, 0)
			continue
		}
		vals[j] = r.varlong()
		seen++
	}
	return vals, r.err == nil && seen == len(names)
}

// jvmIdentity reads a jdk.JVMInformation event's pid and jvmStartTime
// (milliseconds since the epoch), which tell one JVM from every other,
// as "PID@START"; "" when the event lacks them or cannot be read (the
// identity only guards against summing one JVM's old objects twice).
func jvmIdentity(b []byte, ev event, tm *def.TypeMap, k *kinds) string {
	v, ok := rawFields(b, ev, tm, k, "pid", "jvmStartTime")
	if !ok || v[0] == 0 || v[1] == 0 {
		return ""
	}
	return strconv.FormatUint(v[0], 10) + "@" + strconv.FormatUint(v[1], 10)
}

// checkWeight refuses a recording whose ObjectAllocationSample weight is
// not the long the library reads: it would read every weight as 0.
func checkWeight(tm *def.TypeMap) error {
	c := tm.NameMap["jdk.ObjectAllocationSample"]
	if c == nil {
		return nil
	}
	f := c.Field("weight")
	if f == nil || f.Type != tm.T_LONG || f.ConstantPool || f.Array {
		return errNoField
	}
	return nil
}

// event turns one event the library decoded into a record.
func (c *chunk) event(typ def.TypeID) {
	tm := &c.p.TypeMap
	d := c.d
	switch typ {
	case tm.T_ALLOC_SAMPLE:
		e := &c.p.ObjectAllocationSample
		d.n.samples++
		c.fill(e.StartTime, e.EventThread, e.StackTrace, e.ObjectClass, parse.Weighted, parse.Counts{Bytes: float64(e.Weight), Samples: 1}, false)
		d.firsts.add(d.rec.Thread, float64(e.Weight))
		d.sample(&d.rec)
	case tm.T_ALLOC_IN_NEW_TLAB:
		if !c.useTLAB {
			d.n.ignoredTLAB++
			return
		}
		e := &c.p.ObjectAllocationInNewTLAB
		d.n.inTLAB++
		c.send(e.StartTime, e.EventThread, e.StackTrace, e.ObjectClass, parse.Weighted, parse.Counts{Bytes: float64(e.TlabSize), Samples: 1}, false)
	case tm.T_ALLOC_OUTSIDE_TLAB:
		if !c.useTLAB {
			d.n.ignoredTLAB++
			return
		}
		// Every allocation outside a TLAB is recorded: exact.
		e := &c.p.ObjectAllocationOutsideTLAB
		d.n.outTLAB++
		c.send(e.StartTime, e.EventThread, e.StackTrace, e.ObjectClass, parse.Exact, parse.Counts{Objects: 1, Bytes: float64(e.AllocationSize), Size: float64(e.AllocationSize)}, false)
	case tm.T_INITIAL_SYSTEM_PROPERTY:
		e := &c.p.InitialSystemProperty
		switch {
		case e.Key == "java.vm.version":
			d.version, d.vmVersion = parseJDKVersion(d.names.get(e.Value)), true
		case e.Key == "java.version" && !d.vmVersion:
			d.version = parseJDKVersion(d.names.get(e.Value))
		}
	}
}

// send fills the decoder's record and hands it to the sink; inUse puts
// the counts in the live pair instead of the allocated one.
func (c *chunk) send(ticks uint64, th types.ThreadRef, st types.StackTraceRef, cls types.ClassRef, scheme parse.Scheme, n parse.Counts, inUse bool) {
	c.fill(ticks, th, st, cls, scheme, n, inUse)
	c.d.emit(&c.d.rec)
}

// emit hands a record to the sink.
func (d *decoder) emit(rec *parse.Record) {
	d.prof.Records++
	d.sink.Record(rec)
}

// fill fills the decoder's record.
func (c *chunk) fill(ticks uint64, th types.ThreadRef, st types.StackTraceRef, cls types.ClassRef, scheme parse.Scheme, n parse.Counts, inUse bool) {
	d := c.d
	rec := &d.rec
	e := c.stack(st)
	if e.truncated {
		d.n.truncated++
	}
	rec.Stack, rec.StackID = e.frames, e.id
	rec.Type = c.class(cls)
	rec.Thread = c.thread(th)
	rec.Scheme, rec.Rate = scheme, 0
	rec.InUse, rec.Alloc = parse.Counts{}, parse.Counts{}
	if inUse {
		rec.InUse = n
	} else {
		rec.Alloc = n
	}
	rec.Time = c.time(ticks)
	rec.Spill, rec.Excess = 0, 0
}

// time converts a tick count of the chunk into nanoseconds from the start
// of the recording's first chunk. A time may lie before its chunk: JFR
// writes an event when it ends (a monitor wait), and an old object's
// allocation time is when it was allocated, chunks earlier. None lies
// before the recording: a wait that began before it counts from its start.
func (c *chunk) time(ticks uint64) int64 {
	base := float64(c.hdr.StartNanos) - float64(c.d.startNanos)
	if c.hdr.TicksPerSecond == 0 {
		return int64(base)
	}
	return int64(max(0, base+(float64(ticks)-float64(c.hdr.StartTicks))*1e9/float64(c.hdr.TicksPerSecond)))
}

// symbol is the text of a symbol constant ("" when unknown).
func (c *chunk) symbol(ref types.SymbolRef) string {
	l := &c.p.Symbols
	if i, ok := l.IDMap[ref]; ok && int(i) < len(l.Symbol) {
		return l.Symbol[i].String
	}
	return ""
}

// class is a class constant's Java name.
func (c *chunk) class(ref types.ClassRef) string {
	if s, ok := c.classes[ref]; ok {
		return s
	}
	s := "<unknown class>"
	l := &c.p.Classes
	if i, ok := l.IDMap[ref]; ok && int(i) < len(l.Class) {
		if n := c.symbol(l.Class[i].Name); n != "" {
			s = javaName(n)
		}
	}
	s = c.d.names.get(s)
	c.classes[ref] = s
	return s
}

// method is a method constant as class.method.
func (c *chunk) method(ref types.MethodRef) string {
	if s, ok := c.methods[ref]; ok {
		return s
	}
	s := "<unknown method>"
	l := &c.p.Methods
	if i, ok := l.IDMap[ref]; ok && int(i) < len(l.Method) {
		m := &l.Method[i]
		s = c.class(m.Type) + "." + c.symbol(m.Name)
	}
	s = c.d.names.get(s)
	c.methods[ref] = s
	return s
}

// thread names a thread constant "name (tid N)", N the Java thread id
// (the OS one for threads that have none): names alone are not unique.
func (c *chunk) thread(ref types.ThreadRef) string {
	if s, ok := c.threads[ref]; ok {
		return s
	}
	s := ""
	l := &c.p.Threads
	if i, ok := l.IDMap[ref]; ok && int(i) < len(l.Thread) {
		t := &l.Thread[i]
		name, id := t.JavaName, t.JavaThreadId
		if name == "" {
			name = t.OsName
		}
		if id == 0 {
			id = t.OsThreadId
		}
		s = c.d.names.get(name + " (tid " + uitoa(id) + ")")
	}
	c.threads[ref] = s
	return s
}

// stack is a stack constant as records carry it, leaf first (as JFR
// writes it). An unknown or absent stack is empty.
func (c *chunk) stack(ref types.StackTraceRef) stackEntry {
	if e, ok := c.stacks[ref]; ok {
		return e
	}
	var e stackEntry
	l := &c.p.Stacktrace
	if i, ok := l.IDMap[ref]; ok && int(i) < len(l.StackTrace) {
		st := &l.StackTrace[i]
		e.truncated = st.Truncated
		e.frames = make([]parse.Frame, len(st.Frames))
		for j, f := range st.Frames {
			e.frames[j].Func = c.method(f.Method)
			if c.d.opt.Lines && int32(f.LineNumber) > 0 { // -1: unknown
				e.frames[j].Func = c.d.names.get(parse.LineName(e.frames[j].Func, "", int64(f.LineNumber)))
			}
		}
	}
	c.d.nextStack++
	e.id = c.d.nextStack
	c.stacks[ref] = e
	return e
}

func uitoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// oldSamples sends the chunk's jdk.OldObjectSample events as live
// records: each is one live object, counted as it is (estimates only).
func (c *chunk) oldSamples(sc *scanned) error {
	d := c.d
	buf := d.buf
	k := sc.kindsOf()
	layout, err := newOldSampleLayout(sc.tm.NameMap["jdk.OldObjectSample"], k)
	if err != nil {
		return d.errAt(d.off, err, "chunk %d: jdk.OldObjectSample", d.chunks+1)
	}
	objects, err := oldObjectClasses(buf, sc.checkpoints, k)
	if err != nil {
		// The samples still count; only their classes are lost.
		d.badOldPool = d.located(err, "the jdk.types.OldObject constant pool")
	}
	if !layout.hasSize {
		d.noObjSize = true
	}
	// Each chunk lists the leak profiler's objects as they are at its
	// end, most of them listed by the chunks before too: the last chunk's
	// list is what is alive at the end, and replaces the earlier ones.
	d.oldEvents += d.n.old
	d.n.old = 0
	d.oldSnapshot = d.oldSnapshot[:0]
	for _, ev := range sc.old {
		r := rawReader{b: buf[:ev.end], pos: ev.start, budget: 1 << 16}
		s := layout.read(&r, k)
		if r.err != nil {
			return d.located(r.err, "jdk.OldObjectSample")
		}
		cls, ok := objects[s.object]
		if !ok {
			cls = ^types.ClassRef(0) // unknown: named "<unknown class>"
		}
		d.n.old++
		at := s.allocTime
		if !s.hasAllocAt {
			at = c.hdr.StartTicks
		}
		c.fill(at, s.thread, s.stack, cls, parse.Unknown, parse.Counts{Objects: 1, Bytes: float64(s.size), Samples: 1}, true)
		d.oldSnapshot = append(d.oldSnapshot, d.rec)
	}
	return nil
}
