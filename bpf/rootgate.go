package bpf

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// AttachRootGate stops a traced process each time it execs under another
// root than probee's (a chroot, a container's pivot_root), with its new
// program and ld.so mapped (probee_root_gate, stopgate.h): their files are
// the ones of its root, which no ld.so gate holds yet. User space loads
// their tables, puts the ld.so gate on that ld.so, and resumes it
// (Continue). Execs under probee's own root do not stop.
func (s *Session) AttachRootGate() error {
	var st unix.Stat_t
	if err := unix.Stat("/", &st); err != nil {
		return fmt.Errorf("root gate: %w", err)
	}
	key := probeeFileKey{Dev: uint64(unix.Major(st.Dev))<<20 | uint64(unix.Minor(st.Dev)), Ino: st.Ino}
	if err := s.objs.HostRoot.Put(uint32(0), &key); err != nil {
		return fmt.Errorf("root gate: %w", err)
	}
	l, err := s.attachTracing("probee_root_gate")
	if err != nil {
		return fmt.Errorf("attach the root gate (sched_process_exec, tp_btf): %w", err)
	}
	s.addLink(l)
	return nil
}
