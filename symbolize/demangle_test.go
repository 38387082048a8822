package symbolize

import "testing"

func TestDemangle(t *testing.T) {
	// Expected forms follow the Itanium C++ ABI and the Rust mangling
	// schemes (RFC 2603 for v0), shortened as pprof does: no parameters,
	// no template arguments, no Rust hash.
	tests := []struct{ in, want string }{
		{"main", "main"},
		{"malloc", "malloc"},
		{"_ZN7heaplab6Widget4growEi", "heaplab::Widget::grow"},
		{"_Z5twiceIlET_S0_", "twice"},
		{"_Znwm", "operator new"},
		{"_Znam", "operator new[]"},
		{"_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector::push_back"},
		{"_ZNK3MapIiE3getEv", "Map::get"},
		{"_ZN12_GLOBAL__N_13fooEv", "(anonymous namespace)::foo"},
		{"_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()"},
		{"_Z3foov.cold", "foo"},
		{"_Z3foov.part.0", "foo"},
		{"_Z3barv.constprop.0.isra.0", "bar"},
		{"helper.cold", "helper"},
		{"helper.part.0.cold", "helper.part.0"}, // the first mark of the list, wherever it is
		{".cold.helper.part.1", ".cold.helper"}, // a mark that starts the name is none
		{"pkg.(*T).israel", "pkg.(*T).israel"},  // ".isra" without its dot after is no mark
		{"_ZN3std2rt10lang_start17h0123456789abcdefE", "std::rt::lang_start"},
		{"_ZN5alloc5alloc8box_free17h0123456789abcdefE.llvm.123", "alloc::alloc::box_free"},
		{"_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$17h0a1b2c3d4e5f6789E",
			"core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>"},
		// Legacy identifiers that start with underscores keep them all
		// (rustc 1.95's std; the demangler alone dropped one).
		{"_ZN2us12__load_table17h0123456789abcdefE", "us::__load_table"},
		{"_ZN3std3sys9backtrace28__rust_begin_short_backtrace17h0123456789abcdefE", "std::sys::backtrace::__rust_begin_short_backtrace"},
		{"_ZN2us12_build_index17h0123456789abcdefE.llvm.42", "us::_build_index"},
		// A hash of fewer than 5 distinct digits is no Rust hash: the name
		// is C++, and its underscores are left as they are.
		{"_ZN2us12__load_table17h0000000000000000E", "us::__load_table::h0000000000000000"},
		{"_ZN70_$LT$alloc..vec..Vec$LT$T$C$A$GT$$u20$as$u20$core..ops..drop..Drop$GT$4drop17h0123456789abcdefE",
			"<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop"},
		{"_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar"},
		{"_RNvCs15kBYyAo9fc_7mycrate7example", "mycrate::example"},
		{"_RINvCs1234_7mycrate4funcmEB2_", "mycrate::func"},
		// From rustc 1.95's std (v0): an inherent impl of a generic type.
		{"_RNvMs3_NtCslNYArtu3iFV_5alloc7raw_vecINtB5_6RawVecINtNtB7_3vec3VechEE8grow_oneCsjrHSEGnQ3l9_3std", "<alloc::raw_vec::RawVec>::grow_one"},
		{"_RNvMNtCs6GmmlP4bgsG_1r7heaplabNtB2_6Widget4grow", "<r::heaplab::Widget>::grow"},
		// Not valid manglings: returned unchanged.
		{"_Zfoo", "_Zfoo"},
		{"_R", "_R"},
		{"_Z", "_Z"},
		{"_Z2<>0", "_Z2<>0"}, // demangles to "<>", nothing once emptied: found by FuzzDemangle
	}
	for _, tc := range tests {
		if got := Demangle(tc.in); got != tc.want {
			t.Errorf("Demangle(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzDemangle(f *testing.F) {
	for _, s := range []string{"_ZN7heaplab6Widget4growEi", "_RNvNtCs1234_7mycrate3foo3bar", "_Z3foov.cold", "_ZN3std2rt10lang_start17h0123456789abcdefE"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if Demangle(s) == "" && s != "" {
			t.Fatalf("Demangle(%q) is empty", s)
		}
	})
}

func TestShortenDemangled(t *testing.T) {
	// Inputs are names as jeprof --raw prints them (taken from a real
	// run) and as c++filt prints them.
	tests := []struct{ in, want string }{
		{"main<0000000000001165>", "main"},
		{"malloc<0000000000023910>", "malloc"},
		{"_dl_start_user", "_dl_start_user"},
		{"std::__throw_ios_failure(char const*, int)@@GLIBCXX_3.4.26<00000000000a0a67>", "std::__throw_ios_failure"},
		{"memcpy@GLIBC_2.2.5", "memcpy"},
		{"std::vector<int, std::allocator<int> >::push_back(int const&)", "std::vector::push_back"},
		{"Map<int>::get() const", "Map::get"},
		{"Foo::operator()(int)", "Foo::operator()"},
		{"Foo::operator<(Foo const&) const", "Foo::operator<"},
		{"Foo::operator<<(int)", "Foo::operator<<"},
		{"Foo::operator->()", "Foo::operator->"},
		{"bool std::operator< <char>(std::string const&, char const*)", "std::operator<"},
		{"std::pair<std::_Rb_tree_iterator<int>, bool> std::_Rb_tree<int, int>::_M_insert_unique<int>(int&&)", "std::_Rb_tree::_M_insert_unique"},
		{"void std::vector<double, std::allocator<double> >::_M_realloc_insert<double const&>(double const&)", "std::vector::_M_realloc_insert"},
		{"std::_Rb_tree_node<int>* std::_Rb_tree<int, int>::_M_create_node<int>(int&&)", "std::_Rb_tree::_M_create_node"},
		{"operator()", "operator()"}, // a lambda's, as addr2line names an inlined one
		{"Foo::operator new(unsigned long)", "Foo::operator new"},
		{"(anonymous namespace)::Pool::fill(int)", "(anonymous namespace)::Pool::fill"},
		{"(anonymous namespace)::helper(int)", "(anonymous namespace)::helper"},
		{"_ZN7heaplab6Widget4growEi", "heaplab::Widget::grow"},
		{"weird<name", "weird<name"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := ShortenDemangled(tc.in); got != tc.want {
			t.Errorf("ShortenDemangled(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
