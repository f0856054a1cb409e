package e2e

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/internal/testgate"
)

// Sampling the no-FP spinner at 499 Hz: complete stacks (DWARF, tail calls).
// The spinner runs 2 s of wall time, about 1000 samples on an idle
// machine; on a loaded one it gets less CPU, so 100 samples are enough for
// the ratio.
//
// Every sample in the spinning functions reaches main, on every kernel,
// and every sample that stops short of the process's entry is reported as a
// partial stack. Where bpf_find_vma finds tables (5.17+) at most 2% of the
// samples stop short; before, a process's first samples, in ld.so before
// its mappings are registered, may. (Samples in ld.so's start-up and in the
// exit are complete without reaching main: under emulation they are over 5%.)
func TestSampleSpinFullChain(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "spin-nofp")
	r := run(t, "", "--sample", "-F", "499", "--", bin, "2")
	var all, spin, spinFull, short uint64
	shorts := map[string]uint64{}
	for st, n := range folded(t, r.stdout) {
		rest, ok := strings.CutPrefix(st, "sample;spin-nofp;")
		if !ok {
			continue
		}
		all += n
		if strings.Contains(st, ";spin_") {
			spin += n
			spinFull += count(strings.Contains(st, ";main;"), n)
		}
		if stopsShort(rest) {
			short += n
			shorts[st] = n
		}
	}
	partial := partialStacks(r.stderr)
	t.Logf("%d samples; %d of %d in spin_* reach main; %d stop short of _start, %d reported partial:\n%s", all, spinFull, spin, short, partial, foldedLines(shorts))
	if spin < 100 || spinFull != spin {
		t.Errorf("%d of %d samples in spin_* reach main, want all of >= 100\n%s", spinFull, spin, r.stderr)
	}
	if partial < short {
		t.Errorf("%d samples stop short of _start, %d reported partial (want all reported):\n%s\n%s", short, partial, foldedLines(shorts), r.stderr)
	}
	if findVMA() && float64(short) > 0.02*float64(all) {
		t.Errorf("%d of %d samples stop short of _start, want <= 2%%:\n%s\n%s", short, all, foldedLines(shorts), r.stderr)
	}
}

// A stripped program (spin-stripped: no symbol at its entry point, as
// most of Debian's programs) has its samples start at _start, named from
// the FDE that covers the entry point, not at "spin-stripped+0x..." (what
// they started at before).
func TestSampleStrippedEntry(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "spin-stripped")
	r := run(t, "", "--sample", "-F", "499", "--", bin, "1")
	var all, short uint64
	shorts := map[string]uint64{}
	for st, n := range folded(t, r.stdout) {
		rest, ok := strings.CutPrefix(st, "sample;spin-stripped;")
		if !ok {
			continue
		}
		all += n
		if stopsShort(rest) {
			short += n
			shorts[st] = n
		}
	}
	t.Logf("%d samples, %d not from _start", all, short)
	if all < 100 || short > 0 {
		t.Errorf("%d of %d samples do not start at _start (want none of >= 100):\n%s", short, all, foldedLines(shorts))
	}
}

// findVMA reports whether probee finds tables through bpf_find_vma here
// (not under TestFallbacks' legacy build).
func findVMA() bool {
	return bpf.HaveFindVMA() && !strings.Contains(os.Getenv("PROBEE_COMPAT"), "legacy")
}

// stopsShort reports whether a sample's user stack does not reach the
// process's entry: _start, or during start-up ld.so's _start or
// _dl_start_user (labels of its debug file; an address without one).
// Samples with no user stack to reach it are not counted: probee marks
// them (see TestSampleExecAndExit): "[exiting]" in the exit, once the
// address space is being torn down, and "[in execve]" in execve, where the
// user registers are still those of the image being replaced while memory
// is the new image's.
func stopsShort(stack string) bool {
	u := userFrames(stack)
	if len(u) == 0 || u[0] == "[exiting]" || u[0] == "[in execve]" {
		return false
	}
	return u[0] != "_start" && u[0] != "_dl_start_user" && !strings.HasPrefix(u[0], "ld-linux-x86-64.so.2+0x")
}

