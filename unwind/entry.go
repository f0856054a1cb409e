package unwind

import (
	"debug/elf"

	"github.com/probee/probee/internal/safeelf"
)

// EntrySection names the synthetic CFI entryFrames adds.
const EntrySection = "entry point"

// maxEntryCode bounds the code entryFrames covers: entry code is a few
// instructions (ld.so's is 64 bytes); beyond, code without CFI stays
// without a rule.
const maxEntryCode = 256

// entryFrames covers the code at the ELF entry point with an end-of-stack
// rule when no FDE covers it, up to the next FDE. The kernel starts a
// process there, so a return address in that code is the outermost frame.
// A program's _start says so itself (DW_CFA_undefined rip); ld.so's entry
// code has no CFI at all, and its _dl_start_user is on the stack of every
// library constructor run at start-up (_dl_start_user -> _dl_init ->
// call_init -> constructor): without this, those stacks would end in a
// pc without a rule and be reported as cut. At most maxEntryCode bytes are
// covered. It returns nil when the entry is covered, or there is no entry.
func entryFrames(f *elf.File, frames []*CFI) *CFI {
	entry := f.Entry
	if entry == 0 || !inExecSegment(f, entry) {
		return nil
	}
	end := entry + maxEntryCode
	for _, fr := range frames {
		for i := range fr.FDEs {
			d := &fr.FDEs[i]
			if entry >= d.Start && entry < d.End {
				return nil
			}
			if d.Start > entry && d.Start < end {
				end = d.Start
			}
		}
	}
	if !hasCFI(frames) {
		return nil
	}
	cie := synthCIE([]byte{0x07, 16}) // DW_CFA_undefined r16 (rip)
	return &CFI{Section: EntrySection, CIEs: []*CIE{cie}, FDEs: []FDE{{Offset: -1, Start: entry, End: end}}}
}

func inExecSegment(f *elf.File, addr uint64) bool {
	seg, ok := safeelf.Find(safeelf.Loads(f), addr)
	return ok && seg.Exec()
}
