package symbolize

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/objfile"
	"github.com/probee/probee/output"
)

// markerLine returns the 1-based line of src holding marker.
func markerLine(t *testing.T, src, marker string) int {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("%s: no line with %q", src, marker)
	return 0
}

// srcLine renders a frame as "name[ (inlined)] base:line".
func srcLine(f output.Frame) string {
	s := f.Name
	if f.Inline {
		s += " (inlined)"
	}
	return fmt.Sprintf("%s %s:%d", s, filepath.Base(f.File), f.Line)
}

// hot_add is inlined into caller_one and caller_two: each address of its
// marked line expands into the inlined frame (that line) and the caller (the
// line of the call).
func TestInlineFramesFixture(t *testing.T) {
	bin := maptest.Fixture(t, "inline")
	src := filepath.Join(filepath.Dir(bin), "..", "src", "inline.c")
	hot := markerLine(t, src, "/* HOT_ADD_LINE */")
	o, err := objfile.LoadObject(bin, "")
	if err != nil {
		t.Fatal(err)
	}
	hits, _, _ := o.LineAddrs("inline.c", hot)
	if len(hits) != 2 {
		t.Fatalf("inline.c:%d has %d addresses, want 2", hot, len(hits))
	}
	want := map[string]bool{}
	for _, c := range []string{"caller_one", "caller_two"} {
		call := markerLine(t, src, "hot_add(x, "+map[string]string{"caller_one": "1", "caller_two": "2"}[c])
		want[fmt.Sprintf("hot_add (inlined) inline.c:%d|%s inline.c:%d", hot, c, call)] = true
	}
	sym := New(Config{})
	for _, h := range hits {
		fs, err := sym.ObjectFrames(bin, []uint64{h.Addr})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range fs {
			got = append(got, srcLine(f))
		}
		if !want[strings.Join(got, "|")] {
			t.Errorf("0x%x: frames %q, want one of %v", h.Addr, got, want)
		}
		delete(want, strings.Join(got, "|"))
	}
	sym.SetInline(false)
	fs, _ := sym.ObjectFrames(bin, []uint64{hits[0].Addr})
	if len(fs) != 1 || fs[0].Inline || !strings.HasPrefix(fs[0].Name, "caller_") {
		t.Errorf("with inline frames off: %+v", fs)
	}
}

// Every address of the line tables of the fixtures symbolizes exactly as
// binutils' addr2line -i -f -C prints it: the oracle.
func TestAddr2lineOracle(t *testing.T) {
	if _, err := exec.LookPath("addr2line"); err != nil {
		t.Skip("addr2line (binutils) not installed: apt-get install binutils")
	}
	// For C++ only positions are compared: addr2line names clones and
	// inlined calls inconsistently (main.cold; atoi inlined shown as main).
	for _, tc := range []struct {
		name  string
		names bool
	}{{"inline", true}, {"chain-fp", true}, {"uselib-nofp", true}, {"cxx", false}} {
		name := tc.name
		t.Run(name, func(t *testing.T) {
			bin := maptest.Fixture(t, name)
			addrs := lineTableAddrs(t, bin)
			sym := New(Config{})
			want := addr2line(t, bin, addrs, tc.names)
			mismatch := 0
			for i, a := range addrs {
				fs, err := sym.ObjectFrames(bin, []uint64{a})
				if err != nil {
					t.Fatal(err)
				}
				if got := oracleText(fs, tc.names); got != want[i] && mismatch < 10 {
					mismatch++
					t.Errorf("0x%x:\n got %q\nwant %q", a, got, want[i])
				}
			}
			t.Logf("%d addresses compared", len(addrs))
		})
	}
}

// oracleText renders frames the way addr2line -f prints them. Physical
// frames are named from ELF symbols, addr2line names them from DWARF: the
// symbols' clone suffixes are dropped for the comparison.
func oracleText(fs []output.Frame, names bool) string {
	var b strings.Builder
	for _, f := range fs {
		name, pos := f.Name, "??:0"
		if !names {
			name = "-"
		}
		if i := strings.Index(name, " [clone "); i > 0 && !f.Inline {
			name = name[:i]
		}
		if !f.Inline {
			name = strings.TrimSuffix(name, ".cold")
		}
		if name == "" {
			name = "??"
		}
		if f.File != "" {
			pos = fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		fmt.Fprintf(&b, "%s\n%s\n", name, pos)
	}
	return b.String()
}

// addr2line runs binutils' addr2line over addrs and splits its output per
// address (a sentinel address 0 separates them).
func addr2line(t *testing.T, bin string, addrs []uint64, names bool) []string {
	t.Helper()
	args := []string{"-i", "-f", "-C", "-e", bin}
	for _, a := range addrs {
		args = append(args, fmt.Sprintf("0x%x", a), "0")
	}
	out, err := exec.Command("addr2line", args...).Output()
	if err != nil {
		t.Fatalf("addr2line: %v", err)
	}
	var res []string
	var cur strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name := sc.Text()
		sc.Scan()
		pos := sc.Text()
		if name == "??" && pos == "??:0" { // the separator
			res = append(res, cur.String())
			cur.Reset()
			continue
		}
		if !names {
			name = "-"
		}
		if i := strings.LastIndexByte(pos, ':'); i > 0 {
			pos = filepath.Clean(pos[:i]) + pos[i:]
		}
		if i := strings.Index(pos, " (discriminator"); i > 0 {
			pos = pos[:i]
		}
		fmt.Fprintf(&cur, "%s\n%s\n", name, pos)
	}
	if len(res) != len(addrs) {
		t.Fatalf("addr2line gave %d answers for %d addresses", len(res), len(addrs))
	}
	return res
}

// lineTableAddrs lists the distinct addresses of bin's line tables that
// fall inside a function symbol.
func lineTableAddrs(t *testing.T, bin string) []uint64 {
	t.Helper()
	o, err := objfile.LoadObject(bin, "")
	if err != nil {
		t.Fatal(err)
	}
	return debugLineAddrs(t, o, bin, 1)
}

// DWARF past its budget is not read: frames keep their symbol names,
// without lines, and one warning names the file and the budget.
func TestDWARFPastBudget(t *testing.T) {
	bin := maptest.Fixture(t, "inline")
	o, err := objfile.LoadObject(bin, "")
	if err != nil {
		t.Fatal(err)
	}
	old := safeelf.MaxDWARF
	safeelf.MaxDWARF = 16
	defer func() { safeelf.MaxDWARF = old }()
	var warn bytes.Buffer
	sym := New(Config{Warn: &warn})
	va := o.Funcs[len(o.Funcs)/2].Addr
	for range 2 {
		fs, err := sym.ObjectFrames(bin, []uint64{va})
		if err != nil {
			t.Fatal(err)
		}
		if f := fs[len(fs)-1]; f.Name == "" || f.Line != 0 {
			t.Errorf("frame %+v, want a symbol name and no line", f)
		}
	}
	if w := warn.String(); strings.Count(w, "DWARF of") != 1 || !strings.Contains(w, "past its budget") || !strings.Contains(w, bin) {
		t.Errorf("warnings %q, want one naming %s and the budget", w, bin)
	}
}
