package unwind

import (
	"bytes"
	"cmp"
	"debug/elf"
	"runtime"
	"slices"
	"sync"

	"github.com/probee/probee/internal/safeelf"
)

// SymSection names the synthetic CFI symbolFrames adds.
const SymSection = "synthetic (stack heights)"

// Function symbols no FDE covers are code built without CFI: hand-written
// assembly (LLVM's BLAKE3 in Rust's libLLVM, under BOLT's name
// frame_dummy.cold; V8's builtins, embedded in node), and crt code that
// BOLT moved out of .init and away from the rest of crtbegin's (Rust's
// libLLVM and librustc_driver: _init, frame_dummy, register_tm_clones),
// which initFrames and crtFrames do not find there. ld.so runs such code
// at every start, so page faults and samples land in it. symbolFrames
// gives each such function the rules its stack heights give
// (stackheight.go). A binary without any CFI gets none: its code is
// walked by frame pointers throughout.

// maxSymCode bounds the code of a file's uncovered functions the
// analysis reads.
const maxSymCode = 16 << 20

// symFunc is a function's code that no FDE covers: [start, end) of
// section sect.
type symFunc struct {
	start, end uint64
	sect       int
}

// heightFrag is the synthetic CFI of one function, or of several
// (data holds their instructions, FDEs' instr index it), with what
// decides whether it is kept: a function that never returns is kept only
// if one of its tail calls goes to the start of a function.
type heightFrag struct {
	fdes      []FDE
	data      []byte
	returns   bool
	tailCalls []uint64
}

// symbolFrames returns the synthetic CFI of the function symbols (of
// .symtab and .dynsym) in executable sections whose start no FDE of fdes
// covers, from their start to their end or the next FDE; nil when there
// is none or the analysis follows none.
func symbolFrames(f *elf.File, frames []*CFI, fdes *fdeList, read sectionData) *CFI {
	if !hasCFI(frames) {
		return nil
	}
	tabs := symTables(f, read)
	funcs := uncoveredFuncs(f, fdes, tabs)
	if len(funcs) == 0 {
		return nil
	}
	frags := analyzeFuncs(f, funcs)
	var targets []uint64
	for _, fr := range frags {
		if !fr.returns {
			targets = append(targets, fr.tailCalls...)
		}
	}
	entries := funcEntries(f, read, tabs, targets)
	out := &CFI{Section: SymSection, CIEs: []*CIE{synthCIE(atEntry)}}
	for _, fr := range frags {
		if fr.returns || slices.ContainsFunc(fr.tailCalls, entries.has) {
			out.add(fr)
		}
	}
	if len(out.FDEs) == 0 {
		return nil
	}
	slices.SortFunc(out.FDEs, func(a, b FDE) int { return cmp.Compare(a.Start, b.Start) })
	return out
}

// add appends the FDEs of fr.
func (fr *CFI) add(h heightFrag) {
	base := uint32(len(fr.data))
	fr.data = append(fr.data, h.data...)
	for _, d := range h.fdes {
		d.instr += base
		fr.FDEs = append(fr.FDEs, d)
	}
}

// analyzeFuncs analyzes funcs on up to GOMAXPROCS goroutines, one
// fragment per function followed, in no particular order. Each reads
// its code from the file (mapping a whole .text to analyze a few
// functions would cost more than all of them).
func analyzeFuncs(f *elf.File, funcs []symFunc) []heightFrag {
	budget := maxSymCode
	var jobs []symFunc
	for _, fn := range funcs {
		if n := fn.end - fn.start; n <= uint64(budget) && n <= maxHeightCode {
			budget -= int(n)
			jobs = append(jobs, fn)
		}
	}
	n := min(runtime.GOMAXPROCS(0), (len(jobs)+63)/64)
	parts := make([][]heightFrag, n)
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			var a analysis
			var code []byte
			for i := w; i < len(jobs); i += n {
				fn := jobs[i]
				s := f.Sections[fn.sect]
				code = resize(code, int(fn.end-fn.start))
				if _, err := s.ReadAt(code, int64(fn.start-s.Addr)); err == nil {
					parts[w] = a.functions(parts[w], fn.start, code)
				}
			}
		})
	}
	wg.Wait()
	return slices.Concat(parts...)
}

