package bpf

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/unwind"
)

// Releasing tables. The caller (proctrack's sweep) says which files no
// process it tracks maps any more (ForgetFiles): their file_tables
// entries go, and so does each of their tables once nothing in the
// kernel refers to it. What refers to a table:
//
//   - file_tables entries (s.files mirrors them): those of the forgotten
//     files are deleted first;
//   - mapping lists (proc_maps): those of processes that map the file. The
//     kernel deletes a list at the process's exit and exec; until then
//     the table stays (an orphan, looked at again at the next call). A
//     list written after its process exited is deleted here;
//   - the walks running, and the mappings the per-CPU walk states keep
//     from one walk to the next: maps_gen is raised once tables are
//     released, so that no walk starting afterwards keeps any, and the
//     range waits out its grace (freelist.go) and an RCU grace period
//     (waitWalks) before a table is written there;
//   - the walks' caches of rules, keyed by where a table lies: a table
//     placed where released ones lay has a placement tag of its own
//     (tableLoc; rules.h: table_tag), so their rules are misses.
//
// So a walk never reads a range that another table took over through a
// mapping it found: proc_maps and file_tables only ever point at tables
// in place. The rules (unwind_rules) are interned and stay for the
// session: MAX_RULES bounds them.

// ForgetFiles lets go of what the kernel side holds for files (as the
// maps show them) that no process the caller tracks maps any more:
// their file_tables entries, and their tables once no mapping list
// refers to them. A file mapped again later gets its table anew (placed
// again); one refused before (ErrTablesFull) is tried again.
func (s *Session) ForgetFiles(files []procmaps.FileKey) error {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	ts := &s.tables
	var errs []error
	if err := s.reclaim(); err != nil {
		errs = append(errs, err)
	}
	for _, f := range files {
		shown, ok := shownKey(f.Dev, f.Ino)
		if !ok {
			continue
		}
		for _, id := range ts.byFile[shown] {
			delete(ts.refused, id)
			if ts.loaded[id] != nil {
				ts.orphans[id] = true
			}
		}
		delete(ts.byFile, shown)
		key, ok := s.keys[shown]
		if !ok {
			key = shown
		}
		if _, known := s.files[key]; known {
			if err := s.objs.FileTables.Delete(key); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
				errs = append(errs, fmt.Errorf("forget the unwind table of file %s %d: %w", f.Dev, f.Ino, err))
				continue // it still refers to its table
			}
			delete(s.files, key)
		}
		delete(s.keys, shown)
	}
	if err := s.releaseOrphans(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// releaseOrphans releases the orphans nothing refers to any more, and
// forgets the lists the kernel deleted.
func (s *Session) releaseOrphans() error {
	ts := &s.tables
	if len(ts.orphans) == 0 && len(ts.lists) == 0 {
		return nil
	}
	live, err := s.liveLists()
	if err != nil {
		return err // every list may still be there: nothing is released
	}
	var errs []error
	stale := false
	for pid, ids := range ts.lists {
		if !live[pid] {
			delete(ts.lists, pid)
			continue
		}
		if !slices.ContainsFunc(ids, func(id any) bool { return ts.orphans[id] }) || unix.Kill(int(pid), 0) != unix.ESRCH {
			continue
		}
		// The list of a process gone, written after its exit (which
		// deletes the list): it would only mislead a process given the
		// pid later.
		if err := s.objs.ProcMaps.Delete(pid); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			errs = append(errs, fmt.Errorf("delete the unwind mappings of pid %d, gone: %w", pid, err))
			continue
		}
		delete(ts.lists, pid)
		stale = true
	}
	listed := map[any]bool{}
	for _, ids := range ts.lists {
		for _, id := range ids {
			listed[id] = true
		}
	}
	filed := map[any]bool{}
	for _, ids := range ts.byFile {
		for _, id := range ids {
			filed[id] = true
		}
	}
	n := 0
	for id := range ts.orphans {
		p := ts.loaded[id]
		switch {
		case p == nil || filed[id]: // gone, or a file known again has it
			delete(ts.orphans, id)
		case listed[id] || s.fileRefers(p.loc):
		default:
			delete(ts.orphans, id)
			delete(ts.loaded, id)
			if ts.binBytes[p.path] -= p.bytes; ts.binBytes[p.path] <= 0 {
				delete(ts.binBytes, p.path)
			}
			ts.free.release(p.span, ts.now())
			ts.released++
			n++
		}
	}
	if n > 0 || stale {
		// No walk state keeps a mapping it found before.
		errs = append(errs, s.listWritten())
	}
	return errors.Join(errs...)
}

// fileRefers reports whether a file_tables entry refers to the table at loc.
func (s *Session) fileRefers(loc tableLoc) bool {
	for _, ft := range s.files {
		if ft.Flags&mappingTable != 0 && ft.EntriesOff == loc.entriesOff {
			return true
		}
	}
	return false
}

// reclaim makes the ranges whose grace has passed reusable: first it
// waits until the walks running have ended (waitWalks).
func (s *Session) reclaim() error {
	ts := &s.tables
	now := ts.now()
	if !ts.free.due(now) {
		return nil
	}
	if err := ts.waitWalks(); err != nil {
		return err
	}
	ts.next = ts.free.promote(now, ts.next)
	ts.freed++ // a table refused for room may fit now (loadTable)
	return nil
}

// waitWalks returns once the BPF programs running when it was called
// have returned: it puts shard 0 back in its place in the storage, and
// the kernel waits for an RCU grace period after an update of an array
// of maps (maybe_wait_bpf_programs), which no walk outlives (the
// programs are not sleepable).
func (ts *tableStore) waitWalks() error {
	var m *ebpf.Map
	if err := ts.outer.Lookup(uint32(0), &m); err != nil {
		return fmt.Errorf("wait for the walks: table storage shard 0: %w", err)
	}
	defer m.Close()
	if err := ts.outer.Put(uint32(0), uint32(m.FD())); err != nil {
		return fmt.Errorf("wait for the walks: %w", err)
	}
	return nil
}

// liveLists is the set of pids proc_maps holds a mapping list of.
func (s *Session) liveLists() (map[uint32]bool, error) {
	live := map[uint32]bool{}
	var next uint32
	var prev any // nil: the first key
	// A key deleted meanwhile (an exit) makes the kernel start over:
	// keys are seen again, none is missed.
	for range 4 * s.objs.ProcMaps.MaxEntries() {
		err := s.objs.ProcMaps.NextKey(prev, &next)
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			return live, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list the unwind mapping lists: %w", err)
		}
		live[next] = true
		key := next
		prev = &key
	}
	return nil, errors.New("list the unwind mapping lists: they changed all along")
}

// setList records the tables of pid's mapping list, written last.
func (ts *tableStore) setList(pid uint32, ids []any) {
	if len(ids) == 0 {
		delete(ts.lists, pid)
		return
	}
	ts.lists[pid] = ids
}

// fileTable records that table id (loaded or refused) was loaded for m's
// file.
func (ts *tableStore) fileTable(m unwind.Module, id any) {
	if m.Path == unwind.VDSOPath {
		return // never forgotten
	}
	shown, ok := shownKey(m.Dev, m.Inode)
	if !ok || slices.Contains(ts.byFile[shown], id) {
		return
	}
	ts.byFile[shown] = append(ts.byFile[shown], id)
}
