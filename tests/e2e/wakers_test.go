package e2e

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/probee/probee/internal/testgate"
)

// --wakers (issue 46): each wait of the waits fixture joined to the stack
// of what woke it. The reader's pipe is written by main's feed, the
// waiter's condition is signalled by feed, the sleeper's timers expire in
// an interrupt.

// wakerOf is the part of a folded stack from its "[woken by ...]" frame
// on ("" without one).
func wakerOf(stack string) string {
	if i := strings.Index(stack, ";[woken by "); i >= 0 {
		return stack[i+1:]
	}
	return ""
}

// wokenShare is the share of the time thread spent off CPU in fn whose
// waker part holds every one of parts, and that time.
func wokenShare(folded map[string]uint64, thread, fn string, parts ...string) (share float64, all uint64) {
	var match uint64
	for st, v := range folded {
		if !strings.Contains(st, ";"+thread+";"+fn+";") {
			continue
		}
		all += v
		w := wakerOf(st)
		ok := w != ""
		for _, p := range parts {
			ok = ok && strings.Contains(w, p)
		}
		if ok {
			match += v
		}
	}
	if all == 0 {
		return 0, 0
	}
	return float64(match) / float64(all), all
}

// The waits keep their time (as TestOffCPUWaits) and most of each
// thread's is joined to its waker: the reader's to feed's write through
// the kernel's pipe write (user frames without "_[k]", rootward to main),
// the waiter's to feed's pthread_cond_signal through futex_wake, the
// sleeper's to the timer interrupt, its stack ending at the interrupt's
// entry (not the task the interrupt interrupted).
func TestOffCPUWakers(t *testing.T) {
	testgate.Root(t)
	m := measure(t, "--off-cpu", "--wakers", "--", fixture(t, "waits-nofp"))
	self := parseWaits(t, m.r.stderr)
	// The VMs check the joins, the host the time too: an emulated
	// guest's clocks skew under load (a reader 580 ms off CPU against its
	// own 520 ms, on 6.1 beside two other VMs; TestOffCPUWaits).
	share := 0.9
	if inVM() {
		share = 0.75
	}
	wakers := map[string][]string{
		"reader":  {"[woken by waits-nofp];try_to_wake_up_[k];", "pipe_write_[k];", ";write;feed;main;"},
		"waiter":  {"[woken by waits-nofp];try_to_wake_up_[k];", "futex_wake_[k];", ";feed;main;"},
		"sleeper": {"[woken by interrupt];try_to_wake_up_[k];hrtimer_wakeup_[k];"},
	}
	for thread, parts := range wakers {
		fn := waitCalls[thread]
		got, all := wokenShare(m.folded, thread, fn, parts...)
		want := self[thread].offCPU
		t.Logf("%s: %d ns off CPU in %s (the thread measured %d), %.1f%% woken by %q", thread, all, fn, want, 100*got, parts)
		if !inVM() && math.Abs(float64(all)-float64(want)) > 0.02*float64(want) {
			t.Errorf("%s: %d ns off CPU in %s with --wakers, want %d within 2%%", thread, all, fn, want)
		}
		if got < share {
			t.Errorf("%s: %.1f%% of the time in %s joined to a waker with %q, want %.0f%%", thread, 100*got, fn, parts, 100*share)
		}
	}
	for st := range m.folded {
		w := wakerOf(st)
		last := w[strings.LastIndexByte(w, ';')+1:]
		if strings.HasPrefix(w, "[woken by interrupt]") && !strings.HasPrefix(last, "asm_sysvec_") && !strings.HasPrefix(last, "asm_common_interrupt") {
			t.Errorf("an interrupt's wake-up goes on past its entry: %s", st)
		}
		if strings.Contains(w, "bpf_trace_run") || strings.Contains(w, "__bpf_trace") {
			t.Errorf("the BPF dispatch is left in the waker's stack: %s", st)
		}
	}
	checkPprofOffCPU(t, m)
}

// A waker outside the traced processes gets its kernel stack and name
// alone: the test process writes the FIFO that the traced cat waits on.
func TestOffCPUWakersOutside(t *testing.T) {
	testgate.Root(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(1500 * time.Millisecond) // cat is blocked in its open or read by then
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.WriteString("x\n")
			time.Sleep(500 * time.Millisecond)
			f.Close()
		}
	}()
	m := measure(t, "--off-cpu", "--wakers", "--", "cat", fifo)
	comm := filepath.Base(os.Args[0])
	if len(comm) > 15 {
		comm = comm[:15]
	}
	var woken uint64
	for st, v := range m.folded {
		w := wakerOf(st)
		if !strings.HasPrefix(w, "[woken by "+comm+"]") {
			continue
		}
		woken += v
		for _, f := range strings.Split(w, ";")[1:] {
			if !strings.HasSuffix(f, "_[k]") {
				t.Errorf("a user frame %q of a waker outside the traced processes: %s", f, st)
			}
		}
		if !strings.Contains(w, "pipe_") && !strings.Contains(w, "fifo_") {
			t.Errorf("the waker's kernel stack has no pipe or fifo frame: %s", st)
		}
	}
	if woken < 1_000_000_000 {
		t.Errorf("%d ns of cat's waits woken by %s, want over 1 s:\n%s", woken, comm, foldedLines(m.folded))
	}
}
