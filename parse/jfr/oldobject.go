package jfr

import (
	"github.com/grafana/jfr-parser/parser/types"
	"github.com/grafana/jfr-parser/parser/types/def"
)

// oldSample is what heapest uses of one jdk.OldObjectSample event: a live
// object the JVM's leak profiler kept track of, with its allocation stack.
type oldSample struct {
	allocTime  uint64
	thread     types.ThreadRef
	stack      types.StackTraceRef
	object     uint64 // id in the jdk.types.OldObject pool
	size       uint64 // objectSize, where the JDK writes it
	hasSize    bool
	hasAllocAt bool
}

// oldSampleLayout is where the fields heapest reads are in the event.
type oldSampleLayout struct {
	class *def.Class
	// hasSize is set when the JDK writes objectSize (not JDK 17).
	hasSize bool
}

// newOldSampleLayout checks that the event's fields heapest reads have the
// types it expects.
func newOldSampleLayout(c *def.Class, k *kinds) (*oldSampleLayout, error) {
	l := &oldSampleLayout{class: c}
	need := map[string]bool{"eventThread": true, "stackTrace": true, "object": true}
	for i := range c.Fields {
		f := &c.Fields[i]
		switch f.Name {
		case "eventThread", "stackTrace", "object":
			if !f.ConstantPool || f.Array {
				return nil, errNoField
			}
			delete(need, f.Name)
		case "objectSize", "allocationTime":
			if f.ConstantPool || f.Array || k.byID[f.Type] != kindVarint {
				return nil, errNoField
			}
			if f.Name == "objectSize" {
				l.hasSize = true
			}
		}
	}
	if len(need) > 0 {
		return nil, errNoField
	}
	return l, nil
}

// read decodes one event's fields (the reader is past its size and type).
func (l *oldSampleLayout) read(r *rawReader, k *kinds) oldSample {
	var s oldSample
	for i := range l.class.Fields {
		f := &l.class.Fields[i]
		switch f.Name {
		case "eventThread":
			s.thread = types.ThreadRef(r.varlong())
		case "stackTrace":
			s.stack = types.StackTraceRef(r.varlong())
		case "object":
			s.object = r.varlong()
		case "objectSize":
			s.size, s.hasSize = r.varlong(), true
		case "allocationTime":
			s.allocTime, s.hasAllocAt = r.varlong(), true
		default:
			r.skipField(f, k, 1)
		}
	}
	return s
}

// oldObjectClasses reads the jdk.types.OldObject pools of a chunk's
// checkpoint events: object id → the class of the object.
func oldObjectClasses(b []byte, checkpoints []event, k *kinds) (map[uint64]types.ClassRef, error) {
	out := map[uint64]types.ClassRef{}
	isOldObject := func(c *def.Class) bool { return c.Name == "jdk.types.OldObject" }
	for _, ev := range checkpoints {
		err := readPools(b, ev, k, isOldObject, func(c *def.Class, id uint64, r *rawReader) {
			for i := range c.Fields {
				f := &c.Fields[i]
				if f.Name == "type" && f.ConstantPool && !f.Array {
					out[id] = types.ClassRef(r.varlong())
					continue
				}
				r.skipField(f, k, 1)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
