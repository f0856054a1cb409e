package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// statusWriter prints status lines on stderr (a trace.Reporter): summaries and warnings always
// (unless -q), debug/progress lines only when stderr is a terminal.
type statusWriter struct {
	w     io.Writer
	quiet bool
	tty   bool
}

func newStatus(w io.Writer, quiet bool) *statusWriter {
	return &statusWriter{w: w, quiet: quiet, tty: isTerminal(w)}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
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
	if s.tty && !s.quiet {
		fmt.Fprintf(s.w, "probee: "+format+"\n", args...)
	}
}
