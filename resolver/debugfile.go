package resolver

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"

	"github.com/probee/probee/internal/elfnote"
	"github.com/probee/probee/internal/safeelf"
)

// DefaultDebugDir is where distributions install separate debug files.
const DefaultDebugDir = "/usr/lib/debug"

// debugCandidates lists where the separate debug file of o may be, most
// specific first: by build-id, then by .gnu_debuglink.
func (o *Object) debugCandidates(debugRoot string) []string {
	var c []string
	if len(o.BuildID) > 2 {
		c = append(c, filepath.Join(debugRoot, ".build-id", o.BuildID[:2], o.BuildID[2:]+".debug"))
	}
	if o.debuglink != "" && o.debuglink == filepath.Base(o.debuglink) {
		dir := filepath.Dir(o.Path)
		c = append(c,
			filepath.Join(dir, ".debug", o.debuglink),
			filepath.Join(debugRoot, dir, o.debuglink))
	}
	return c
}

// findDebugFile returns the first candidate that exists, is not o itself,
// and whose build-id (when both have one) equals o's.
func (o *Object) findDebugFile(debugRoot string) string {
	self, _ := os.Stat(o.Path)
	for _, p := range o.debugCandidates(debugRoot) {
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() || (self != nil && os.SameFile(self, st)) {
			continue
		}
		return p
	}
	return ""
}

// mergeDebugFile adds the .symtab functions of o's separate debug file.
// A missing or unreadable debug file is not an error: it only adds names.
func (o *Object) mergeDebugFile(debugRoot string) {
	p := o.findDebugFile(debugRoot)
	if p == "" {
		return
	}
	f, err := safeelf.Open(p)
	if err != nil {
		return
	}
	defer f.Close()
	_ = safeelf.Guard(p, func() error {
		if id := elfnote.BuildID(f.File); id != "" && o.BuildID != "" && id != o.BuildID {
			return nil
		}
		if o.addSymbols(newSectionTables(f.File), elf.SHT_SYMTAB, fromDebug) {
			o.DebugFile = p
		}
		return nil
	})
}

// debuglink returns the file name in .gnu_debuglink, or "".
func debuglink(f *elf.File) string {
	s := f.Section(".gnu_debuglink")
	if s == nil || s.Size > 4096 {
		return ""
	}
	b, err := s.Data()
	if err != nil {
		return ""
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return string(b[:i])
	}
	return ""
}