// userFrames are the frames of a collapsed stack that are not the kernel's.
func userFrames(stack string) []string {
	var u []string
	for _, f := range strings.Split(stack, ";") {
		if !strings.HasSuffix(f, "_[k]") {
			u = append(u, f)
		}
	}
	return u
}

func count(ok bool, n uint64) uint64 {
	if ok {
		return n
	}
	return 0
}

var partialRE = regexp.MustCompile(`partial stacks: (\d+) `)

// partialStacks sums probee's "partial stacks: N ..." lines.
func partialStacks(stderr string) (n uint64) {
	for _, m := range partialRE.FindAllStringSubmatch(stderr, -1) {
		v, _ := strconv.ParseUint(m[1], 10, 64)
		n += v
	}
	return n
}

// Sampling deep recursion with tail calls: stacks >= 145 frames deep. The
// recursion spends equal time at each of its 150 levels, so about 3% of the
// samples (~1000 in ~1 s at 999 Hz) are that deep; with 300 samples, none
// were, once in a while.
func TestSampleDeepRecursion(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "recurse-nofp")
	r := run(t, "", "--sample", "-F", "999", "--", bin, "150", "1000000")
	deepest := 0
	for st := range folded(t, r.stdout) {
		if strings.HasPrefix(st, "sample;recurse-nofp;") {
			deepest = max(deepest, userDepth(st))
		}
	}
	if deepest < 145 {
		t.Errorf("deepest sampled stack has %d user frames, want >= 145\n%s", deepest, r.stderr)
	}
}

// Samples in the vDSO (clock-nofp spins in clock_gettime) are unwound by
// the table probee builds from the kernel's vDSO image and named from its
// symbols: every one reaches _start through __vdso_clock_gettime and
// libc's clock_gettime, and no sample stops short. Before, the vDSO had
// no table (it has no file): it was walked by frame pointers, which lose
// the caller where a vDSO function has not set up its frame, and its
// frames were "[vdso]+0x...".
func TestSampleVDSO(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "clock-nofp")
	r := run(t, "", "--sample", "-F", "499", "--", bin, "1")
	const chain = "sample;clock-nofp;_start;__libc_start_main;__libc_start_call_main;main;c_loop;c_read;clock_gettime;__vdso_clock_gettime"
	var in, full, short uint64
	shorts, others := map[string]uint64{}, map[string]uint64{}
	for st, n := range folded(t, r.stdout) {
		rest, ok := strings.CutPrefix(st, "sample;clock-nofp;")
		if ok && stopsShort(rest) {
			short += n
			shorts[st] = n
		}
		if strings.Contains(st, ";[vdso]") || strings.Contains(st, ";__vdso_") {
			in += n
			if strings.HasPrefix(st, chain) {
				full += n
			} else {
				others[st] = n
			}
		}
	}
	t.Logf("%d samples in the vDSO, %d complete; %d stop short:\n%s", in, full, short, foldedLines(shorts))
	if in < 100 || full != in {
		t.Errorf("%d of %d samples in the vDSO reach _start through %s, want all of >= 100; the others:\n%s\n%s", full, in, chain, foldedLines(others), r.stderr)
	}
	if short > 0 {
		t.Errorf("%d samples stop short of _start:\n%s", short, foldedLines(shorts))
	}
}

