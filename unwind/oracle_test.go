package unwind

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

const fixtureDir = "../tests/fixtures/bin"

// systemLib finds a shared library of the machine in the usual directories.
func systemLib(name string) string {
	for _, dir := range []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// largeBinary is gdb when installed, else the largest file in /usr/bin.
func largeBinary() string {
	if p, err := exec.LookPath("gdb"); err == nil {
		return p
	}
	ents, _ := os.ReadDir("/usr/bin")
	best, size := "", int64(0)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && fi.Size() > size {
			best, size = filepath.Join("/usr/bin", e.Name()), fi.Size()
		}
	}
	return best
}

type oracleCase struct {
	name, path string
	fixture    bool
}

func oracleCases() []oracleCase {
	cases := []oracleCase{
		{"libc", systemLib("libc.so.6"), false},
		{"ld-linux", systemLib("ld-linux-x86-64.so.2"), false},
		{"libstdc++", systemLib("libstdc++.so.6"), false},
		{"large", largeBinary(), false},
	}
	for _, f := range []string{"chain-fp", "chain-nofp", "chain-nopie-nofp", "libfx.so", "uselib-nofp", "cxx", "rustfx", "gofx", "recurse-nofp", "bigframe-nofp"} {
		cases = append(cases, oracleCase{f, filepath.Join(fixtureDir, f), true})
	}
	return cases
}

func TestOracleReadelf(t *testing.T) {
	if _, err := exec.LookPath("readelf"); err != nil {
		t.Skip("readelf not installed: run tests/install-deps.sh (binutils)")
	}
	for _, c := range oracleCases() {
		t.Run(c.name, func(t *testing.T) {
			if c.fixture {
				testgate.Fixture(t, c.path)
			} else if c.path == "" {
				t.Skipf("%s not found on this machine", c.name)
			}
			checkOracle(t, c.path)
		})
	}
}

type oracleCounts struct {
	fdes, rows, compared, cieOnly, mismatches int
	exp                                       map[CFAType]int
}

func checkOracle(t *testing.T, path string) {
	o, err := runReadelf(path)
	if err != nil {
		t.Fatal(err)
	}
	tables, frames := sectionTables(t, path)
	checkBoundaries(t, o, frames)
	n := oracleCounts{exp: map[CFAType]int{}}
	for _, f := range o.fdes {
		tab := tables[f.section]
		if tab == nil {
			t.Fatalf("readelf shows section %s that was not parsed", f.section)
		}
		n.fdes++
		cie := o.cies[f.section][f.cie]
		signal := cie != nil && strings.ContainsRune(cie.aug, 'S')
		rows := f.rows
		if len(rows) == 0 && cie != nil && cie.row != nil && f.end > f.start {
			rows = []oracleRow{{loc: f.start, cols: cie.row.cols}} // all-nop FDE: the CIE's row
			n.cieOnly++
		}
		for _, r := range rows {
			n.rows++
			checkRow(t, tab, f, &r, signal, &n)
		}
	}
	if n.mismatches > 0 {
		t.Errorf("%d of %d rows differ from readelf", n.mismatches, n.rows)
	}
	t.Logf("%s: %d FDEs, %d readelf rows, %d compared exactly, %d all-nop FDEs checked against their CIE, CFA-expression rows by our kind: %s",
		filepath.Base(path), n.fdes, n.rows, n.compared, n.cieOnly, expCounts(n.exp))
	for name, tab := range tables {
		s := tab.Stats
		t.Logf("%s %s: rows=%d plt=%d signal=%d end-of-stack=%d unsupported=%d overlaps=%d",
			filepath.Base(path), name, s.Rows, s.PLTRows, s.SignalRows, s.EndRows, s.Unsupported, s.Overlaps)
	}
}

func checkRow(t *testing.T, tab *Table, f *oracleFDE, r *oracleRow, signal bool, n *oracleCounts) {
	e := expect(r, signal)
	got, ok := tab.Lookup(r.loc)
	if !ok {
		got = Rule{}
	}
	if e.exp {
		n.exp[got.CFA]++
	} else {
		n.compared++
	}
	if !e.matches(got) {
		n.mismatches++
		if n.mismatches <= 20 {
			t.Errorf("%s FDE %#x pc %#x: readelf %v, want %v, got %v", f.section, f.offset, r.loc, r.cols, e.rule, got)
		}
	}
}

func expCounts(m map[CFAType]int) string {
	names := map[CFAType]string{CFAPLT: "plt", CFASignal: "signal", CFAUnsupported: "unsupported-skipped"}
	var keys []string
	for k, v := range m {
		keys = append(keys, names[k]+"="+strconv.Itoa(v))
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, " ")
}

// sectionTables builds one table per CFI section, so each section's rows
// are compared with readelf's dump of that section.
func sectionTables(t *testing.T, path string) (map[string]*Table, map[string]*CFI) {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, frames := map[string]*Table{}, map[string]*CFI{}
	for _, name := range []string{EhFrame, DebugFrame} {
		data, addr, err := frameSection(f, name, readSection)
		if err != nil {
			t.Fatal(err)
		}
		if data == nil {
			continue
		}
		fr, err := ParseCFI(name, data, bases(f, addr))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tab, err := Build(fr)
		if err != nil {
			t.Fatal(err)
		}
		if tab.Stats.BadFDEs > 0 {
			t.Errorf("%s: %d FDEs failed: %s", name, tab.Stats.BadFDEs, tab.Stats.FirstError)
		}
		out[name], frames[name] = tab, fr
	}
	return out, frames
}

// checkBoundaries checks the other direction: every row we evaluate starts
// at a location where readelf also starts a row (or at the FDE's start).
func checkBoundaries(t *testing.T, o *oracle, frames map[string]*CFI) {
	locs := map[[3]uint64]bool{} // section index, FDE offset, loc
	secIdx := map[string]uint64{EhFrame: 0, DebugFrame: 1}
	for _, f := range o.fdes {
		for _, r := range f.rows {
			locs[[3]uint64{secIdx[f.section], f.offset, r.loc}] = true
		}
	}
	bad := 0
	for name, fr := range frames {
		for i := range fr.FDEs {
			f := &fr.FDEs[i]
			rows, _ := fr.Rows(f, nil)
			for _, r := range rows {
				if r.PC != f.Start && !locs[[3]uint64{secIdx[name], uint64(f.Offset), r.PC}] {
					if bad++; bad <= 10 {
						t.Errorf("%s FDE %#x: row at %#x that readelf does not show", name, f.Offset, r.PC)
					}
				}
			}
		}
	}
}
