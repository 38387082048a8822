package symbolize

import (
	"math/bits"
	"strconv"
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
	if d, err := demangle.ToString(legacyRustUnderscores(base), demangleOptions...); err == nil && d != "" {
		// Rust v0 generic instances keep an empty "::<>" or "<>" once
		// their arguments are dropped.
		if d = strings.ReplaceAll(strings.ReplaceAll(d, "::<>", ""), "<>", ""); d != "" {
			return d
		}
	}
	return name
}

// legacyRustUnderscores works around the demangler's reading of a legacy
// Rust symbol (_ZN…17h<hash>E): it takes an underscore after an
// identifier's length for a separator, as Rust's v0 mangling has one, and
// drops it, so "12__load_table" read as _load_table and
// __rust_begin_short_backtrace as _rust_begin_short_backtrace. Each
// identifier that starts with an underscore is given one more (and its
// length one more), which the demangler then drops. Other names come back
// as they are.
func legacyRustUnderscores(name string) string {
	if !strings.HasPrefix(name, "_ZN") || !strings.Contains(name[3:], "_") {
		return name
	}
	// The hash may be followed by a suffix of LLVM's (".llvm.1234").
	end := strings.LastIndexByte(name, 'E')
	for end > 0 && !isLegacyRust(name[:end+1]) {
		end = strings.LastIndexByte(name[:end], 'E')
	}
	if end <= 0 {
		return name
	}
	body, suffix := name[3:end], name[end+1:]
	var b strings.Builder
	b.Grow(len(name) + 8)
	b.WriteString("_ZN")
	for len(body) > 0 {
		i := 0
		for i < len(body) && body[i] >= '0' && body[i] <= '9' {
			i++
		}
		n, err := strconv.Atoi(body[:i])
		if i == 0 || err != nil || n <= 0 || n > len(body)-i {
			return name
		}
		id := body[i : i+n]
		body = body[i+n:]
		if id[0] == '_' {
			b.WriteString(strconv.Itoa(n + 1))
			b.WriteByte('_')
		} else {
			b.WriteString(strconv.Itoa(n))
		}
		b.WriteString(id)
	}
	b.WriteByte('E')
	b.WriteString(suffix)
	return b.String()
}

// isLegacyRust reports whether a symbol has the form of Rust's legacy
// mangling: _ZN, identifiers, and a last one of "h" and 16 hex digits.
func isLegacyRust(name string) bool {
	const hash = len("17h0123456789abcdefE")
	if len(name) < 3+hash || !strings.HasPrefix(name, "_ZN") || !strings.HasSuffix(name, "E") {
		return false
	}
	tail := name[len(name)-hash:]
	if !strings.HasPrefix(tail, "17h") {
		return false
	}
	// As the demangler: a hash of at least 5 distinct digits, else the
	// name is read as C++.
	var seen uint16
	for _, c := range tail[3 : len(tail)-1] {
		switch {
		case c >= '0' && c <= '9':
			seen |= 1 << (c - '0')
		case c >= 'a' && c <= 'f':
			seen |= 1 << (c - 'a' + 10)
		default:
			return false
		}
	}
	return bits.OnesCount16(seen) >= 5
}

// cloneMarks start GCC clone suffixes, the first found first.
var cloneMarks = [...]string{".cold", ".part.", ".constprop.", ".isra.", ".lto_priv.", ".localalias"}

// splitClone separates a GCC clone suffix from a symbol name: at the first
// of cloneMarks (in their order) whose first place in the name is not its
// start. Every mark starts with a dot, so only the name's dots are looked
// at (a name has a few; searching it once per mark cost a dump's 24,000
// symbols a millisecond).
func splitClone(name string) (base, suffix string) {
	var first [len(cloneMarks)]int // per mark, its first place + 1
	for i := strings.IndexByte(name, '.'); i >= 0; {
		for m, mark := range cloneMarks {
			if first[m] == 0 && strings.HasPrefix(name[i:], mark) {
				first[m] = i + 1
			}
		}
		j := strings.IndexByte(name[i+1:], '.')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	for _, at := range first {
		if at > 1 {
			return name[:at-1], name[at-1:]
		}
	}
	return name, ""
}

// ShortenDemangled brings an already demangled name, as jeprof's --raw
// symbol sections and other tools print them, to the short form Demangle
// gives: without jeprof's "<address>" marker, a symbol version
// ("@@GLIBCXX_3.4.26"), the parameter list and qualifiers, and template
// arguments. Mangled names are demangled.
func ShortenDemangled(name string) string {
	name = strings.TrimSpace(name)
	if i := strings.LastIndexByte(name, '<'); i > 0 && isAddressMarker(name[i:]) {
		name = name[:i]
	}
	if i := strings.IndexByte(name, '@'); i > 0 {
		name = name[:i]
	}
	if strings.HasPrefix(name, "_Z") || strings.HasPrefix(name, "_R") {
		return Demangle(name)
	}
	name = dropParams(name)
	return strings.TrimSpace(dropReturnType(dropTemplateArgs(name)))
}

// dropReturnType removes the return type c++filt and addr2line print
// before a template function's name ("std::pair std::map::emplace",
// "void std::vector::_M_realloc_insert"), which the same function's name
// from a symbol table or DWARF lacks. Spaces in parentheses ("(anonymous
// namespace)") and an operator's own ("operator new") are kept.
func dropReturnType(name string) string {
	end := len(name)
	if i := strings.Index(name, "operator"); i >= 0 {
		end = i
	}
	depth, cut := 0, -1
	for i := 0; i < end; i++ {
		switch name[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ' ':
			if depth == 0 {
				cut = i
			}
		}
	}
	return name[cut+1:]
}

// isAddressMarker reports whether s is "<" 16 hex digits ">", the address
// jeprof appends to names it took from nm.
func isAddressMarker(s string) bool {
	if len(s) != 18 || s[0] != '<' || s[17] != '>' {
		return false
	}
	for _, c := range s[1:17] {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

// dropParams removes a trailing parameter list with its qualifiers:
// "f(int) const" → "f", "A::operator()(int)" → "A::operator()".
func dropParams(name string) string {
	trimmed := name
	for _, q := range []string{" const", " volatile", " &&", " &", "&&", "&"} {
		trimmed = strings.TrimSuffix(trimmed, q)
	}
	if !strings.HasSuffix(trimmed, ")") {
		return name
	}
	depth := 0
	for i := len(trimmed) - 1; i >= 0; i-- {
		switch trimmed[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				if i == 0 || strings.HasSuffix(trimmed[:i], "operator") {
					return name // no parameters: "operator()" alone
				}
				return trimmed[:i]
			}
		}
	}
	return name
}

// dropTemplateArgs removes "<…>" groups, leaving the angle brackets of
// operator<, operator<<, operator<=, operator<=> and operator-> alone.
func dropTemplateArgs(name string) string {
	if !strings.Contains(name, "<") {
		return name
	}
	var b strings.Builder
	depth := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		if depth == 0 && (c == '<' || c == '>') && isOperatorBracket(name, i) {
			b.WriteByte(c)
			continue
		}
		switch {
		case c == '<':
			depth++
		case c == '>' && depth > 0:
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	if depth != 0 {
		return name // unbalanced: not template arguments after all
	}
	return b.String()
}

// isOperatorBracket reports whether the bracket at i belongs to an
// operator's name.
func isOperatorBracket(name string, i int) bool {
	j := strings.LastIndex(name[:i+1], "operator")
	if j < 0 {
		return false
	}
	op := name[j+len("operator") : i+1]
	return strings.Trim(op, "<>=-") == "" && len(op) <= 3
}