// Samples inside execve (sh runs /bin/true 2,000 times) and in the exit of
// processes whose memory is being unmapped (exitmem-nofp, 3 x 256 MB) are
// not partial stacks: the walk cannot go on because the user stack is gone
// or not the task's own. probee marks them: "[in execve]" (no user frames:
// the registers are the old program's) and "[exiting]" (the frames walked
// before the memory was gone); none of them is "[truncated]", and they are
// not counted as partial. Before, they were "[truncated];0x40a9ce;..." and
// "[truncated];_Exit", each counted as cut at an unknown pc. (execve
// before bprm_execve, which sets in_execve, still runs with the old
// program's memory: those stacks are walked as any other.)
//
// The shell's samples are all named, those of its vfork children before
// their exec included (from the shell's mappings: they run its code until
// execve): none is a bare address. Before, those children were named from
// the mappings read last, /bin/true's: 27-43 of about 110 sh samples were
// bare addresses. Its samples in vfork, whose return address glibc keeps
// in rdi across the system call, are complete (they were all cut).
func TestSampleExecAndExit(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "exitmem-nofp")
	script := `i=0; while [ $i -lt 2000 ]; do /bin/true; i=$((i+1)); done; exec "$0" 256 3`
	r := run(t, "", "--sample", "-F", "999", "--", "sh", "-c", script, bin)
	var inExec, exiting, cut, sh, bare, vfork, vforkCut uint64
	cuts, bares, vforkCuts := map[string]uint64{}, map[string]uint64{}, map[string]uint64{}
	for st, n := range folded(t, r.stdout) {
		u := userFrames(st)
		if strings.HasPrefix(st, "sample;sh;") {
			sh += n
			if slices.Contains(u, "vfork") {
				vfork += n
				vforkCut += count(u[2] == "[truncated]", n)
				if u[2] == "[truncated]" {
					vforkCuts[st] = n
				}
			}
			if slices.ContainsFunc(u, addressFrame) {
				bare += n
				bares[st] = n
			}
		}
		switch {
		case len(u) > 2 && u[2] == "[in execve]":
			inExec += n
		case len(u) > 2 && u[2] == "[exiting]":
			exiting += n
		case (strings.Contains(st, ";bprm_execve_[k]") || strings.Contains(st, ";exit_mmap_[k]")) && strings.Contains(st, "[truncated]"):
			cut += n
			cuts[st] = n
		}
	}
	partial := partialStacks(r.stderr)
	t.Logf("%d samples in execve, %d in an exit, marked; %d cut; %d partial stacks reported; %d of %d sh samples with a bare address; %d in vfork",
		inExec, exiting, cut, partial, bare, sh, vfork)
	if vfork < 3 || vforkCut > 0 {
		t.Errorf("%d of %d sh samples in vfork are [truncated], want none of >= 3:\n%s", vforkCut, vfork, foldedLines(vforkCuts))
	}
	if sh < 20 || bare > 0 {
		t.Errorf("%d of %d sh samples have a bare address frame, want none of >= 20:\n%s", bare, sh, foldedLines(bares))
	}
	if inExec < 5 || exiting < 8 {
		t.Errorf("%d samples marked [in execve], %d [exiting], want >= 5 and >= 8\n%s", inExec, exiting, r.stderr)
	}
	if cut > 0 {
		t.Errorf("%d samples in bprm_execve or an exit are [truncated]:\n%s", cut, foldedLines(cuts))
	}
	if partial >= inExec+exiting {
		t.Errorf("%d partial stacks reported, %d samples marked: marked samples must not count as partial\n%s", partial, inExec+exiting, r.stderr)
	}
}

// A static non-PIE Go program that executes itself (gofx 1500 exec): from
// exec_mmap to start_thread the registers are the old image's and the
// memory is the new one's, at the same addresses, so the old pc names a
// function of the new image (internal/runtime/syscall/linux.Syscall6) and
// the walk ended there, uncut: one-frame stacks, 30-50 a run, that
// mark_gone never saw. probee marks them "[in execve]" (the word at the
// stack pointer cannot be read); samples in execve before exec_mmap keep
// the old program's whole stack, down to runtime.goexit.
func TestSampleExecStaleRegs(t *testing.T) {
	testgate.Root(t)
	r := run(t, "", "--sample", "-F", "999", "--", fixture(t, "gofx"), "1500", "exec")
	var marked, whole uint64
	others := map[string]uint64{}
	for st, n := range folded(t, r.stdout) {
		if !strings.HasPrefix(st, "sample;gofx;") || !strings.Contains(st, ";bprm_execve_[k]") {
			continue
		}
		switch u := userFrames(st); {
		case u[2] == "[in execve]":
			marked += n
		case u[2] == "runtime.goexit.abi0" || u[2] == "_rt0_amd64_linux":
			whole += n
		default:
			others[st] = n
		}
	}
	t.Logf("samples in execve: %d marked [in execve], %d whole stacks, %d others", marked, whole, len(others))
	if len(others) > 0 {
		t.Errorf("samples in execve neither marked nor whole (the old registers walked in the new memory):\n%s", foldedLines(others))
	}
	if marked < 20 || whole < 3 {
		t.Errorf("%d samples in execve marked, %d whole, want >= 20 and >= 3\n%s", marked, whole, r.stderr)
	}
}

