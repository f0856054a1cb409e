package fileid

import "sync"

// Warnings warns once of each file past a budget (PastBudget): what reads
// many files for a run (the symbolizer, the processes' mapping history)
// says of each such file once, not at every read. Safe for concurrent
// use; the zero value discards the warnings.
type Warnings struct {
	// Printf writes one warning; nil discards it.
	Printf func(format string, args ...any)

	mu   sync.Mutex
	said map[string]bool
}

// Budget warns of err, once for each message, when it says a file is
// past a budget, and reports whether it did; other errors are left to
// the caller.
func (w *Warnings) Budget(err error) bool {
	if !PastBudget(err) {
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
	if !said && w.Printf != nil {
		w.Printf("%v (its frames are named by file and offset)", err)
	}
	return true
}
