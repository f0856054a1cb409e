package bpf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/internal/monotime"
	"github.com/probee/probee/internal/procmaps"
	"golang.org/x/sys/unix"
)

const mmapRingPages = 64 // data pages per CPU (256 KiB)

// MmapWatcher reads mapping records from one perf ring per CPU.
type MmapWatcher struct {
	fds   []int
	rings [][]byte
	held  []wire.MmapEvent // records too recent to order yet (see readAll)
	h     MmapHandlers
	lost  atomic.Uint64
	kick  chan struct{}
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	mu    sync.Mutex
}

// MmapHandlers take the watcher's records, from one goroutine. Ordered
// gets every record in time order, 10-60 ms after it was made (see
// readAll). Early, when set, gets each record as soon as it is read, in no
// order across CPUs: for what needs no order and should not wait, such as
// loading the unwind table of a file mapped for the first time.
type MmapHandlers struct {
	Ordered func(wire.MmapEvent)
	Early   func(wire.MmapEvent)
}

// WatchMmaps starts recording executable mappings system-wide and hands
// the records to h every 50 ms, or at once after Kick (rings hold the
// records meanwhile; a faster tick costs probee 0.4% of a core).
func WatchMmaps(h MmapHandlers) (*MmapWatcher, error) {
	return watchMmaps(h, 50*time.Millisecond)
}

func watchMmaps(h MmapHandlers, tick time.Duration) (*MmapWatcher, error) {
	cpus, err := onlineCPUs()
	if err != nil {
		return nil, err
	}
	w := &MmapWatcher{h: h, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	for _, cpu := range cpus {
		if err := w.open(cpu); err != nil {
			w.closeRings()
			return nil, err
		}
	}
	go w.loop(tick)
	return w, nil
}

func (w *MmapWatcher) open(cpu int) error {
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_DUMMY,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Bits: unix.PerfBitMmap | unix.PerfBitMmap2 | unix.PerfBitComm | unix.PerfBitCommExec |
			unix.PerfBitTask | unix.PerfBitSampleIDAll | unix.PerfBitUseClockID,
		Clockid:     unix.CLOCK_MONOTONIC,  // comparable with the time a read starts
		Sample_type: unix.PERF_SAMPLE_TIME, // every record ends in its u64 time
	}
	fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("open mmap watcher on cpu %d: %w", cpu, err)
	}
	page := os.Getpagesize()
	ring, err := unix.Mmap(fd, 0, page*(1+mmapRingPages), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return fmt.Errorf("map mmap watcher ring on cpu %d: %w", cpu, err)
	}
	w.fds = append(w.fds, fd)
	w.rings = append(w.rings, ring)
	return nil
}

func (w *MmapWatcher) loop(every time.Duration) {
	defer close(w.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			w.readAll(true)
			return
		case <-tick.C:
			w.readAll(false)
		case <-w.kick:
			w.readAll(false)
		}
	}
}

// Kick makes the watcher read its rings now rather than at its next tick:
// when something waits for a record already made (a stack in a file
// whose table is not loaded yet). It never blocks.
func (w *MmapWatcher) Kick() {
	select {
	case w.kick <- struct{}{}:
	default: // a read is due already
	}
}

// Flush handles every record queued so far before returning (nothing once
// the watcher is closed: its rings are gone).
func (w *MmapWatcher) Flush() { w.readAll(true) }

// Lost is the number of records the kernel dropped (rings full).
func (w *MmapWatcher) Lost() uint64 { return w.lost.Load() }

// Close reads what is left, stops the watcher and frees its rings.
func (w *MmapWatcher) Close() {
	w.once.Do(func() {
		close(w.stop)
		<-w.done
		w.closeRings()
	})
}

func (w *MmapWatcher) closeRings() {
	w.mu.Lock() // not while Flush reads them
	defer w.mu.Unlock()
	for i := range w.fds {
		unix.Munmap(w.rings[i])
		unix.Close(w.fds[i])
	}
	w.fds, w.rings = nil, nil
}

// orderDelay is how long a record waits before it is handled: a record is
// stamped before it is written, and the rings are read one after the
// other, so a record read now may be older than one another CPU writes
// after its ring was read. Past this delay every older record is in.
const orderDelay = 10 * time.Millisecond

// readAll reads every ring and handles the records in time order: a
// process forks on one CPU and its child execs on another, and the fork
// must come first. Records younger than orderDelay wait for the next read,
// unless all is set (Flush, Close).
func (w *MmapWatcher) readAll(all bool) {
	w.mu.Lock() // readAll runs from the loop and from Flush
	defer w.mu.Unlock()
	now := monotime.Now()
	batch := w.held
	for _, ring := range w.rings {
		batch = w.readRing(ring, batch)
	}
	if w.h.Early != nil {
		for _, ev := range batch[len(w.held):] {
			w.h.Early(ev)
		}
	}
	var ready []wire.MmapEvent
	ready, w.held = orderRecords(batch, now-uint64(orderDelay.Nanoseconds()), all)
	for _, ev := range ready {
		w.h.Ordered(ev)
	}
}

