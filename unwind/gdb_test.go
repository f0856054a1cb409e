package unwind

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

// gdbScript stops the fixture at a breakpoint and saves gdb's backtrace, the
// registers, /proc/PID/maps and the stack from rsp to the top of its mapping.
const gdbScript = `
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
open(out + "/maps", "w").write(maps)
json.dump({"regs": regs, "bt": bt}, open(out + "/state.json", "w"))
gdb.execute("kill")
`

type gdbSnapshot struct {
	regs  Regs
	bt    []string // function names, innermost first, up to main
	maps  []Mapping
	stack StackCopy
}

func runGDB(t *testing.T, bin, brk string, args ...string) *gdbSnapshot {
	dir := t.TempDir()
	script := strings.NewReplacer("OUTDIR", pyQuote(dir), "BREAK", pyQuote(brk)).Replace(gdbScript)
	sp := filepath.Join(dir, "snap.py")
	if err := os.WriteFile(sp, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("gdb", append([]string{"-nx", "-batch", "-x", sp, "--args", bin}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	var st struct {
		Regs map[string]uint64
		BT   string
	}
	readJSON(t, filepath.Join(dir, "state.json"), &st)
	snap := &gdbSnapshot{regs: Regs{RIP: st.Regs["rip"], RSP: st.Regs["rsp"], RBP: st.Regs["rbp"]}, bt: gdbFrames(st.BT)}
	f, err := os.Open(filepath.Join(dir, "maps"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if snap.maps, err = ParseMaps(f); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "stack.bin"))
	if err != nil {
		t.Fatal(err)
	}
	snap.stack = StackCopy{Addr: snap.regs.RSP, Data: data}
	t.Logf("gdb bt:\n%s", st.BT)
	return snap
}

func pyQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func readJSON(t *testing.T, path string, v any) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("gdb left no snapshot: %v", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

var reGDBFrame = regexp.MustCompile(`(?m)^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) \(`)

func gdbFrames(bt string) []string {
	var out []string
	for _, m := range reGDBFrame.FindAllStringSubmatch(bt, -1) {
		out = append(out, m[1])
	}
	return out
}

// symbolizer names pcs with the modules' ELF symbol tables.
type symbolizer struct{ syms map[string][]elf.Symbol }

func (s *symbolizer) name(t *testing.T, mods []Module, f Frame) string {
	if f.Module < 0 {
		return "?"
	}
	m := &mods[f.Module]
	if s.syms == nil {
		s.syms = map[string][]elf.Symbol{}
	}
	syms, ok := s.syms[m.Path]
	if !ok {
		ef, err := elf.Open(m.Path)
		if err != nil {
			t.Fatal(err)
		}
		syms, _ = ef.Symbols()
		dyn, _ := ef.DynamicSymbols()
		syms = append(syms, dyn...)
		ef.Close()
		s.syms[m.Path] = syms
	}
	pc := f.PC - m.Bias
	if !f.Exact {
		pc--
	}
	for _, sym := range syms {
		if elf.ST_TYPE(sym.Info) == elf.STT_FUNC && pc >= sym.Value && pc < sym.Value+sym.Size {
			return sym.Name
		}
	}
	return filepath.Base(m.Path) + "+?"
}

func TestUnwindMatchesGDB(t *testing.T) {
	testgate.Root(t)
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb not installed: run tests/install-deps.sh")
	}
	tests := []struct {
		bin, brk string
		args     []string
	}{
		{"chain-nofp", "leaf", []string{"1"}},
		{"chain-nopie-nofp", "leaf", []string{"1"}},
		{"recurse-nofp", "leaf", []string{"20", "1"}},
		{"uselib-nofp", "fx_leaf", []string{"1"}},
	}
	for _, tt := range tests {
		t.Run(tt.bin, func(t *testing.T) {
			bin := testgate.Fixture(t, filepath.Join(fixtureDir, tt.bin))
			abs, _ := filepath.Abs(bin)
			snap := runGDB(t, abs, tt.brk, tt.args...)
			checkAgainstGDB(t, snap)
		})
	}
}

func checkAgainstGDB(t *testing.T, snap *gdbSnapshot) {
	mods, errs := NewCache().Modules(snap.maps, "")
	for _, err := range errs {
		t.Logf("module: %v", err)
	}
	frames, stop := Unwind(snap.regs, snap.stack, mods, 512)
	var sym symbolizer
	var names []string
	for _, f := range frames {
		names = append(names, sym.name(t, mods, f))
	}
	t.Logf("ours (%s): %s", stop, strings.Join(names, " <- "))
	if stop != StopEndOfStack {
		t.Errorf("unwind stopped with %q, want the end of the stack", stop)
	}
	got := names
	for i, n := range names {
		if n == "main" {
			got = names[:i+1]
			break
		}
	}
	if strings.Join(got, ",") != strings.Join(snap.bt, ",") {
		t.Errorf("frames differ from gdb:\n ours %v\n gdb  %v", got, snap.bt)
	}
}
