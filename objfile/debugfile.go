package objfile

import (
	"bytes"
	"debug/elf"
	"fmt"
	"path/filepath"

	"github.com/probee/probee/internal/elfnote"
	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/internal/safefile"
)

// DefaultDebugDir is where distributions install separate debug files.
const DefaultDebugDir = "/usr/lib/debug"

// DebugDir is the directory of separate debug files that dir names under
// root ("" or "/": probee's): "" is DefaultDebugDir under root, "-" none
// (""), anything else dir itself.
func DebugDir(root, dir string) string {
	switch dir {
	case "":
		if root == "" {
			root = "/"
		}
		return filepath.Join(root, DefaultDebugDir)
	case "-":
		return ""
	}
	return dir
}

// fileRef is a file an Object was read from: its path and what fstat said
// of it then. Whatever is read from it later (DWARF, .gopclntab) is read
// only while the path still opens that very file (reopen).
type fileRef struct {
	path string
	info safefile.Info
	// beneath, when set, is the directory path is opened below without
	// following any symbolic link (a debug file beside its binary).
	beneath string
}

// open opens the file as it was first opened.
func (r fileRef) open() (*safefile.File, error) {
	if r.beneath != "" {
		rel, err := filepath.Rel(r.beneath, r.path)
		if err != nil {
			return nil, err
		}
		return safefile.OpenBeneath(r.beneath, rel)
	}
	return safefile.Open(r.path)
}

// reopen opens the file again as an ELF file; an error when the path no
// longer opens the file first read (replaced, or swapped by the process
// that owns its directory). A zero info (an Object read from memory by
// NewObject) is not checked.
func (r fileRef) reopen() (*safeelf.File, error) {
	src, err := r.open()
	if err != nil {
		return nil, err
	}
	if r.info != (safefile.Info{}) && src.Info != r.info {
		src.Close()
		return nil, fmt.Errorf("%s changed since it was read: not read again", r.path)
	}
	return safeelf.FromFile(src)
}

// files lists the files o was read from: o's own and its debug file.
func (o *Object) files() []fileRef {
	refs := []fileRef{{path: o.Path, info: o.info}}
	if o.debug.path != "" {
		refs = append(refs, o.debug)
	}
	return refs
}

// debugCandidates lists where the separate debug file of o may be, most
// specific first: by build-id, then by .gnu_debuglink. The one beside the
// binary (DIR/.debug/LINK) is in a directory the binary's owner may
// control: it is opened below DIR without following links (a .debug
// linked to /etc must not open /etc/shadow).
func (o *Object) debugCandidates(debugRoot string) []fileRef {
	var c []fileRef
	if len(o.BuildID) > 2 {
		c = append(c, fileRef{path: filepath.Join(debugRoot, ".build-id", o.BuildID[:2], o.BuildID[2:]+".debug")})
	}
	if o.debuglink != "" && o.debuglink == filepath.Base(o.debuglink) {
		dir := filepath.Dir(o.Path)
		c = append(c,
			fileRef{path: filepath.Join(dir, ".debug", o.debuglink), beneath: dir},
			fileRef{path: filepath.Join(debugRoot, dir, o.debuglink)})
	}
	return c
}

// mergeDebugFile adds the .symtab functions of o's separate debug file:
// the first candidate that opens as an ELF file, is not o itself, and
// whose build-id (when both have one) equals o's. A missing or unreadable
// debug file is not an error: it only adds names.
func (o *Object) mergeDebugFile(debugRoot string) {
	for _, c := range o.debugCandidates(debugRoot) {
		src, err := c.open()
		if err != nil || src.Info.Dev == o.info.Dev && src.Info.Ino == o.info.Ino {
			if err == nil {
				src.Close()
			}
			continue
		}
		c.info = src.Info
		f, err := safeelf.FromFile(src)
		if err != nil {
			continue
		}
		o.mergeDebugSymbols(c, f)
		f.Close()
		return
	}
}

// mergeDebugSymbols adds the functions of debug file f (at c).
func (o *Object) mergeDebugSymbols(c fileRef, f *safeelf.File) {
	_ = safeelf.Guard(c.path, func() error {
		if id := elfnote.BuildID(f.File); id != "" && o.BuildID != "" && id != o.BuildID {
			return nil
		}
		if o.addSymbols(newSectionTables(f.File), elf.SHT_SYMTAB, fromDebug) {
			o.DebugFile, o.debug = c.path, c
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
