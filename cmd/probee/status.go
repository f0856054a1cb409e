package main

import (
	"cmp"
	"fmt"
	"io"

	"github.com/probee/probee/trace"
)

// statusWriter prints status lines on stderr (a trace.Reporter): summaries and warnings always
// (unless -q), debug/progress lines only when stderr is a terminal or with -v.
type statusWriter struct {
	w     io.Writer
	quiet bool
	debug bool
}

func newStatus(w io.Writer, quiet, verbose bool) *statusWriter {
	return &statusWriter{w: w, quiet: quiet, debug: !quiet && (verbose || trace.IsTerminal(w))}
}

func (s *statusWriter) Infof(format string, args ...any) {
	if !s.quiet {
		fmt.Fprintf(s.w, "probee: "+format+"\n", args...)
	}
}

// Warnf prints even with -q: warnings are never silenced.
func (s *statusWriter) Warnf(format string, args ...any) {
	fmt.Fprintf(s.w, "probee: warning: "+format+"\n", args...)
}

// Notef prints even with -q: what probee changed on the machine.
func (s *statusWriter) Notef(format string, args ...any) {
	fmt.Fprintf(s.w, "probee: "+format+"\n", args...)
}

func (s *statusWriter) Debugf(format string, args ...any) {
	if s.debug {
		fmt.Fprintf(s.w, "probee: "+format+"\n", args...)
	}
}

// Report prints the hits per probe, every drop (an event or part of a
// stack lost) and the partial stacks (counted, but walked with frame
// pointers or cut short).
func (s *statusWriter) Report(r *trace.Report) {
	for _, p := range r.Probes {
		s.Infof("%s: %s", p.Label, plural(p.Hits, cmp.Or(p.Event, "hit")))
	}
	for _, l := range r.Losses {
		switch l.Kind {
		case trace.Partial:
			s.Infof("partial stacks: %d %s", l.Count, l.Cause)
		case trace.Finished:
			s.Infof("finished in user space: %s %s", plural(l.Count, "stack"), l.Cause)
		case trace.Lost:
			s.Warnf("lost %d: %s", l.Count, l.Cause)
		default:
			s.Warnf("dropped %d: %s", l.Count, l.Cause)
		}
	}
	if r.Dropped() == 0 {
		s.Infof("no drops")
	}
}

func plural(n uint64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
