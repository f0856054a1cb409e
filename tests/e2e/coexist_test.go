package e2e

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/internal/testgate"
)

// getppidLoopEnv makes the test binary, started again with it set to N,
// call getppid N times and exit (TestMain): a traced command with an
// exact count of system calls that nothing else in the test makes, in
// make vmtest's VMs too.
const getppidLoopEnv = "PROBEE_E2E_GETPPID_LOOP"

func getppidLoop(n string) {
	k, _ := strconv.Atoi(n)
	for range k {
		syscall.Getppid()
	}
	os.Exit(0)
}

// Other perf users of a tracepoint probee traces still get its hits: the
// kernel hands a tracepoint's hits to its perf events (perf record -e,
// perf stat) only when the BPF programs on it return 1. A counter of the
// tracepoint, inherited by probee and the command it runs, counts every
// getppid of the command's loop, as many as probee reports.
func TestTracepointSharedWithPerf(t *testing.T) {
	testgate.Root(t)
	id := tracepointID(t, "syscalls", "sys_enter_getppid")
	runtime.LockOSThread() // the counter is this thread's, inherited by what it forks
	defer runtime.UnlockOSThread()
	attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_TRACEPOINT, Config: id, Bits: unix.PerfBitInherit}
	attr.Size = uint32(unsafe.Sizeof(attr))
	fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		t.Fatalf("open a counter of syscalls:sys_enter_getppid: %v", err)
	}
	defer unix.Close(fd)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Setenv(getppidLoopEnv, "100") // probee passes it on to the command
	r := run(t, dir, "--tracepoint", "syscalls:sys_enter_getppid", "-o", filepath.Join(dir, "x.folded"), "--", self)
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	m := regexp.MustCompile(`sys_enter_getppid: (\d+) hits`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no hit count on stderr")
	}
	hits, _ := strconv.ParseUint(m[1], 10, 64)
	var b [8]byte
	if _, err := unix.Read(fd, b[:]); err != nil {
		t.Fatalf("read the counter: %v", err)
	}
	if n := binary.LittleEndian.Uint64(b[:]); hits != 100 || n != hits {
		t.Errorf("the counter saw %d getppid calls, probee %d hits (want 100, the same)", n, hits)
	}
}

// tracepointID reads a tracepoint's id from tracefs, mounted where it is
// missing (bpf.Tracefs.Ensure) in a private mount namespace of a thread
// that ends with it.
func tracepointID(t *testing.T, category, name string) uint64 {
	t.Helper()
	type res struct {
		id  uint64
		err error
	}
	ch := make(chan res)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with its namespace
		id, err := privateTracepointID(category, name)
		ch <- res{id, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatalf("tracepoint %s:%s: %v", category, name, r.err)
	}
	return r.id
}

// privateTracepointID is tracepointID on a locked thread.
func privateTracepointID(category, name string) (uint64, error) {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return 0, err
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return 0, err
	}
	if _, err := bpf.Tracefs.Ensure(); err != nil {
		return 0, err
	}
	var b []byte
	var err error
	for _, dir := range []string{bpf.Tracefs.Dir, bpf.Tracefs.Also} { // where Ensure found it
		if b, err = os.ReadFile(filepath.Join(dir, "events", category, name, "id")); err == nil {
			break
		}
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}
