package grow

import (
	"slices"
	"testing"
)

func TestRoom(t *testing.T) {
	for _, c := range []struct {
		len, cap, n int
		wantCap     int
	}{
		{0, 0, 1, 64},
		{10, 64, 54, 64},     // fits: unchanged
		{64, 64, 1, 128},     // doubles
		{100, 128, 500, 600}, // more than double asked for
	} {
		s := make([]int, c.len, c.cap)
		for i := range s {
			s[i] = i
		}
		got := Room(s, c.n)
		if cap(got) != c.wantCap || !slices.Equal(got, s) {
			t.Errorf("Room(len %d cap %d, %d): len %d cap %d, want cap %d and the same elements",
				c.len, c.cap, c.n, len(got), cap(got), c.wantCap)
		}
	}
}
