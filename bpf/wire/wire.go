// Package wire holds the values the kernel side (package bpf) hands to the
// process tracking (package proctrack) and takes back from it: process
// notices (ProcessEvent and its kinds), mapping records (MmapEvent), stacks
// handed over unfinished (DeferredStack), the depth of a user stack
// (MaxUserStack) and the error of a table that does not fit
// (ErrTablesFull). bpf produces and takes them; proctrack drives bpf only
// through these types and its own Kernel interface, which *bpf.Session
// implements, so it never imports bpf.
//
// It is a leaf: it imports neither bpf nor proctrack, only the standard
// library and unwind (the registers and stack copy of a DeferredStack are
// the unwinder's). Its constants copy values of probee.h, which bpf2go
// emits into package bpf alone; bpf/consts_test.go compares them with the
// generated ones and with the object's BTF (TestWireConstants), so none
// drifts unchecked.
package wire

import (
	"errors"
	"fmt"

	"github.com/probee/probee/unwind"
)

// MaxUserStack is the kernel's user stack depth, in frames (MAX_USTACK
// in probee.h; bpf.MaxUserStack).
const MaxUserStack = 256

// EventType is the kind of a process notice from the kernel.
type EventType uint32

// Process notices (enum event_type in probee.h).
const (
	EventNewProcess EventType = 1 // first event seen from a tgid
	EventExit       EventType = 2 // a tgid that produced events exited
	// EventGate: a traced command reached its entry point and is stopped
	// until Continue (its unwind tables can be loaded first).
	EventGate EventType = 3
)

// ProcessEvent is one notice from the kernel's ring buffer
// (bpf.Session.Events).
type ProcessEvent struct {
	Type EventType
	TGID int
	PID  int
	PPID int // EventNewProcess: the parent's tgid (0 when unknown)
	// When is an EventGate's stop time: with TGID and PID it names the
	// stop Continue ends.
	When uint64
}

// MmapEvent is an executable file mapping created by a process, an exec
// (Exec set, no mapping) after which the process's earlier mappings are
// gone, or a fork (Fork set): the new process PID starts with a copy of
// PPID's mappings as they are at this point of the records.
//
// The records exist for processes that exit before /proc/PID/maps can be
// read: the kernel queues a record for every executable mapping as it is
// created (perf's MMAP2 records on a system-wide dummy software event, the
// mechanism perf itself uses; bpf.MmapWatcher reads them), so a process's
// layout is known even when it lived for a millisecond.
type MmapEvent struct {
	Time  uint64 // CLOCK_MONOTONIC, ns; records are handled in this order
	PID   int
	Exec  bool
	Fork  bool
	PPID  int    // Fork: the parent
	Comm  string // Exec: the new comm (the program's name)
	Start uint64
	End   uint64
	Pgoff uint64
	Ino   uint64
	Dev   string // the file's device as /proc/PID/maps prints it ("fd:01")
	Path  string
}

// DeferredStack is a stack the kernel handed over unfinished (defer.h;
// bpf.Session.Deferred): a frame lay in a file whose unwind table was not
// loaded yet. PCs are the frames unwound before it (leaf first); the walk
// goes on from Regs over the stack copy, in user space, and the result is
// counted with bpf.Session.AddStack.
type DeferredStack struct {
	Probe  uint32
	TGID   int
	PID    int
	PPID   int // the parent's tgid
	Comm   string
	KStack uint64 // key of the kernel stack, 0: none
	PCs    []uint64
	Regs   unwind.Regs
	Exact  bool // Regs.RIP is not a return address
	Stack  unwind.StackCopy
}

// ErrTablesFull means a binary's table was not loaded for want of room
// (the table budget, or the shared rule array); the error says which.
var ErrTablesFull = errors.New("its unwind table does not fit")

// ErrTablesStillFull is an ErrTablesFull for a table refused (and
// reported) before and not tried again: no room it could fit in was
// freed since. The caller may offer it again later.
var ErrTablesStillFull = fmt.Errorf("%w (refused before)", ErrTablesFull)
