package resolver

import (
	"fmt"
	"os"
	"strings"
)

// A process's address space changes at each exec, and the kernel's counts
// are not told apart by it: they are keyed by pid, comm and stack. A
// forked child's samples before its exec (a shell's vfork child running
// the shell's code until execve) and after it (the new program) share the
// pid; the comm tells them apart, since exec renames the process after the
// new program. So a process's snapshot keeps the mapping sets it had
// before each exec (before), each with the comm it had then, and Frames
// symbolizes a stack with the set of the comm it was counted under: the
// current set unless an earlier one has that comm and the current one
// does not. A child whose first snapshot shows it after its exec gets its
// parent's set (a fork copies it) as its earlier one (Inherit).

// readComm is pid's comm, "" when it cannot be read.
func (r *Resolver) readComm(pid int) string {
	b, err := os.ReadFile(r.rootPath(fmt.Sprintf("/proc/%d/comm", pid)))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}

// generation is the mapping set of p to symbolize a stack counted under
// comm (see above). Where the current set's comm is unknown, or an exec
// kept the name (a program that re-executes itself), comm cannot tell the
// sets apart, and the current one is used.
func (p *procMaps) generation(comm string) *procMaps {
	if comm == "" || p.comm == "" || p.comm == comm {
		return p
	}
	for i := len(p.before) - 1; i >= 0; i-- {
		if p.before[i].comm == comm {
			return p.before[i]
		}
	}
	return p
}

// retired is p as an earlier set of its process: without the perf map
// (the current set keeps it) and without its own history.
func (p *procMaps) retired() *procMaps {
	q := *p
	q.jit, q.before = nil, nil
	return &q
}

// addBefore records g as a set p had before its last exec, unless one
// with g's comm is there already.
func (p *procMaps) addBefore(g *procMaps) {
	if g.comm == "" || !g.hasFile() {
		return
	}
	for _, b := range p.before {
		if b.comm == g.comm {
			return
		}
	}
	p.before = append(p.before, g)
}
