package bpf

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
)

// Options configure a Session before load.
type Options struct {
	// FilterPIDs restricts tracing to the tgids added with AddPID and their
	// descendants (forked after AddPID).
	FilterPIDs bool
	// MaxStacks sizes the user and kernel stack maps and the counts map
	// (0: defaults, 65536 user stacks/counts and 16384 kernel stacks).
	MaxStacks int
}

// Session is a loaded set of probee programs and maps plus their links.
type Session struct {
	objs  probeeObjects
	mu    sync.Mutex
	links []link.Link
	procs []link.Link // fork/exit tracking
}

// MaxProbes is the number of probe ids a session can count.
const MaxProbes = 1024

// ErrPermission means the caller lacks the capabilities to load BPF.
var ErrPermission = errors.New("needs root (CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN) to load BPF programs: run probee as root or with sudo")

// Open loads the programs and maps into the kernel.
func Open(opts Options) (*Session, error) {
	if err := rlimit.RemoveMemlock(); err != nil && os.Geteuid() != 0 {
		return nil, ErrPermission
	}
	spec, err := loadProbee()
	if err != nil {
		return nil, fmt.Errorf("load bpf object spec: %w", err)
	}
	if err := configure(spec, opts); err != nil {
		return nil, err
	}
	s := &Session{}
	if err := spec.LoadAndAssign(&s.objs, nil); err != nil {
		return nil, loadError(err)
	}
	if err := s.attachProcessTracking(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func configure(spec *ebpf.CollectionSpec, opts Options) error {
	if opts.FilterPIDs {
		if err := spec.Variables["filter_pids"].Set(uint32(1)); err != nil {
			return fmt.Errorf("set filter_pids: %w", err)
		}
	}
	if n := opts.MaxStacks; n > 0 {
		spec.Maps["counts"].MaxEntries = uint32(n)
		spec.Maps["ustacks"].MaxEntries = uint32(n)
		spec.Maps["kstacks"].MaxEntries = uint32(n)
	}
	return nil
}

func loadError(err error) error {
	if errors.Is(err, os.ErrPermission) && os.Geteuid() != 0 {
		return ErrPermission
	}
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		return fmt.Errorf("the kernel's verifier rejected probee's BPF program (please report this with the log): %+v", ve)
	}
	return fmt.Errorf("load bpf programs: %w", err)
}

func (s *Session) attachProcessTracking() error {
	fork, err := link.AttachTracing(link.TracingOptions{Program: s.objs.ProbeeFork})
	if err != nil {
		return fmt.Errorf("attach sched_process_fork (tp_btf): %w", err)
	}
	exit, err := link.Tracepoint("sched", "sched_process_exit", s.objs.ProbeeExit, nil)
	if err != nil {
		fork.Close()
		return fmt.Errorf("attach tracepoint sched:sched_process_exit: %w", err)
	}
	s.procs = []link.Link{fork, exit}
	return nil
}

// AddPID adds a tgid to the in-kernel filter (with Options.FilterPIDs).
func (s *Session) AddPID(pid int) error {
	one := uint8(1)
	if err := s.objs.Pids.Put(uint32(pid), one); err != nil {
		return fmt.Errorf("add pid %d to the filter: %w", pid, err)
	}
	return nil
}

// Detach closes every probe link (process tracking stays until Close). It is
// safe to call more than once.
func (s *Session) Detach() error {
	s.mu.Lock()
	links := s.links
	s.links = nil
	s.mu.Unlock()
	var errs []error
	for _, l := range links {
		errs = append(errs, l.Close())
	}
	return errors.Join(errs...)
}

// Close detaches everything and unloads programs and maps.
func (s *Session) Close() error {
	errs := []error{s.Detach()}
	for _, l := range s.procs {
		errs = append(errs, l.Close())
	}
	s.procs = nil
	errs = append(errs, s.objs.Close())
	return errors.Join(errs...)
}

func (s *Session) addLink(l link.Link) {
	s.mu.Lock()
	s.links = append(s.links, l)
	s.mu.Unlock()
}
