package resolver

import (
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/probespec"
)

func TestLibNameMatches(t *testing.T) {
	tests := []struct {
		name, base string
		want       bool
	}{
		{"libc", "libc.so.6", true},
		{"c", "libc.so.6", true},
		{"libc.so.6", "libc.so.6", true},
		{"libc.so", "libc.so.6", true},
		{"libc", "libcrypto.so.3", false},
		{"libc", "libcap.so.2", false},
		{"c", "libcap.so.2", false},
		{"libc", "libc_malloc_debug.so.0", false},
		{"libc.so.6", "libc.so.60", false},
		{"pthread", "libpthread.so.0", true},
		{"libssl.so.3", "libssl.so.3", true},
		{"ssl", "libssl.so.3", true},
		{"libc", "libc-2.31.so", true},
		{"LLVM", "libLLVM-14.so.1", true},
		{"stdc++", "libstdc++.so.6", true},
		{"ld-linux-x86-64", "ld-linux-x86-64.so.2", true},
		{"", "libc.so.6", false},
		{"fx", "libfx.so", true},
	}
	for _, tt := range tests {
		if got := LibNameMatches(tt.name, tt.base); got != tt.want {
			t.Errorf("LibNameMatches(%q, %q) = %v, want %v", tt.name, tt.base, got, tt.want)
		}
	}
}

// TestRealLibc checks library-name disambiguation against this machine's libc.
func TestRealLibc(t *testing.T) {
	for _, name := range []string{"libc", "c", "libc.so.6"} {
		ts := resolveOK(t, uspec(libT(name), probespec.MatchExact, "malloc"), Scope{})
		if len(ts) != 1 || filepath.Base(ts[0].Path) != "libc.so.6" {
			t.Fatalf("%s:malloc = %v, want one target in libc.so.6", name, ts)
		}
		if ts[0].FileOffset == 0 || ts[0].Size == 0 {
			t.Errorf("%s:malloc has no file offset or size: %+v", name, ts[0])
		}
	}
}

func TestAliasDedup(t *testing.T) {
	ts := resolveOK(t, uspec(libT("libc"), probespec.MatchGlob, "*malloc"), Scope{})
	addrs := map[uint64]string{}
	for _, tg := range ts {
		if prev, ok := addrs[tg.Address]; ok {
			t.Errorf("address 0x%x listed twice: %s and %s", tg.Address, prev, tg.Symbol)
		}
		addrs[tg.Address] = tg.Symbol
	}
	i := slices.IndexFunc(ts, func(tg AttachPoint) bool { return tg.Symbol == "malloc" })
	if i < 0 {
		t.Fatalf("libc:*malloc has no target named malloc: %v", symbols(ts))
	}
	if !slices.Contains(ts[i].Aliases, "__libc_malloc") {
		t.Errorf("malloc aliases = %v, want __libc_malloc among them", ts[i].Aliases)
	}
	// Matching only the alias reports the alias name.
	ts = resolveOK(t, uspec(libT("libc"), probespec.MatchExact, "__libc_malloc"), Scope{})
	if len(ts) != 1 || ts[0].Symbol != "__libc_malloc" {
		t.Errorf("exact __libc_malloc = %v", symbols(ts))
	}
}

func TestNoMatchSuggestions(t *testing.T) {
	_, err := Resolve(uspec(libT("libc"), probespec.MatchExact, "mallco"), Scope{})
	var nm *NoMatchError
	if !errors.As(err, &nm) {
		t.Fatalf("err = %v, want *NoMatchError", err)
	}
	if nm.Where != "libc.so.6" || len(nm.Suggestions) == 0 || nm.Suggestions[0] != "malloc" || !slices.Contains(nm.Suggestions, "mallopt") {
		t.Errorf("error = %q", err)
	}
	if !strings.HasPrefix(err.Error(), `no function matches "mallco" in libc.so.6; did you mean: malloc, mallopt`) {
		t.Errorf("message = %q", err)
	}
}

func TestUnknownLibrary(t *testing.T) {
	_, err := Resolve(uspec(libT("nosuchlibxyz"), probespec.MatchExact, "f"), Scope{})
	if err == nil || !strings.Contains(err.Error(), "give its path") {
		t.Errorf("err = %v", err)
	}
}

