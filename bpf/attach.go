package bpf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"syscall"

	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// UprobeTarget is one place to put a uprobe: an instruction in a file.
type UprobeTarget struct {
	Path    string // file to probe
	Offset  uint64 // file offset of the instruction
	Entry   bool   // the instruction is the function's first (not +off, not ret)
	Ret     bool   // uretprobe
	RetInsn bool   // a RET instruction: the return of a function, seen before it returns
	Go      bool   // a Go function (ABIInternal: g in r14; latency.h)
	Size    uint64 // the function's size, for Go function entries (latency.h's go_restart)
	Return  bool   // MeasureLatency: the return side of a timed function (ends its call)
	Name    string // for messages, e.g. "malloc" or "leaf+0x4"
	// RefCtrOffset, when not 0, is the file offset of a USDT semaphore
	// (an unsigned short): the kernel raises it in every process the
	// uprobe is installed in while the uprobe is attached, and lowers it
	// when the uprobe goes (ref_ctr_offset, Linux 4.20).
	RefCtrOffset uint64
}

// Skipped is a target the kernel refused, with its reason.
type Skipped struct {
	Target UprobeTarget
	Err    error
}

// AttachStats says what an attach did.
type AttachStats struct {
	Attached int       // probes placed
	Links    int       // kernel links created
	Multi    bool      // uprobe_multi was used
	Skipped  []Skipped // refused targets, sorted by path and offset
}

var haveMulti = sync.OnceValue(func() error { return features.HaveBPFLinkUprobeMulti() })

// HaveUprobeMulti reports whether the kernel supports uprobe_multi links.
func HaveUprobeMulti() bool { return haveMulti() == nil }

// AttachUprobes attaches probe to every target. pid > 0 restricts the links
// to that process in the kernel (used for -p, where children are not traced).
// Targets the kernel refuses are skipped and listed in the stats; an error is
// returned only when nothing could be attached for a reason that is not
// about single addresses (missing file, no permission, no such process),
// or ctx's error once ctx is done (checked before each link).
func (s *Session) AttachUprobes(ctx context.Context, probe uint32, targets []UprobeTarget, pid int, noMulti bool) (AttachStats, error) {
	var st AttachStats
	multi := !noMulti && HaveUprobeMulti() && s.haveCookies() // a multi link passes each target its cookie
	st.Multi = multi
	targets, st.Skipped = prefilter(targets)
	for _, g := range groupTargets(targets) {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		ex, err := link.OpenExecutable(g[0].Path)
		if err != nil {
			return st, fmt.Errorf("open %s for uprobes: %w", g[0].Path, err)
		}
		if multi {
			err = s.attachMulti(ex, probe, g, pid, &st)
		} else {
			err = s.attachSingles(ctx, ex, probe, g, pid, &st)
		}
		if err != nil {
			return st, err
		}
	}
	sort.Slice(st.Skipped, func(i, j int) bool {
		a, b := st.Skipped[i].Target, st.Skipped[j].Target
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Offset < b.Offset
	})
	return st, nil
}

// groupTargets splits targets by (path, ret, return side): one
// uprobe_multi link each.
func groupTargets(targets []UprobeTarget) [][]UprobeTarget {
	type key struct {
		path         string
		ret, retSide bool
	}
	idx := map[key]int{}
	var groups [][]UprobeTarget
	for _, t := range targets {
		k := key{t.Path, t.Ret, t.Return}
		i, ok := idx[k]
		if !ok {
			i = len(groups)
			idx[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], t)
	}
	return groups
}

// Cookie bits above the probe id (enum cookie_bit in probee.h: bits 32+).
const (
	cookieEntry     = uint64(probeeCookieBitCOOKIE_ENTRY) << 32    // at a function's first instruction, or a RET: the return address at [rsp]
	cookieGo        = uint64(probeeCookieBitCOOKIE_GO) << 32       // a Go function
	cookieRetInsn   = uint64(probeeCookieBitCOOKIE_RET_INSN) << 32 // a RET instruction
	cookieSizeShift = int(probeeCookieBitCOOKIE_SIZE_SHIFT)        // bits 40-63: a Go function's size, when it fits
)

func cookie(probe uint32, t UprobeTarget) uint64 {
	c := uint64(probe)
	if t.Entry && !t.Ret || t.RetInsn {
		c |= cookieEntry
	}
	if t.Go {
		c |= cookieGo
	}
	if t.RetInsn {
		c |= cookieRetInsn
	}
	if t.Go && t.Size < 1<<(64-cookieSizeShift) {
		c |= t.Size << cookieSizeShift
	}
	return c
}

