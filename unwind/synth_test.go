package unwind

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// parseEhFrame parses f's .eh_frame.
func parseEhFrame(t *testing.T, f *elf.File) *CFI {
	t.Helper()
	data, addr, err := frameSection(f, EhFrame, readSection)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := ParseCFI(EhFrame, data, bases(f, addr))
	if err != nil {
		t.Fatal(err)
	}
	return fr
}

// The synthetic .plt CFI gives every pc of a GNU ld .plt the rule GNU ld's
// own FDE for it gives (the FDE removed, pltFrames stands in), and is not
// added where that FDE is present.
func TestPLTFramesMatchGNU(t *testing.T) {
	f, err := elf.Open(testgate.Fixture(t, filepath.Join(fixtureDir, "chain-fp")))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	plt := f.Section(".plt")
	if plt == nil {
		t.Fatal("chain-fp has no .plt")
	}
	fr := parseEhFrame(t, f)
	if pltFrames(f, []*CFI{fr}, readSection) != nil {
		t.Fatal("synthetic .plt CFI added although GNU ld's FDE covers .plt")
	}
	ref, err := Build(fr)
	if err != nil {
		t.Fatal(err)
	}
	without := *fr
	without.FDEs = nil
	for _, d := range fr.FDEs {
		if d.End <= plt.Addr || d.Start >= plt.Addr+plt.Size {
			without.FDEs = append(without.FDEs, d)
		}
	}
	synth := pltFrames(f, []*CFI{&without}, readSection)
	if synth == nil {
		t.Fatal("no synthetic .plt CFI without GNU ld's FDE")
	}
	got, err := Build(&without, synth)
	if err != nil {
		t.Fatal(err)
	}
	for pc := plt.Addr; pc < plt.Addr+plt.Size; pc++ {
		want, wok := ref.Lookup(pc)
		have, hok := got.Lookup(pc)
		if want != have || wok != hok {
			t.Errorf("pc %#x: synthetic rule %v (%v), GNU ld's %v (%v)", pc, have, hok, want, wok)
		}
	}
}

// lld emits no CFI for .plt (the Rust fixture is linked by rust-lld): its
// stubs get plt rules, and the code after .plt keeps its own.
func TestPLTFramesLLD(t *testing.T) {
	f, tab := elfTable(t, testgate.Fixture(t, filepath.Join(fixtureDir, "rustfx")))
	plt := f.Section(".plt")
	if plt == nil {
		t.Skip("rustfx has no .plt (linked with -z now or without lazy binding)")
	}
	if covered([]*CFI{parseEhFrame(t, f)}, plt.Addr, plt.Addr+plt.Size) {
		t.Skip("rustfx's linker emitted CFI for .plt")
	}
	for _, c := range []struct {
		off  uint64
		want Rule
	}{
		{0, Rule{CFA: CFARSP, CFAOffset: 16}},
		{6, Rule{CFA: CFARSP, CFAOffset: 24}},
		{16, Rule{CFA: CFAPLT, CFAOffset: 8, PLTThreshold: 11}},
		{plt.Size - 1, Rule{CFA: CFAPLT, CFAOffset: 8, PLTThreshold: 11}},
	} {
		if r, ok := tab.Lookup(plt.Addr + c.off); !ok || r != c.want {
			t.Errorf(".plt+%#x: rule %v (found %v), want %v", c.off, r, ok, c.want)
		}
	}
}

// .init and .fini (crti/crtn code, no CFI) get rsp+16 between their sub
// and add of 8, rsp+8 around: node's OpenSSL calls OPENSSL_cpuid_setup
// from its .init, whose frame was cut before. So do those of a library
// without any other CFI (libdata-nocfi.so, like ICU's libicudata, which
// clang loads: a page fault on its _init was cut there).
func TestInitFrames(t *testing.T) {
	paths := []string{testgate.Fixture(t, filepath.Join(fixtureDir, "chain-fp")),
		testgate.Fixture(t, filepath.Join(fixtureDir, "libdata-nocfi.so"))}
	if node, err := exec.LookPath("node"); err == nil {
		paths = append(paths, node)
	}
	for _, path := range paths {
		f, tab := elfTable(t, path)
		for _, name := range []string{".init", ".fini"} {
			s := f.Section(name)
			if s == nil {
				t.Fatalf("%s: no %s", path, name)
			}
			code, _ := s.Data()
			prolog := uint64(4)
			if len(code) > 4 && code[0] == 0xf3 {
				prolog = 8
			}
			for _, c := range []struct {
				off uint64
				cfa int32
			}{{0, 8}, {prolog - 1, 8}, {prolog, 16}, {s.Size - 5, 16}, {s.Size - 1, 8}} {
				r, ok := tab.Lookup(s.Addr + c.off)
				if want := (Rule{CFA: CFARSP, CFAOffset: c.cfa}); !ok || r != want {
					t.Errorf("%s %s+%#x: rule %v (found %v), want %v", filepath.Base(path), name, c.off, r, ok, want)
				}
			}
		}
	}
}

// crtbegin's functions, which have no CFI, get rules: CFA = rsp+8 in the
// frameless ones and in __do_global_dtors_aux up to its push and from its
// pop, rsp+16 with rbp at CFA-16 between (chain-nofp's symbols name them;
// the code is found without them).
func TestCrtFrames(t *testing.T) {
	f, tab := elfTable(t, testgate.Fixture(t, filepath.Join(fixtureDir, "chain-nofp")))
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]uint64{}
	for _, s := range syms {
		at[s.Name] = s.Value
	}
	dtors := at["__do_global_dtors_aux"]
	entry := Rule{CFA: CFARSP, CFAOffset: 8}
	framed := Rule{CFA: CFARSP, CFAOffset: 16, RBP: RBPOffset, RBPOffset: -16}
	for _, c := range []struct {
		pc   uint64
		want Rule
	}{
		{at["deregister_tm_clones"], entry},
		{at["register_tm_clones"] + 8, entry},
		{dtors, entry},
		{dtors + 0xb, entry},  // jne, before the push
		{dtors + 0xe, framed}, // after the push
		{dtors + 0x2c, framed},
		{dtors + 0x34, entry}, // ret, after the pop
		{dtors + 0x38, entry}, // the other ret
		{at["frame_dummy"], entry},
	} {
		if r, ok := tab.Lookup(c.pc); !ok || r != c.want {
			t.Errorf("pc %#x (__do_global_dtors_aux%+d): rule %v (found %v), want %v", c.pc, int64(c.pc-dtors), r, ok, c.want)
		}
	}
}

// elfTable opens the ELF file at path (closed when the test ends) and
// builds its table.
func elfTable(t *testing.T, path string) (*elf.File, *Table) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	tab, err := BuildELF(f)
	if err != nil {
		t.Fatal(err)
	}
	return f, tab
}
