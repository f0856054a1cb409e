package objfile

import (
	"cmp"
	"debug/elf"
	"slices"
	"strings"

	"github.com/probee/probee/internal/safeelf"
)

// Code labels are symbols without a type or a size in an executable
// section: entry points that assembly code gives no function symbol, such
// as ld.so's _start and _dl_start_user (in its debug file). Every sample
// taken while ld.so starts a program has ld.so's _start as its outermost
// frame, which was "ld-linux-x86-64.so.2+0x1ab77" without labels. Like PLT
// stubs, labels name frames only, never probe targets, and only where no
// function covers the pc (one inside a function is dropped; a function
// symbol of size 0 covers no code, so a label at its address stays: lld
// links rust-lld with _start such a symbol, and its entry label named
// nothing past the first byte). A label reaches to the next function or
// label, or to the end of its section.
// Names that start with "." or "$" (local assembler labels, mapping
// symbols) are no labels.

// labelOf returns r as a label reaching to the end of its section; ok is
// false when r is no label.
func labelOf(f *elf.File, r safeelf.Sym, name string) (Symbol, bool) {
	if elf.ST_TYPE(r.Info) != elf.STT_NOTYPE || r.Size != 0 || r.Value == 0 ||
		name == "" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "$") ||
		!execSection(f, elf.SectionIndex(r.Shndx)) {
		return Symbol{}, false
	}
	sec := f.Sections[r.Shndx]
	if r.Value < sec.Addr || r.Value-sec.Addr >= sec.Size {
		return Symbol{}, false
	}
	return Symbol{Name: name, Addr: r.Value, Size: sec.Addr + sec.Size - r.Value}, true
}

// finishLabels sorts o.labels by address, keeps one label per address,
// drops those inside a function and ends each at the next function or
// label.
func (o *Object) finishLabels() {
	if len(o.labels) == 0 {
		return
	}
	slices.SortFunc(o.labels, func(a, b Symbol) int {
		return cmp.Or(cmp.Compare(a.Addr, b.Addr), strings.Compare(a.Name, b.Name))
	})
	o.labels = slices.CompactFunc(o.labels, func(a, b Symbol) bool { return a.Addr == b.Addr })
	o.labels = slices.DeleteFunc(o.labels, func(l Symbol) bool { i := o.FuncAt(l.Addr); return i >= 0 && o.Funcs[i].Size > 0 })
	for i := range o.labels {
		l := &o.labels[i]
		if i+1 < len(o.labels) {
			l.Size = min(l.Size, o.labels[i+1].Addr-l.Addr)
		}
		j, _ := slices.BinarySearchFunc(o.Funcs, l.Addr+1, func(s Symbol, a uint64) int { return cmp.Compare(s.Addr, a) })
		if j < len(o.Funcs) {
			l.Size = min(l.Size, o.Funcs[j].Addr-l.Addr)
		}
	}
	o.labels = slices.Clip(o.labels)
}

// labelAt returns the label covering addr, or nil.
func (o *Object) labelAt(addr uint64) *Symbol {
	i, _ := slices.BinarySearchFunc(o.labels, addr+1, func(s Symbol, a uint64) int { return cmp.Compare(s.Addr, a) })
	if i == 0 || addr-o.labels[i-1].Addr >= o.labels[i-1].Size {
		return nil
	}
	return &o.labels[i-1]
}
