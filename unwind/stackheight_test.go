package unwind

import (
	"bytes"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/internal/testgate"
)

// heightOracle holds what comparing stack heights with a file's own CFI
// found.
type heightOracle struct {
	funcs, followed, pcs, wrong int
}

// The stack heights of compiled and hand-written code agree with the CFI
// its compiler or author wrote, at every pc the analysis gives a state:
// each function symbol an FDE covers from its start is analyzed as if it
// had none, and its states are checked against the FDE's rows. libc's
// string functions are hand-written assembly with CFI; the fixtures are
// gcc's, clang's and rustc's code, with and without frame pointers.
// PROBEE_HEIGHT_ORACLE (a list of paths separated by colons) checks more
// files, such as libLLVM.
func TestStackHeightsMatchCFI(t *testing.T) {
	paths := []string{"/lib/x86_64-linux-gnu/libc.so.6"}
	for _, name := range []string{"chain-nofp", "chain-fp", "cxx", "rustfx", "recurse-nofp", "bigframe-nofp"} {
		paths = append(paths, testgate.Fixture(t, filepath.Join(fixtureDir, name)))
	}
	if extra := os.Getenv("PROBEE_HEIGHT_ORACLE"); extra != "" {
		paths = append(paths, strings.Split(extra, ":")...)
	}
	for _, p := range paths {
		o := checkHeights(t, p)
		t.Logf("%s: %d functions, %d followed, %d pcs compared, %d wrong", filepath.Base(p), o.funcs, o.followed, o.pcs, o.wrong)
		if o.wrong > 0 {
			t.Errorf("%s: %d pcs whose stack height differs from the CFI", p, o.wrong)
		}
		// Most functions are followed: the analysis is not just giving up
		// (it gives up on stack probe loops, whose height changes per turn).
		if o.funcs >= 100 && o.followed*10 < o.funcs*7 {
			t.Errorf("%s: only %d of %d functions followed", p, o.followed, o.funcs)
		}
	}
}

func checkHeights(t *testing.T, path string) heightOracle {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fr := parseEhFrame(t, f)
	ref, err := Build(fr)
	if err != nil {
		t.Fatal(err)
	}
	starts := map[uint64]uint64{}
	for _, d := range fr.FDEs {
		starts[d.Start] = d.End
	}
	entries := funcEntries(f, readSection, symTables(f, readSection), allStarts(f))
	var o heightOracle
	var a analysis
	for _, fn := range symbolsWithFDE(t, f, starts) {
		o.funcs++
		if !a.stackHeights(fn.code) || !a.returns && !slices.ContainsFunc(a.frag(fn.start).tailCalls, entries.has) {
			continue
		}
		states, lens := a.states, a.lens
		o.followed++
		for off, n := range lens {
			if n == 0 {
				continue
			}
			pc := fn.start + uint64(off)
			want, _ := ref.Lookup(pc)
			if w, compared := heightAgrees(want, states[off]); compared {
				o.pcs++
				if !w {
					o.wrong++
					if o.wrong <= 10 {
						t.Logf("%s %#x (+%#x of %s): CFI %v, stack height %+v", filepath.Base(path), pc, off, fn.name, want, states[off])
					}
				}
			}
		}
	}
	return o
}

// heightAgrees compares a CFI rule with a stack height; compared is
// false for rules a stack height never gives. Only a saved rbp is
// compared with the CFI's: where rbp still holds the caller's value, the
// CFI may say so or where it is saved, both true (LLVM's CFI names the
// slot of a push only after the last push; GCC's keeps it after the
// epilogue's pop), and where the stack height has it unknown, it gives
// no wrong value (OpenSSL's AES helpers in node use rbp without saving
// it, which their CFI does not say).
func heightAgrees(r Rule, h height) (ok, compared bool) {
	switch r.CFA {
	case CFARSP:
		ok = h.sp == r.CFAOffset
	case CFARBP:
		ok = h.bp == r.CFAOffset
	default:
		return false, false
	}
	if r.RBP == RBPOffset && h.saved != 0 {
		ok = ok && h.saved == -r.RBPOffset
	}
	return ok, true
}

type symCode struct {
	name  string
	start uint64
	code  []byte
}

// symbolsWithFDE returns the function symbols of f (.symtab, else
// .dynsym) that an FDE covers from their start, with the FDE's code.
func symbolsWithFDE(t *testing.T, f *elf.File, fdeEnds map[uint64]uint64) []symCode {
	syms, err := f.Symbols()
	if err != nil {
		if syms, err = f.DynamicSymbols(); err != nil {
			t.Fatal(err)
		}
	}
	var out []symCode
	seen := map[uint64]bool{}
	data := map[elf.SectionIndex][]byte{}
	for _, s := range syms {
		end, ok := fdeEnds[s.Value]
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || !ok || seen[s.Value] || int(s.Section) >= len(f.Sections) {
			continue
		}
		seen[s.Value] = true
		sec := f.Sections[s.Section]
		b, ok := data[s.Section]
		if !ok {
			b, _ = sec.Data()
			data[s.Section] = b
		}
		if s.Value < sec.Addr || end > sec.Addr+uint64(len(b)) {
			continue
		}
		out = append(out, symCode{s.Name, s.Value, b[s.Value-sec.Addr : end-sec.Addr]})
	}
	return out
}

