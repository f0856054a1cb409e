package diskcache

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/probee/probee/unwind"
	"golang.org/x/sys/unix"
)

// readFile decodes the cache file at path, mapped rather than read: the
// table is decoded from the page cache without a copy of the file on the
// heap. The file is never written in place (write renames a new one over
// it), but something else may truncate it while it is mapped: the fault
// that follows is turned into an error, not a crash.
func readFile(key, path string) (t *unwind.Table, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() < headerSize+crcSize || fi.Size() > maxFileSize {
		return nil, fmt.Errorf("%d bytes: truncated or not a table cache file", fi.Size())
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("map: %w", err)
	}
	defer unix.Munmap(data)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("changed while read: %v", r)
		}
	}()
	return decode(key, data)
}

// maxFileSize is more than any table takes (4 GiB of BPF maps is the
// most a table can use).
const maxFileSize = 1 << 33
