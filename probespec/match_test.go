package probespec

import "testing"

func TestCompile(t *testing.T) {
	tests := []struct {
		m     Matcher
		yes   []string
		no    []string
		isLit bool
	}{
		{Matcher{MatchExact, "malloc"}, []string{"malloc"}, []string{"malloc2", "__libc_malloc", "Malloc"}, true},
		{Matcher{MatchGlob, "malloc*"}, []string{"malloc", "malloc_usable_size"}, []string{"__libc_malloc"}, false},
		{Matcher{MatchGlob, "vfs_{read,write}"}, []string{"vfs_read", "vfs_write"}, []string{"vfs_readv"}, false},
		{Matcher{MatchRegex, "mem(cpy|set)"}, []string{"memcpy", "__memset_avx2"}, []string{"memmove"}, false},
		{Matcher{MatchRegex, "^handle_.*"}, []string{"handle_x"}, []string{"a_handle_x"}, false},
		{Matcher{MatchDemangled, "ns::Klass::method"}, []string{"ns::Klass::method"}, []string{"ns::Klass::method2", "ns::Klass::method(int)"}, true},
		{Matcher{MatchDemangled, "Klass::method"}, []string{"ns::Klass::method", "a::b::Klass::method"}, []string{"ns::OtherKlass::method", "Klass::methods"}, true},
		{Matcher{MatchDemangled, "std::vector<*>::push_back*"}, []string{"std::vector<int>::push_back", "std::vector<int>::push_back(int const&)"}, []string{"std::list<int>::push_back"}, false},
		{Matcher{MatchDemangled, "Vec::operator[]"}, []string{"ns::Vec::operator[]", "Vec::operator[]"}, []string{"Vec::operator]"}, true},
		{Matcher{MatchDemangled, "*::operator[](unsigned long)"}, []string{"ns::Vec::operator[](unsigned long)"}, []string{"ns::Vec::operator()(unsigned long)"}, false},
		{Matcher{MatchDemangled, "ns::operator*"}, []string{"ns::operator*"}, []string{"ns::operator+"}, true},
		{Matcher{MatchDemangled, "P::operator->*"}, []string{"P::operator->*"}, []string{"P::operator->x"}, true},
		{Matcher{MatchDemangled, "A::operator()"}, []string{"A::operator()", "x::A::operator()"}, []string{"A::operator[]"}, true},
		{Matcher{MatchDemangled, "operator new[]"}, []string{"operator new[]"}, []string{"operator newx"}, true},
		{Matcher{MatchDemangled, "f[abi:cxx11]()"}, []string{"f[abi:cxx11]()"}, []string{"fa()"}, true},
		{Matcher{MatchDemangled, "foo()::{lambda(int)#1}::operator()"}, []string{"foo()::{lambda(int)#1}::operator()"}, []string{"foo()::lambda(int)#1::operator()"}, true},
		{Matcher{MatchDemangled, "app::main::{closure#0}"}, []string{"app::main::{closure#0}"}, []string{"app::main::closure#0"}, true},
		{Matcher{MatchDemangled, "net/http.(*conn).serve"}, []string{"net/http.(*conn).serve"}, []string{"net/http.(conn).serv"}, false},
		{Matcher{MatchDemangled, `a\*b`}, []string{"a*b", "x::a*b"}, []string{"axb"}, true},
		{Matcher{MatchDemangled, "{a,b}::f"}, []string{"a::f", "b::f"}, []string{"c::f"}, false},
	}
	for _, tt := range tests {
		c, err := tt.m.Compile()
		if err != nil {
			t.Errorf("Compile(%v %q): %v", tt.m.Kind, tt.m.Pattern, err)
			continue
		}
		for _, n := range tt.yes {
			if !c.Match(n) {
				t.Errorf("%v %q does not match %q", tt.m.Kind, tt.m.Pattern, n)
			}
		}
		for _, n := range tt.no {
			if c.Match(n) {
				t.Errorf("%v %q matches %q", tt.m.Kind, tt.m.Pattern, n)
			}
		}
		if c.Literal() != tt.isLit {
			t.Errorf("%v %q: Literal() = %v", tt.m.Kind, tt.m.Pattern, c.Literal())
		}
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		m   Matcher
		msg string
	}{
		{Matcher{MatchRegex, "("}, `invalid regex "(": missing closing )`},
		{Matcher{MatchGlob, "["}, `invalid glob "[": unexpected end of input`},
		{Matcher{MatchDemangled, "f{"}, "invalid glob \"f{\": unclosed `{`"},
		{Matcher{MatchExact, ""}, "empty exact pattern"},
		{Matcher{MatchNone, "x"}, "invalid matcher kind 0"},
	}
	for _, tt := range tests {
		_, err := tt.m.Compile()
		if err == nil || err.Error() != tt.msg {
			t.Errorf("Compile(%v %q) = %v, want %q", tt.m.Kind, tt.m.Pattern, err, tt.msg)
		}
	}
	if (Compiled{}).Match("x") {
		t.Error("zero Compiled matches")
	}
}
