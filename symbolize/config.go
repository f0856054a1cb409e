package symbolize

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
)

// Config says where a Symbolizer reads.
type Config struct {
	// Root is prefixed to /proc, kallsyms and the paths of the files
	// processes map, for tests with a fake file system. "" is "/".
	Root string
	// Kallsyms is the kallsyms file; "" is /proc/kallsyms (under Root).
	Kallsyms string
	// Objects is the index of ELF objects to share with a resolver
	// (resolver.Resolver.Index), so that files read to resolve specs are
	// not read again; nil is a new one.
	Objects *objfile.Index
	// DebugDir, for a new index, holds separate debug files; "" is
	// /usr/lib/debug (under Root), "-" disables debug files.
	DebugDir string
	// Warn receives non-fatal problems (a file past a budget, whose
	// frames are named by file and offset). nil discards them.
	Warn io.Writer
}

// New returns a Symbolizer reading where cfg says.
func New(cfg Config) *Symbolizer {
	if cfg.Root == "" {
		cfg.Root = "/"
	}
	s := &Symbolizer{idx: cfg.Objects, root: cfg.Root, kallsymsPath: cfg.Kallsyms, warn: warnings{w: cfg.Warn},
		procs: map[int]*procMaps{}, byFile: map[procmaps.FileKey]*objfile.Object{}, announced: map[int]bool{}}
	if s.idx == nil {
		s.idx = objfile.NewIndex(objfile.DebugDir(cfg.Root, cfg.DebugDir))
	}
	if s.kallsymsPath == "" {
		s.kallsymsPath = s.rootPath("/proc/kallsyms")
	}
	s.dw.warn = s.warn.limit
	return s
}

// rootPath is p under the Symbolizer's root.
func (s *Symbolizer) rootPath(p string) string {
	if s.root == "/" {
		return p
	}
	return filepath.Join(s.root, p)
}

// mappedFile is the path that opens the file m (a mapping of pid) maps.
func (s *Symbolizer) mappedFile(pid int, m procmaps.Mapping) (string, error) {
	return procmaps.File(s.rootPath(""), pid, m)
}

// readProcess reads pid's mappings and the comm they go with (see
// procmaps.ReadProcess: "" when an exec kept changing it).
func (s *Symbolizer) readProcess(pid int) ([]procmaps.Mapping, string, error) {
	dir := s.rootPath(fmt.Sprintf("/proc/%d", pid))
	maps, comm, err := procmaps.ReadProcess(dir)
	if err != nil {
		return nil, "", mapsError(pid, dir+"/maps", err)
	}
	return maps, comm, nil
}

// mapsError explains why pid's maps file at path could not be read.
func mapsError(pid int, path string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no process with pid %d: check the pid", pid)
	}
	return fmt.Errorf("read %s: %w (run as root)", path, err)
}

// warnings writes warnings, each file past a budget once.
type warnings struct {
	w    io.Writer
	mu   sync.Mutex
	said map[string]bool // limit warnings given
}

// limit warns once of each file past a budget (of bytes:
// internal/safeelf.ErrBudget, or of time: fileid.ErrTimeout) and returns
// whether err was such; other errors are left to the caller.
func (w *warnings) limit(err error) bool {
	if !fileid.PastBudget(err) {
		return false
	}
	msg := err.Error()
	w.mu.Lock()
	said := w.said[msg]
	if w.said == nil {
		w.said = map[string]bool{}
	}
	w.said[msg] = true
	w.mu.Unlock()
	if !said {
		w.printf("%v (its frames are named by file and offset)", err)
	}
	return true
}

// printf writes one warning line.
func (w *warnings) printf(format string, args ...any) {
	if w.w != nil {
		fmt.Fprintf(w.w, "warning: "+format+"\n", args...)
	}
}
