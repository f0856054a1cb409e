package bpf

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/unwind"
)

// fileKeys lists the keys file_tables holds.
func fileKeys(t *testing.T, s *Session) []probeeFileKey {
	t.Helper()
	var keys []probeeFileKey
	var prev any
	for {
		var k probeeFileKey
		err := s.objs.FileTables.NextKey(prev, &k)
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			return keys
		}
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
		prev = &k
	}
}

// listsWritten reads element MAPS_GEN_USER of maps_gen.
func listsWritten(t *testing.T, s *Session) uint64 {
	t.Helper()
	var n uint64
	if err := s.objs.MapsGen.Lookup(uint32(probeeMapsGenIndexMAPS_GEN_USER), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The files forgotten lose their file_tables entries at once, and their
// tables once no mapping list refers to them (here: once the kernel
// deleted the list, as at an exit); the range a table leaves is reused
// only after its grace, by a table with a placement tag of its own, and
// the ranges left at the storage's end lower it. With every file
// forgotten, file_tables is empty and the storage holds no table.
func TestTablesReleased(t *testing.T) {
	s := tableSession(t, 1<<20)
	s.findVMA, s.files, s.keys = true, map[probeeFileKey]probeeFileTable{}, map[probeeFileKey]probeeFileKey{}
	now := time.Unix(1000, 0)
	s.tables.now = func() time.Time { return now }
	file := func(ino uint64) procmaps.FileKey { return procmaps.FileKey{Dev: "fd:01", Ino: ino} }
	mod := func(start, ino uint64, key string, big bool) unwind.Module {
		tbl := testTable(big)
		tbl.Key = key
		m := module(start, "/lib/"+key, tbl)
		m.Dev, m.Inode = "fd:01", ino
		return m
	}
	forget := func(files ...procmaps.FileKey) {
		t.Helper()
		if err := s.ForgetFiles(files); err != nil {
			t.Fatal(err)
		}
	}
	exit := func(pids ...uint32) { // what the kernel does at an exit
		for _, pid := range pids {
			if err := s.objs.ProcMaps.Delete(pid); err != nil {
				t.Fatal(err)
			}
		}
	}
	stats := func(step string, tables, released, free int) {
		t.Helper()
		st := s.TableStats()
		if st.Tables != tables || st.Released != released || st.Free != free || st.Bytes != int(s.tables.next)*4-free+st.Rules*unwind.RuleSize {
			t.Errorf("%s: stats %+v (storage to %d), want %d tables, %d released, %d bytes free", step, st, s.tables.next, tables, released, free)
		}
	}
	dev := uint64(0xfd<<20 | 1)
	self := os.Getpid() // a process that lives: its list stays
	if err := s.SetProcessModules(self, []unwind.Module{mod(0x5000_0000, 1, "a", false), mod(0x6000_0000, 2, "b", true)}); err != nil {
		t.Fatal(err)
	}
	if keys := fileKeys(t, s); len(keys) != 2 {
		t.Fatalf("file_tables %v, want a's and b's", keys)
	}

	// a's file is forgotten while a list refers to a: its entry goes,
	// its table stays.
	forget(file(1))
	if keys := fileKeys(t, s); !slices.Equal(keys, []probeeFileKey{{Dev: dev, Ino: 2}}) {
		t.Errorf("file_tables %v after a's file was forgotten, want b's alone", keys)
	}
	stats("a's file forgotten, its table listed", 2, 0, 0)

	// Once the list is gone, a is released (the next call looks again),
	// and the walks are told to drop the mappings they keep.
	gen := listsWritten(t, s)
	exit(uint32(self))
	forget()
	stats("the list gone", 1, 1, 7*4)
	if got := listsWritten(t, s); got != gen+1 {
		t.Errorf("maps_gen counts %d lists written, want %d: the walks keep mappings of the released table", got, gen+1)
	}

	// In its grace, a's range is not reused: c goes to the end.
	now = now.Add(tableGrace - time.Second)
	if err := s.SetProcessModules(43, []unwind.Module{mod(0x5000_0000, 3, "c", false)}); err != nil {
		t.Fatal(err)
	}
	if m := procInfo(t, s, 43).Maps[0]; m.PagesOff != 14 || m.Flags != mappingTable {
		t.Errorf("c placed in a's range in its grace: %+v", m)
	}

	// After it, d takes a's range, tagged.
	now = now.Add(time.Second)
	if err := s.SetProcessModules(44, []unwind.Module{mod(0x5000_0000, 4, "d", true)}); err != nil {
		t.Fatal(err)
	}
	d := procInfo(t, s, 44).Maps[0]
	if d.PagesOff != 0 || d.EntriesOff != 3 || d.Flags != mappingTable|1<<mappingTagShift {
		t.Errorf("d at %+v, want a's place (0, entries at 3) with tag 1", d)
	}
	want := []uint32{0, 2, 4, 0x1_0010, 0x3_0020, 0x1_0008, 0x40} // b's rules, interned
	if got := readStorage(t, s, 0, 7); !slices.Equal(got, want) {
		t.Errorf("storage %#x where a lay, want d's %#x", got, want)
	}
	var ft probeeFileTable
	if err := s.objs.FileTables.Lookup(probeeFileKey{Dev: dev, Ino: 4}, &ft); err != nil || ft.Flags != d.Flags || ft.EntriesOff != 3 {
		t.Errorf("d's file table %+v (%v), want d's place and tag", ft, err)
	}
	stats("d in a's range", 3, 1, 0)

	// Everything forgotten: no file entry left, every table released,
	// and once their grace is over the storage is empty.
	exit(43, 44)
	forget(file(2), file(3), file(4))
	if keys := fileKeys(t, s); len(keys) != 0 || len(s.files) != 0 {
		t.Errorf("file_tables %v (mirror %v) after every file was forgotten, want none", keys, s.files)
	}
	if len(s.tables.byFile) != 0 || len(s.tables.lists) != 0 || len(s.tables.orphans) != 0 || len(s.tables.binBytes) != 0 {
		t.Errorf("the store still knows of files %v, lists %v, orphans %v, binaries %v", s.tables.byFile, s.tables.lists, s.tables.orphans, s.tables.binBytes)
	}
	stats("all forgotten", 0, 4, 21*4)
	now = now.Add(tableGrace)
	forget()
	if s.tables.next != 0 {
		t.Errorf("the storage ends at %d with no table, want 0", s.tables.next)
	}
	stats("all reusable", 0, 4, 0)
}

// A table refused for want of room is tried again once a released table
// left room it fits in, and fits where that table lay: when its file was
// forgotten and is mapped again, and when its file is still known (the
// kernel side offers it again). Offered again before room freed, it is
// not reported again (wire.ErrTablesStillFull, left out of
// SetProcessModules' errors).
func TestTablesRefusedRetried(t *testing.T) {
	for _, tc := range []struct {
		name   string
		forget []procmaps.FileKey
	}{
		{"its file forgotten", []procmaps.FileKey{{Dev: "fd:01", Ino: 1}, {Dev: "fd:01", Ino: 2}}},
		{"its file still known", []procmaps.FileKey{{Dev: "fd:01", Ino: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tableSession(t, 7*4)
			now := time.Unix(1000, 0)
			s.tables.now = func() time.Time { return now }
			if err := s.SetProcessModules(1, []unwind.Module{keyedModule(1, "a")}); err != nil {
				t.Fatal(err)
			}
			if err := s.SetProcessModules(2, []unwind.Module{keyedModule(2, "b")}); !errors.Is(err, wire.ErrTablesFull) {
				t.Fatalf("b: %v, want wire.ErrTablesFull", err)
			}
			if err := s.SetProcessModules(2, []unwind.Module{keyedModule(2, "b")}); err != nil {
				t.Fatalf("b offered again, no room freed: %v, want no error (reported before)", err)
			}
			for _, pid := range []uint32{1, 2} {
				if err := s.objs.ProcMaps.Delete(pid); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.ForgetFiles(tc.forget); err != nil {
				t.Fatal(err)
			}
			now = now.Add(tableGrace)
			if err := s.SetProcessModules(3, []unwind.Module{keyedModule(2, "b")}); err != nil {
				t.Fatalf("b mapped again, a released: %v", err)
			}
			if m := procInfo(t, s, 3).Maps[0]; m.Flags&mappingTable == 0 || m.PagesOff != 0 {
				t.Errorf("b at %+v, want loaded where a lay", m)
			}
		})
	}
}

// A table placed where a released one lay in a shard the storage's end
// has passed (no longer held open) is written through the storage's own
// reference to the shard, and the search finds its rules there.
func TestTablesReusedShard(t *testing.T) {
	s := tableSession(t, 4<<20)
	now := time.Unix(1000, 0)
	s.tables.now = func() time.Time { return now }
	paged := func(n, perPage int) *unwind.Table {
		counts := make([]int, n)
		for i := range counts {
			counts[i] = perPage
		}
		return pagedTable(counts)
	}
	mods := []unwind.Module{module(0x5000_0000, "/lib/a", paged(60, 500)), module(0x6000_0000, "/lib/b", bigTable(shardU32s))}
	mods[0].Dev, mods[0].Inode = "fd:01", 1
	if err := s.SetProcessModules(1, mods); err != nil {
		t.Fatal(err)
	}
	if _, open := s.tables.open[0]; open || s.tables.next <= shardU32s {
		t.Fatalf("storage to %d, shard 0 open %v: want b past shard 0, shard 0 passed", s.tables.next, open)
	}
	if err := s.SetProcessModules(1, mods[1:]); err != nil { // a unmapped
		t.Fatal(err)
	}
	if err := s.ForgetFiles([]procmaps.FileKey{{Dev: "fd:01", Ino: 1}}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(tableGrace)
	c := paged(80, 300)
	if err := s.SetProcessModules(2, []unwind.Module{module(0x5000_0000, "/lib/c", c)}); err != nil {
		t.Fatal(err)
	}
	m := procInfo(t, s, 2).Maps[0]
	if m.PagesOff != 0 {
		t.Fatalf("c at %+v, want where a lay", m)
	}
	loc := tableLoc{pagesOff: m.PagesOff, npages: m.Npages, entriesOff: m.EntriesOff}
	checkSearch(t, sliceStorage(readStorage(t, s, 0, s.tables.next)), loc, c, s.tables.rules.Rules)
}

// A list written after its process exited (the kernel deleted the list
// at the exit, user space wrote it again) does not keep the tables it
// refers to: it is deleted once their files are forgotten. A live
// process's list keeps its tables.
func TestTablesStaleList(t *testing.T) {
	s := tableSession(t, 1<<20)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead, self := gone.Process.Pid, os.Getpid()
	if err := s.SetProcessModules(dead, []unwind.Module{keyedModule(1, "a")}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetProcessModules(self, []unwind.Module{keyedModule(2, "b")}); err != nil {
		t.Fatal(err)
	}
	if err := s.ForgetFiles([]procmaps.FileKey{{Dev: "fd:01", Ino: 1}, {Dev: "fd:01", Ino: 2}}); err != nil {
		t.Fatal(err)
	}
	var info probeeProcInfo
	if err := s.objs.ProcMaps.Lookup(uint32(dead), &info); !errors.Is(err, ebpf.ErrKeyNotExist) {
		t.Errorf("the list of pid %d, gone: %v, want it deleted", dead, err)
	}
	procInfo(t, s, uint32(self))
	if st := s.TableStats(); st.Released != 1 || s.tables.loaded["a"] != nil || s.tables.loaded["b"] == nil {
		t.Errorf("stats %+v: want a released, b kept", st)
	}
	// Listed no more, b goes; then a list the kernel deleted is
	// forgotten at the next call, with no table to release.
	if err := s.SetProcessModules(self, []unwind.Module{keyedModule(3, "c")}); err != nil {
		t.Fatal(err)
	}
	if err := s.ForgetFiles(nil); err != nil {
		t.Fatal(err)
	}
	if err := s.objs.ProcMaps.Delete(uint32(self)); err != nil {
		t.Fatal(err)
	}
	if err := s.ForgetFiles(nil); err != nil {
		t.Fatal(err)
	}
	if st := s.TableStats(); st.Released != 2 || len(s.tables.orphans) != 0 {
		t.Errorf("stats %+v, orphans %v: want b released", st, s.tables.orphans)
	}
	if len(s.tables.lists) != 0 {
		t.Errorf("lists %v recorded, want none: the kernel deleted them", s.tables.lists)
	}
}

// keyedModule is a module of /lib/KEY (file fd:01/ino) with a table of
// its own, keyed KEY.
func keyedModule(ino uint64, key string) unwind.Module {
	tbl := testTable(false)
	tbl.Key = key
	m := module(0x5000_0000, "/lib/"+key, tbl)
	m.Dev, m.Inode = "fd:01", ino
	return m
}
