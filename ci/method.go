package ci

import "fmt"

var methodNames = [...]string{"auto", "exact", "camp-paulson", "gamma", "normal"}

// String returns the method's command-line name.
func (m Method) String() string {
	if int(m) < len(methodNames) {
		return methodNames[m]
	}
	return fmt.Sprintf("Method(%d)", m)
}

// ParseMethod parses a --method argument.
func ParseMethod(s string) (Method, error) {
	for i, n := range methodNames {
		if n == s {
			return Method(i), nil
		}
	}
	return 0, fmt.Errorf("unknown --method %q (want auto, exact, camp-paulson, gamma or normal)", s)
}
