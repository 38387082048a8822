// Package grow makes room in slices by doubling them.
//
// append grows a large slice by about a quarter at a time, so a slice
// appended to a million times is copied a dozen times over, each copy
// into memory touched for the first time: on this project's machines a
// page fault costs about as much as zeroing the page, and those copies
// were a good part of reading a big input. Doubling copies each element
// about once.
package grow

// Room returns s with room for n more elements, doubling its capacity
// (at least 64) when it must grow.
func Room[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	t := make([]T, len(s), max(2*cap(s), len(s)+n, 64))
	copy(t, s)
	return t
}
