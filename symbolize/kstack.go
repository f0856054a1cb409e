package symbolize

import (
	"os"
	"strings"

	"github.com/probee/probee/internal/kallsyms"
	"github.com/probee/probee/output"
)

// stackWalkFrames are the kernel functions a BPF program's walk of its own
// task's kernel stack (bpf_get_task_stack on the current task) finds on
// top, above the program itself.
var stackWalkFrames = map[string]bool{
	"bpf_get_task_stack": true, "__bpf_get_stack": true,
	"get_callchain_entry_for_task": true, "stack_trace_save_tsk": true,
}

// bpfDispatchFrames run a BPF program for the event that called them.
var bpfDispatchFrames = map[string]bool{
	"trace_call_bpf": true, "perf_call_bpf_enter": true, "perf_call_bpf_exit": true,
	"perf_trace_run_bpf_submit": true,
}

// TrimBPFFrames cuts the frames of probee's own machinery from the top of
// a kernel stack (leaf first) that its BPF program took of its own task:
// the fallback for system call tracepoints of older kernels, whose context
// holds the user registers (bpf/stackstore.h: store_kernel_stack), and
// the stacks of BTF tracepoints (--off-cpu's sched_switch), which start at
// the program and bpf_trace_runN. The stack walk, the program
// (bpf_prog_*) and its dispatch go, so that the stack starts where the
// event happened, as a stack taken from the context does. A stack that
// does not start with the walk or a program is returned as it is: a kprobe
// on a function a BPF program calls keeps its whole stack.
func TrimBPFFrames(fs []output.Frame) []output.Frame {
	if len(fs) == 0 || !stackWalkFrames[baseName(fs[0].Name)] && !isBPFProgram(fs[0].Name) {
		return fs
	}
	i := 0
	for i < len(fs) && isMachinery(fs[i].Name) {
		i++
	}
	return fs[i:]
}

func isMachinery(name string) bool {
	b := baseName(name)
	return stackWalkFrames[b] || bpfDispatchFrames[b] || isBPFProgram(name) || isRawTPDispatch(name)
}

// isRawTPDispatch reports whether name runs the BPF programs of a BTF
// tracepoint (tp_btf): bpf_trace_run1..12 and the tracepoint's own
// __bpf_trace_NAME. A stack a tp_btf program takes from its context (the
// off-CPU time's sched_switch) starts with the program, then them.
func isRawTPDispatch(name string) bool {
	b := baseName(name)
	if rest, ok := strings.CutPrefix(b, "bpf_trace_run"); ok {
		return rest != "" && strings.Trim(rest, "0123456789") == ""
	}
	return strings.HasPrefix(b, "__bpf_trace_")
}

// InterruptEntry is the index of the first interrupt entry (asm_sysvec_*,
// asm_common_interrupt: x86-64 since 5.8) in fs, a kernel stack leaf
// first, or -1: the frames after it are those of whatever the interrupt
// interrupted, another interrupt's way out included. A thread woken from
// an interrupt (a timer, an I/O completion) was woken by it, not by that
// task (--wakers).
func InterruptEntry(fs []output.Frame) int {
	for i, f := range fs {
		b := baseName(f.Name)
		if strings.HasPrefix(b, "asm_sysvec_") || b == "asm_common_interrupt" || b == "asm_spurious_interrupt" {
			return i
		}
	}
	return -1
}

func isBPFProgram(name string) bool { return strings.HasPrefix(name, "bpf_prog_") }

// baseName is a kernel function's name without the suffix of a copy the
// compiler made of it (perf_call_bpf_enter.isra.0, f.constprop.0, f.cold).
func baseName(name string) string {
	b, _, _ := strings.Cut(name, ".")
	return b
}

// KernelFrames symbolizes kernel addresses from kallsyms. Frames of
// modules carry Module "[name]"; without readable addresses (not root)
// frames are "[kernel]+0xADDR".
func (s *Symbolizer) KernelFrames(addrs []uint64) []output.Frame {
	return s.AppendKernelFrames(nil, addrs)
}

// AppendKernelFrames is KernelFrames appending to dst.
func (s *Symbolizer) AppendKernelFrames(dst []output.Frame, addrs []uint64) []output.Frame {
	s.kernOnce.Do(func() {
		f, err := os.Open(s.kallsymsPath)
		if err != nil {
			return
		}
		defer f.Close()
		s.ksyms, _ = kallsyms.Parse(f)
	})
	for _, a := range addrs {
		dst = append(dst, kernelFrame(s.ksyms, a))
	}
	return dst
}

// kernelFrame names the kernel address addr from ks (sorted: kallsyms).
func kernelFrame(ks []kallsyms.Symbol, addr uint64) output.Frame {
	f := output.Frame{Address: addr, Kernel: true, Module: "[kernel]", Offset: addr}
	k, ok := kallsyms.Lookup(ks, addr)
	if !ok {
		return f
	}
	f.Name, f.Offset = k.Name, 0
	if k.Module != "" {
		f.Module = "[" + k.Module + "]"
	}
	return f
}
