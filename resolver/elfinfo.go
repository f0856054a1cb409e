package resolver

import "fmt"

// EntryFileOffset returns the file offset of path's ELF entry point (e_entry),
// where a process starts running after the dynamic loader: `_start` in C
// programs, `_rt0_amd64_linux` in Go ones, whatever the symbol is called.
func EntryFileOffset(path string) (uint64, error) {
	f, fh, err := openELF(path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	seg, ok := segmentOf(loadSegments(f), f.Entry)
	if !ok || !seg.exec {
		return 0, fmt.Errorf("%s: entry point 0x%x is in no executable segment", path, f.Entry)
	}
	return f.Entry - seg.vaddr + seg.off, nil
}

// IsGoBinary reports whether path was linked by the Go toolchain. Go code on
// amd64 always keeps frame pointers, so --unwind auto walks it with them.
func IsGoBinary(path string) bool {
	f, fh, err := openELF(path)
	if err != nil {
		return false
	}
	defer fh.Close()
	return f.Section(".go.buildinfo") != nil || f.Section(".note.go.buildid") != nil
}
