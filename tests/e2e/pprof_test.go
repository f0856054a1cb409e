package e2e

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/probee/probee/internal/testgate"
)

// readPprof parses a written profile back.
func readPprof(t *testing.T, path string) *profile.Profile {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	p, err := profile.Parse(fh)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return p
}

// pprofStacks renders each sample as its collapsed line would be (probe
// label; comm; frames root..leaf, inlined lines marked) -> summed count.
func pprofStacks(p *profile.Profile) map[string]uint64 {
	m := map[string]uint64{}
	for _, s := range p.Sample {
		parts := []string{s.Label["probe"][0], s.Label["comm"][0]}
		for i := len(s.Location) - 1; i >= 0; i-- {
			loc := s.Location[i]
			kernel := loc.Mapping != nil && strings.HasPrefix(loc.Mapping.File, "[kernel")
			for j := len(loc.Line) - 1; j >= 0; j-- { // outermost first
				name := loc.Line[j].Function.Name
				if j < len(loc.Line)-1 {
					name += " (inlined)"
				}
				if kernel {
					name += "_[k]"
				}
				parts = append(parts, name)
			}
		}
		m[strings.Join(parts, ";")] += uint64(s.Value[0])
	}
	return m
}

// One run writes pprof and folded: same totals, same stacks, and go tool
// pprof reads the profile (-top and -traces) with the same total.
func TestPprofRoundTrip(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-fp")
	dir := t.TempDir()
	pb, fold := filepath.Join(dir, "x.pb.gz"), filepath.Join(dir, "x.folded")
	r := run(t, dir, "--uprobe", bin+":leaf", "--uprobe", bin+":regex:^foo_",
		"-o", pb, "-o", fold, "--", bin, "700")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	b, err := os.ReadFile(fold)
	if err != nil {
		t.Fatal(err)
	}
	want := folded(t, string(b))
	p := readPprof(t, pb)
	if len(p.SampleType) != 1 || p.SampleType[0].Type != "hits" || p.SampleType[0].Unit != "count" {
		t.Errorf("sample types %v, want hits/count", p.SampleType)
	}
	got := pprofStacks(p)
	if total(got) != total(want) || total(want) != 700*3 {
		t.Errorf("pprof total %d, folded total %d, want %d", total(got), total(want), 700*3)
	}
	for s, n := range want {
		if got[s] != n {
			t.Errorf("folded stack %q: %d in folded, %d in pprof", s, n, got[s])
		}
	}
	for s := range got {
		if _, ok := want[s]; !ok {
			t.Errorf("pprof stack %q missing from folded", s)
		}
	}
	for _, m := range p.Mapping {
		if m.File == bin && m.BuildID == "" {
			t.Errorf("mapping of %s has no build-id", bin)
		}
	}
	checkGoToolPprof(t, pb, total(want))
}

var pprofTotal = regexp.MustCompile(`of (\d+) total`)

// checkGoToolPprof runs go tool pprof -top and -traces on path.
func checkGoToolPprof(t *testing.T, path string, want uint64) {
	t.Helper()
	for _, mode := range []string{"-top", "-traces"} {
		out, err := exec.Command("go", "tool", "pprof", mode, path).CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof %s: %v\n%s", mode, err, out)
		}
		if mode != "-top" {
			continue
		}
		m := pprofTotal.FindSubmatch(out)
		if m == nil {
			t.Fatalf("go tool pprof -top printed no total:\n%s", out)
		}
		if n, _ := strconv.ParseUint(string(m[1]), 10, 64); n != want {
			t.Errorf("go tool pprof -top total %d, want %d:\n%s", n, want, out)
		}
	}
}

