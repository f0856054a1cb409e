package bpf

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/probee/probee/unwind"
)

// File tables (vma.h) let the kernel find a pc's unwind table from the
// identity of the file mapped there, with bpf_find_vma: every table loaded
// for one process serves every other process that maps the same file, from
// its first event (forks, new processes of known binaries, system-wide).
// They are written alongside the per-process mapping arrays, which still
// serve kernels without bpf_find_vma (and come first where they exist).

// maxFileSegs is the number of segments a file table holds.
const maxFileSegs = uint32(probeeLimitFILE_SEGS)

// unwind_mapping.flags (enum mapping_flag in probee.h).
const (
	mappingTable    = uint32(probeeMappingFlagMAPPING_TABLE)
	mappingGo       = uint32(probeeMappingFlagMAPPING_GO)
	mappingTagShift = uint32(probeeMappingFlagMAPPING_TAG_SHIFT) // a table's placement tag (tableLoc)
)

// kernelDev turns the "major:minor" of /proc/PID/maps (hex) into the
// kernel's internal dev_t (MKDEV: major << 20 | minor), the value of
// inode->i_sb->s_dev that vma.h reads.
func kernelDev(s string) (uint64, error) {
	maj, min, ok := strings.Cut(s, ":")
	a, err1 := strconv.ParseUint(maj, 16, 12)
	b, err2 := strconv.ParseUint(min, 16, 20)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bad device %q: want major:minor in hex", s)
	}
	return a<<20 | b, nil
}

// noteFile records module m, loaded as um in some process, in the file
// tables (under the key fileKey gives): the table's place (um without its
// per-process bias) and the offset-to-vaddr delta of m's segment. Called
// with s.tmu held.
func (s *Session) noteFile(m unwind.Module, um probeeUnwindMapping) {
	if !s.findVMA {
		return
	}
	key, ok := s.fileKey(m)
	if !ok {
		return
	}
	ft, known := s.files[key]
	if !known || ft.Flags != um.Flags || (um.Flags != 0 && ft.EntriesOff != um.EntriesOff) {
		ft = probeeFileTable{Base: um.Bias - m.Bias, PagesOff: um.PagesOff, Npages: um.Npages, EntriesOff: um.EntriesOff, Flags: um.Flags}
	}
	if !addSeg(&ft, m.Offset, m.Offset+(m.End-m.Start), m.Start-m.Offset-m.Bias) && known {
		return // nothing new
	}
	if err := s.objs.FileTables.Put(key, &ft); err != nil {
		return // full: this file's processes use their mapping arrays
	}
	s.files[key] = ft
}

// addSeg adds segment [off, end) with delta to ft unless it is there or
// ft has no room; it reports whether ft changed.
func addSeg(ft *probeeFileTable, off, end, delta uint64) bool {
	for i := range ft.Nsegs {
		if ft.Segs[i].Off == off {
			return false
		}
	}
	if ft.Nsegs == maxFileSegs {
		return false
	}
	sg := &ft.Segs[ft.Nsegs]
	sg.Off, sg.End, sg.Delta = off, end, delta
	ft.Nsegs++
	return true
}

// moduleMapping loads m's table (once per table) and returns its mapping,
// also recorded in the file tables. A table that does not fit leaves the
// mapping to frame pointers (the error says so, the first time).
func (s *Session) moduleMapping(m unwind.Module) (probeeUnwindMapping, error) {
	um := probeeUnwindMapping{Start: m.Start, End: m.End}
	var err error
	if m.Table != nil && len(m.Table.Entries) > 0 {
		var loc tableLoc
		loc, err = s.loadTable(m.Table, m.Path)
		s.tables.fileTable(m, tableID(m.Table))
		switch {
		case err == nil:
			um.Bias = m.Bias + m.Table.Base
			um.PagesOff, um.Npages, um.EntriesOff = loc.pagesOff, loc.npages, loc.entriesOff
			um.Flags = loc.flags()
		case errors.Is(err, errRefused): // reported when it was refused
		default:
			err = fmt.Errorf("%s: %w", m.Path, err)
		}
	} else if m.Go != nil {
		err = s.goMapping(&um, m)
	}
	s.noteFile(m, um)
	return um, err
}

// SetFileModules loads the tables of files that no process in particular
// is registered for (a file the machine mapped for the first time): the
// kernel finds them by the file's identity in any process. Without
// bpf_find_vma it does nothing. A table refused before and not tried
// again is a wire.ErrTablesStillFull: the caller may offer it later.
func (s *Session) SetFileModules(mods []unwind.Module) error {
	if !s.findVMA {
		return nil
	}
	s.tmu.Lock()
	defer s.tmu.Unlock()
	var errs []error
	for _, m := range mods {
		if _, err := s.moduleMapping(m); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// FindsTablesByFile reports whether the kernel finds unwind tables by file
// identity (bpf_find_vma, DWARF mode).
func (s *Session) FindsTablesByFile() bool { return s.findVMA }
