package bpf

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/cilium/ebpf"
	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/internal/procstat"
	"golang.org/x/sys/unix"
)

// A gate records each stop in the holds map (stopgate.h) before it sends
// the SIGSTOP: the process, the thread and the time of the stop, with
// the process's start time. Continue deletes the stop's entry once it
// has sent the SIGCONT; what is left when probee ends (a notice never
// read) is resumed by Session.Close or, when probee died, by its
// watchdog (watchdog.go). Both go through resumeHolds, and every SIGCONT
// goes through resume: to the process that stopped, never to one that
// took its pid.

// Continue resumes the process that a gate's notice (wire.EventGate) says it
// stopped. It is a Session method so that the session is the whole kernel
// side of process tracking (proctrack.Kernel).
func (s *Session) Continue(ev wire.ProcessEvent) error {
	k := probeeHoldKey{Tgid: uint32(ev.TGID), Tid: uint32(ev.PID), When: ev.When}
	var start uint64
	if err := s.objs.Holds.Lookup(&k, &start); err != nil {
		return fmt.Errorf("resume pid %d after loading its unwind tables: its stop is not recorded: %w", ev.TGID, err)
	}
	// Its stop is probee's, not a wait of the program (--off-cpu).
	s.forgetWait(ev.PID)
	// SIGCONT first: a probee that dies between the two leaves the
	// entry, and its watchdog sends one SIGCONT too many, never too few.
	err := resume(ev.TGID, start)
	s.objs.Holds.Delete(&k)
	if err != nil {
		return fmt.Errorf("resume pid %d after loading its unwind tables: %w", ev.TGID, err)
	}
	return nil
}

// resumeHolds resumes every process the holds map m still records and
// empties it; it returns how many it resumed.
func resumeHolds(m *ebpf.Map) (int, error) {
	var (
		k     probeeHoldKey
		start uint64
		keys  []probeeHoldKey
		n     int
	)
	it := m.Iterate()
	for it.Next(&k, &start) {
		if resume(int(k.Tgid), start) == nil {
			n++
		}
		keys = append(keys, k)
	}
	for i := range keys {
		m.Delete(&keys[i])
	}
	return n, it.Err()
}

// errReused means a pid names another process than the stopped one.
var errReused = errors.New("the pid is another process's now (the stopped one exited)")

// resume sends SIGCONT to process pid if it is still the process that
// started at start (the kernel's start_boottime, ns): through a pidfd
// opened before its start time is read, so that the process checked is
// the one signaled.
func resume(pid int, start uint64) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ticks, err := startTicks(pid)
	if err != nil {
		return err
	}
	if ticks != start/(1e9/userHZ) {
		return errReused
	}
	return unix.PidfdSendSignal(fd, unix.SIGCONT, nil, 0)
}

// userHZ is the unit of /proc/PID/stat's times.
const userHZ = procstat.UserHZ

// startTicks reads a process's start time from /proc/PID/stat (in
// 1/userHZ s since boot).
func startTicks(pid int) (uint64, error) {
	st, err := procstat.Read("/proc/" + strconv.Itoa(pid) + "/stat")
	return st.Start, err
}
