package symbolize

import (
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// demangleOptions give pprof's default short form: no parameters, no
// template arguments, no return types.
var demangleOptions = []demangle.Option{demangle.NoParams, demangle.NoEnclosingParams, demangle.NoTemplateParams}

// Demangle returns the short human-readable form of a C++ (_Z…) or Rust
// (legacy _ZN…17h<hash>E, without the hash, or v0 _R…) symbol name, as
// pprof prints it. Other names, and names that fail to demangle, come back
// unchanged except that a compiler clone suffix (.cold, .part.N,
// .constprop.N, .isra.N, .lto_priv.N) is removed so that the pieces of one
// function group together.
func Demangle(name string) string {
	base, _ := splitClone(name)
	if !strings.HasPrefix(base, "_Z") && !strings.HasPrefix(base, "_R") {
		return base
	}
	if d, err := demangle.ToString(base, demangleOptions...); err == nil && d != "" {
		// Rust v0 generic instances keep an empty "::<>" once their
		// arguments are dropped.
		return strings.ReplaceAll(d, "::<>", "")
	}
	return name
}

// splitClone separates a GCC clone suffix from a symbol name.
func splitClone(name string) (base, suffix string) {
	for _, mark := range []string{".cold", ".part.", ".constprop.", ".isra.", ".lto_priv.", ".localalias"} {
		if i := strings.Index(name, mark); i > 0 {
			return name[:i], name[i:]
		}
	}
	return name, ""
}
