package aggregate

import (
	"fmt"
	"strconv"

	"github.com/heapest/heapest/parse"
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
	// BySource is one row per input (of a merge). Tables do not know
	// their inputs: report builds these rows from each input's total.
	BySource
)

var byNames = [...]string{"func", "stack", "leaf", "thread", "size", "type", "source"}

func (b By) String() string { return byNames[b] }

// ParseBy parses a --by argument.
func ParseBy(s string) (By, error) {
	for i, n := range byNames {
		if n == s {
			return By(i), nil
		}
	}
	return 0, fmt.Errorf("unknown --by %q (want func, stack, leaf, thread, size, type or source)", s)
}

// FrameName is a frame's function name, or its address as 0x… when it is
// unsymbolized.
func FrameName(f *parse.Frame) string {
	if f.Func != "" {
		return f.Func
	}
	return "0x" + strconv.FormatUint(f.Addr, 16)
}
