package unwind

import (
	"debug/elf"
	"errors"
	"fmt"
	"slices"

	"github.com/probee/probee/internal/gopclntab"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/internal/x86code"
	"golang.org/x/arch/x86/x86asm"
)

// GoStack tells the walk of a Go program's stack how to go on where the
// runtime grows a goroutine's stack. A function whose frame does not fit
// calls runtime.morestack from its prologue; morestack saves the
// function's pc, sp and rbp in its goroutine's g.sched, switches to the
// thread's system stack (g0) with rbp 0 and calls runtime.newstack. A
// frame-pointer walk of a stack taken in newstack (or what it calls) ends
// there; Go's own profiler goes on at the goroutine, and so does probee:
// at the return address after that call it reads the current g (g0) from
// the thread's TLS, then g.m, m.curg (the goroutine) and its g.sched, and
// walks on from the function that grew its stack, whose caller is at
// [sched.sp] (it had not pushed rbp).
//
// The offsets of those fields change between Go versions, and Go
// binaries often carry no DWARF (the toolchain's own do not): they are
// read from the runtime's assembly (ReadGoStack). morestack stores to
// g.sched's fields through g; runtime.systemstack loads m.curg to switch
// back to the goroutine after its call. (morestack also stores the
// goroutine in m.morebuf.g, but newstack clears that first thing.)
type GoStack struct {
	Return  uint64 // ELF virtual address after morestack's call of newstack
	TLS     int64  // the current g is at fsbase + TLS
	GM      uint32 // offset of g.m
	MCurg   uint32 // offset of m.curg: the goroutine whose stack grows
	SchedPC uint32 // offsets of its g.sched.pc, .sp and .bp
	SchedSP uint32
	SchedBP uint32
}

// ErrNoGoStack means the binary's runtime.morestack was not found or its
// code has another form than the one GoStack describes.
var ErrNoGoStack = errors.New("no runtime.morestack of the known form")

// ReadGoStack finds runtime.morestack and runtime.systemstack in Go
// binary f (by .symtab, else by .gopclntab for a stripped binary) and
// reads GoStack from their code.
func ReadGoStack(f *elf.File) (GoStack, error) {
	fns, err := goFuncs(f, "runtime.morestack", "runtime.systemstack")
	if err != nil {
		return GoStack{}, err
	}
	var code [2][]byte
	for i, fn := range fns {
		code[i] = make([]byte, min(fn.size, 512))
		if err := safeelf.ReadAt(f, code[i], fn.addr); err != nil {
			return GoStack{}, fmt.Errorf("read %s: %w", fn.name, err)
		}
	}
	gs, ok := decodeMorestack(code[0], fns[0].addr)
	if !ok {
		return GoStack{}, ErrNoGoStack
	}
	if gs.MCurg, ok = decodeSystemstack(code[1]); !ok {
		return GoStack{}, ErrNoGoStack
	}
	return gs, nil
}

// goFunc is where a Go function's code lies.
type goFunc struct {
	name       string
	addr, size uint64
	rank       int // of the symbol found: 0 "name.abi0", 1 "name", 2 none yet
}

// goFuncs finds Go functions by name ("runtime.x"; assembly functions are
// named "runtime.x.abi0" in .symtab, preferred), in one scan of each
// symbol table; those no table holds, in .gopclntab.
func goFuncs(f *elf.File, names ...string) ([]goFunc, error) {
	fns := make([]goFunc, len(names))
	for i, n := range names {
		fns[i] = goFunc{name: n, rank: 2}
	}
	for _, t := range symTables(f, readSection) {
		t.findGo(f, fns)
	}
	var missing []*goFunc
	for i := range fns {
		if fns[i].rank == 2 {
			missing = append(missing, &fns[i])
		}
	}
	if len(missing) > 0 {
		return fns, pclntabFuncs(f, missing)
	}
	return fns, nil
}

// findGo fills fns from the function symbols of t.
func (t symTable) findGo(f *elf.File, fns []goFunc) {
	names, err := safeelf.SectionData("", t.names)
	if err != nil {
		return
	}
	want := map[string][2]int{} // symbol name -> index in fns, rank
	for i, fn := range fns {
		want[fn.name+".abi0"], want[fn.name] = [2]int{i, 0}, [2]int{i, 1}
	}
	t.eachSym(f, func(sym safeelf.Sym) {
		if !sym.IsFunc() || sym.Size == 0 {
			return
		}
		name, ok := symName(names, sym.Name)
		if w, found := want[string(name)]; ok && found && w[1] < fns[w[0]].rank {
			fn := &fns[w[0]]
			fn.addr, fn.size, fn.rank = sym.Value, sym.Size, w[1]
		}
	})
}

