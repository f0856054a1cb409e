package main

import (
	"bufio"
	"fmt"
	"io"
	"sort"
)

// cpio file-type bits (the st_mode S_IF* values newc stores).
const (
	modeDir     = 0o040000
	modeFile    = 0o100000
	modeSymlink = 0o120000
	modeChar    = 0o020000
)

// entry is one newc archive member.
type entry struct {
	name         string // without the leading "/"
	mode         uint32 // type bits | permissions
	data         []byte // file contents or symlink target
	rdevMajor    uint32
	rdevMinor    uint32
	hostPath     string // read at write time instead of data when set
	hostPathSize int64
}

// writeCpio writes entries as a newc ("070701") archive, in order, then the
// trailer. The kernel unpacks an initramfs in archive order, so directories
// must precede what they hold.
func writeCpio(w io.Writer, entries []entry, open func(string) (io.ReadCloser, error)) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	for i, e := range entries {
		if err := writeEntry(bw, uint32(i+1), e, open); err != nil {
			return fmt.Errorf("cpio %s: %w", e.name, err)
		}
	}
	if err := writeHeader(bw, 0, entry{name: "TRAILER!!!"}, 0); err != nil {
		return err
	}
	return bw.Flush()
}

func writeEntry(w *bufio.Writer, ino uint32, e entry, open func(string) (io.ReadCloser, error)) error {
	size := int64(len(e.data))
	if e.hostPath != "" {
		size = e.hostPathSize
	}
	if err := writeHeader(w, ino, e, size); err != nil {
		return err
	}
	if e.hostPath == "" {
		w.Write(e.data)
		return pad(w, size)
	}
	f, err := open(e.hostPath)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := io.Copy(w, f)
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("%s changed size while being archived (%d, want %d)", e.hostPath, n, size)
	}
	return pad(w, size)
}

func writeHeader(w *bufio.Writer, ino uint32, e entry, size int64) error {
	nlink := uint32(1)
	if e.mode&0o170000 == modeDir {
		nlink = 2
	}
	_, err := fmt.Fprintf(w, "070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		ino, e.mode, 0, 0, nlink, 0, size, 0, 0, e.rdevMajor, e.rdevMinor, len(e.name)+1, 0)
	if err != nil {
		return err
	}
	w.WriteString(e.name)
	w.WriteByte(0)
	return pad(w, int64(110+len(e.name)+1))
}

// pad aligns the stream to 4 bytes after n bytes of a field.
func pad(w *bufio.Writer, n int64) error {
	_, err := w.Write(make([]byte, (4-n%4)%4))
	return err
}

// sortedNames is for tests and logs.
func sortedNames(entries []entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.name)
	}
	sort.Strings(out)
	return out
}