// Inline frames: hot_add is inlined into caller_one and caller_two; a probe
// on its line shows it under both, with the callers' call-site lines; with
// --no-inline the frames are gone; pprof carries them as inline lines.
func TestInlineFramesLines(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "inline")
	hot := srcLine(t, "inline.c", "/* HOT_ADD_LINE */")
	calls := map[string]int{
		"caller_one": srcLine(t, "inline.c", "hot_add(x, 1)"),
		"caller_two": srcLine(t, "inline.c", "hot_add(x, 2)"),
	}
	spec := bin + ":inline.c:" + strconv.Itoa(hot)
	dir := t.TempDir()
	pb := filepath.Join(dir, "x.pb.gz")
	r := run(t, dir, "--uprobe", spec, "--lines", "-o", pb, "-o", filepath.Join(dir, "x.folded"), "--", bin, "300")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "x.folded"))
	stacks := folded(t, string(b))
	for caller, line := range calls {
		re := regexp.MustCompile(regexp.QuoteMeta(caller) + `:[^;]*inline\.c:` + strconv.Itoa(line) +
			`;hot_add \(inlined\):[^;]*inline\.c:` + strconv.Itoa(hot) + `$`)
		var n uint64
		for s, c := range stacks {
			if re.MatchString(s) {
				n += c
			}
		}
		if n != 300 {
			t.Errorf("%d hits match %s, want 300 in:\n%s", n, re, b)
		}
	}
	checkInlineLocations(t, readPprof(t, pb), hot, calls)

	r = run(t, "", "--uprobe", spec, "--no-inline", "--", bin, "10")
	if strings.Contains(r.stdout, "(inlined)") || total(folded(t, r.stdout)) != 20 {
		t.Errorf("--no-inline output:\n%s", r.stdout)
	}
}

// checkInlineLocations wants a Location per caller whose lines are
// hot_add:hot (innermost) then caller:call.
func checkInlineLocations(t *testing.T, p *profile.Profile, hot int, calls map[string]int) {
	t.Helper()
	found := map[string]bool{}
	for _, loc := range p.Location {
		if len(loc.Line) != 2 || loc.Line[0].Function.Name != "hot_add" || loc.Line[0].Line != int64(hot) {
			continue
		}
		outer := loc.Line[1]
		if line, ok := calls[outer.Function.Name]; ok && outer.Line == int64(line) &&
			strings.HasSuffix(outer.Function.Filename, "inline.c") {
			found[outer.Function.Name] = true
		}
	}
	if len(found) != 2 {
		t.Errorf("pprof inline locations found for %v, want caller_one and caller_two", found)
	}
}

// srcLine returns the line of a fixture source holding marker.
func srcLine(t *testing.T, file, marker string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "fixtures", "src", file))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("%s: no line holds %q", file, marker)
	return 0
}

// Two processes of one PIE program (loaded at different addresses) share
// their frames: the leaf's pprof Location is one, at the leaf's address in
// the ELF file (its symbol's value: the uprobe is at its entry), under one
// mapping of the program, with a sample per process (pid label).
func TestPprofProcessesShareLocations(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-fp")
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := ef.Symbols()
	ef.Close()
	if err != nil {
		t.Fatal(err)
	}
	var leaf uint64
	for _, s := range syms {
		if s.Name == "leaf" {
			leaf = s.Value
		}
	}
	dir := t.TempDir()
	pb := filepath.Join(dir, "x.pb.gz")
	r := run(t, dir, "--uprobe", bin+":leaf", "-o", pb, "--", "sh", "-c", `"$0" 30 & "$0" 40; wait`, bin)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	p := readPprof(t, pb)
	pids, locs, maps := map[int64]int64{}, map[uint64]bool{}, map[uint64]bool{}
	for _, s := range p.Sample {
		if len(s.NumLabel["pid"]) == 1 {
			pids[s.NumLabel["pid"][0]] += s.Value[0]
		}
		locs[s.Location[0].ID] = true
		if m := s.Location[0].Mapping; m != nil && m.File == bin {
			maps[m.ID] = true
		}
		if a := s.Location[0].Address; a != leaf {
			t.Errorf("leaf location at %#x, want %#x (leaf's address in %s)", a, leaf, bin)
		}
	}
	if len(pids) != 2 || len(locs) != 1 || len(maps) != 1 {
		t.Errorf("hits per pid %v, %d leaf locations, %d mappings of %s; want 2 pids, 1 location, 1 mapping",
			pids, len(locs), len(maps), bin)
	}
}
