package resolver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// maxHeldPerfMaps bounds the processes whose perf map (or /tmp) is kept
// open (see jitMap).
const maxHeldPerfMaps = 1024

// staleSlack is how much older than its process a perf map may look and
// still be its own (btime has a resolution of a second).
const staleSlack = 2 * time.Second

// jitMap is what is known of one process's perf map, the names a JIT
// compiler (V8 with --perf-basic-prof, the JVM with perf-map-agent, ...)
// gives the code it writes into anonymous memory.
//
// The process's /tmp is opened when the process is first snapshotted, and
// the map in it as soon as it exists; both stay open. So the map is found
// and read after the process exited, even when it wrote the file only after
// its first event, and then deleted it (/proc/PID/root is gone with the
// process, a path would not survive). A file older than the process is an
// earlier process's with the same pid, and is not read.
type jitMap struct {
	dir       string // /proc/PID/root/tmp (under Scope.Root)
	name      string // perf-NSPID.map
	stat      string // /proc/PID/stat, for the process start time
	start     uint64 // the process's start time (clock ticks after boot) when snapshotted
	notBefore time.Time
	held      *atomic.Int32

	mu    sync.Mutex
	holds bool     // counted in held: tmp and f stay open
	tmp   *os.Root // the process's /tmp, until the file is open
	f     *os.File // the perf map, once found (nil when !holds)
	off   int64    // bytes of the file parsed (whole lines)
	head  []byte   // the file's first bytes, to notice it was rewritten
	syms  []perfSym
	segs  []perfSeg
	done  bool // nothing more will be read: process gone or pid reused
}

// newJITMap records pid's start time and reads its perf map when there is
// one. It returns nil when the process is gone.
func (s *Symbolizer) newJITMap(pid int) *jitMap {
	stat := s.r.rootPath(fmt.Sprintf("/proc/%d/stat", pid))
	start, err := procStart(stat)
	if err != nil {
		return nil
	}
	s.bootOnce.Do(func() { s.boot = bootTime(s.r.rootPath("/proc/stat")) })
	m := &jitMap{stat: stat, start: start, held: &s.heldPerfMaps,
		dir:  s.r.rootPath(fmt.Sprintf("/proc/%d/root/tmp", pid)),
		name: fmt.Sprintf("perf-%d.map", procNSpid(s.r.rootPath(fmt.Sprintf("/proc/%d/status", pid)), pid))}
	if !s.boot.IsZero() {
		m.notBefore = s.boot.Add(time.Duration(start) * time.Second / userHZ).Add(-staleSlack)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holds = m.held.Add(1) <= maxHeldPerfMaps; !m.holds {
		m.held.Add(-1)
	} else if m.tmp, err = os.OpenRoot(m.dir); err != nil {
		m.tmp = nil
	}
	m.readMore(false)
	return m
}

// lookup returns the perf map line naming addr.
func (m *jitMap) lookup(addr uint64) (perfSym, bool) {
	if m == nil {
		return perfSym{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if i := lookupSeg(m.segs, addr); i >= 0 {
		return m.syms[m.segs[i].sym], true
	}
	return perfSym{}, false
}

// ended reports whether nothing more will be read (or there is no map).
func (m *jitMap) ended() bool {
	if m == nil {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.done
}

// lines is how many lines of the perf map were read (0 for none).
func (m *jitMap) lines() int {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.syms)
}

// refresh reads what was appended to the file since the last read, or
// the file when it did not exist then, as long as the process is the one
// snapshotted (same start time) or gone (then what is open still reads).
func (m *jitMap) refresh() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done || m.unchanged() {
		return
	}
	start, err := procStart(m.stat)
	if gone := err != nil; gone || start == m.start {
		m.readMore(gone)
		if !gone {
			return
		}
	}
	m.finish() // gone, or the pid was reused: the file is another process's now
}

// unchanged reports whether the open file has not grown since the last read.
func (m *jitMap) unchanged() bool {
	if m.f == nil {
		return false
	}
	fi, err := m.f.Stat()
	return err == nil && fi.Size() == m.off
}

// readMore parses the lines appended since the last read. A file shorter
// than what was read, or starting differently, was rewritten (by another
// process with the pid): it is read no more. final takes a last line
// without its newline.
func (m *jitMap) readMore(final bool) {
	f := m.file()
	if f == nil {
		return
	}
	if f != m.f {
		defer f.Close()
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() == m.off {
		return
	}
	if fi.Size() < m.off || !m.sameHead(f) {
		m.finish()
		return
	}
	b := make([]byte, fi.Size()-m.off)
	n, err := f.ReadAt(b, m.off)
	if err != nil && !errors.Is(err, io.EOF) {
		return
	}
	syms, used := parsePerfMap(b[:n], final, len(m.syms))
	if m.off == 0 {
		m.head = bytes.Clone(b[:min(used, headSize)])
	}
	m.off += int64(used)
	if len(syms) > 0 {
		m.syms = append(m.syms, syms...)
		m.segs = perfSegments(m.syms)
	}
}

// file returns the perf map: the one kept open, else opened now from the
// kept /tmp or by path (the caller closes it unless it is m.f, which it
// becomes when m holds files). nil when there is none, or it is stale.
func (m *jitMap) file() *os.File {
	if m.f != nil {
		return m.f
	}
	tmp := m.tmp
	if tmp == nil {
		var err error
		if tmp, err = os.OpenRoot(m.dir); err != nil {
			return nil
		}
		defer tmp.Close()
	}
	f, err := openPerfMap(tmp, m.name, m.notBefore)
	if err != nil {
		return nil
	}
	if m.holds {
		m.f = f
		if m.tmp != nil {
			m.tmp.Close()
			m.tmp = nil
		}
	}
	return f
}

// openPerfMap opens name in tmp (never outside it, whatever links the
// process made) when it is a regular file modified at notBefore or later.
// O_NONBLOCK: a FIFO in the name's place must not hang the open.
func openPerfMap(tmp *os.Root, name string, notBefore time.Time) (*os.File, error) {
	f, err := tmp.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
	case !fi.Mode().IsRegular():
		err = fmt.Errorf("%s: not a regular file", name)
	case fi.ModTime().Before(notBefore):
		err = fmt.Errorf("%s: older than its process", name)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// headSize is how much of the file's start is kept to notice a rewrite.
const headSize = 64

// sameHead reports whether the file still starts as it did when read
// first. A process reusing the pid rewrites the file from the start (V8
// opens it with "w"): a file grown past what was read may still be another.
func (m *jitMap) sameHead(f *os.File) bool {
	if len(m.head) == 0 {
		return true
	}
	b := make([]byte, len(m.head))
	n, _ := f.ReadAt(b, 0)
	return bytes.Equal(b[:n], m.head)
}

// finish stops reading and closes what is open: what was read stays.
func (m *jitMap) finish() {
	m.done = true
	if m.f != nil {
		m.f.Close()
		m.f = nil
	}
	if m.tmp != nil {
		m.tmp.Close()
		m.tmp = nil
	}
	if m.holds {
		m.holds = false
		m.held.Add(-1)
	}
}

// holding reports whether m keeps files open.
func (m *jitMap) holding() bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.holds
}

// release closes what is open (the process is forgotten).
func (m *jitMap) release() {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.finish()
	m.mu.Unlock()
}
