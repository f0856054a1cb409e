package resolver

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// maxHeldPerfMaps bounds the perf map files kept open (see jitMap.f).
const maxHeldPerfMaps = 1024

// jitMap is what is known of one process's perf map, the names a JIT
// compiler (V8 with --perf-basic-prof, the JVM with perf-map-agent, ...)
// gives the code it writes into anonymous memory. The file is opened when
// the process is first snapshotted and kept open: the descriptor reads what
// the process appends later even after it exits, deletes the file, or its
// pid is reused, none of which a path would survive (/proc/PID/root is gone
// with the process).
type jitMap struct {
	pid   int
	path  string // /proc/PID/root/tmp/perf-NSPID.map (under Scope.Root)
	stat  string // /proc/PID/stat, for the process start time
	start uint64 // the process's start time (clock ticks after boot) when snapshotted
	held  *atomic.Int32

	mu   sync.Mutex
	f    *os.File // nil: no file yet, or closed (see done)
	off  int64    // bytes of the file parsed (whole lines)
	head []byte   // the file's first bytes, to notice it was rewritten
	syms []perfSym
	segs []perfSeg
	done bool // nothing more will be read: process gone or pid reused
}

// newJITMap records pid's start time and reads its perf map when there is
// one. It returns nil when the process is gone.
func (s *Symbolizer) newJITMap(pid int) *jitMap {
	stat := s.r.rootPath(fmt.Sprintf("/proc/%d/stat", pid))
	start, err := procStart(stat)
	if err != nil {
		return nil
	}
	nspid := procNSpid(s.r.rootPath(fmt.Sprintf("/proc/%d/status", pid)), pid)
	m := &jitMap{pid: pid, stat: stat, start: start, held: &s.heldPerfMaps,
		path: s.r.rootPath(fmt.Sprintf("/proc/%d/root/tmp/perf-%d.map", pid, nspid))}
	m.mu.Lock()
	m.open()
	m.mu.Unlock()
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

// refresh reads what was appended to the file since the last read, or
// opens it when it did not exist then, as long as the process is the one
// snapshotted (same start time) or gone (then the open file still reads).
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
	gone := err != nil
	switch {
	case !gone && start != m.start: // the pid was reused: the file is another process's
		m.finish()
	case m.f == nil && gone:
		m.done = true
	case m.f == nil:
		m.open()
	default:
		m.readMore(gone)
		if gone {
			m.finish()
		}
	}
}

// unchanged reports whether the open file has not grown since the last read.
func (m *jitMap) unchanged() bool {
	if m.f == nil {
		return false
	}
	fi, err := m.f.Stat()
	return err == nil && fi.Size() == m.off
}

// open opens and reads the file, keeping it open while fewer than
// maxHeldPerfMaps are; past that it is read now and by path later.
func (m *jitMap) open() {
	f, err := os.Open(m.path)
	if err != nil {
		return
	}
	m.f = f
	m.readMore(false)
	if m.held.Add(1) > maxHeldPerfMaps {
		m.close()
	}
}

// readMore parses the lines appended since the last read. A file shorter
// than what was read was rewritten (by another process with the pid): it is
// read no more. final takes a last line without its newline.
func (m *jitMap) readMore(final bool) {
	f := m.f
	if f == nil {
		var err error
		if f, err = os.Open(m.path); err != nil {
			return
		}
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

// finish stops reading: what was read stays.
func (m *jitMap) finish() {
	m.done = true
	m.close()
}

func (m *jitMap) close() {
	if m.f != nil && m.held != nil {
		m.f.Close()
		m.f = nil
		m.held.Add(-1)
	}
}

// release closes the file (the process is forgotten).
func (m *jitMap) release() {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.finish()
	m.mu.Unlock()
}

// procStart returns field 22 of /proc/PID/stat, the process's start time
// in clock ticks after boot (the fields after the command name, which may
// hold spaces and parentheses, start at field 3).
func procStart(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("%s: no command name", path)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, fmt.Errorf("%s: %d fields after the command name, want 20", path, len(f))
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// procNSpid returns the pid of the process in its own pid namespace: the
// last field of "NSpid:" in /proc/PID/status (pid itself on kernels
// without the line, or on the host).
func procNSpid(path string, pid int) int {
	f, err := os.Open(path)
	if err != nil {
		return pid
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "NSpid:")
		if !ok {
			continue
		}
		fs := strings.Fields(rest)
		if len(fs) == 0 {
			return pid
		}
		if n, err := strconv.Atoi(fs[len(fs)-1]); err == nil && n > 0 {
			return n
		}
		return pid
	}
	return pid
}
