package gopclntab

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
)

// The frames of an address are what the Go runtime's own traceback gives
// (runtime.CallersFrames, the oracle): at pcs spread over every function
// of this test binary, the inlined calls innermost first, each function's
// name, file and line.
func TestFramesMatchRuntime(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tab, err := Open(f)
	if err != nil {
		t.Fatal(err)
	}
	var checked, inlined int
	var wrong []string
	for _, fn := range tab.Funcs() {
		// The runtime looks up the address before a return address,
		// except at an entry: fn.End-1 would be looked up at fn.End.
		for pc := fn.Entry; pc < fn.End-1; pc += 7 {
			want := runtimeFrames(tab, pc)
			if want == nil {
				continue
			}
			got := tab.Frames(pc)
			for i := range got { // the runtime's names: no ".abi0" (abi.go)
				got[i].Func = forPrint(strings.TrimSuffix(got[i].Func, ".abi0"))
			}
			checked++
			if len(want) > 1 {
				inlined++
			}
			if fmt.Sprint(got) != fmt.Sprint(want) && len(wrong) < 5 {
				wrong = append(wrong, fmt.Sprintf("%#x: got %v, want %v", pc, got, want))
			}
		}
	}
	t.Logf("%d pcs, %d in inlined calls", checked, inlined)
	if len(wrong) > 0 || inlined < 1000 {
		t.Errorf("frames differ from the runtime's (want none, and >= 1000 pcs in inlined calls):\n%v", wrong)
	}
}

// runtimeFrames returns the runtime's frames of pc: CallersFrames of the
// pcs runtime.Callers gives for it, the address after pc and after each
// call site of its inlined calls (which Table.inlined finds; where one is
// wrong, the runtime's frame there differs). It returns nil where the
// runtime names no function: it takes the name at offset 0, the first
// function's, for none.
func runtimeFrames(tab *Table, pc uint64) []Frame {
	f, ok := tab.find(pc)
	if !ok {
		return nil
	}
	_, pcs := tab.inlined(f, pc)
	callers := make([]uintptr, len(pcs))
	for i, at := range pcs {
		callers[i] = uintptr(at) + 1
	}
	var out []Frame
	frames := runtime.CallersFrames(callers)
	for {
		fr, more := frames.Next()
		if fr.Function == "" {
			return nil
		}
		if fr.File == "?" { // no line
			fr.File = ""
		}
		out = append(out, Frame{Func: symName(fr.Function), File: fr.File, Line: fr.Line, Inline: fr.Func == nil})
		if !more {
			return out
		}
	}
}

// forPrint shortens a name as the runtime does for its frames: what lies
// between the first '[' and the last ']' becomes "...".
func forPrint(name string) string {
	i, j := strings.IndexByte(name, '['), strings.LastIndexByte(name, ']')
	if i < 0 || j < i {
		return name
	}
	return name[:i] + "[...]" + name[j+1:]
}

// Before Go 1.26 the runtime's module data is in .noptrdata: a copy of
// gofx whose .go.module is named .noptrdata (and whose .noptrdata is
// renamed) gives the text start and the inline trees gofx gives.
func TestModuleDataInNoptrdata(t *testing.T) {
	raw, orig := fixtureELF(t, "gofx")
	names := orig.Section(".shstrtab")
	mod := bytes.Clone(raw)
	tab := mod[names.Offset : names.Offset+names.Size]
	for _, r := range [][2]string{{".noptrdata", ".Noptrdata"}, {".go.module", ".noptrdata"}} {
		old, repl := []byte("\x00"+r[0]+"\x00"), []byte("\x00"+r[1]+"\x00")
		if bytes.Count(tab, old) != 1 {
			t.Fatalf("gofx's section names hold %q %d times, want once", r[0], bytes.Count(tab, old))
		}
		copy(tab[bytes.Index(tab, old):], repl)
	}
	f, err := elf.NewFile(bytes.NewReader(mod))
	if err != nil {
		t.Fatal(err)
	}
	if f.Section(".go.module") != nil {
		t.Fatal("the copy still has .go.module")
	}
	want, got := tableOrFail(t, orig), tableOrFail(t, f)
	if got.text != want.text || !got.Inlines() {
		t.Fatalf("text %#x (want %#x), inline trees found: %v (want true)", got.text, want.text, got.Inlines())
	}
	var inlined int
	for _, fn := range want.Funcs() {
		g, w := got.Frames(fn.Entry+16), want.Frames(fn.Entry+16)
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Fatalf("%s+16: %v, want %v", fn.Name, g, w)
		}
		inlined += len(w) - 1
	}
	if inlined < 50 {
		t.Errorf("%d inline frames, want >= 50", inlined)
	}
}

func tableOrFail(t *testing.T, f *elf.File) *Table {
	tab, err := Open(f)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// A table whose module data is not found (gofx's .go.module renamed, and
// no .noptrdata holding it) has no inline trees: Inlines says so, for
// objfile to take the calls inlined from DWARF instead, and its Frames
// give the physical function alone, with the line at the address.
func TestInlinesWithoutModuleData(t *testing.T) {
	raw, orig := fixtureELF(t, "gofx")
	if !tableOrFail(t, orig).Inlines() {
		t.Fatal("gofx: Inlines() false, want true")
	}
	names := orig.Section(".shstrtab")
	mod := bytes.Clone(raw)
	tab := mod[names.Offset : names.Offset+names.Size]
	old := []byte("\x00.go.module\x00")
	if bytes.Count(tab, old) != 1 {
		t.Fatalf("gofx's section names hold .go.module %d times, want once", bytes.Count(tab, old))
	}
	copy(tab[bytes.Index(tab, old):], "\x00.go.modulx\x00")
	f, err := elf.NewFile(bytes.NewReader(mod))
	if err != nil {
		t.Fatal(err)
	}
	got := tableOrFail(t, f)
	if got.Inlines() {
		t.Fatal("without module data: Inlines() true, want false")
	}
	for _, fn := range got.Funcs() {
		if fs := got.Frames(fn.Entry + 16); len(fs) > 1 {
			t.Fatalf("%s+16: %v, want the physical frame alone", fn.Name, fs)
		}
	}
}
