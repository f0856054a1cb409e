package bpf

import (
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// maxBPFStack is the kernel's limit on the BPF stack of a call chain: the
// frames of a program, the functions it calls and the callbacks it passes
// to helpers (bpf_loop, bpf_find_vma), each rounded up to 32 bytes.
const maxBPFStack = 512

// Every call chain of every program fits maxBPFStack as 6.1's verifier
// counts it (newer kernels count less): 2d3026c's walk took unwind_frame
// from 128 to 152 bytes, and 6.1 refused every program that unwinds
// ("combined stack size of 4 calls is 544. Too large"), which only the VM
// tests showed. The frames are read from the objects: the deepest r10
// offset each function uses.
func TestStackDepth(t *testing.T) {
	for name, load := range map[string]func() (*ebpf.CollectionSpec, error){"probee": loadProbee, "probeelegacy": loadProbeeLegacy} {
		spec, err := load()
		if err != nil {
			t.Fatal(err)
		}
		for prog, p := range spec.Programs {
			frames, calls := callGraph(p.Instructions)
			if d, chain := deepest(prog, frames, calls, map[string]bool{}); d > maxBPFStack {
				t.Errorf("%s: %s: %d bytes of stack over the call chain %v (at most %d)", name, prog, d, chain, maxBPFStack)
			}
		}
	}
}

// callGraph gives each function of insns (its entry and the functions it
// holds) its frame size, rounded up to 32 bytes as the verifier does, and
// the functions it calls or passes as callbacks.
func callGraph(insns asm.Instructions) (map[string]int, map[string][]string) {
	frames, calls := map[string]int{}, map[string][]string{}
	fn := ""
	for _, ins := range insns {
		if s := ins.Symbol(); s != "" {
			fn = s
			frames[fn] = 32
		}
		mem := ins.OpCode.Class().IsLoad() || ins.OpCode.Class().IsStore()
		if mem && (ins.Src == asm.R10 || ins.Dst == asm.R10) && ins.Offset < 0 {
			frames[fn] = max(frames[fn], (int(-ins.Offset)+31)/32*32)
		}
		if ins.IsFunctionCall() || ins.IsLoadOfFunctionPointer() {
			calls[fn] = append(calls[fn], ins.Reference())
		}
	}
	return frames, calls
}

// deepest is the largest stack over the call chains from fn, and that chain.
func deepest(fn string, frames map[string]int, calls map[string][]string, onPath map[string]bool) (int, []string) {
	if onPath[fn] {
		return 0, nil // recursion is refused by the verifier anyway
	}
	onPath[fn] = true
	defer delete(onPath, fn)
	best, chain := 0, []string(nil)
	for _, c := range calls[fn] {
		if d, ch := deepest(c, frames, calls, onPath); d > best {
			best, chain = d, ch
		}
	}
	return frames[fn] + best, append([]string{fn}, chain...)
}
