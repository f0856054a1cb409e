// Package fileid owns the identity that keys probee's per-file caches:
// resolver's Index (symbols, and the DWARF read with them) and unwind's
// Cache (tables, in memory and on disk). Both call Open for the key and
// the file to read, and keep their values in a Cache (cache.go: one build
// per ID, concurrent callers share it); nothing else stats files or reads
// build-ids to key a cache.
//
// # The key
//
// An ID is the file's version as the descriptor that is read shows it
// (device, inode, size, modification and change times) together with its
// GNU build-id when it has one. Never its path, and never the build-id
// alone.
//
//   - A build-id is what the file says of itself: anyone can write a file
//     with root's libc's build-id and other symbols or a corrupt
//     .eh_frame. Keyed by build-id alone, such a copy named root's own
//     process's frames in the same run and poisoned the table cache on
//     disk for later runs of the genuine binary. The version names the
//     very bytes read: a cache entry written from one file is never used
//     for another.
//   - The change time (ctime) is in the version because nobody can set
//     it: a file rewritten in place with its size and modification time
//     restored (utimes) is a new version all the same.
//   - The cost: one library reached through two different files (a
//     container's overlay copy and the host's) is read twice, where the
//     build-id alone read it once.
//   - The build-id stays in the ID (and the disk cache's file name), so
//     an entry is also never used across rebuilds.
//   - The path is left out: it says where a file is, not what it holds;
//     hard links and /proc/PID/map_files links to one file share an ID.
//
// # Reading once
//
// Open opens the path (internal/safefile: no blocking, regular files only)
// and reads the build-id only for a version it has not seen: the versions'
// build-ids are remembered for the life of the process, so resolver and
// unwind asking about the same file read its build-id once between them.
// The caller builds from the descriptor Open returns, so what is cached
// under an ID is what was read under it.
package fileid

import (
	"fmt"
	"sync"

	"github.com/probee/probee/internal/elfnote"
	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/internal/safefile"
)

// ID identifies the contents of one file for the per-file caches.
// Comparable: use it as a map key.
type ID struct {
	BuildID string // hex GNU build-id, "" when the file has none
	Dev     uint64
	Ino     uint64
	Size    int64
	Mtime   int64 // nanoseconds since the epoch
	Ctime   int64 // nanoseconds since the epoch
}

var known = struct {
	sync.Mutex
	buildIDs map[safefile.Info]string
}{buildIDs: map[safefile.Info]string{}}

// Open opens the regular file at path (internal/safefile.Open) and returns
// its ID and the opened file, which the caller reads from and closes.
// Errors are those of the open.
func Open(path string) (ID, *safefile.File, error) {
	return open(path, safefile.Open)
}

// OpenNoFollow is Open for the path of a file a process maps (as
// procmaps.File gives it: a path the kernel printed, which names no link):
// a link in its last component (the file swapped since) is refused
// (internal/safefile.OpenNoFollow).
func OpenNoFollow(path string) (ID, *safefile.File, error) {
	return open(path, safefile.OpenNoFollow)
}

func open(path string, opener func(string) (*safefile.File, error)) (ID, *safefile.File, error) {
	f, err := opener(path)
	if err != nil {
		return ID{}, nil, err
	}
	return Of(f), f, nil
}

// Of returns the ID of an opened file.
func Of(f *safefile.File) ID {
	known.Lock()
	b, ok := known.buildIDs[f.Info]
	known.Unlock()
	if !ok {
		b = buildID(f)
		known.Lock()
		known.buildIDs[f.Info] = b
		known.Unlock()
	}
	return ID{BuildID: b, Dev: f.Dev, Ino: f.Ino, Size: f.Size, Mtime: f.Mtime, Ctime: f.Ctime}
}

// buildID reads f's GNU build-id, "" when it has none or is no ELF file.
func buildID(f *safefile.File) string {
	e, err := safeelf.NewFile(f.Name, f)
	if err != nil {
		return ""
	}
	var b string
	_ = safeelf.Guard(f.Name, func() error { b = elfnote.BuildID(e); return nil })
	return b
}

// Key names id in one string that stays the same from run to run while
// the file is unchanged, and is a valid file name (no '/'):
// "b-BUILDID-DEV-INODE-SIZE-MTIME-CTIME" (decimal numbers), or "f-" and
// the numbers for a file without a build-id. unwind/diskcache names its
// files by it.
func (id ID) Key() string {
	v := fmt.Sprintf("%d-%d-%d-%d-%d", id.Dev, id.Ino, id.Size, id.Mtime, id.Ctime)
	if id.BuildID != "" {
		return "b-" + id.BuildID + "-" + v
	}
	return "f-" + v
}

// OfPath is the ID of the file at path now (Open, then Close): for
// tools and tests that name a cache entry, not for reading the file.
func OfPath(path string) (ID, error) {
	id, f, err := Open(path)
	if err != nil {
		return ID{}, err
	}
	f.Close()
	return id, nil
}
