package unbias

import (
	"fmt"

	"github.com/heapest/heapest/parse"
)

// Value is the quantity a report estimates.
type Value uint8

const (
	// InUseSpace is live bytes at the time of the dump.
	InUseSpace Value = iota
	// InUseObjects is the number of live objects.
	InUseObjects
	// AllocSpace is bytes allocated over the profile's lifetime.
	AllocSpace
	// AllocObjects is the number of objects allocated.
	AllocObjects
)

var valueNames = [...]string{"inuse_space", "inuse_objects", "alloc_space", "alloc_objects"}

// String returns the pprof-style name of v.
func (v Value) String() string { return valueNames[v] }

// IsSpace reports whether v counts bytes (else objects).
func (v Value) IsSpace() bool { return v == InUseSpace || v == AllocSpace }

// IsAlloc reports whether v is an allocation (accumulated) value.
func (v Value) IsAlloc() bool { return v == AllocSpace || v == AllocObjects }

// Unit is "bytes" or "objects".
func (v Value) Unit() string {
	if v.IsSpace() {
		return "bytes"
	}
	return "objects"
}

// ParseValue parses a --value argument.
func ParseValue(s string) (Value, error) {
	for i, n := range valueNames {
		if n == s {
			return Value(i), nil
		}
	}
	return 0, fmt.Errorf("unknown value %q (want inuse_space, inuse_objects, alloc_space or alloc_objects)", s)
}

// DefaultValue is the value a report on p alone shows when --value is not
// given: the one p says to show (pprof's default_sample_type: a Go allocs
// profile's alloc_space), where p has it; else inuse_space where p has it,
// else alloc_space. JFR recordings show alloc_space: their inuse values
// are only the few live objects the JVM's leak profiler kept
// (jdk.OldObjectSample), not an estimate.
func DefaultValue(p *parse.Profile) Value {
	if v, err := ParseValue(p.DefaultType); err == nil && (v.IsAlloc() && p.HasAlloc || !v.IsAlloc() && p.HasInUse) {
		return v
	}
	if !p.HasInUse || p.Source.Format == "jfr" && p.HasAlloc {
		return AllocSpace
	}
	return InUseSpace
}
