package resolver

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/objfile"
	"github.com/probee/probee/probespec"
)

// Scope says where Resolve looks.
type Scope struct {
	// PID, when > 0, restricts user-space lookups to the ELF objects the
	// process maps executable (read through /proc/PID/root).
	PID int
	// Command is the argv of "-- CMD ARGS": lookups cover the command's
	// binary, its interpreter and its DT_NEEDED closure.
	Command []string
	// Root is prefixed to system paths (/etc/ld.so.cache, library dirs,
	// /proc, /usr/lib/debug) for tests with a fake file system. "" is "/".
	Root string
	// Tracefs is the tracefs mount; "" tries /sys/kernel/tracing then
	// /sys/kernel/debug/tracing (under Root).
	Tracefs string
	// Kallsyms is the kallsyms file; "" is /proc/kallsyms (under Root).
	Kallsyms string
	// KprobeBlacklist is debugfs' kprobes/blacklist; "" is
	// /sys/kernel/debug/kprobes/blacklist (under Root). Unreadable is empty.
	KprobeBlacklist string
	// DebugDir holds separate debug files; "" is /usr/lib/debug (under
	// Root), "-" disables debug files.
	DebugDir string
	// Warn receives non-fatal problems (missing DT_NEEDED libraries, an
	// unreadable ld.so.cache). nil discards them.
	Warn io.Writer
}

// Resolver resolves specs within one Scope, reading each file once. It is
// safe for concurrent use.
type Resolver struct {
	scope Scope
	idx   *objfile.Index

	ldOnce sync.Once
	ld     []LdCacheEntry

	kernOnce sync.Once
	kern     *kernelFuncs
	kernErr  error

	saidMu sync.Mutex
	said   map[string]bool // limit warnings given (limitWarning)
}

// New returns a Resolver for scope with a fresh per-run Index.
func New(scope Scope) *Resolver {
	if scope.Root == "" {
		scope.Root = "/"
	}
	return &Resolver{scope: scope, idx: objfile.NewIndex(objfile.DebugDir(scope.Root, scope.DebugDir))}
}

// Index returns the resolver's object cache, to share with a Symbolizer.
func (r *Resolver) Index() *objfile.Index { return r.idx }

// Resolve is New(scope).Resolve(spec).
func Resolve(spec probespec.Spec, scope Scope) ([]AttachPoint, error) {
	return New(scope).Resolve(spec)
}

// Resolve returns the targets of spec, sorted by String() and address,
// one per address (aliases merged). No match is a *NoMatchError.
func (r *Resolver) Resolve(spec probespec.Spec) ([]AttachPoint, error) {
	var ts []AttachPoint
	var err error
	switch spec.Kind {
	case probespec.Uprobe:
		ts, err = r.resolveUser(spec)
	case probespec.Kprobe:
		ts, err = r.resolveKernel(spec)
	case probespec.Tracepoint:
		ts, err = r.resolveTracepoints(spec)
	case probespec.USDT:
		ts, err = r.resolveUSDT(spec)
	default:
		return nil, fmt.Errorf("resolve: spec has no kind (%v)", spec.Kind)
	}
	if err != nil {
		return nil, err
	}
	SortAttachPoints(ts)
	return ts, nil
}

// SortAttachPoints sorts targets by their canonical line, then address, keeping
// the order of equal ones. Lines are computed once, and the targets (big
// structs, 34000 when listing libLLVM) move once, after an index sort.
func SortAttachPoints(ts []AttachPoint) {
	lines := targetLines(ts)
	order := make([]int, len(ts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := strings.Compare(lines[a], lines[b]); c != 0 {
			return c
		}
		return cmp.Compare(ts[a].Address, ts[b].Address)
	})
	permute(ts, order)
}

// permute reorders ts so that ts[k] becomes the old ts[order[k]], in place
// (following each cycle); order is consumed.
func permute(ts []AttachPoint, order []int) {
	for i := range ts {
		if order[i] == i {
			continue
		}
		saved, j := ts[i], i
		for {
			k := order[j]
			order[j] = j
			if k == i {
				ts[j] = saved
				break
			}
			ts[j], j = ts[k], k
		}
	}
}

func (r *Resolver) rootPath(p string) string {
	if r.scope.Root == "/" || r.scope.Root == "" {
		return p
	}
	return filepath.Join(r.scope.Root, p)
}

// limitWarning warns once of each file past a budget (of bytes:
// internal/safeelf.ErrBudget, or of time: fileid.ErrTimeout) and returns
// whether err was such; other errors are left to the caller.
func (r *Resolver) limitWarning(err error) bool {
	if !fileid.PastBudget(err) {
		return false
	}
	msg := err.Error()
	r.saidMu.Lock()
	said := r.said[msg]
	if r.said == nil {
		r.said = map[string]bool{}
	}
	r.said[msg] = true
	r.saidMu.Unlock()
	if !said {
		r.warnf("%v (its frames are named by file and offset)", err)
	}
	return true
}

func (r *Resolver) warnf(format string, args ...any) {
	if r.scope.Warn != nil {
		fmt.Fprintf(r.scope.Warn, "warning: "+format+"\n", args...)
	}
}
