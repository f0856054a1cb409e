package unwind

import (
	"fmt"
	"path/filepath"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/internal/procmaps"
)

// Cache builds each ELF file's table once and shares it between processes.
// Tables are keyed by file identity (internal/fileid: the build-id, else
// device, inode, size and mtime; the key resolver's Index uses too), so
// copies of one build at several paths share a table. It is safe for
// concurrent use.
type Cache struct {
	tables fileid.Cache[*Table]
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{} }

// Len is the number of distinct tables held.
func (c *Cache) Len() int { return c.tables.Len() }

// Get returns the table of the ELF file at path, building it on first use.
func (c *Cache) Get(path string) (*Table, error) {
	id, err := fileid.Of(path)
	if err != nil {
		return nil, fmt.Errorf("unwind table: %w", err)
	}
	return c.tables.Get(id, func() (*Table, error) { return BuildFile(path) })
}

// Module is one executable file mapping of a process with its table.
type Module struct {
	Start, End uint64
	Bias       uint64 // runtime address = ELF virtual address + Bias
	Path       string
	Table      *Table // no entries: the file has no CFI (frame pointers only)
	// The mapping's file offset and the file's identity as /proc/PID/maps
	// shows it (device "fd:01", inode): the kernel finds the table of any
	// later mapping of the file by them (bpf file tables).
	Offset uint64
	Dev    string
	Inode  uint64
	// File is the path the table was read from: it opens the mapped file
	// (while the process lives, for a path under /proc/PID). The kernel
	// side maps it to learn the file's identity as its unwinder sees it.
	File string
}

// Modules resolves the executable file mappings in maps. file gives the
// path that opens the file a mapping maps (procmaps.File, for a process's
// mappings: its path may name another file, in a container); nil opens the
// mapping's path as it is. Mappings that cannot be resolved are left out
// and reported in errs.
func (c *Cache) Modules(maps []Mapping, file func(Mapping) (string, error)) (mods []Module, errs []error) {
	for _, m := range maps {
		if !m.Exec() || !filepath.IsAbs(m.Path) {
			continue // anonymous, [vdso], [uprobes], JIT code
		}
		path := m.Path
		if file != nil {
			var err error
			if path, err = file(m); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		mod, err := c.module(m, path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		mods = append(mods, mod)
	}
	return mods, errs
}

func (c *Cache) module(m Mapping, path string) (Module, error) {
	t, err := c.Get(path)
	if err != nil {
		return Module{}, err
	}
	bias, err := LoadBias(t.Loads, m)
	if err != nil {
		return Module{}, err
	}
	return Module{Start: m.Start, End: m.End, Bias: bias, Path: m.Path, Table: t, Offset: m.Offset, Dev: m.Dev, Inode: m.Inode, File: path}, nil
}

// Process reads /proc/PID/maps and resolves the process's modules.
func (c *Cache) Process(pid int) ([]Module, []error, error) {
	maps, err := ReadMaps(pid)
	if err != nil {
		return nil, nil, err
	}
	mods, errs := c.Modules(maps, func(m Mapping) (string, error) { return procmaps.File("", pid, m) })
	return mods, errs, nil
}