// allStarts is the start of every symbol of f.
func allStarts(f *elf.File) []uint64 {
	var out []uint64
	for _, get := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, _ := get()
		for _, s := range syms {
			out = append(out, s.Value)
		}
	}
	return out
}

// heightCase is a function's code (hex, spaces ignored) and what the
// analysis gives it: "" when it gets no states, else each reached
// instruction's offset and rule ("0:rsp+8 4:rsp+16 ...", where the rule
// changes), then "ret" or the tail calls' targets.
var heightCases = []struct {
	name, code, want string
}{
	{"frameless", "53 4154 4883ec18 e800000000 4883c418 415c 5b c3",
		"0:rsp+8 1:rsp+16 3:rsp+24 7:rsp+48 16:rsp+24 18:rsp+16 19:rsp+8 ret"},
	{"rbp frame, rsp aligned", "4157 55 4889e5 4881ecc8000000 4883e4c0 e800000000 4889ec 5d 415f c3",
		"0:rsp+8 2:rsp+16 3:rsp+24,rbp@24 6:rbp+24,rbp@24 26:rsp+16 28:rsp+8 ret"},
	{"leave", "55 4889e5 4883ec10 c9 c3", "0:rsp+8 1:rsp+16,rbp@16 4:rbp+16,rbp@16 9:rsp+8 ret"},
	{"branch joins with the same height", "4883ec08 85ff 7504 31c0 eb02 ffc0 4883c408 c3",
		"0:rsp+8 4:rsp+16 18:rsp+8 ret"},
	{"branch joins with another height", "4883ec08 85ff 7502 4883ec08 4883c408 c3", ""},
	{"returns with rsp elsewhere", "4883ec08 c3", ""},
	{"rsp from another register", "4883ec08 4889c4 c3", ""},
	{"never returns", "4883ec08 e800000000 0f0b", ""},
	{"tail call", "53 5b e900100000", "0:rsp+8 1:rsp+16 2:rsp+8 tail:4103"},
	{"rbp saved by mov, then used", "4883ec18 48896c2408 4889fd 488b6c2408 4883c418 c3",
		"0:rsp+8 4:rsp+32 9:rsp+32,rbp@24 17:rsp+32 21:rsp+8 ret"},
	{"rbp used unsaved", "4889fd c3", "0:rsp+8 3:rsp+8,rbp? ret"},
	{"xchg of rbp with memory", "48872c24 c3", ""},
	{"AVX2 code", "4883ec08 c5fdfec5 c5f9d7c0 4883c408 c3", "0:rsp+8 4:rsp+16 16:rsp+8 ret"},
	{"code after ret is not this function", "c3 90 cc 4883ec08", "0:rsp+8 ret"},
	{"undecodable instruction (AVX-512) ends the path", "85ff 7401 c3 62f1fd48fec1 c3", "0:rsp+8 ret"},
}

