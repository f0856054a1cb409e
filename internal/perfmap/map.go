package perfmap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/internal/safefile"
	"golang.org/x/sys/unix"
)

// maxHeldPerfMaps bounds the processes whose perf map (or /tmp) is kept
// open (see Map).
const maxHeldPerfMaps = 1024

// staleSlack is how much older than its process a perf map may look and
// still be its own (btime has a resolution of a second).
const staleSlack = 2 * time.Second

// Map is what is known of one process's perf map, the names a JIT
// compiler (V8 with --perf-basic-prof, the JVM with perf-map-agent, ...)
// gives the code it writes into anonymous memory. A nil *Map is a process
// without one. Its methods are safe for concurrent use.
//
// The process's /tmp is opened when the process is first snapshotted, and
// the map in it as soon as it exists; both stay open. So the map is found
// and read after the process exited, even when it wrote the file only after
// its first event, and then deleted it (/proc/PID/root is gone with the
// process, a path would not survive). A file older than the process is an
// earlier process's with the same pid, and is not read.
type Map struct {
	dir       string // /proc/PID/root/tmp (under Opener.Root)
	name      string // perf-NSPID.map
	stat      string // /proc/PID/stat, for the process start time
	start     uint64 // the process's start time (clock ticks after boot) when snapshotted
	notBefore time.Time
	held      *atomic.Int32
	warnf     func(format string, args ...any)

	mu    sync.Mutex
	holds bool           // counted in held: tmp and f stay open
	tmp   *safefile.Dir  // the process's /tmp, until the file is open
	f     *safefile.File // the perf map, once found (nil when !holds)
	off   int64          // bytes of the file parsed (whole lines)
	long  bool           // inside a line too long to keep, skipped to its newline
	head  []byte         // the file's first bytes, to notice it was rewritten
	syms  []Symbol
	segs  []perfSeg
	done  bool   // nothing more will be read: process gone or pid reused
	over  string // what of the map was read, when past a budget ("" if not)
	read  int64  // bytes read from the file (holes are skipped, not read)
}

// Opener opens the perf maps of processes, within one budget of maps kept
// open.
type Opener struct {
	// Root is prefixed to /proc ("" or "/": none), for tests with a fake
	// file system.
	Root string
	// Warnf receives a warning when a map is past its budget; nil
	// discards it.
	Warnf func(format string, args ...any)

	held     atomic.Int32 // processes whose perf map is kept open
	bootOnce sync.Once
	boot     time.Time // btime, for the age of perf maps
}

// Held is how many processes' perf maps (or /tmp directories) are kept
// open.
func (o *Opener) Held() int { return int(o.held.Load()) }

// path is p under o.Root.
func (o *Opener) path(p string) string {
	if o.Root == "" || o.Root == "/" {
		return p
	}
	return filepath.Join(o.Root, p)
}

