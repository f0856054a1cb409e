package symbolize

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/objfile"
	"github.com/probee/probee/proctrack"
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

// New returns a Symbolizer reading where cfg says, over a new mapping
// history of the processes (History), which a proctrack.Tracker keeps up
// to date.
func New(cfg Config) *Symbolizer {
	if cfg.Root == "" {
		cfg.Root = "/"
	}
	s := &Symbolizer{idx: cfg.Objects, kallsymsPath: cfg.Kallsyms, memos: map[*proctrack.Image]*frameMemo{}}
	if s.idx == nil {
		s.idx = objfile.NewIndex(objfile.DebugDir(cfg.Root, cfg.DebugDir))
	}
	if s.kallsymsPath == "" {
		s.kallsymsPath = filepath.Join(cfg.Root, "/proc/kallsyms")
	}
	var printf func(format string, args ...any)
	if w := cfg.Warn; w != nil {
		printf = func(format string, args ...any) { fmt.Fprintf(w, "warning: "+format+"\n", args...) }
	}
	s.warn = &fileid.Warnings{Printf: printf}
	s.dw.warn = s.warn.Budget
	s.hist = proctrack.NewHistory(proctrack.HistoryConfig{Root: cfg.Root, Objects: s.idx, Warnf: printf})
	return s
}
