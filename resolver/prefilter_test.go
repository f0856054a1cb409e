package resolver

import (
	"debug/elf"
	"reflect"
	"strings"
	"testing"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/objfile"
	"github.com/probee/probee/probespec"
)

func TestPrefilterTokens(t *testing.T) {
	tests := []struct {
		kind    probespec.MatcherKind
		pattern string
		want    []string
	}{
		{probespec.MatchDemangled, "llvm::SmallVectorBase<*>::grow_pod*", []string{"SmallVectorBase", "grow_pod", "llvm"}},
		{probespec.MatchDemangled, "ns::Klass::method", []string{"method", "Klass"}}, // "ns": in "unsigned"
		{probespec.MatchDemangled, "std::vector<*>::push_back*", []string{"push_back"}},
		{probespec.MatchDemangled, "*::operator[]*", nil},
		{probespec.MatchDemangled, "foo[abc]bar{xyz,qq}baz", []string{"foo", "bar", "baz"}},
		{probespec.MatchDemangled, "alpha\\*beta", []string{"alpha", "beta"}},
		{probespec.MatchDemangled, "Vector2D::size*", []string{"Vector", "D"}},
		{probespec.MatchDemangled, "llvm::*::~*", []string{"llvm"}},
		{probespec.MatchDemangled, "*{lambda(int)#1}*", nil},
		{probespec.MatchDemangled, "f<16ul>", nil},
		{probespec.MatchRegex, "^llvm::APInt::(add|sub)", []string{"APInt", "llvm"}},
		{probespec.MatchRegex, "(?i)apint", nil},
		{probespec.MatchRegex, "gold(bar)?barrel+", []string{"barre", "gold"}},
		{probespec.MatchRegex, "(", nil},
		{probespec.MatchGlob, "llvm::*", nil},
	}
	for _, tt := range tests {
		got := []string(newPrefilter(probespec.Matcher{Kind: tt.kind, Pattern: tt.pattern}))
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v %q: tokens %q, want %q", tt.kind, tt.pattern, got, tt.want)
		}
	}
	p := newPrefilter(probespec.Matcher{Kind: probespec.MatchDemangled, Pattern: "ns::Klass::method"})
	for raw, want := range map[string]bool{"_ZN2ns5Klass6methodEi": true, "_ZN2ns5Klass5otherEi": false, "_RNvCs1_5Klass6method": true} {
		if p.admits(raw) != want {
			t.Errorf("admits(%q) = %v", raw, !want)
		}
	}
}

// trickyMangled are names whose demangled form has words of the
// demangler's own: thunks, guards, lambdas, literals, std:: abbreviations,
// operators, ABI tags, clones, special names, legacy Rust.
var trickyMangled = []string{
	"_ZThn8_N4llvm11raw_ostreamD0Ev", "_ZTv0_n24_N3foo3barEv", "_ZTch0_h0_N1A1fEv",
	"_ZGVZ3foovE1x", "_ZZ3foovENKUlvE_clEv", "_ZZN1A1fEvENKUlT_E_clIiEEDaS1_", "_ZZ1fvE1x_0",
	"_ZN3FooC2Ev", "_ZN3FooD1Ev", "_Z3fooILj16EEvv", "_Z3fooILm16EEvv", "_Z3fooILy16EEvv",
	"_Z3fooILx16EEvv", "_Z3fooILl16EEvv", "_Z3fooILb1EEvv", "_Z1fILc65EEvv", "_Z1fILd3ff0000000000000EEvv",
	"_Z1fDn", "_Z1fDu", "_Z1fDs", "_Z1fDi", "_Z1fDF16_", "_Z1fDv4_f", "_Z1fU3AS1Pi", "_Z1fPFviE",
	"_Z1fIJiiEEvDpT_", "_Z1fIiEDTcl1gfp_EET_", "_Z1fIiEvT_", "_Z1fonwm",
	"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE7reserveEm", "_ZNKSs4sizeEv", "_ZNSi4readEPcl",
	"_ZNSo5flushEv", "_ZNSd4swapERSd", "_ZNSt6vectorIiSaIiEE9push_backERKi",
	"_ZN12_GLOBAL__N_13fooEv", "_Z3fooB5cxx11v", "_ZN2ns1fB7abi_tagEv",
	"_ZN1AcviEv", "_ZN1AplERKS_", "_ZN1AixEm", "_ZN1AaSEOS_", "_ZN1AssERKS_", "_ZN1AclEv", "_ZN1AdeEv",
	"_Znwm", "_Znam", "_ZdlPv", "_ZdaPv", "_ZN1AawEv", "_Zli3_kmy",
	"_ZNK1A1fEv", "_ZNVK1A1fEv", "_ZNR1A1fEv", "_ZNO1A1fEv", "_Z1fPrVKi",
	"_Z3foov.cold", "_Z3foov.isra.0", "_Z3foov.constprop.0.isra.0", "_Z3foov.part.0", "_Z3foov.llvm.1234",
	"_ZTV3Foo", "_ZTI3Foo", "_ZTS3Foo", "_ZTT3Foo", "_ZTC3Foo0_3Bar", "_ZTW1x", "_ZTH1x", "_ZGR1x_",
	"_ZTHN3foo3barE", "_ZL3barv", "_ZGTt3foov", "_ZGTn3foov", "_ZTAXtl1AEE",
	"_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$17h0123456789abcdefE",
	"_ZN48_$LT$rustfx..Counter$u20$as$u20$rustfx..Bump$GT$10bump_trait17h0123456789abcdefE",
}

