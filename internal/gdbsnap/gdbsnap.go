// Package gdbsnap stops a program under gdb at a breakpoint and saves what a
// user-space unwinder needs: registers, /proc/PID/maps, the stack from rsp to
// the top of its mapping, and gdb's own backtrace. It serves the tests that
// hold unwinders to gdb: unwind's reference unwinder and probee's BPF one.
// It does not import unwind, so unwind's in-package tests can use it.
package gdbsnap

import (
	"context"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/probee/probee/internal/testgate"
)

// script is run by gdb -batch; OUTDIR and BREAK are replaced (JSON-quoted).
// gdb learns of shared libraries at a breakpoint on ld.so's _dl_debug_state,
// but a uprobe there takes that trap (uprobes attach by inode: probee's ld.so
// gate, put on the system's ld.so by any concurrent probee run, is one), and
// a breakpoint pending on a library function then never resolves: the
// program runs to its end. So the script stops at main, where ld.so has
// mapped the start-up libraries, and makes gdb read their list from the
// process ("sharedlibrary") before it sets the breakpoint.
const script = `
import gdb, json
out = OUTDIR
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set breakpoint pending off") # the libraries are read at main
try:
    gdb.execute("set debuginfod enabled off")
except gdb.error:
    pass
gdb.execute("tbreak main")
gdb.execute("run")
inf = gdb.selected_inferior()
if inf.pid == 0:
    raise gdb.GdbError("the program exited before main")
gdb.execute("sharedlibrary")
if BREAK != "main":
    gdb.execute("break " + BREAK)
    gdb.execute("continue")
if inf.pid == 0:
    raise gdb.GdbError("the program exited without reaching " + BREAK)
if gdb.selected_frame().name() != BREAK:
    raise gdb.GdbError("stopped in %s, not %s" % (gdb.selected_frame().name(), BREAK))
bt = gdb.execute("bt", to_string=True)
maps = open("/proc/%d/maps" % inf.pid).read()
regs = {r: int(gdb.parse_and_eval("(unsigned long)$" + r)) for r in ("rip", "rsp", "rbp")}
end = 0
for line in maps.splitlines():
    lo, hi = [int(x, 16) for x in line.split()[0].split("-")]
    if lo <= regs["rsp"] < hi:
        end = hi
open(out + "/stack.bin", "wb").write(bytes(inf.read_memory(regs["rsp"], end - regs["rsp"])))
json.dump({"regs": regs, "bt": bt, "maps": maps}, open(out + "/state.json", "w"))
gdb.execute("kill")
`

// Snapshot is the state of a program stopped at a breakpoint.
type Snapshot struct {
	RIP, RSP, RBP uint64
	Backtrace     string // gdb's "bt" output
	Maps          string // /proc/PID/maps at the stop
	Stack         []byte // memory from RSP to the end of its mapping
}

// gdbTimeout bounds one gdb run (well under a second when idle), so that a
// hung gdb fails the test with its output rather than the package timing out.
const gdbTimeout = 2 * time.Minute

// Take runs a private copy of bin (and of the libraries next to it) with
// args under gdb until it reaches breakAt, a function called after main
// starts, and returns the snapshot. It fails t, with gdb's output, when gdb
// or the snapshot fails.
func Take(t testing.TB, bin, breakAt string, args ...string) *Snapshot {
	t.Helper()
	orig, _ := filepath.Abs(bin)
	bin = testgate.PrivateFixture(t, bin) // see there: uprobes take gdb's traps
	dir := t.TempDir()
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	py := filepath.Join(dir, "snap.py")
	if err := os.WriteFile(py, []byte(strings.NewReplacer("OUTDIR", q(dir), "BREAK", q(breakAt)).Replace(script)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), gdbTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "gdb", append([]string{"-nx", "-batch", "-x", py, "--args", bin}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v (timeout %v)\n%s", err, gdbTimeout, out)
	}
	var st struct {
		Regs map[string]uint64
		BT   string
		Maps string
	}
	data, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err == nil {
		err = json.Unmarshal(data, &st)
	}
	if err != nil { // gdb -batch exits 0 after a Python error
		t.Fatalf("gdb left no snapshot: %v; gdb's output:\n%s", err, out)
	}
	stack, err := os.ReadFile(filepath.Join(dir, "stack.bin"))
	if err != nil {
		t.Fatalf("gdb left no stack: %v; gdb's output:\n%s", err, out)
	}
	if shared := filepath.Dir(orig) + "/"; strings.Contains(st.Maps, shared) {
		t.Fatalf("gdb's process mapped files of %s, not only the private copies (uprobes on them take gdb's traps):\n%s", shared, st.Maps)
	}
	return &Snapshot{RIP: st.Regs["rip"], RSP: st.Regs["rsp"], RBP: st.Regs["rbp"],
		Backtrace: st.BT, Maps: st.Maps, Stack: stack}
}

var reFrame = regexp.MustCompile(`(?m)^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) \(`)

// Frames returns the function names of the backtrace, innermost first.
func (s *Snapshot) Frames() []string {
	var out []string
	for _, m := range reFrame.FindAllStringSubmatch(s.Backtrace, -1) {
		out = append(out, m[1])
	}
	return out
}

// Symbols names addresses with ELF symbol tables (.symtab and .dynsym),
// reading each file once.
type Symbols struct{ byPath map[string][]elf.Symbol }

// FuncName returns the function of path containing the ELF virtual address
// vaddr (callers pass pc-1 for return addresses), or base(path)+"+?".
func (s *Symbols) FuncName(t testing.TB, path string, vaddr uint64) string {
	t.Helper()
	if s.byPath == nil {
		s.byPath = map[string][]elf.Symbol{}
	}
	syms, ok := s.byPath[path]
	if !ok {
		ef, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		syms, _ = ef.Symbols()
		dyn, _ := ef.DynamicSymbols()
		syms = append(syms, dyn...)
		ef.Close()
		s.byPath[path] = syms
	}
	for _, sym := range syms {
		if elf.ST_TYPE(sym.Info) == elf.STT_FUNC && vaddr >= sym.Value && vaddr < sym.Value+sym.Size {
			return sym.Name
		}
	}
	return filepath.Base(path) + "+?"
}
