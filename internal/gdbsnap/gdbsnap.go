// Package gdbsnap stops a program under gdb at a breakpoint and saves what a
// user-space unwinder needs: registers, /proc/PID/maps, the stack from rsp to
// the top of its mapping, and gdb's own backtrace. It serves the tests that
// hold unwinders to gdb: unwind's reference unwinder and probee's BPF one.
// It does not import unwind, so unwind's in-package tests can use it.
package gdbsnap

import (
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// script is run by gdb -batch; OUTDIR and BREAK are replaced (JSON-quoted).
const script = `
import gdb, json
out = OUTDIR
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set breakpoint pending on")
try:
    gdb.execute("set debuginfod enabled off")
except gdb.error:
    pass
gdb.execute("break " + BREAK)
gdb.execute("run")
bt = gdb.execute("bt", to_string=True)
inf = gdb.selected_inferior()
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

// Take runs bin with args under gdb until it reaches breakAt (a function
// name) and returns the snapshot. It fails t when gdb or the snapshot fails.
func Take(t testing.TB, bin, breakAt string, args ...string) *Snapshot {
	t.Helper()
	bin = testgate.PrivateFixture(t, bin) // see there: uprobes take gdb's traps
	dir := t.TempDir()
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	py := filepath.Join(dir, "snap.py")
	if err := os.WriteFile(py, []byte(strings.NewReplacer("OUTDIR", q(dir), "BREAK", q(breakAt)).Replace(script)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("gdb", append([]string{"-nx", "-batch", "-x", py, "--args", bin}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
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
	if err != nil {
		t.Fatalf("gdb left no snapshot (its script failed; gdb said:)\n%s\n%v", out, err)
	}
	stack, err := os.ReadFile(filepath.Join(dir, "stack.bin"))
	if err != nil {
		t.Fatalf("gdb left no stack: %v", err)
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