// TestPrefilterSound checks the premise of the prefilter: every run of
// letters in a demangled name (with and without parameters) is in the
// mangled name or in a word the demangler makes up (generatedWords).
// Checked on trickyMangled, the fixtures, every dynamic symbol of the
// system's libstdc++ and, without -short, libLLVM.
func TestPrefilterSound(t *testing.T) {
	for _, raw := range trickyMangled {
		if full, _ := objfile.DemangleName(raw); full == "" {
			t.Errorf("%s does not demangle", raw)
		}
	}
	names := append([]string(nil), trickyMangled...)
	for _, p := range prefilterCorpus(t) {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		for _, get := range []func() ([]elf.Symbol, error){f.DynamicSymbols, f.Symbols} {
			syms, _ := get()
			for _, s := range syms {
				names = append(names, s.Name)
			}
		}
		f.Close()
	}
	bad := map[string]string{}
	checked := 0
	for _, raw := range names {
		if strings.HasPrefix(raw, "_R") {
			continue
		}
		full, short := objfile.DemangleName(raw)
		if full == "" {
			continue
		}
		checked++
		for _, run := range letterRuns(full+" "+short, nil) {
			if !strings.Contains(raw, run) && !strings.Contains(generatedText, run) && bad[run] == "" {
				bad[run] = raw + " = " + full
			}
		}
	}
	for run, example := range bad {
		t.Errorf("%q is neither in the mangled name nor in generatedWords: %s", run, example)
	}
	if checked < len(trickyMangled)+100 {
		t.Errorf("only %d names demangled: the corpus is missing", checked)
	}
}

// prefilterCorpus lists the C++ and Rust files the prefilter is checked on.
func prefilterCorpus(t *testing.T) []string {
	var paths []string
	for _, name := range []string{"cxx", "rustfx"} {
		paths = append(paths, maptest.Fixture(t, name))
	}
	paths = append(paths, New(Scope{}).systemLibs("libstdc++")...)
	if !testing.Short() {
		paths = append(paths, llvmLib)
	}
	return paths
}

// Demangled and regex patterns find the same targets with the prefilter
// as without it.
func TestPrefilterSameMatches(t *testing.T) {
	patterns := []probespec.Matcher{
		{Kind: probespec.MatchDemangled, Pattern: "ns::Klass::method"},
		{Kind: probespec.MatchDemangled, Pattern: "ns::twice<*>"},
		{Kind: probespec.MatchDemangled, Pattern: "std::vector<*>::push_back*"},
		{Kind: probespec.MatchDemangled, Pattern: "std::__cxx11::basic_string*::reserve*"},
		{Kind: probespec.MatchDemangled, Pattern: "*::operator<<*"},
		{Kind: probespec.MatchDemangled, Pattern: "std::basic_ostream<*>::flush*"},
		{Kind: probespec.MatchDemangled, Pattern: "*thunk to std::*"},
		{Kind: probespec.MatchDemangled, Pattern: "rustfx::outer::inner_fn"},
		{Kind: probespec.MatchDemangled, Pattern: "*{{closure}}*"},
		{Kind: probespec.MatchRegex, Pattern: "^std::locale::"},
		{Kind: probespec.MatchRegex, Pattern: "basic_string<char.*>::_M_"},
		{Kind: probespec.MatchRegex, Pattern: "ns::twice<"},
	}
	spec := probespec.Spec{Kind: probespec.Uprobe}
	for _, p := range prefilterCorpus(t) {
		o, err := objfile.LoadObject(p, "")
		if err != nil {
			continue
		}
		for _, pat := range patterns {
			m, err := compileMatcher(pat)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := matchObject(nil, o, m, spec)
			m.pre = nil
			want, _ := matchObject(nil, o, m, spec)
			if !reflect.DeepEqual(symbols(got), symbols(want)) {
				t.Errorf("%s: %q: %d targets with the prefilter, %d without", p, pat.Pattern, len(got), len(want))
			}
		}
	}
}
