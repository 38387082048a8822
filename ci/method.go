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