var addressRE = regexp.MustCompile(`^(0x[0-9a-f]+|\[unknown\])$`)

// addressFrame reports whether a frame is a bare address: no mapping of
// its process was known to hold it ("[unknown]" once merged without its
// pid: the processes gone during the run, trace/frames.go).
func addressFrame(f string) bool { return addressRE.MatchString(f) }

// Processes that exec twice in quick succession (env, then the program it
// runs) and shells that fork at once after their exec: the mapping
// records of each exec are handled after the process was read from /proc
// or its child was first seen, and both images may share a comm. Every
// user frame of every sample is named from a mapping of its own image.
func TestSampleExecChains(t *testing.T) {
	testgate.Root(t)
	script := `for i in $(seq 150); do /usr/bin/env true; done
for i in $(seq 60); do /usr/bin/env bash -c 'x=$(echo a)'; done`
	r := run(t, "", "--sample", "-F", "999", "--", "bash", "-c", script)
	bares := map[string]uint64{}
	var bare, all uint64
	for st, n := range folded(t, r.stdout) {
		all += n
		if slices.ContainsFunc(userFrames(st), addressFrame) {
			bare += n
			bares[st] = n
		}
	}
	t.Logf("%d of %d samples with a bare address frame", bare, all)
	if r.code != 0 || all < 200 || bare > 0 {
		t.Errorf("exit %d: %d of %d samples have a bare address frame, want none of >= 200:\n%s",
			r.code, bare, all, foldedLines(bares))
	}
}

var threadCPURE = regexp.MustCompile(`shortthreads: \d+ threads, (\d+) us of CPU`)

// Threads that each run for less than a sampling period (shortthreads-nofp:
// 200 threads of 0.5 ms of CPU each, one after another) are sampled in
// proportion to their CPU time: probee's timers are per CPU, so a thread
// does not start a period of its own. perf record's timers are per thread
// and start anew in each: it gets 0-1 samples of these threads where
// probee gets ~100 (tests/bench/60-real-programs.sh, the threads row). Every
// sample of them reaches the thread's entry.
func TestSampleShortThreads(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "shortthreads-nofp")
	r := run(t, "", "--sample", "-F", "999", "--", bin, "200", "500")
	m := threadCPURE.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("exit %d: no CPU time from shortthreads-nofp\n%s", r.code, r.stderr)
	}
	us, _ := strconv.ParseFloat(m[1], 64)
	want := us * 999 / 1e6
	const entry = "sample;shortthreads-no;clone3;start_thread;short_worker"
	var in, full uint64
	others := map[string]uint64{}
	for st, n := range folded(t, r.stdout) {
		if strings.Contains(st, ";short_worker") {
			in += n
			full += count(strings.HasPrefix(st, entry), n)
			if !strings.HasPrefix(st, entry) {
				others[st] = n
			}
		}
	}
	t.Logf("%d samples in the threads (%.0f expected from %.0f us of CPU), %d from their entry", in, want, us, full)
	if float64(in) < 0.6*want {
		t.Errorf("%d samples in threads of %.0f us of CPU in all, want >= 60%% of %.0f\n%s", in, us, want, r.stderr)
	}
	if full != in {
		t.Errorf("%d of %d samples in the threads reach their entry (%s); the others:\n%s", full, in, entry, foldedLines(others))
	}
}
