package e2e

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/probee/probee/internal/testgate"
)

// A dead probee leaves nothing stopped (issue 44): whatever kills it, at
// whatever moment (SIGKILL at a random delay, or SIGPIPE from a pipe the
// reader closed, as `probee ... 2>&1 | head -1`), its command and the -p
// process it held at a dlopen gate are not left stopped (state T or t):
// they run on, or, held before their first instruction, die with probee.
// The 100 kill points fall in the start-up hold, the table loading, the
// attach, the ld.so gate of a command that dlopens in a loop and the
// dlopen gate of a -p process, and the finish.
func TestKillAnywhere(t *testing.T) {
	testgate.Root(t)
	lib := fixture(t, "libdlplugin.so")
	loop := fixture(t, "dlloop-nofp")
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PROBEE_KILL_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (PROBEE_KILL_SEED replays it)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	var points []killPoint
	for _, k := range killKinds {
		for range k.n {
			points = append(points, killPoint{kind: k, delay: time.Duration(rng.Int64N(int64(k.maxDelay) + 1))})
		}
	}
	probe := []string{"--unwind", "dwarf", "--uprobe", lib + ":plugin_leaf"}
	results := make([]string, len(points))
	took := make([]time.Duration, len(points))
	work := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				start := time.Now()
				results[i] = points[i].run(t, i, probe, loop)
				took[i] = time.Since(start)
			}
		}()
	}
	for i := range points {
		work <- i
	}
	close(work)
	wg.Wait()
	left := 0
	byKind := map[string]time.Duration{}
	for i, r := range results {
		byKind[points[i].kind.name] += took[i] / time.Duration(points[i].kind.n)
		if r != "" {
			left++
			t.Errorf("kill point %d (%s after %v): %s", i, points[i].kind.name, points[i].delay, r)
		}
	}
	for _, k := range killKinds {
		t.Logf("%s: %d points, %v each on average", k.name, k.n, byKind[k.name].Round(time.Millisecond))
	}
	t.Logf("%d of %d kill points left a process stopped or a watchdog running", left, len(points))
}

// killKind is one way of killing probee, and how many points use it.
type killKind struct {
	name     string
	n        int
	pid      bool          // -p a running dlloop, not -- dlloop
	pipe     bool          // SIGPIPE: the reader closes probee's stdout and stderr pipe
	lines    int           // pipe: close after this many lines (0: after the delay)
	attached bool          // the delay counts from the "attached" status line, not the start
	maxDelay time.Duration // SIGKILL or pipe close after a random delay up to this
	duration string        // -d, "" for none
}

var killKinds = []killKind{
	{name: "SIGKILL -- CMD", n: 25, maxDelay: 700 * time.Millisecond},
	{name: "SIGKILL -- CMD after attach", n: 20, attached: true, maxDelay: 400 * time.Millisecond},
	{name: "SIGKILL -p", n: 10, pid: true, maxDelay: 700 * time.Millisecond},
	{name: "SIGKILL -p after attach", n: 15, pid: true, attached: true, maxDelay: 400 * time.Millisecond},
	{name: "SIGPIPE -- CMD | head -1", n: 10, pipe: true, lines: 1},
	{name: "SIGPIPE -- CMD -d, pipe closed after attach", n: 10, pipe: true, attached: true, maxDelay: 500 * time.Millisecond, duration: "300ms"},
	{name: "SIGPIPE -p -d, pipe closed after attach", n: 10, pid: true, pipe: true, attached: true, maxDelay: 500 * time.Millisecond, duration: "300ms"},
}

type killPoint struct {
	kind  killKind
	delay time.Duration
}

// run kills one probee as the point says and returns what it left
// behind ("" for nothing).
func (p killPoint) run(t *testing.T, i int, probe []string, loop string) string {
	marker := fmt.Sprintf("PROBEE_KILL_POINT=%d-%d", os.Getpid(), i)
	defer killMarked(marker)
	args := append([]string{}, probe...)
	if p.kind.duration != "" {
		args = append(args, "-d", p.kind.duration)
	}
	if p.kind.pid {
		target := exec.Command(loop, "100000000", "20")
		target.Env = append(os.Environ(), marker)
		if err := target.Start(); err != nil {
			return err.Error()
		}
		defer func() { target.Process.Kill(); target.Wait() }()
		args = append(args, "-p", strconv.Itoa(target.Process.Pid))
	} else {
		args = append(args, "--", loop, "100000000", "20")
	}
	cmd := exec.Command(probee, args...)
	cmd.Env = append(os.Environ(), marker)
	cmd.Dir = t.TempDir()
	isolateMounts(cmd)
	r, w, err := os.Pipe()
	if err != nil {
		return err.Error()
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return err.Error()
	}
	w.Close()
	p.kill(cmd, r)
	cmd.Wait()
	r.Close()
	return leftBehind(marker, 3*time.Second)
}

// kill ends probee: SIGKILL after the delay, or the pipe's read end
// closed (after the lines, or the delay) so that its next write raises
// SIGPIPE. A probee that has not died 10 s later is killed.
func (p killPoint) kill(cmd *exec.Cmd, r *os.File) {
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	for n := 0; n < p.kind.lines; n++ {
		<-lines
	}
	if p.kind.attached {
		for l := range lines {
			if strings.Contains(l, "attached") {
				break
			}
		}
	}
	time.Sleep(p.delay)
	if p.kind.pipe {
		r.Close()
		time.AfterFunc(10*time.Second, func() { cmd.Process.Kill() })
	} else {
		cmd.Process.Signal(syscall.SIGKILL)
	}
	go func() {
		for range lines {
		}
	}()
}

// leftBehind waits up to timeout for every process carrying marker in
// its environment to be out of a stop, and for none of them to be a
// probee (a watchdog); it says what is still there then.
func leftBehind(marker string, timeout time.Duration) string {
	deadline := time.Now().Add(timeout)
	for {
		var bad []string
		for _, pr := range markedProcs(marker) {
			if pr.state == "T" || pr.state == "t" || pr.comm == "probee" {
				bad = append(bad, fmt.Sprintf("pid %d (%s) in state %s", pr.pid, pr.comm, pr.state))
			}
		}
		if len(bad) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return strings.Join(bad, ", ")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type markedProc struct {
	pid         int
	comm, state string
}

// markedProcs lists the live processes whose environment holds marker.
func markedProcs(marker string) []markedProc {
	envs, _ := filepath.Glob("/proc/[0-9]*/environ")
	var out []markedProc
	for _, e := range envs {
		b, err := os.ReadFile(e)
		if err != nil || !strings.Contains("\x00"+string(b)+"\x00", "\x00"+marker+"\x00") {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(e)))
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < 0 || end+3 > len(s) {
			continue
		}
		state := s[end+2 : end+3]
		if state == "Z" || state == "X" {
			continue
		}
		out = append(out, markedProc{pid, s[open+1 : end], state})
	}
	return out
}

// killMarked kills what a kill point left running.
func killMarked(marker string) {
	for _, pr := range markedProcs(marker) {
		syscall.Kill(pr.pid, syscall.SIGKILL)
	}
}