func TestStackHeights(t *testing.T) {
	for _, c := range heightCases {
		code, err := hex.DecodeString(strings.ReplaceAll(c.code, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		var a analysis
		got := ""
		if a.stackHeights(code) {
			got = describeHeights(&a)
			checkEncoded(t, c.name, &a)
		}
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// checkEncoded checks that the CFI a.frag encodes gives the rule of the
// analysis at every reached instruction, and none elsewhere.
func checkEncoded(t *testing.T, name string, a *analysis) {
	const addr = 0x1000
	fr := &CFI{Section: SymSection, CIEs: []*CIE{synthCIE(atEntry)}}
	fr.add(a.frag(addr))
	tab, err := Build(fr)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	end := 0
	for off, n := range a.lens {
		rule, ok := tab.Lookup(addr + uint64(off))
		if n == 0 {
			if ok && off >= end {
				t.Errorf("%s: +%d not reached, rule %v", name, off, rule)
			}
			continue
		}
		end = off + int(n)
		h := a.states[off]
		want, _ := heightAgrees(rule, h)
		if !ok || !want || rule.RBP == RBPOffset && h.saved == 0 || rule.RBP == RBPUndefined && !h.dirty {
			t.Errorf("%s: +%d: encoded rule %v (%v), stack height %+v", name, off, rule, ok, h)
		}
	}
}

func describeHeights(a *analysis) string {
	var b strings.Builder
	var last heightRule
	for off, n := range a.lens {
		if n == 0 {
			continue
		}
		r := a.states[off].rule()
		if off > 0 && r == last {
			continue
		}
		last = r
		reg := "rsp"
		if r.cfaBP {
			reg = "rbp"
		}
		fmt.Fprintf(&b, "%d:%s+%d", off, reg, r.off)
		switch {
		case r.rbpSlot > 0:
			fmt.Fprintf(&b, ",rbp@%d", r.rbpSlot)
		case r.rbpSlot < 0:
			b.WriteString(",rbp?")
		}
		b.WriteString(" ")
	}
	if a.returns {
		b.WriteString("ret")
	}
	for i, t := range a.tailCalls {
		if i > 0 || a.returns {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "tail:%d", t)
	}
	return b.String()
}

// The functions that follow one inside a symbol are found where it ends,
// past padding: the code after "code after ret" starts at 3.
func TestStackHeightsNext(t *testing.T) {
	code, _ := hex.DecodeString("c390cc4883ec08e8000000004883c408c3")
	var a analysis
	if !a.stackHeights(code) {
		t.Fatal("first function not followed")
	}
	next, ok := a.next()
	if !ok || next != 3 {
		t.Fatalf("next %d %v, want 3 true", next, ok)
	}
	var frags []heightFrag
	frags = a.functions(frags, 0x1000, code)
	if len(frags) != 2 || frags[1].fdes[0].Start != 0x1003 {
		t.Fatalf("functions: %+v, want two, the second at 0x1003", frags)
	}
	// An indirect jump may have targets past the last instruction reached.
	code, _ = hex.DecodeString("ffe0c3")
	if a.stackHeights(code) {
		t.Fatal("a function that only jumps through rax followed")
	}
}

// The analysis never panics and never takes long, whatever the bytes.
func FuzzStackHeights(f *testing.F) {
	for _, c := range heightCases {
		code, _ := hex.DecodeString(strings.ReplaceAll(c.code, " ", ""))
		f.Add(code)
	}
	f.Fuzz(func(t *testing.T, code []byte) {
		var a analysis
		if a.stackHeights(code) {
			a.frag(0x1000)
			a.next()
		}
		a.functions(nil, 0x1000, code)
	})
}

// The fixture's assembly has no CFI: its two functions, one without a
// symbol inside the other's, get rules from their code, and the table
// has them.
func TestSymbolFramesAsmspin(t *testing.T) {
	f, tab := elfTable(t, testgate.Fixture(t, filepath.Join(fixtureDir, "asmspin-nofp")))
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(syms, func(s elf.Symbol) bool { return s.Name == "asm_outer" })
	if i < 0 {
		t.Fatal("no asm_outer")
	}
	outer := syms[i].Value
	fr := symbolFrames(f, []*CFI{parseEhFrame(t, f)}, sortFDEs([]*CFI{parseEhFrame(t, f)}), readSection)
	if fr == nil || len(fr.FDEs) != 2 || fr.FDEs[0].Start != outer || fr.FDEs[1].Start >= outer+syms[i].Size {
		t.Fatalf("synthetic FDEs %+v, want two inside asm_outer [%#x, +%d)", fr, outer, syms[i].Size)
	}
	mid := fr.FDEs[1].Start
	for _, c := range []struct {
		pc   uint64
		want string
	}{
		{outer, "rsp+8"},
		{outer + 2, "rsp+16"},          // after push %r15
		{outer + 6, "rbp+24 rbp=c-24"}, // after mov %rsp,%rbp
		{mid, "rsp+8"},
		{mid + 3, "rsp+24"}, // after push %rbx; push %r12
		{mid + 7, "rsp+48"}, // after sub $24,%rsp
	} {
		if r, ok := tab.Lookup(c.pc); !ok || r.String() != c.want {
			t.Errorf("%#x: rule %v (%v), want %s", c.pc, r, ok, c.want)
		}
	}
}

// FuzzBuildELFSymbols feeds arbitrary bytes, starting from fixtures with
// assembly without CFI, to BuildELF, which reads their symbol tables and
// decodes the functions no FDE covers: it returns a table or an error,
// never panics.
func FuzzBuildELFSymbols(f *testing.F) {
	for _, name := range []string{"asmspin-nofp", "chain-nofp"} {
		if b, err := os.ReadFile(filepath.Join(fixtureDir, name)); err == nil {
			f.Add(b)
			f.Add(b[:len(b)/2])
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ef, err := safeelf.NewFile("fuzz", bytes.NewReader(b))
		if err != nil {
			return
		}
		if tab, err := BuildELF(ef); err == nil {
			tab.Lookup(0x1000)
		}
	})
}