func (s *Session) attachMulti(ex *link.Executable, probe uint32, g []UprobeTarget, pid int, st *AttachStats) error {
	if len(g) == 0 {
		return nil
	}
	prog, err := s.program(sideName("uprobe_multi", g[0].Return)) // g is all entries or all returns
	if err != nil {
		return err
	}
	try := func(part []UprobeTarget) error {
		opts := &link.UprobeMultiOptions{PID: uint32(pid)}
		semaphores := false
		for _, t := range part {
			opts.Addresses = append(opts.Addresses, t.Offset)
			opts.Cookies = append(opts.Cookies, cookie(probe, t))
			opts.RefCtrOffsets = append(opts.RefCtrOffsets, t.RefCtrOffset)
			semaphores = semaphores || t.RefCtrOffset != 0
		}
		if !semaphores {
			opts.RefCtrOffsets = nil
		}
		attach := ex.UprobeMulti
		if part[0].Ret {
			attach = ex.UretprobeMulti
		}
		l, err := attach(nil, prog, opts)
		if err == nil {
			s.addLink(l)
			st.Attached += len(part)
			st.Links++
		}
		return err
	}
	stop := func(part []UprobeTarget, err error) (error, bool) {
		if fatalAttachError(err) {
			return fmt.Errorf("attach uprobes to %s: %w", part[0].Path, attachHint(err)), true
		}
		return nil, false
	}
	skip := func(t UprobeTarget, err error) { st.Skipped = append(st.Skipped, Skipped{t, err}) }
	return splitRefused(g, try, stop, skip)
}

// splitRefused attaches group with try. The kernel refuses a whole multi
// link when it refuses one of its targets, so after an error the group is
// halved until the refused targets are isolated, and skip records each.
// stop sees every error first: when halving cannot help (no permission, no
// such process, no multi links at all) it returns the result to end with.
func splitRefused[T any](group []T, try func([]T) error, stop func([]T, error) (error, bool), skip func(T, error)) error {
	if len(group) == 0 {
		return nil
	}
	err := try(group)
	if err == nil {
		return nil
	}
	if res, done := stop(group, err); done {
		return res
	}
	if len(group) == 1 {
		skip(group[0], err)
		return nil
	}
	half := len(group) / 2
	if err := splitRefused(group[:half], try, stop, skip); err != nil {
		return err
	}
	return splitRefused(group[half:], try, stop, skip)
}

func (s *Session) attachSingles(ctx context.Context, ex *link.Executable, probe uint32, g []UprobeTarget, pid int, st *AttachStats) error {
	for _, t := range g {
		if err := ctx.Err(); err != nil {
			return err
		}
		attach := ex.Uprobe
		if t.Ret {
			attach = ex.Uretprobe
		}
		prog, c, err := s.cookieProgram(sideName("uprobe", t.Return), cookie(probe, t))
		if err != nil {
			return err
		}
		opts := &link.UprobeOptions{Address: t.Offset, Cookie: c, PID: pid, RefCtrOffset: t.RefCtrOffset}
		l, err := attach("", prog, opts)
		if err != nil {
			if fatalAttachError(err) {
				return fmt.Errorf("attach uprobe to %s: %w", t.Path, attachHint(err))
			}
			st.Skipped = append(st.Skipped, Skipped{t, err})
			continue
		}
		s.addLink(l)
		st.Attached++
		st.Links++
	}
	return nil
}

// fatalAttachError reports errors that are not about one address: retrying
// with fewer addresses cannot help.
func fatalAttachError(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) ||
		errors.Is(err, syscall.ESRCH) || errors.Is(err, syscall.EBADF)
}

func attachHint(err error) error {
	if errors.Is(err, os.ErrPermission) {
		return ErrPermission
	}
	if errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("%w: the process is gone", err)
	}
	return err
}

// AttachTracepoint attaches probe to the tracepoint category:name.
func (s *Session) AttachTracepoint(probe uint32, category, name string) error {
	prog, c, err := s.cookieProgram("probee_tracepoint", uint64(probe))
	if err != nil {
		return err
	}
	l, err := link.Tracepoint(category, name, prog, &link.TracepointOptions{Cookie: c})
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("tracepoint %s:%s does not exist: list them with probee --list-probes 'tracepoint:%s:*'", category, name, category)
		}
		return fmt.Errorf("attach tracepoint %s:%s: %w", category, name, err)
	}
	s.addLink(l)
	quietEvent(l)
	return nil
}

// quietEvent disables the perf event under a tracepoint link. The kernel
// runs a tracepoint's BPF programs whether or not the event is enabled,
// and an enabled one (cilium/ebpf opens it sampling, on CPU 0) also takes
// every hit the programs pass on to other perf users (they return 1):
// with no ring buffer to write to, ~70 ns a hit on CPU 0 for nothing.
// Best effort: an event left enabled costs only that.
func quietEvent(l link.Link) {
	pe, ok := l.(link.PerfEvent)
	if !ok {
		return
	}
	f, err := pe.PerfEvent()
	if err != nil {
		return
	}
	defer f.Close()
	_ = unix.IoctlSetInt(int(f.Fd()), unix.PERF_EVENT_IOC_DISABLE, 0)
}
