package proctrack

import (
	"maps"
	"slices"
)

// A process's address space changes at each exec, and the kernel's counts
// are not told apart by it: they are keyed by pid, comm and stack. A
// forked child's samples before its exec (a shell's vfork child running
// the shell's code until execve) and after it (the new program) share the
// pid; the comm tells them apart, since exec renames the process after the
// new program. So a process's snapshot keeps the mapping sets it had
// before each exec (before), each with the comm it had then, and ImageOf
// gives a stack the set of the comm it was counted under, the one that
// holds the stack's addresses. A child whose first snapshot shows it
// after its exec gets its parent's set (a fork copies it) as its earlier
// one (Inherit), and the parent's sets are tried for the stacks its own
// do not hold (setFor).
//
// The sets are built from the kernel's records where they can be: a fork
// record copies the parent's set as it is at that point of the records
// (Fork), an exec record starts a new set, and the mapping records that
// follow fill it; the records are handled in time order (bpf.MmapWatcher),
// so each set is one image, whatever happened meanwhile. Such a set takes
// from /proc reads only mappings that overlap none of its own (a lost
// record): a read can meet a process in the middle of an exec, when the
// new address space is in place before the comm changes. The
// reads build the sets of processes that ran before the watcher started
// (the -p process, system-wide) until their next exec, and of processes
// the records missed. There a read can see the new image before its exec
// record is handled (ExecReset then keeps the set it made), and a read's
// comm is the one its maps go with (procmaps.ReadProcess).

// generation is the mapping set of p to symbolize a stack (addrs) counted
// under comm (see above). Several sets can have that comm: a program that
// re-executed itself, or a shell's child that ran env, then a shell again
// (its first and last images are both "bash"). Of those, the one whose
// mappings hold most of addrs wins, the latest on a tie. Where comm is
// unknown, or no set has it, the current one is used. It also returns how
// many of addrs the set holds.
func (p *Image) generation(comm string, addrs []uint64) (*Image, int) {
	if comm == "" || p.comm == "" {
		return p, p.holds(addrs)
	}
	best, most := p, -1
	if p.comm == comm {
		most = p.holds(addrs)
	}
	for _, b := range slices.Backward(p.before) {
		if b.comm != comm {
			continue
		}
		if n := b.holds(addrs); n > most {
			best, most = b, n
		}
	}
	if most < 0 { // no set has comm
		most = p.holds(addrs)
	}
	return best, most
}

// setFor is the mapping set that symbolizes a stack of pid (whose sets
// are p) counted under comm, and the pid whose set it is. A forked child
// got a copy of its parent's mappings when its notice was handled, which
// can be before the records of its parent's last exec were: a shell that
// has just exec'd forks a subshell at once. Where the child's own sets do
// not hold every address, the parent's sets as they are now are tried
// too. Call it with h.mu held.
func (h *History) setFor(pid int, p *Image, comm string, addrs []uint64) (*Image, int) {
	g, n := p.generation(comm, addrs)
	if n == len(addrs) || p.parent == 0 || h.procs[p.parent] == nil {
		return g, pid
	}
	if pg, pn := h.procs[p.parent].generation(comm, addrs); pn > n {
		return pg, p.parent
	}
	return g, pid
}

// holds is how many of addrs p's mappings hold.
func (p *Image) holds(addrs []uint64) int {
	n, last := 0, -1
	for _, a := range addrs {
		if last = p.indexNear(last, a); last >= 0 {
			n++
		}
	}
	return n
}

// retired is p as an earlier set of its process: without the perf map
// (the current set keeps it) and without its own history.
func (p *Image) retired() *Image {
	q := *p
	q.jit, q.before = nil, nil
	return &q
}

// addBefore records g as a set p had before its last exec. A set with
// g's comm there already gets g's mappings added (g's win where they
// overlap): the stacks counted under that comm may come from either.
func (p *Image) addBefore(g *Image) {
	if g.comm == "" || !g.hasFile() {
		return
	}
	for _, b := range p.before {
		if b.comm == g.comm {
			b.absorb(g)
			return
		}
	}
	p.before = append(p.before, g)
}

// own makes p's maps and objects its own before they change (see
// Image.shared).
func (p *Image) own() {
	if p.shared {
		p.maps, p.open, p.shared = slices.Clone(p.maps), maps.Clone(p.open), false
	}
}

// absorb adds g's mappings and objects to p.
func (p *Image) absorb(g *Image) {
	p.maps, p.open, p.shared = slices.Clone(p.maps), maps.Clone(p.open), false
	p.changed()
	for _, m := range g.maps {
		p.insert(m)
	}
	for path, o := range g.open {
		if p.open[path] == nil {
			p.open[path] = o
		}
	}
}
