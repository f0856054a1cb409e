// Package fileid owns the identity that keys probee's per-file caches:
// resolver's Index (symbols, and the DWARF read with them) and unwind's
// Cache (tables). Both call Of for the key and keep their values in a
// Cache (cache.go: one build per ID, concurrent callers share it); nothing
// else stats files or reads build-ids to key a cache.
//
// # The key
//
// An ID is the file's GNU build-id when it has one, else its version: device,
// inode, size and modification time. Never its path.
//
//   - A build-id names what the linker produced, so one library at several
//     paths (a container's root and the host's, /proc/PID/map_files links,
//     hard links, copies) is read once, and a rebuilt file, having a new
//     build-id, is read again. pprof and perf name binaries the same way.
//   - Files without one (some Go and hand-linked binaries, non-ELF files)
//     fall back to the version: a file rewritten at the same path changes
//     size or mtime and gets a new ID.
//   - The path is left out: it says where a file is, not what it holds.
//
// What is cached under an ID must be a function of the build: code, CFI,
// symbols. Two files with one build-id but different contents (a stripped
// copy and its original) share one entry, as they always did here.
//
// # Reading once
//
// Of stats the path on every call (a rebuild must show) and reads the
// build-id only for a version it has not seen: the versions' IDs are
// remembered for the life of the process, so resolver and unwind asking
// about the same file read its build-id once between them. The build-id is
// read from the file Of opened, and remembered under that file's version,
// so a file replaced between the stat and the open cannot lend its build-id
// to the old version.
package fileid

import (
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/probee/probee/internal/elfnote"
	"github.com/probee/probee/internal/safeelf"
)

// ID identifies the contents of one file for the per-file caches.
// Comparable: use it as a map key.
type ID struct {
	BuildID string // hex GNU build-id; when set the fields below are zero
	Dev     uint64
	Ino     uint64
	Size    int64
	Mtime   int64 // nanoseconds since the epoch
}

// version is which version of which file a stat saw.
type version struct {
	dev, ino    uint64
	size, mtime int64
}

var known = struct {
	sync.Mutex
	ids map[version]ID
}{ids: map[version]ID{}}

// Of returns the ID of the file at path (symbolic links followed). Errors
// are those of stat and open.
func Of(path string) (ID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return ID{}, err
	}
	v := versionOf(fi)
	if !fi.Mode().IsRegular() {
		return v.id(), nil
	}
	known.Lock()
	id, ok := known.ids[v]
	known.Unlock()
	if ok {
		return id, nil
	}
	return read(path)
}

// read opens path and returns the ID of the file it opened.
func read(path string) (ID, error) {
	fh, err := os.Open(path)
	if err != nil {
		return ID{}, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return ID{}, err
	}
	v := versionOf(fi)
	id := v.id()
	if f, err := safeelf.NewFile(path, fh); err == nil {
		_ = safeelf.Guard(path, func() error {
			if b := elfnote.BuildID(f); b != "" {
				id = ID{BuildID: b}
			}
			return nil
		})
	}
	known.Lock()
	known.ids[v] = id
	known.Unlock()
	return id, nil
}

func versionOf(fi os.FileInfo) version {
	v := version{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		v.dev, v.ino = uint64(st.Dev), st.Ino
	}
	return v
}

func (v version) id() ID { return ID{Dev: v.dev, Ino: v.ino, Size: v.size, Mtime: v.mtime} }

// Key names id in one string that stays the same from run to run and is a
// valid file name (no '/'): "b-" and the hex build-id, else
// "f-DEV-INODE-SIZE-MTIME" (decimal). unwind/diskcache names its files by
// it.
func (id ID) Key() string {
	if id.BuildID != "" {
		return "b-" + id.BuildID
	}
	return fmt.Sprintf("f-%d-%d-%d-%d", id.Dev, id.Ino, id.Size, id.Mtime)
}
