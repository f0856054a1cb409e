package bpf

import (
	"fmt"
	"unsafe"

	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// AttachSampling samples every online CPU freq times a second with a
// cpu-clock perf event (a software event: it works without a hardware PMU)
// and runs the perf_event program on each sample. Samples are counted under
// Options.SampleProbe; the pid filter applies.
func (s *Session) AttachSampling(freq int) error {
	if freq <= 0 {
		return fmt.Errorf("sampling frequency %d: give a positive -F", freq)
	}
	cpus, err := onlineCPUs()
	if err != nil {
		return err
	}
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_CPU_CLOCK,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Sample: uint64(freq),
		Bits:   unix.PerfBitFreq | unix.PerfBitDisabled,
	}
	prog, err := s.program("probee_perf")
	if err != nil {
		return err
	}
	for _, cpu := range cpus {
		fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			return fmt.Errorf("open cpu-clock perf event on cpu %d: %w", cpu, err)
		}
		s.mu.Lock()
		s.perfFDs = append(s.perfFDs, fd)
		s.mu.Unlock()
		if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_BPF, prog.FD()); err != nil {
			return fmt.Errorf("attach the sampling program on cpu %d: %w", cpu, err)
		}
		if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_ENABLE, 0); err != nil {
			return fmt.Errorf("enable sampling on cpu %d: %w", cpu, err)
		}
	}
	return nil
}

// closeSampling stops and closes the sampling events.
func (s *Session) closeSampling() {
	s.mu.Lock()
	fds := s.perfFDs
	s.perfFDs = nil
	s.mu.Unlock()
	for _, fd := range fds {
		_ = unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_DISABLE, 0)
		unix.Close(fd)
	}
}

// AttachGate puts the exec gate on a program's entry point (path, file
// offset): when a filtered process reaches it, the process is stopped and
// an EventGate notice sent; Continue resumes it. probee's -- CMD no longer
// needs it (the command is stopped after its exec and its program's table
// loaded then); the bpf tests hold the processes they start with it.
func (s *Session) AttachGate(path string, offset uint64) error {
	ex, err := link.OpenExecutable(path)
	if err != nil {
		return fmt.Errorf("open %s for the exec gate: %w", path, err)
	}
	prog, err := s.program("probee_gate")
	if err != nil {
		return err
	}
	l, err := ex.Uprobe("", prog, &link.UprobeOptions{Address: offset})
	if err != nil {
		return fmt.Errorf("attach the exec gate to %s: %w", path, err)
	}
	s.addLink(l)
	return nil
}

// AttachLdsoGate holds traced processes at ld.so's _dl_debug_state (file
// offset stateOff, virtual address stateAddr) each time ld.so has mapped new
// objects, before their constructors run: at start-up and at every dlopen
// (see stopgate.h). rdebugAddr is the virtual address of _r_debug.
func (s *Session) AttachLdsoGate(path string, stateOff, stateAddr, rdebugAddr uint64) error {
	if stateAddr >= 1<<32 || rdebugAddr >= 1<<32 {
		return fmt.Errorf("ld.so gate: %s: _dl_debug_state 0x%x or _r_debug 0x%x beyond 4 GiB", path, stateAddr, rdebugAddr)
	}
	ex, err := link.OpenExecutable(path)
	if err != nil {
		return fmt.Errorf("open %s for the ld.so gate: %w", path, err)
	}
	prog, c, err := s.cookieProgram("probee_ldso_gate", stateAddr<<32|rdebugAddr)
	if err != nil {
		return err
	}
	l, err := ex.Uprobe("", prog, &link.UprobeOptions{Address: stateOff, Cookie: c})
	if err != nil {
		return fmt.Errorf("attach the ld.so gate to %s: %w", path, err)
	}
	s.addLink(l)
	return nil
}
