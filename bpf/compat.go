package bpf

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
)

// Kernel features probee adapts to (compat.h says how; the README's
// requirements table says what each costs). Each is probed once.
var (
	// BPF callbacks (5.13; probed through bpf_for_each_map_elem, which
	// came with them): without them the legacy object is loaded.
	haveCallbacks = probeHelper(asm.FnForEachMapElem)
	// BPF cookies (5.15): without them a program is loaded once per
	// cookie (cookieProgram).
	haveCookies = probeHelper(asm.FnGetAttachCookie)
	// bpf_task_pt_regs (5.15).
	haveTaskRegs = probeHelper(asm.FnTaskPtRegs)
)

func probeHelper(fn asm.BuiltinFunc) func() bool {
	return sync.OnceValue(func() bool {
		return features.HaveProgramHelper(ebpf.Kprobe, fn) == nil
	})
}

// HaveCookies reports whether the kernel passes BPF cookies to probe
// programs (5.15+).
func HaveCookies() bool { return haveCookies() }

// HaveCallbacks reports whether the kernel has BPF callbacks (5.13), without
// which the legacy object is loaded.
func HaveCallbacks() bool { return haveCallbacks() }

// Compat turns off kernel features probee would use, to run the fallbacks
// of older kernels on this one: for tests and comparisons.
type Compat struct {
	Legacy     bool // load the legacy object (no callbacks, no BTF task pointer, no cmpxchg)
	NoCookies  bool // one program per cookie
	NoTaskRegs bool // user registers from the task's kernel stack
	Prealloc   bool // preallocated hash maps, as before 6.1
}

// ParseCompat reads a comma-separated list of legacy, no-cookies,
// no-task-regs and prealloc (PROBEE_COMPAT).
func ParseCompat(s string) (Compat, error) {
	var c Compat
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		switch w {
		case "legacy":
			c.Legacy = true
		case "no-cookies":
			c.NoCookies = true
		case "no-task-regs":
			c.NoTaskRegs = true
		case "prealloc":
			c.Prealloc = true
		default:
			return c, fmt.Errorf("unknown compat switch %q: want legacy, no-cookies, no-task-regs or prealloc", w)
		}
	}
	return c, nil
}

// loadSpec is the object for this kernel: probee, or probee_legacy for
// kernels without BPF callbacks.
func loadSpec(c Compat) (*ebpf.CollectionSpec, error) {
	if haveCallbacks() && !c.Legacy {
		return loadProbee()
	}
	return loadProbeeLegacy()
}

func (s *Session) haveCookies() bool { return haveCookies() && !s.opts.Compat.NoCookies }

// compatVars are the rodata switches of compat.h.
func compatVars(c Compat) map[string]uint32 {
	return map[string]uint32{"have_cookie": b2u(haveCookies() && !c.NoCookies),
		"have_task_regs": b2u(haveTaskRegs() && !c.NoTaskRegs)}
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// Before 6.1, perf_event programs may use only preallocated hash maps: the
// kernel refuses to load probee_perf otherwise ("perf_event programs can
// only use preallocated hash map"). There every hash map is preallocated,
// with smaller defaults (PreallocMaxStacks), and what they take is
// reserved when the session opens.
var haveLazyPerfMaps = sync.OnceValue(func() bool {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Hash, KeySize: 4, ValueSize: 4, MaxEntries: 1, Flags: noPrealloc})
	if err != nil {
		return false
	}
	defer m.Close()
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.PerfEvent, License: "GPL", Instructions: asm.Instructions{
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	}})
	if err != nil {
		return false
	}
	p.Close()
	return true
})

const noPrealloc = 1 // BPF_F_NO_PREALLOC

// Map sizes where hash maps are preallocated (no lazy perf maps): the
// default --max-stacks, the in-flight latency stacks and the processes
// with unwind tables.
const (
	PreallocMaxStacks = 16384
	preallocLatStacks = 4096
	preallocProcs     = 1024
)

// preallocate turns every lazily allocated hash map of spec into a
// preallocated one, sized for kernels before 6.1.
func preallocate(spec *ebpf.CollectionSpec) {
	for _, m := range spec.Maps {
		if m.Type == ebpf.Hash && m.Flags&noPrealloc != 0 {
			m.Flags &^= noPrealloc
		}
	}
	spec.Maps["lat_stacks"].MaxEntries = preallocLatStacks
	spec.Maps["proc_maps"].MaxEntries = preallocProcs
}
