package main

import (
	"slices"
	"testing"
)

// TestTopAlternatives splits --rows at the bars that separate whole
// expressions only.
func TestTopAlternatives(t *testing.T) {
	for _, c := range []struct {
		expr string
		want []string
	}{
		{"a", []string{"a"}},
		{"a|b|c", []string{"a", "b", "c"}},
		{"^(parse|read)_x$|cache", []string{"^(parse|read)_x$", "cache"}},
		{`a\|b|c`, []string{`a\|b`, "c"}},
		{"[|]x|y", []string{"[|]x", "y"}},
		{"[]|]x|y", []string{"[]|]x", "y"}},
		{"[^]|]x|y", []string{"[^]|]x", "y"}},
		{"a||b", []string{"a", "", "b"}},
	} {
		if got := topAlternatives(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("topAlternatives(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}

// TestUnmatchedAlternatives names the alternatives that match no key,
// and none for a single expression (that is an error of its own).
func TestUnmatchedAlternatives(t *testing.T) {
	keys := []string{"alloc_a", "std::string::_M_create"}
	for _, c := range []struct {
		expr string
		want []string
	}{
		{"^alloc_a$|^nope$|_M_create", []string{`"^nope$"`}},
		{"alloc|create", nil},
		{"nope", nil},
		{"alloc|(", nil}, // "(" is no expression of its own: not judged
	} {
		if got := unmatchedAlternatives(c.expr, keys); !slices.Equal(got, c.want) {
			t.Errorf("unmatchedAlternatives(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}
