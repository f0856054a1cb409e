package resolver

import (
	"reflect"
	"sort"
	"testing"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/probespec"
)

func demangledOf(ts []AttachPoint) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.DemangledName())
	}
	sort.Strings(out)
	return out
}

func TestCxxDemangled(t *testing.T) {
	p := maptest.Fixture(t, "cxx")
	tests := []struct {
		kind    probespec.MatcherKind
		pattern string
		want    []string
	}{
		{probespec.MatchDemangled, "ns::Klass::method", []string{"ns::Klass::method(int)"}},
		{probespec.MatchDemangled, "Klass::method", []string{"ns::Klass::method(int)"}},
		{probespec.MatchDemangled, "ns::f", []string{"ns::f(double)", "ns::f(int)"}},
		{probespec.MatchDemangled, "ns::f(int)", []string{"ns::f(int)"}},
		{probespec.MatchDemangled, "ns::*::method", []string{"ns::Klass::method(int)", "ns::OtherKlass::method(int)"}},
		{probespec.MatchDemangled, "ns::operator+", []string{"ns::operator+(ns::Vec2 const&, ns::Vec2 const&)"}},
		{probespec.MatchDemangled, "ns::twice<*>", []string{"double ns::twice<double>(double)", "int ns::twice<int>(int)"}},
		{probespec.MatchDemangled, "std::vector<*>::push_back*", []string{"std::vector<int, std::allocator<int> >::push_back(int const&)"}},
		// .cold fragments are never entry points of a demangled match.
		{probespec.MatchDemangled, "ns::checked", []string{"ns::checked(int)"}},
		{probespec.MatchDemangled, "ns::thrower", []string{"ns::thrower(int)"}},
		// .isra clones are.
		{probespec.MatchDemangled, "ns::scale", []string{"ns::scale(ns::Big const&, int) [clone .isra.0]"}},
		// Raw names still see the fragment.
		{probespec.MatchExact, "_ZN2ns7checkedEi.cold", []string{"ns::checked(int) [clone .cold]"}},
	}
	for _, tt := range tests {
		ts := resolveOK(t, uspec(pathT(p), tt.kind, tt.pattern), Scope{})
		if got := demangledOf(ts); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %q = %q, want %q", tt.kind, tt.pattern, got, tt.want)
		}
	}
}

func TestRustDemangled(t *testing.T) {
	for _, bin := range []string{"rustfx", "rustfx-v0"} {
		p := maptest.Fixture(t, bin)
		for _, pat := range []string{"rustfx::outer::inner_fn", "outer::deep::leaf_fn", "rustfx::Counter::bump"} {
			ts := resolveOK(t, uspec(pathT(p), probespec.MatchDemangled, pat), Scope{})
			if len(ts) != 1 {
				t.Errorf("%s: %q = %v", bin, pat, demangledOf(ts))
			}
		}
		ts := resolveOK(t, uspec(pathT(p), probespec.MatchDemangled, "*bump_trait"), Scope{})
		if len(ts) != 1 || ts[0].DemangledName() != "<rustfx::Counter as rustfx::Bump>::bump_trait" {
			t.Errorf("%s: *bump_trait = %v", bin, demangledOf(ts))
		}
	}
}

// A Go binary's functions are probe targets by their Go names, from
// .symtab, or from .gopclntab in release builds without .symtab
// (gofx-stripped: -s -w; gofx-cgo-stripped: strip's copy of a build the
// system linker linked, whose .text starts with C code): at the
// addresses .symtab gives in the builds that have it.
func TestGoSymbols(t *testing.T) {
	want := []string{"main.a", "main.b", "main.deep", "main.grow", "main.grow.func1", "main.leaf", "main.main", "main.reexec", "main.spawn", "main.spawn.func1"}
	for _, c := range [][2]string{{"gofx", "gofx"}, {"gofx-stripped", "gofx"}, {"gofx-cgo-stripped", "gofx-cgo"}} {
		ts := resolveOK(t, uspec(pathT(maptest.Fixture(t, c[0])), probespec.MatchGlob, "main.*"), Scope{})
		if got := symbols(ts); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: main.* = %v, want %v", c[0], got, want)
			continue
		}
		oracle := resolveOK(t, uspec(pathT(maptest.Fixture(t, c[1])), probespec.MatchGlob, "main.*"), Scope{})
		for i := range ts {
			if ts[i].Address != oracle[i].Address || ts[i].FileOffset != oracle[i].FileOffset {
				t.Errorf("%s: %s at %#x (file offset %#x), %s has it at %#x (%#x)", c[0], ts[i].Symbol,
					ts[i].Address, ts[i].FileOffset, c[1], oracle[i].Address, oracle[i].FileOffset)
			}
		}
	}
}
