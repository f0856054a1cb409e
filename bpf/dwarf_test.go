package bpf

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/testgate"
	"github.com/probee/probee/unwind"
)

// runGated runs bin args under the exec gate: the process stops at _start,
// its tables are loaded, then it continues. It returns the pid.
func runGated(t *testing.T, s *Session, bin string, args ...string) int {
	t.Helper()
	return runGatedWith(t, s, nil, nil, bin, args...)
}

// runGatedWith is runGated with the modules loaded for the process passed
// through change (when set; gate counts the stops from 0: other gates the
// test attached stop it too) and the command run under wrap (a command
// and its arguments, such as taskset's).
func runGatedWith(t *testing.T, s *Session, change func(gate int, mods []unwind.Module), wrap []string, bin string, args ...string) int {
	t.Helper()
	if err := s.AttachGate(bin, fileOffset(t, bin, "_start")); err != nil {
		t.Fatal(err)
	}
	cache := unwind.NewCache()
	gated := make(chan error, 16)
	stops := 0
	handled := map[int]bool{}
	stop, err := s.Events(func(ev wire.ProcessEvent) {
		if ev.Type != wire.EventGate {
			return
		}
		mods, _, err := cache.Process(ev.TGID)
		if err != nil && handled[ev.TGID] {
			// Stopped again (the gate of an earlier run on bin fired
			// with this one's) and gone once resumed: nothing to load.
			s.Continue(ev)
			return
		}
		handled[ev.TGID] = true
		if err == nil && change != nil {
			change(stops, mods)
		}
		stops++
		if err == nil {
			err = s.SetProcessModules(ev.TGID, mods)
		}
		gated <- err
		s.Continue(ev)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	argv := append(append(wrap, "sh", "-c", `sleep 0.2; exec "$0" "$@"`, bin), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.AddPID(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(gated) == 0 {
		t.Fatal("the exec gate never fired")
	}
	for len(gated) > 0 { // each stop waited for its handler: all are here
		if err := <-gated; err != nil {
			t.Fatal(err)
		}
	}
	return cmd.Process.Pid
}

func TestDWARFChain(t *testing.T) {
	for _, tc := range []struct {
		multi, noTail bool
	}{{true, false}, {false, false}, {true, true}, {false, true}} {
		t.Run(fmt.Sprintf("multi=%v,notail=%v", tc.multi, tc.noTail), func(t *testing.T) {
			gateMulti(t, tc.multi)
			bin, _ := filepath.Abs(testgate.Fixture(t, filepath.Join(fixtures, "chain-nofp")))
			s := openSession(t, Options{FilterPIDs: true, DWARF: true, NoTailCalls: tc.noTail})
			off := fileOffset(t, bin, "leaf")
			st, err := s.AttachUprobes(context.Background(), 3, []UprobeTarget{{Path: bin, Offset: off, Entry: true, Name: "leaf"}}, 0, !tc.multi)
			if err != nil || st.Attached != 1 {
				t.Fatalf("attach: %+v %v", st, err)
			}
			checkLinkKind(t, s, st, tc.multi) // before runGated adds the gate's link
			pid := runGated(t, s, bin, "500")
			var info probeeProcInfo
			if err := s.objs.ProcMaps.Lookup(uint32(pid), &info); err == nil {
				t.Errorf("pid %d exited but its unwind mappings are still in proc_maps", pid)
			}
			checkChainStacks(t, s, 500)
		})
	}
}

// The walk's caches of table lookups (rule_cache, the walk state's rules)
// are keyed by table: chain-nofp walked first with a wrong table (every
// rule CFA = rsp+8: its stacks are cut), then with its own, on one CPU
// (the caches are per CPU), gets its own table's rules, not those the
// caches kept for the same pcs of the first.
func TestDWARFRuleCacheByTable(t *testing.T) {
	cpu0, bin, s := oneCPUChain(t)
	off := fileOffset(t, bin, "leaf")
	if st, err := s.AttachUprobes(context.Background(), 3, []UprobeTarget{{Path: bin, Offset: off, Entry: true, Name: "leaf"}}, 0, !HaveUprobeMulti()); err != nil || st.Attached != 1 {
		t.Fatalf("attach: %+v %v", st, err)
	}
	wrong := func(_ int, mods []unwind.Module) { wrongTable(mods) }
	first := runGatedWith(t, s, wrong, cpu0, bin, "200")
	second := runGatedWith(t, s, nil, cpu0, bin, "200")
	snap, err := s.Drain(4)
	if err != nil {
		t.Fatal(err)
	}
	wantCutThenComplete(t, snap, first, second)
}

// A table placed where a released one lay is walked with its own rules,
// not those the walks' caches kept for the same offsets (rules.h:
// table_tag): chain-nofp walked with a wrong table (its stacks are cut),
// the table released once the process is gone, then walked with its own
// table, placed at the wrong one's offsets, on one CPU: complete stacks.
func TestDWARFRuleCacheReusedRange(t *testing.T) {
	cpu0, bin, s := oneCPUChain(t)
	now := time.Now()
	s.tables.now = func() time.Time { return now }
	off := fileOffset(t, bin, "leaf")
	if st, err := s.AttachUprobes(context.Background(), 3, []UprobeTarget{{Path: bin, Offset: off, Entry: true, Name: "leaf"}}, 0, !HaveUprobeMulti()); err != nil || st.Attached != 1 {
		t.Fatalf("attach: %+v %v", st, err)
	}
	var file procmaps.FileKey
	var key string
	wrong := func(_ int, mods []unwind.Module) {
		for _, m := range mods {
			if filepath.Base(m.Path) == "chain-nofp" {
				file, key = procmaps.FileKey{Dev: m.Dev, Ino: m.Inode}, m.Table.Key
			}
		}
		wrongTable(mods)
	}
	first := runGatedWith(t, s, wrong, cpu0, bin, "200")
	s.tmu.Lock()
	was := s.tables.loaded[key+"-wrong"]
	s.tmu.Unlock()
	if was == nil {
		t.Fatal("the wrong table is not loaded")
	}
	if err := s.ForgetFiles([]procmaps.FileKey{file}); err != nil {
		t.Fatal(err)
	}
	if st := s.TableStats(); st.Released != 1 {
		t.Fatalf("%d tables released, want the wrong one", st.Released)
	}
	now = now.Add(tableGrace)
	second := runGatedWith(t, s, nil, cpu0, bin, "200")
	s.tmu.Lock()
	own := s.tables.loaded[key]
	s.tmu.Unlock()
	if own == nil || own.loc.entriesOff != was.loc.entriesOff || own.loc.tag == 0 {
		t.Fatalf("chain-nofp's table at %+v, want it where the wrong one lay (%+v), with a tag", own, was)
	}
	snap, err := s.Drain(4)
	if err != nil {
		t.Fatal(err)
	}
	wantCutThenComplete(t, snap, first, second)
}

// oneCPUChain is what the tests of the per-CPU walk caches share: a
// taskset command that runs a command on CPU 0 (the runs or walks
// compared must share the caches), chain-nofp, and a DWARF session.
func oneCPUChain(t *testing.T) (cpu0 []string, bin string, s *Session) {
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("taskset is missing (util-linux): the walks must share a CPU")
	}
	bin, _ = filepath.Abs(testgate.Fixture(t, filepath.Join(fixtures, "chain-nofp")))
	return []string{taskset, "-c", "0"}, bin, openSession(t, Options{FilterPIDs: true, DWARF: true})
}

// wrongTable gives chain-nofp's module in mods a table whose every rule
// is CFA = rsp+8: its walks are cut past the first frame.
func wrongTable(mods []unwind.Module) {
	for i, m := range mods {
		if filepath.Base(m.Path) != "chain-nofp" {
			continue
		}
		tab := *m.Table
		tab.Key += "-wrong" // not the file's table: placed apart from it
		tab.Rules = slices.Clone(tab.Rules)
		for k := 1; k < len(tab.Rules); k++ {
			tab.Rules[k] = unwind.Rule{CFA: unwind.CFARSP, CFAOffset: 8}
		}
		mods[i].Table = &tab
	}
}

// A walk state keeps the mappings its last walk found for the same
// process's next event only while no mapping list changed (mappings.h:
// mappings_keep). chain-nofp's list is written with a wrong table at _start,
// then with its own at a gate on foo_one, on one CPU: leaf's stack, walked
// before, is cut; foo_two's, walked after, is complete, not walked through
// the mapping the state kept from leaf's walk.
func TestDWARFListChange(t *testing.T) {
	cpu0, bin, s := oneCPUChain(t)
	for probe, fn := range map[uint32]string{3: "leaf", 4: "foo_two"} {
		tg := UprobeTarget{Path: bin, Offset: fileOffset(t, bin, fn), Entry: true, Name: fn}
		if st, err := s.AttachUprobes(context.Background(), probe, []UprobeTarget{tg}, 0, !HaveUprobeMulti()); err != nil || st.Attached != 1 {
			t.Fatalf("attach %s: %+v %v", fn, st, err)
		}
	}
	if err := s.AttachGate(bin, fileOffset(t, bin, "foo_one")); err != nil {
		t.Fatal(err)
	}
	change := func(gate int, mods []unwind.Module) {
		if gate == 0 {
			wrongTable(mods)
		}
	}
	runGatedWith(t, s, change, cpu0, bin, "1")
	snap, err := s.Drain(4)
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint32]string{}
	for _, c := range snap.Counts {
		got[c.Probe] += fmt.Sprintf("%d frames, truncated %v; ", c.User.Len(), c.UserTruncated)
		complete := c.User.Len() >= 4 && !c.UserTruncated // ... main libc_start _start
		if complete != (c.Probe == 4) {
			t.Errorf("probe %d: user stack of %d frames (truncated %v): %x", c.Probe, c.User.Len(), c.UserTruncated, c.User.PCs())
		}
	}
	if len(got) != 2 {
		t.Errorf("stacks by probe: %v; want leaf's (3) and foo_two's (4)", got)
	}
}

// checkChainStacks drains s and wants calls events of chain-nofp's leaf,
// each with a complete user stack, and no drops.
func checkChainStacks(t *testing.T, s *Session, calls uint64) {
	t.Helper()
	snap, err := s.Drain(4)
	if err != nil {
		t.Fatal(err)
	}
	var total uint64
	for _, c := range snap.Counts {
		if c.User.Len() < 7 || c.UserTruncated { // leaf c b a main libc_start _start
			t.Errorf("user stack (%d frames, truncated %v): %x", c.User.Len(), c.UserTruncated, c.User.PCs())
		}
		total += c.Count
	}
	if total != calls || len(snap.Drops) != 0 {
		t.Errorf("counted %d, drops %v; want %d, none", total, snap.Drops, calls)
	}
}

// TestDWARFChainFarTables walks chain-nofp with its tables placed past
// 4 MiB of table storage (the old fixed size), the program's table
// across a shard boundary: every stack complete.
func TestDWARFChainFarTables(t *testing.T) {
	bin, _ := filepath.Abs(testgate.Fixture(t, filepath.Join(fixtures, "chain-nofp")))
	s := openSession(t, Options{FilterPIDs: true, DWARF: true})
	s.tmu.Lock()
	_, err := s.loadTable(bigTable(80*shardU32s-4), "/filler")
	s.tmu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	off := fileOffset(t, bin, "leaf")
	if st, err := s.AttachUprobes(context.Background(), 3, []UprobeTarget{{Path: bin, Offset: off, Entry: true, Name: "leaf"}}, 0, !HaveUprobeMulti()); err != nil || st.Attached != 1 {
		t.Fatalf("attach: %+v %v", st, err)
	}
	runGated(t, s, bin, "300")
	checkChainStacks(t, s, 300)
	st := s.TableStats()
	for path, n := range st.ByBinary {
		t.Logf("%s: %d bytes", path, n)
	}
	if st.Shards < 81 {
		t.Errorf("%d shards: the process's tables are not past the filler", st.Shards)
	}
}

// wantCutThenComplete checks snap's chain-nofp stacks: 200 calls of pid
// first walked with a wrong table, all cut, and 200 of pid second walked
// with its own, all complete (leaf c b a main libc_start _start).
func wantCutThenComplete(t *testing.T, snap *Snapshot, first, second int) {
	t.Helper()
	var cut, complete uint64
	for _, c := range snap.Counts {
		ok := c.User.Len() >= 7 && !c.UserTruncated
		switch {
		case c.TGID == first && ok:
			t.Errorf("a complete stack with the wrong table (%d calls): %x", c.Count, c.User.PCs())
		case c.TGID == first:
			cut += c.Count
		case c.TGID == second && ok:
			complete += c.Count
		default:
			t.Errorf("pid %d (first %d, second %d): user stack (%d frames, truncated %v): %x",
				c.TGID, first, second, c.User.Len(), c.UserTruncated, c.User.PCs())
		}
	}
	if cut != 200 || complete != 200 {
		t.Errorf("%d cut stacks with the wrong table, %d complete with the right one; want 200 and 200", cut, complete)
	}
}
