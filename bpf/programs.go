package bpf

import (
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// The programs that walk stacks are most of what the verifier checks when
// probee starts: on this project's VM (6.18) the six recorders and their
// six step programs took 0.37 s of a 0.65 s run of one uprobe, 20-45 ms
// each, against well under 1 ms for each of the other programs; under
// emulation (make vmtest) they took most of every test's 25 s. A run needs
// one kind of recorder, rarely two. So a session opens with its maps and
// the small programs, and loads a recorder (with its step program, put in
// its prog array first) when a probe of its kind is first attached.

// stepSlot is where a recorder's tail calls go: its step program, in the
// prog array of its program type at index.
type stepSlot struct {
	step  string
	array string
	index uint32
}

// recorders are the programs loaded on first use, by name.
var recorders = map[string]stepSlot{
	"probee_uprobe":       {"probee_step_uprobe", "steps_kprobe", uint32(probeeStepIndexSTEP_UPROBE)},
	"probee_kprobe":       {"probee_step_kprobe", "steps_kprobe", uint32(probeeStepIndexSTEP_KPROBE)},
	"probee_uprobe_multi": {"probee_step_uprobe_multi", "steps_multi", 0},
	"probee_kprobe_multi": {"probee_step_kprobe_multi", "steps_kmulti", 0},
	"probee_tracepoint":   {"probee_step_tracepoint", "steps_tp", 0},
	"probee_perf":         {"probee_step_perf", "steps_perf", 0},
	"probee_offcpu":       {"probee_step_offcpu", "steps_offcpu", 0},
	"probee_waker":        {"probee_step_waker", "steps_waker", 0},
}

// sideName is the name of the program of a function probe kind (uprobe,
// uprobe_multi, kprobe, kprobe_multi) at the probe's entry, or with ret at
// its return (latency.h).
func sideName(kind string, ret bool) string {
	if ret {
		return "probee_ret_" + kind
	}
	return "probee_" + kind
}

// eagerSpec is spec without the recorders and their step programs: what
// the session loads when it opens.
func eagerSpec(spec *ebpf.CollectionSpec) *ebpf.CollectionSpec {
	lazy := map[string]bool{}
	for name, slot := range recorders {
		lazy[name], lazy[slot.step] = true, true
	}
	return specOf(spec, func(name string) bool { return !lazy[name] })
}

// specOf is a copy of spec (maps, variables, types) with the programs keep
// selects: only theirs are copied, not every program's instructions.
func specOf(spec *ebpf.CollectionSpec, keep func(name string) bool) *ebpf.CollectionSpec {
	some := *spec
	some.Programs = map[string]*ebpf.ProgramSpec{}
	for name, ps := range spec.Programs {
		if keep(name) {
			some.Programs[name] = ps
		}
	}
	return some.Copy()
}

// programs loads programs of the session's spec after it opened, each
// sharing every map but its rodata with the session: the recorders once,
// on first use, and on kernels without BPF cookies one copy of a program
// per cookie, its fixed_cookie set in its own rodata.
type programs struct {
	mu   sync.Mutex
	spec *ebpf.CollectionSpec // the session's, configured
	// shared are the session's maps by name, but its rodata: what every
	// program loaded here shares (each gets its own rodata).
	shared map[string]*ebpf.Map
	steps  bool // recorders tail-call step programs (DWARF through tail calls)
	done   bool // AttachDone: spec holds lateLoads only
	progs  map[progKey]*ebpf.Program
	// types is the kernel's BTF for CO-RE relocations, decoded once for
	// every load (~25 ms each time here).
	types *btf.Cache
}

// progKey names a loaded program: cookie is 0 but for per-cookie copies.
type progKey struct {
	name   string
	cookie uint64
	copy   bool
}

// init takes the programs of coll, the session's collection loaded from
// eagerSpec(spec) with types.
func (p *programs) init(spec *ebpf.CollectionSpec, coll *ebpf.Collection, steps bool, types *btf.Cache) {
	p.spec, p.steps, p.types = spec, steps, types
	p.shared = maps.Clone(coll.Maps)
	delete(p.shared, ".rodata")
	p.progs = map[progKey]*ebpf.Program{}
	for name := range coll.Programs {
		p.progs[progKey{name: name}] = coll.DetachProgram(name)
	}
}

// program returns the program named name, loading it the first time.
func (s *Session) program(name string) (*ebpf.Program, error) {
	p := &s.progs
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.get(progKey{name: name})
}

// cookieProgram returns the program to attach for the program named name
// with cookie, and the cookie to give the link: the program itself where
// the kernel has BPF cookies, else its copy for cookie.
func (s *Session) cookieProgram(name string, cookie uint64) (*ebpf.Program, uint64, error) {
	p := &s.progs
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.haveCookies() {
		prog, err := p.get(progKey{name: name})
		return prog, cookie, err
	}
	prog, err := p.get(progKey{name, cookie, true})
	if err != nil {
		return nil, 0, fmt.Errorf("load %s for cookie %#x (this kernel has no BPF cookies): %w", name, cookie, err)
	}
	return prog, 0, nil
}

// get returns the program k names, loading it (and a recorder's step
// program) the first time.
func (p *programs) get(k progKey) (*ebpf.Program, error) {
	if p.progs == nil {
		return nil, errors.New("the session is closed")
	}
	if prog := p.progs[k]; prog != nil {
		return prog, nil
	}
	if slot, ok := recorders[k.name]; ok && p.steps {
		if err := p.fillStep(slot); err != nil {
			return nil, err
		}
	}
	prog, err := p.load(k.name, k.cookie)
	if err != nil {
		return nil, err
	}
	p.progs[k] = prog
	return prog, nil
}

// fillStep loads a step program and puts it in its prog array, once.
func (p *programs) fillStep(slot stepSlot) error {
	k := progKey{name: slot.step}
	if p.progs[k] != nil {
		return nil
	}
	step, err := p.load(slot.step, 0)
	if err != nil {
		return err
	}
	if err := p.shared[slot.array].Put(slot.index, step); err != nil {
		step.Close()
		return fmt.Errorf("fill unwind step program array %s: %w", slot.array, err)
	}
	p.progs[k] = step
	return nil
}

// lateLoads are the programs a session may load after its probes are
// attached (AttachDone): the ld.so gate, put on each new root's ld.so as
// processes exec there, a copy per cookie on kernels without BPF cookies.
var lateLoads = map[string]bool{"probee_ldso_gate": true}

// AttachDone tells the session that its probes are attached: it lets go
// of the instructions of the programs it will not load any more (all but
// lateLoads; 3.6 MB of the object's spec otherwise kept for the run).
func (s *Session) AttachDone() {
	p := &s.progs
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.spec != nil && !p.done {
		p.spec, p.done = specOf(p.spec, func(name string) bool { return lateLoads[name] }), true
	}
}

// load loads the program named name with fixed_cookie set to cookie.
func (p *programs) load(name string, cookie uint64) (*ebpf.Program, error) {
	if p.spec.Programs[name] == nil && p.done {
		return nil, fmt.Errorf("program %s loaded after the probes were attached (bpf.Session.AttachDone)", name)
	}
	if p.spec.Programs[name] == nil {
		return nil, fmt.Errorf("no program %s in probee's BPF object", name)
	}
	cs := specOf(p.spec, func(n string) bool { return n == name })
	if err := cs.Variables["fixed_cookie"].Set(cookie); err != nil {
		return nil, err
	}
	coll, err := ebpf.NewCollectionWithOptions(cs, ebpf.CollectionOptions{MapReplacements: p.shared, Cache: p.types})
	if err != nil {
		return nil, loadError(err)
	}
	defer coll.Close()
	return coll.DetachProgram(name), nil
}

func (p *programs) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, prog := range p.progs {
		prog.Close()
	}
	p.progs = nil
}