// pclntabFuncs finds fns in f's .gopclntab, which even a stripped Go
// binary keeps (the runtime needs it).
func pclntabFuncs(f *elf.File, fns []*goFunc) error {
	all, err := gopclntab.Funcs(f)
	if errors.Is(err, gopclntab.ErrNoTable) {
		return fmt.Errorf("%s: %w (no symbol table, no .gopclntab)", fns[0].name, ErrNoGoStack)
	}
	if err != nil {
		return err
	}
	for _, fn := range fns {
		i := slices.IndexFunc(all, func(g gopclntab.Func) bool { return g.Name == fn.name })
		if i < 0 {
			return fmt.Errorf("%s: %w", fn.name, ErrNoGoStack)
		}
		fn.addr, fn.size, fn.rank = all[i].Entry, all[i].End-all[i].Entry, 1
	}
	return nil
}

// What a register holds while decodeMorestack follows morestack's code.
type goValue uint8

const (
	goUnknown goValue = iota
	goConst           // an immediate (the TLS offset of a PIE binary)
	goG               // the current g
	goM               // its m
	goRet             // [rsp]: the return address into the growing function
	goSP8             // rsp+8: that function's sp
)

type goRegs struct {
	kind  map[x86asm.Reg]goValue
	value map[x86asm.Reg]int64 // of goConst registers
}

// decodeMorestack reads GoStack from morestack's code at addr. It follows
// the code in a line (the branches only skip calls of abort) until the
// call after the write of rsp, the call of newstack.
func decodeMorestack(code []byte, addr uint64) (GoStack, bool) {
	var gs GoStack
	var found [5]bool // TLS, GM, SchedPC, SchedSP, SchedBP
	r := goRegs{kind: map[x86asm.Reg]goValue{}, value: map[x86asm.Reg]int64{}}
	switched := false
	for off := 0; off < len(code); {
		in, err := x86code.Decode(code[off:])
		if err != nil {
			return gs, false
		}
		off += in.Len
		if switched && in.Op == x86asm.CALL {
			gs.Return = addr + uint64(off)
			return gs, found == [5]bool{true, true, true, true, true}
		}
		switched = switched || r.step(in, &gs, &found)
	}
	return gs, false
}

// decodeSystemstack reads the offset of m.curg from systemstack's code:
// after its indirect call of the function it runs on the system stack, it
// loads g from the TLS, then g.m, then m.curg (the goroutine to switch
// back to).
func decodeSystemstack(code []byte) (uint32, bool) {
	var gs GoStack
	var found [5]bool
	var r goRegs
	for off := 0; off < len(code); {
		in, err := x86code.Decode(code[off:])
		if err != nil {
			return 0, false
		}
		off += in.Len
		if _, reg := in.Args[0].(x86asm.Reg); in.Op == x86asm.CALL && reg {
			r, found = goRegs{kind: map[x86asm.Reg]goValue{}, value: map[x86asm.Reg]int64{}}, [5]bool{}
			continue
		}
		dst, _ := in.Args[0].(x86asm.Reg)
		if src, ok := in.Args[1].(x86asm.Mem); ok && r.kind != nil && in.Op == x86asm.MOV && dst != 0 &&
			src.Segment == 0 && src.Index == 0 && r.kind[src.Base] == goM && src.Disp > 0 && src.Disp < 1<<16 {
			return uint32(src.Disp), true
		}
		if r.kind != nil && r.step(in, &gs, &found) {
			return 0, false // rsp written before m.curg was loaded
		}
	}
	return 0, false
}

// full64 is the 64-bit register a 32- or 16-bit one is part of (a write
// to it changes the whole value the walk tracks).
func full64(r x86asm.Reg) x86asm.Reg {
	switch {
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return x86asm.RAX + (r - x86asm.EAX)
	case r >= x86asm.AX && r <= x86asm.R15W:
		return x86asm.RAX + (r - x86asm.AX)
	}
	return r
}