// Open records pid's start time and reads its perf map when there is
// one. It returns nil when the process is gone.
func (o *Opener) Open(pid int) *Map {
	stat := o.path(fmt.Sprintf("/proc/%d/stat", pid))
	start, err := procStart(stat)
	if err != nil {
		return nil
	}
	o.bootOnce.Do(func() { o.boot = bootTime(o.path("/proc/stat")) })
	warnf := o.Warnf
	if warnf == nil {
		warnf = func(string, ...any) {}
	}
	m := &Map{stat: stat, start: start, held: &o.held, warnf: warnf,
		dir:  o.path(fmt.Sprintf("/proc/%d/root/tmp", pid)),
		name: fmt.Sprintf("perf-%d.map", procNSpid(o.path(fmt.Sprintf("/proc/%d/status", pid)), pid))}
	if !o.boot.IsZero() {
		m.notBefore = o.boot.Add(time.Duration(start) * time.Second / userHZ).Add(-staleSlack)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holds = m.held.Add(1) <= maxHeldPerfMaps; !m.holds {
		m.held.Add(-1)
	} else if m.tmp, err = safefile.OpenDir(m.dir); err != nil {
		m.tmp = nil
	}
	m.readMore(false)
	return m
}

// Lookup returns the perf map line naming addr.
func (m *Map) Lookup(addr uint64) (Symbol, bool) {
	if m == nil {
		return Symbol{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if i := lookupSeg(m.segs, addr); i >= 0 {
		return m.syms[m.segs[i].sym], true
	}
	return Symbol{}, false
}

// Ended reports whether nothing more will be read (or there is no map):
// the process is gone and its map read, or the pid runs another process.
func (m *Map) Ended() bool {
	if m == nil {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.done
}

// Lines is how many lines of the perf map were read (0 for none): a
// cache of names drawn from the map is stale once it grows.
func (m *Map) Lines() int {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.syms)
}

// Refresh reads what was appended to the file since the last read, or
// the file when it did not exist then, as long as the process is the one
// snapshotted (same start time) or gone (then what is open still reads).
func (m *Map) Refresh() {
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
func (m *Map) unchanged() bool {
	return m.f != nil && m.f.CurrentSize() == m.off
}

// readMore parses the lines appended since the last read, a chunk at a
// time (the file's size is a claim: a sparse file of 40 GiB holds 40 GiB
// of zeros), up to the perf map budgets. A file shorter than what was
// read, or starting differently, was rewritten (by another process with
// the pid): it is read no more. final takes a last line without its
// newline.
func (m *Map) readMore(final bool) {
	f := m.file()
	if f == nil {
		return
	}
	if f != m.f {
		defer f.Close()
	}
	size := f.Size
	if m.f != nil {
		size = m.f.CurrentSize()
	}
	if size == m.off {
		return
	}
	if size < m.off || !m.sameHead(f) {
		m.finish()
		return
	}
	buf := make([]byte, min(size-m.off, perfChunk))
	had := len(m.syms)
	for m.off < size && !m.done && m.within() && m.readChunk(f, buf, size, final) {
	}
	if !m.done {
		m.within()
	}
	if len(m.syms) > had {
		m.segs = perfSegments(m.syms)
	}
}

// The budgets of one perf map, and of all of them together: what a JIT
// (or whoever writes /tmp/perf-PID.map) can make probee read and keep.
// V8's map of a large node program has a few hundred thousand lines
// (tens of MB).
var (
	maxPerfMapBytes int64 = 512 << 20
	maxPerfMapSyms        = 4 << 20
)

// perfChunk is how much of a perf map is read at once.
const perfChunk = 1 << 20

// within reports whether m is within its budgets; past one it stops
// reading, keeping what it read, and remembers which for the warning.
func (m *Map) within() bool {
	switch {
	case m.off >= maxPerfMapBytes:
		m.over = fmt.Sprintf("its first %s", safeelf.Size(uint64(maxPerfMapBytes)))
	case len(m.syms) >= maxPerfMapSyms:
		m.over = fmt.Sprintf("its first %d lines", maxPerfMapSyms)
	default:
		return true
	}
	m.warnf("%s/%s: only %s were read (the perf map budget): later JIT frames of that process are unnamed", m.dir, m.name, m.over)
	m.finish()
	return false
}

// skipHole moves past a hole at m.off (the unwritten bytes of a sparse
// file: zeros, where no line ends) without reading it, into the line too
// long to keep that it is part of; true when it moved. A sparse map of
// 40 GiB reaches the byte budget at once, instead of after 512 MiB of
// zeros read.
func (m *Map) skipHole(f *safefile.File, size int64) bool {
	next, err := unix.Seek(int(f.OS().Fd()), m.off, unix.SEEK_DATA)
	switch {
	case err == unix.ENXIO: // only a hole up to the end
		next = size
	case err != nil || next <= m.off:
		return false
	}
	m.off, m.long = min(next, size), true
	return true
}

// readChunk reads and parses the next chunk of f (size bytes long); false
// when it read nothing more (an error, or a line not yet ended).
func (m *Map) readChunk(f *safefile.File, buf []byte, size int64, final bool) bool {
	if m.skipHole(f, size) {
		return true
	}
	n, err := f.ReadAt(buf[:min(int64(len(buf)), size-m.off)], m.off)
	m.read += int64(n)
	if n == 0 {
		if err != nil && !errors.Is(err, io.EOF) {
			m.finish()
		}
		return false
	}
	b, start := buf[:n], m.off
	if m.long { // the rest of a line too long to keep
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			m.off += int64(n)
			return true
		}
		m.off, m.long, b = m.off+int64(i)+1, false, b[i+1:]
	}
	last := final && m.off+int64(len(b)) >= size
	syms, used := parsePerfMap(b, last, len(m.syms))
	if m.off == 0 {
		m.head = bytes.Clone(b[:min(used, headSize)])
	}
	if used == 0 && len(b) > maxPerfLine { // no newline in a whole chunk
		m.long, used = true, len(b)
	}
	if used == 0 {
		return m.off > start // a line not yet ended: wait for its end
	}
	m.off += int64(used)
	m.syms = append(m.syms, syms[:min(len(syms), maxPerfMapSyms-len(m.syms))]...)
	return true
}

// file returns the perf map: the one kept open, else opened now from the
// kept /tmp or by path (the caller closes it unless it is m.f, which it
// becomes when m holds files). nil when there is none, or it is stale.
func (m *Map) file() *safefile.File {
	if m.f != nil {
		return m.f
	}
	tmp := m.tmp
	if tmp == nil {
		var err error
		if tmp, err = safefile.OpenDir(m.dir); err != nil {
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

// openPerfMap opens name in tmp (never outside it, and never through a
// link: internal/safefile; a FIFO or device in its place is refused
// without opening it) when it was modified at notBefore or later.
func openPerfMap(tmp *safefile.Dir, name string, notBefore time.Time) (*safefile.File, error) {
	f, err := tmp.Open(name)
	if err != nil {
		return nil, err
	}
	if time.Unix(0, f.Mtime).Before(notBefore) {
		f.Close()
		return nil, fmt.Errorf("%s: older than its process", name)
	}
	return f, nil
}

// headSize is how much of the file's start is kept to notice a rewrite.
const headSize = 64

// sameHead reports whether the file still starts as it did when read
// first. A process reusing the pid rewrites the file from the start (V8
// opens it with "w"): a file grown past what was read may still be another.
func (m *Map) sameHead(f *safefile.File) bool {
	if len(m.head) == 0 {
		return true
	}
	b := make([]byte, len(m.head))
	n, _ := f.ReadAt(b, 0)
	return bytes.Equal(b[:n], m.head)
}

// finish stops reading and closes what is open: what was read stays.
func (m *Map) finish() {
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

// Holding reports whether m keeps files open.
func (m *Map) Holding() bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.holds
}

// Release closes what is open (the process is forgotten).
func (m *Map) Release() {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.finish()
	m.mu.Unlock()
}