func TestChainFixtures(t *testing.T) {
	for _, bin := range []string{"chain-fp", "chain-nofp", "chain-nopie-fp", "chain-nopie-nofp"} {
		t.Run(bin, func(t *testing.T) {
			p := maptest.Fixture(t, bin)
			ts := resolveOK(t, uspec(pathT(p), probespec.MatchGlob, "foo_*"), Scope{})
			if got := symbols(ts); !reflect.DeepEqual(got, []string{"foo_one", "foo_two"}) {
				t.Errorf("foo_* = %v", got)
			}
			for _, name := range []string{"main", "a", "b", "c", "leaf"} {
				ts := resolveOK(t, uspec(pathT(p), probespec.MatchExact, name), Scope{})
				if len(ts) != 1 || ts[0].Path != p || ts[0].Size == 0 {
					t.Fatalf("%s = %+v", name, ts)
				}
				if strings.Contains(bin, "nopie") && ts[0].FileOffset != ts[0].Address-0x400000 {
					t.Errorf("%s: file offset 0x%x for address 0x%x", name, ts[0].FileOffset, ts[0].Address)
				}
			}
		})
	}
}

func TestRegexRawAndDemangled(t *testing.T) {
	p := maptest.Fixture(t, "chain-fp")
	ts := resolveOK(t, uspec(pathT(p), probespec.MatchRegex, "^foo_"), Scope{})
	if got := symbols(ts); !reflect.DeepEqual(got, []string{"foo_one", "foo_two"}) {
		t.Errorf("regex ^foo_ = %v", got)
	}
	cxx := maptest.Fixture(t, "cxx")
	ts = resolveOK(t, uspec(pathT(cxx), probespec.MatchRegex, "^ns::twice<"), Scope{})
	if len(ts) != 2 {
		t.Errorf("regex on demangled names = %v", symbols(ts))
	}
}

func TestOffsets(t *testing.T) {
	p := maptest.Fixture(t, "chain-fp")
	spec := uspec(pathT(p), probespec.MatchExact, "leaf")
	spec.Offset = 1
	ts := resolveOK(t, spec, Scope{})
	if ts[0].Offset != 1 || ts[0].ProbeAddress() != ts[0].Address+1 || !strings.HasSuffix(ts[0].String(), ":leaf+0x1") {
		t.Errorf("leaf+1 = %+v (%s)", ts[0], ts[0])
	}
	spec.Offset = 0x10000
	if _, err := Resolve(spec, Scope{}); err == nil || !strings.Contains(err.Error(), "outside leaf") {
		t.Errorf("leaf+0x10000: err = %v", err)
	}
}

func TestCommandClosure(t *testing.T) {
	exe := maptest.Fixture(t, "uselib-fp")
	scope := Scope{Command: []string{exe, "3"}}
	// Bare name: found in libfx.so through DT_NEEDED + RUNPATH $ORIGIN.
	ts := resolveOK(t, uspec(probespec.Target{}, probespec.MatchExact, "fx_entry"), scope)
	if len(ts) != 1 || filepath.Base(ts[0].Path) != "libfx.so" || filepath.Dir(ts[0].Path) != filepath.Dir(exe) {
		t.Fatalf("fx_entry = %v", ts)
	}
	for _, lib := range []string{"fx", "libfx", "libfx.so"} {
		ts = resolveOK(t, uspec(libT(lib), probespec.MatchGlob, "fx_*"), scope)
		if got := symbols(ts); !reflect.DeepEqual(got, []string{"fx_entry", "fx_inner", "fx_leaf"}) {
			t.Errorf("%s:fx_* = %v", lib, got)
		}
	}
	ts = resolveOK(t, uspec(libT("c"), probespec.MatchExact, "malloc"), scope)
	if len(ts) != 1 || filepath.Base(ts[0].Path) != "libc.so.6" {
		t.Errorf("c:malloc under the command = %v", ts)
	}
	// The program names itself (it is no library).
	ts = resolveOK(t, uspec(libT("uselib-fp"), probespec.MatchExact, "run"), scope)
	if len(ts) != 1 || ts[0].Path != exe {
		t.Errorf("uselib-fp:run under the command = %v", ts)
	}
	_, err := Resolve(uspec(libT("ssl"), probespec.MatchExact, "f"), scope)
	if err == nil || !strings.Contains(err.Error(), "is not loaded by uselib-fp") {
		t.Errorf("ssl under the command: %v", err)
	}
}

func TestCommandNotFound(t *testing.T) {
	_, err := Resolve(uspec(probespec.Target{}, probespec.MatchExact, "f"), Scope{Command: []string{"no-such-command-xyz"}})
	if err == nil || !strings.Contains(err.Error(), "not found in $PATH") {
		t.Errorf("err = %v", err)
	}
}

func TestSpecKinds(t *testing.T) {
	if _, err := Resolve(probespec.Spec{}, Scope{}); err == nil {
		t.Error("spec without kind resolved")
	}
}
