package symbolize

import (
	"debug/dwarf"
	"debug/elf"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/probee/probee/objfile"
)

const libcPath = "/lib/x86_64-linux-gnu/libc.so.6"

// libcDebug returns libc's object when its separate debug file (libc6-dbg)
// is installed, else skips.
func libcDebug(tb testing.TB) *objfile.Object {
	tb.Helper()
	o, err := objfile.LoadObject(libcPath, objfile.DefaultDebugDir)
	if err != nil || o.DebugFile == "" {
		tb.Skip("libc with a separate debug file is needed: apt-get install libc6-dbg")
	}
	return o
}

// debugLineAddrs returns every step-th address of the line tables of the
// ELF file at path that lies inside one of o's functions.
func debugLineAddrs(tb testing.TB, o *objfile.Object, path string, step int) []uint64 {
	tb.Helper()
	f, err := elf.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		tb.Fatal(err)
	}
	var out []uint64
	r := d.Reader()
	n := 0
	for {
		cu, err := r.Next()
		if err != nil || cu == nil {
			break
		}
		r.SkipChildren()
		lr, err := d.LineReader(cu)
		if err != nil || lr == nil {
			continue
		}
		var e dwarf.LineEntry
		for lr.Next(&e) == nil {
			if n++; n%step == 0 && !e.EndSequence && o.FuncAt(e.Address) >= 0 {
				out = append(out, e.Address)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// libc with libc6-dbg against addr2line, on a sample of its line table:
// the number of frames (inline expansion) and every line must agree. File
// names are only counted: binutils 2.40 maps DWARF 5 file 1 to entry 0 and
// joins glibc's relative unit directory twice ("libio/libio/iogets.c"),
// where readelf --debug-dump=decodedline agrees with us.
func TestAddr2lineOracleLibc(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	o := libcDebug(t)
	addrs := debugLineAddrs(t, o, o.DebugFile, 97)
	want := addr2line(t, libcPath, addrs, false)
	sym := New(Config{})
	bad, files := 0, 0
	for i, a := range addrs {
		fs, _ := sym.ObjectFrames(libcPath, []uint64{a})
		got := oracleText(fs, false)
		if g, w := linesOnly(got), linesOnly(want[i]); g != w {
			if bad++; bad <= 5 {
				t.Errorf("0x%x:\n got %q\nwant %q", a, got, want[i])
			}
		} else if got != want[i] {
			files++
		}
	}
	t.Logf("%d libc addresses compared, %d differ, %d only in file names", len(addrs), bad, files)
}

// linesOnly keeps the line numbers of oracleText output.
func linesOnly(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if i := strings.LastIndexByte(l, ':'); i >= 0 {
			out = append(out, l[i+1:])
		}
	}
	return strings.Join(out, ",")
}

// BenchmarkDWARFFrameLibc measures symbolizing a libc address with DWARF
// lines and inline frames: cold (fresh symbolizer: ELF symbols, debug
// file, DWARF sections, unit index and the unit's tables) and per new
// address once loaded.
func BenchmarkDWARFFrameLibc(b *testing.B) {
	o := libcDebug(b)
	addrs := debugLineAddrs(b, o, o.DebugFile, 13)
	if _, err := os.Stat(libcPath); err != nil {
		b.Skip(err)
	}
	start := time.Now()
	sym := New(Config{})
	sym.ObjectFrames(libcPath, addrs[:1])
	cold := time.Since(start)
	// Uncached: a new address (units loaded as the addresses reach them).
	start = time.Now()
	for _, a := range addrs {
		sym.ObjectFrames(libcPath, []uint64{a})
	}
	first := time.Since(start)
	i := 0
	for b.Loop() { // cached: an address seen before
		sym.ObjectFrames(libcPath, addrs[i%len(addrs):i%len(addrs)+1])
		i++
	}
	b.ReportMetric(float64(cold.Microseconds())/1000, "cold-ms")
	b.ReportMetric(float64(first.Nanoseconds())/float64(len(addrs)), "ns/first-lookup")
	b.ReportMetric(float64(len(addrs)), "addrs")
}
