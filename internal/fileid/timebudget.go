package fileid

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/safeelf"
)

// The time budget of one file. A read of a file a process serves itself
// (FUSE, mountable by any user in a user namespace) can block forever,
// and no read of a regular file can be interrupted: opening and reading
// one file (its symbols, its unwind table, its DWARF) runs on a goroutine
// of its own, and its caller waits at most FileTime. Past it the caller
// goes on without that file (its frames are named by module and offset,
// its stacks walked by frame pointers) and the read is left behind. After
// SlowFiles such files, each later one gets SlowFileTime: a run that
// meets many files that never answer still ends within seconds.
var (
	FileTime     = 10 * time.Second
	SlowFileTime = 1 * time.Second
	SlowFiles    = 3
)

// ErrTimeout is wrapped by the error of a file past its time budget.
var ErrTimeout = errors.New("past its time budget")

// PastBudget reports whether err says that a file is past one of its
// budgets: of bytes (internal/safeelf.ErrBudget) or of time (ErrTimeout),
// or is refused for where it lies (procmaps.ErrUntrustedFUSE). Such a
// file is warned about once; other errors of reading files are the usual
// ones (a process gone, a file without CFI).
func PastBudget(err error) bool {
	return errors.Is(err, safeelf.ErrBudget) || errors.Is(err, ErrTimeout) || errors.Is(err, procmaps.ErrUntrustedFUSE)
}

var late = struct {
	sync.Mutex
	n int
}{}

// budget is the time the next file gets.
func budget() time.Duration {
	late.Lock()
	defer late.Unlock()
	if late.n >= SlowFiles {
		return SlowFileTime
	}
	return FileTime
}

// Bounded runs fn, the opening and reading of the file name, within the
// time budget of one file. Past it, it returns an error wrapping
// ErrTimeout and leaves fn running.
func Bounded[T any](name string, fn func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := fn()
		done <- result{v, err}
	}()
	limit := budget()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.v, r.err
	case <-timer.C:
		late.Lock()
		late.n++
		late.Unlock()
		var zero T
		return zero, fmt.Errorf("%s: reading it took more than %v, %w: left unread", name, limit, ErrTimeout)
	}
}
