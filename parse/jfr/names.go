package jfr

import "strings"

// javaName turns a class name as the JVM writes it ("java/lang/String",
// "[B", "[[Ljava/lang/Object;") into the name a Java programmer reads
// ("java.lang.String", "byte[]", "java.lang.Object[][]"), the form jfr and
// JMC print.
func javaName(internal string) string {
	dims := 0
	for dims < len(internal) && internal[dims] == '[' {
		dims++
	}
	if dims == 0 {
		return strings.ReplaceAll(hiddenBase(internal), "/", ".")
	}
	elem := internal[dims:]
	var base string
	switch elem {
	case "Z":
		base = "boolean"
	case "B":
		base = "byte"
	case "C":
		base = "char"
	case "S":
		base = "short"
	case "I":
		base = "int"
	case "J":
		base = "long"
	case "F":
		base = "float"
	case "D":
		base = "double"
	default:
		if len(elem) >= 2 && elem[0] == 'L' && elem[len(elem)-1] == ';' {
			base = strings.ReplaceAll(hiddenBase(elem[1:len(elem)-1]), "/", ".")
		} else {
			// Not a descriptor the JVM writes: keep it readable as is.
			base = strings.ReplaceAll(elem, "/", ".")
		}
	}
	return base + strings.Repeat("[]", dims)
}

// hiddenBase drops the address a hidden class's name carries
// ("Foo$$Lambda$76+0x00007fa498042338/370869802" is "Foo$$Lambda$76"): it
// differs from one run to the next, and the name stays readable without it.
func hiddenBase(name string) string {
	if i := strings.Index(name, "+0x"); i > 0 {
		return name[:i]
	}
	return name
}

// interner hands out one string per distinct name, for the whole input:
// strings read from a chunk point into its buffer, which the next chunk
// reuses, and a sink keeps names (and compares frames by the address of
// their bytes), so every name leaves the parser as its own stable copy.
type interner map[string]string

func (in interner) get(s string) string {
	if v, ok := in[s]; ok {
		return v
	}
	v := strings.Clone(s)
	in[v] = v
	return v
}