// orderRecords sorts batch by time and splits it into the records stamped
// up to cutoff, to handle now, and the later ones, to hold (none with all).
func orderRecords(batch []wire.MmapEvent, cutoff uint64, all bool) (ready, held []wire.MmapEvent) {
	sort.SliceStable(batch, func(i, j int) bool { return batch[i].Time < batch[j].Time })
	n := len(batch)
	if !all {
		n = sort.Search(len(batch), func(i int) bool { return batch[i].Time > cutoff })
	}
	return batch[:n], slices.Clone(batch[n:])
}

func (w *MmapWatcher) readRing(ring []byte, batch []wire.MmapEvent) []wire.MmapEvent {
	meta := (*unix.PerfEventMmapPage)(unsafe.Pointer(&ring[0]))
	data := ring[os.Getpagesize():]
	head := atomic.LoadUint64(&meta.Data_head)
	tail := atomic.LoadUint64(&meta.Data_tail)
	for tail+8 <= head {
		hdr := ringBytes(data, tail, 8)
		rsize := uint64(binary.NativeEndian.Uint16(hdr[6:]))
		if rsize < 8 || tail+rsize > head {
			break
		}
		ev, ok := w.record(binary.NativeEndian.Uint32(hdr), binary.NativeEndian.Uint16(hdr[4:]), ringBytes(data, tail+8, rsize-8))
		if ok {
			batch = append(batch, ev)
		}
		tail += rsize
	}
	atomic.StoreUint64(&meta.Data_tail, tail)
	return batch
}

// ringBytes copies n bytes at offset off of the circular buffer data.
func ringBytes(data []byte, off, n uint64) []byte {
	out := make([]byte, n)
	start := off % uint64(len(data))
	k := copy(out, data[start:])
	copy(out[k:], data)
	return out
}

func (w *MmapWatcher) record(typ uint32, misc uint16, b []byte) (wire.MmapEvent, bool) {
	if len(b) < 16 {
		return wire.MmapEvent{}, false
	}
	ne := binary.NativeEndian
	time := ne.Uint64(b[len(b)-8:])
	switch typ {
	case unix.PERF_RECORD_MMAP2:
		ev, ok := parseMmap2(b[:len(b)-8])
		ev.Time = time
		return ev, ok
	case unix.PERF_RECORD_COMM:
		pid := ne.Uint32(b)
		exec := misc&unix.PERF_RECORD_MISC_COMM_EXEC != 0 && pid == ne.Uint32(b[4:])
		return wire.MmapEvent{Time: time, PID: int(pid), Exec: true, Comm: cString(b[8 : len(b)-8])}, exec
	case unix.PERF_RECORD_FORK: // pid, ppid, tid, ptid, time
		pid, ppid := ne.Uint32(b), ne.Uint32(b[4:])
		fork := pid != ppid && pid == ne.Uint32(b[8:]) // a process, not a thread
		return wire.MmapEvent{Time: time, PID: int(pid), Fork: true, PPID: int(ppid)}, fork
	case unix.PERF_RECORD_LOST:
		w.lost.Add(ne.Uint64(b[8:]))
	}
	return wire.MmapEvent{}, false
}

// parseMmap2 decodes pid, tid, addr, len, pgoff, maj, min, ino, ino_gen,
// prot, flags and the file name of an MMAP2 record.
func parseMmap2(b []byte) (wire.MmapEvent, bool) {
	const fixed = 4 + 4 + 8*3 + 4 + 4 + 8*2 + 4 + 4
	if len(b) < fixed {
		return wire.MmapEvent{}, false
	}
	ne := binary.NativeEndian
	addr, length := ne.Uint64(b[8:]), ne.Uint64(b[16:])
	ev := wire.MmapEvent{
		PID: int(ne.Uint32(b)), Start: addr, End: addr + length,
		Pgoff: ne.Uint64(b[24:]), Ino: ne.Uint64(b[40:]), Path: cString(b[fixed:]),
		Dev: procmaps.Intern(procmaps.DevName(ne.Uint32(b[32:]), ne.Uint32(b[36:]))),
	}
	return ev, true
}

func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, fmt.Errorf("read online cpus: %w", err)
	}
	return parseCPUList(strings.TrimSpace(string(b)))
}

// parseCPUList parses "0-3,5,7-8".
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, found := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("parse cpu list %q: %w", s, err)
		}
		b := a
		if found {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("parse cpu list %q: bad range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// cString is the NUL-terminated string at the start of b, interned: the
// mappings of every process a run saw are kept (procmaps.Intern).
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return procmaps.Intern(string(b))
}