// step follows one instruction; it reports whether it wrote rsp.
func (r goRegs) step(in x86asm.Inst, gs *GoStack, found *[5]bool) bool {
	reg, _ := in.Args[0].(x86asm.Reg)
	dst := full64(reg)
	if dst == x86asm.RSP {
		return true
	}
	if dst != reg { // a 32- or 16-bit part: not the value a mov of 64 bits gave it
		r.kind[dst] = goUnknown
		return false
	}
	switch {
	case in.Op == x86asm.MOV && dst != 0:
		r.load(dst, in.Args[1], gs, found)
	case in.Op == x86asm.LEA && dst != 0:
		r.kind[dst] = goUnknown
		if m, ok := in.Args[1].(x86asm.Mem); ok && m.Base == x86asm.RSP && m.Index == 0 && m.Disp == 8 {
			r.kind[dst] = goSP8
		}
	case in.Op == x86asm.MOV:
		r.store(in.Args[0], in.Args[1], gs, found)
	case dst != 0 && in.Op != x86asm.CMP && in.Op != x86asm.TEST:
		r.kind[dst] = goUnknown
	}
	return false
}

// wrote reports whether the code followed so far wrote reg.
func (r goRegs) wrote(reg x86asm.Reg) bool {
	_, ok := r.kind[reg]
	return ok
}

// load follows a mov into register dst.
func (r goRegs) load(dst x86asm.Reg, src x86asm.Arg, gs *GoStack, found *[5]bool) {
	r.kind[dst] = goUnknown
	switch s := src.(type) {
	case x86asm.Imm:
		r.kind[dst], r.value[dst] = goConst, int64(s)
	case x86asm.Mem:
		switch {
		case s.Segment == x86asm.FS && s.Base == 0 && s.Index == 0:
			gs.TLS, found[0], r.kind[dst] = int64(int32(s.Disp)), true, goG // an absolute disp32, sign-extended
		case s.Segment == x86asm.FS && s.Index == 0 && s.Disp == 0 && r.kind[s.Base] == goConst:
			gs.TLS, found[0], r.kind[dst] = r.value[s.Base], true, goG
		case s.Segment == 0 && s.Index == 0 && s.Base == x86asm.RSP && s.Disp == 0:
			r.kind[dst] = goRet
		case s.Segment == 0 && s.Index == 0 && r.kind[s.Base] == goG && !found[1] && s.Disp >= 0:
			gs.GM, found[1], r.kind[dst] = uint32(s.Disp), true, goM
		}
	}
}

// store follows a mov of a register into memory: the fields of g.sched.
func (r goRegs) store(dst, src x86asm.Arg, gs *GoStack, found *[5]bool) {
	m, ok := dst.(x86asm.Mem)
	s, sok := src.(x86asm.Reg)
	if !ok || !sok || m.Segment != 0 || m.Index != 0 || m.Disp < 0 || m.Disp > 1<<16 {
		return
	}
	off := uint32(m.Disp)
	switch base := r.kind[m.Base]; {
	case base == goG && r.kind[s] == goRet:
		gs.SchedPC, found[2] = off, true
	case base == goG && r.kind[s] == goSP8:
		gs.SchedSP, found[3] = off, true
	case base == goG && s == x86asm.RBP && !r.wrote(x86asm.RBP): // rbp as the function left it
		gs.SchedBP, found[4] = off, true
	}
}

// GoBinary is what the walk needs of a file linked by Go, which it walks
// by frame pointers under --unwind auto: its segments (for the load bias)
// and its GoStack.
type GoBinary struct {
	Loads []Segment
	Stack *GoStack // nil: not found (StackErr says why)
	// StackErr is why Stack is nil: no runtime.morestack of the known
	// form, or a stripped binary linked by the system linker (cgo), whose
	// .gopclntab addresses debug/gosym reads from the wrong text start.
	StackErr error
}

// ReadGoBinary reads the file at path; ok is false when Go did not link it.
func ReadGoBinary(path string) (b GoBinary, ok bool, err error) {
	f, err := safeelf.Open(path)
	if err != nil {
		return GoBinary{}, false, err
	}
	defer f.Close()
	if !safeelf.IsGo(f.File) {
		return GoBinary{}, false, nil
	}
	b.Loads = safeelf.Loads(f.File)
	err = safeelf.Guard(path, func() error {
		gs, err := ReadGoStack(f.File)
		if err == nil {
			b.Stack = &gs
		}
		return err
	})
	b.StackErr = err
	return b, true, nil
}

// Module is the module of mapping m of b (opened at path): no table, and
// b's GoStack when the mapping's load bias is known (else frame pointers
// alone walk it, as any Go binary before GoStack).
func (b GoBinary) Module(m procmaps.Mapping, path string) Module {
	mod := Module{Start: m.Start, End: m.End, Path: m.Path, Table: &Table{Loads: b.Loads},
		Offset: m.Offset, Dev: m.Dev, Inode: m.Inode, File: path}
	if bias, err := LoadBias(b.Loads, m); err == nil {
		mod.Bias, mod.Go = bias, b.Stack
	}
	return mod
}