// functions appends the fragments of the functions in code, a symbol's
// at addr: the symbol's function, and the functions that follow it
// inside the symbol (assembly whose local symbols are gone: BOLT gave
// the name frame_dummy.cold to all of LLVM's BLAKE3 code in Rust's
// libLLVM), each found where the one before ends (analysis.next).
func (a *analysis) functions(dst []heightFrag, addr uint64, code []byte) []heightFrag {
	for off := 0; off < len(code); {
		if framePointerEntry(code[off:]) || !a.stackHeights(code[off:]) {
			return dst
		}
		dst = append(dst, a.frag(addr+uint64(off)))
		next, ok := a.next()
		if !ok {
			return dst
		}
		off += next
	}
	return dst
}

// fpPrologue is push %rbp; mov %rsp,%rbp.
var fpPrologue = []byte{0x55, 0x48, 0x89, 0xe5}

// framePointerEntry reports whether code opens with fpPrologue (after an
// endbr64). Such a function keeps a frame pointer, which the walk
// follows when a pc has no rule: it is right everywhere but in the first
// two instructions and after the epilogue's pop, so analyzing it gains
// little for its cost (89 of the 2,202 V8 builtins node embeds without
// CFI).
func framePointerEntry(code []byte) bool {
	return bytes.HasPrefix(bytes.TrimPrefix(code, endbr64), fpPrologue)
}

// symTable is a symbol table's records, read once for the scans of
// uncoveredFuncs and funcEntries, and its string table.
type symTable struct {
	data  []byte
	names *elf.Section
}

// symTables returns f's .symtab and .dynsym, those it has and can read.
func symTables(f *elf.File, read sectionData) []symTable {
	var out []symTable
	for _, typ := range []elf.SectionType{elf.SHT_SYMTAB, elf.SHT_DYNSYM} {
		s := f.SectionByType(typ)
		if s == nil || s.Link == 0 || int(s.Link) >= len(f.Sections) {
			continue
		}
		if b, err := read(s); err == nil {
			out = append(out, symTable{data: b, names: f.Sections[s.Link]})
		}
	}
	return out
}

// eachSym calls fn with each record of t.
func (t symTable) eachSym(f *elf.File, fn func(safeelf.Sym)) {
	size := safeelf.SymSize(f)
	for off := 0; size > 0 && off+size <= len(t.data); off += size {
		fn(safeelf.DecodeSym(f, t.data[off:off+size]))
	}
}

// uncoveredFuncs finds the function symbols whose start no FDE covers,
// sorted by start, one per start.
func uncoveredFuncs(f *elf.File, fdes *fdeList, tabs []symTable) []symFunc {
	x := fdes.coverIndex()
	var out []symFunc
	for _, t := range tabs {
		t.eachSym(f, func(sym safeelf.Sym) {
			if fn, ok := uncoveredFunc(f, x, sym); ok {
				out = append(out, fn)
			}
		})
	}
	slices.SortFunc(out, func(a, b symFunc) int { return cmp.Compare(a.start, b.start) })
	return slices.CompactFunc(out, func(a, b symFunc) bool { return a.start == b.start })
}

// uncoveredFunc checks one symbol: a function with code in an executable
// section, whose start no FDE covers.
func uncoveredFunc(f *elf.File, x coverIndex, sym safeelf.Sym) (symFunc, bool) {
	shndx, value := int(sym.Shndx), sym.Value
	if !sym.IsFunc() || sym.Size == 0 || shndx == 0 || shndx >= len(f.Sections) {
		return symFunc{}, false
	}
	s := f.Sections[shndx]
	if s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_EXECINSTR == 0 || value < s.Addr || value >= s.Addr+s.Size {
		return symFunc{}, false
	}
	covered, next, ok := x.covers(value)
	if covered {
		return symFunc{}, false
	}
	end := min(value+sym.Size, s.Addr+s.Size)
	if ok {
		end = min(end, next)
	}
	return symFunc{start: value, end: end, sect: shndx}, end > value
}
