package e2e

import (
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// --off-cpu (issue 46): the time threads wait, per stack at the switch-out,
// checked against what the waits fixture measures of its own waits.

var waitsLine = regexp.MustCompile(`(?m)^waits: (\w+) blocked (\d+) ns, off-cpu (\d+) ns, elapsed (\d+) ns, cpu (\d+) ns$`)

// waitsReport is what one thread of the waits fixture says of itself:
// offCPU is its wall time in its waiting calls less its CPU time in them.
type waitsReport struct{ blocked, offCPU, elapsed, cpu uint64 }

func parseWaits(t *testing.T, stderr string) map[string]waitsReport {
	t.Helper()
	out := map[string]waitsReport{}
	for _, m := range waitsLine.FindAllStringSubmatch(stderr, -1) {
		out[m[1]] = waitsReport{atoi(m[2]), atoi(m[3]), atoi(m[4]), atoi(m[5])}
	}
	if len(out) != 4 {
		t.Fatalf("the waits fixture reported %d threads, want 4", len(out))
	}
	return out
}

// waitCalls are the waits fixture's threads that wait, and the function
// each waits in.
var waitCalls = map[string]string{"sleeper": "sleep_once", "reader": "read_once", "waiter": "wait_cond"}

// blockedIn sums the stacks of m that pass through thread's function fn.
func blockedIn(m map[string]uint64, thread, fn string) (n uint64, states map[string]uint64) {
	states = map[string]uint64{}
	for st, v := range m {
		if strings.Contains(st, ";"+thread+";"+fn+";") {
			n += v
			states[st[strings.LastIndexByte(st, ';')+1:]] += v
		}
	}
	return n, states
}

// Each waiting thread's time off CPU in its waiting function is within 2%
// of the time the thread measured off CPU inside those calls (their wall
// time less its CPU time in them), with complete
// stacks (start_thread at the root, the kernel's schedule at the top)
// topped by the state: interruptible sleeps are "[sleep]". pprof has the
// off_cpu/nanoseconds sample type with the same total.
func TestOffCPUWaits(t *testing.T) {
	testgate.Root(t)
	m := measure(t, "--off-cpu", "--", fixture(t, "waits-nofp"))
	self := parseWaits(t, m.r.stderr)
	// Under emulation (make vmtest) on a loaded host the guest's clocks
	// skew (a reader 510 ms off CPU against its own 464 ms, with 68 ms
	// preempted in the call, while a second VM and a test suite ran on
	// the host's 2 cores; 0.2-1% on a quieter host): the VM checks the
	// mechanism within 10%, the host the figures within 2%.
	tol, sleepShare := 0.02, 0.9
	if inVM() {
		tol, sleepShare = 0.10, 0.75
	}
	for thread, fn := range waitCalls {
		got, states := blockedIn(m.folded, thread, fn)
		want := self[thread].offCPU
		t.Logf("%s: %d ns off CPU in %s (%v), the thread measured %d", thread, got, fn, states, want)
		if math.Abs(float64(got)-float64(want)) > tol*float64(want) {
			t.Errorf("%s: %d ns off CPU in %s, want %d within %.0f%%", thread, got, fn, want, 100*tol)
		}
		if float64(states["[sleep]"]) < sleepShare*float64(got) {
			t.Errorf("%s: %d of %d ns in [sleep], want most (%v)", thread, states["[sleep]"], got, states)
		}
	}
	var cut uint64
	for st, v := range m.folded {
		if !strings.HasPrefix(st, "off-cpu;waits-nofp;") {
			t.Errorf("stack of another process: %s", st)
		}
		if strings.Contains(st, "[truncated]") {
			cut += v
		}
		if strings.Contains(st, "bpf_trace_run") {
			t.Errorf("the BPF dispatch is left on top of the kernel stack: %s", st)
		}
	}
	// Under emulation (make vmtest) a thread preempted in libc as it
	// starts came out cut once.
	if cut > total(m.folded)/100 {
		t.Errorf("%d of %d ns off CPU in stacks cut short, want under 1%%", cut, total(m.folded))
	}
	for st := range m.folded {
		if strings.HasSuffix(st, ";[stopped]") {
			t.Errorf("probee's own hold of the command at its exec counted as a wait: %s", st)
		}
	}
	if !strings.Contains(m.r.stderr, "probee: time off CPU: ") {
		t.Errorf("no summary of the time off CPU on stderr")
	}
	var types []string
	for _, st := range m.prof.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if strings.Join(types, " ") != "blocks/count off_cpu/nanoseconds" || m.prof.DefaultSampleType != "off_cpu" {
		t.Errorf("pprof sample types %v (default %q), want blocks/count off_cpu/nanoseconds (off_cpu)", types, m.prof.DefaultSampleType)
	}
	checkPprofOffCPU(t, m)
}

// checkPprofOffCPU checks that m's pprof holds the nanoseconds off CPU of
// its folded stacks.
func checkPprofOffCPU(t *testing.T, m measured) {
	t.Helper()
	var pb int64
	for _, s := range m.prof.Sample {
		pb += s.Value[1]
	}
	if uint64(pb) != total(m.folded) {
		t.Errorf("pprof holds %d ns off CPU, the folded stacks %d", pb, total(m.folded))
	}
}

// --min-block keeps the stacks of the long waits only: the sleeper's
// 100 ms sleeps go, the waiter's 200 ms wait stays.
func TestOffCPUMinBlock(t *testing.T) {
	testgate.Root(t)
	m := measure(t, "--off-cpu", "--min-block", "150ms", "--", fixture(t, "waits-nofp"))
	self := parseWaits(t, m.r.stderr)
	if n, _ := blockedIn(m.folded, "sleeper", "sleep_once"); n != 0 {
		t.Errorf("%d ns of 100 ms sleeps kept below --min-block 150ms", n)
	}
	got, _ := blockedIn(m.folded, "waiter", "wait_cond")
	if want := self["waiter"].offCPU; math.Abs(float64(got)-float64(want)) > 0.02*float64(want) {
		t.Errorf("waiter: %d ns in wait_cond, want %d within 2%%", got, want)
	}
}

// --off-cpu beside a uprobe and --sample: one run, a probe each, each
// file in its own unit (hits, samples, nanoseconds off CPU).
func TestOffCPUBesideProbes(t *testing.T) {
	testgate.Root(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out") + "/"
	r := run(t, dir, "--off-cpu", "--sample", "-F", "199", "--uprobe", "libc:nanosleep", "-o", out, "--", fixture(t, "waits-nofp"))
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	files := perProbeFolded(t, out, 3)
	probe := func(name string) map[string]uint64 { return files[filepath.Join(out, name+".folded")] }
	if n := total(probe("libc_nanosleep")); n < 10 {
		t.Errorf("libc:nanosleep: %d hits, want at least the sleeper's 10", n)
	}
	if n, _ := blockedIn(probe("off-cpu"), "sleeper", "sleep_once"); n < 900_000_000 {
		t.Errorf("off-cpu: %d ns in the sleeper's sleeps, want about 1 s", n)
	}
	if n := total(probe("sample")); n == 0 || n > 1000 {
		t.Errorf("sample: %d samples at 199 Hz of a 1 s run", n)
	}
	for _, want := range []string{"libc:nanosleep: ", "sample: ", "off-cpu: "} {
		if !strings.Contains(r.stderr, "probee: "+want) {
			t.Errorf("no %q status line", want)
		}
	}
}

// A wait still open when tracing ends is closed then: `sleep 5` under
// -d 1s has about a second off CPU in its nanosleep.
func TestOffCPUOpenAtEnd(t *testing.T) {
	testgate.Root(t)
	m := measure(t, "--off-cpu", "-d", "1s", "--", "sleep", "5")
	var slept uint64
	for st, v := range m.folded {
		if strings.HasPrefix(st, "off-cpu;sleep;") && strings.Contains(st, "nanosleep") && strings.HasSuffix(st, ";[sleep]") {
			slept += v
		}
	}
	if slept < 500_000_000 || slept > 2_000_000_000 {
		t.Errorf("sleep 5 traced for 1s: %d ns in nanosleep, want about 1s:\n%s", slept, foldedLines(m.folded))
	}
}

// --wall: each thread's CPU samples (weighed by the period) and its waits
// add up to the time it ran, within 2% of what it measures itself (at
// 999 Hz a sample is 1 ms); pprof splits wall time into cpu and off_cpu.
func TestWallPerThread(t *testing.T) {
	testgate.Root(t)
	m := measure(t, "--wall", "-F", "999", "--", fixture(t, "waits-nofp"))
	self := parseWaits(t, m.r.stderr)
	tol := 0.02
	if inVM() {
		tol = 0.10 // see TestOffCPUWaits
	}
	for thread, r := range self {
		var got uint64
		for st, v := range m.folded {
			if strings.Contains(st, ";start_thread;"+thread+";") {
				got += v
			}
		}
		t.Logf("%s: %d ns wall, the thread measured %d elapsed", thread, got, r.elapsed)
		if math.Abs(float64(got)-float64(r.elapsed)) > tol*float64(r.elapsed) {
			t.Errorf("%s: %d ns wall, want its %d ns elapsed within %.0f%%", thread, got, r.elapsed, 100*tol)
		}
	}
	var types []string
	for _, st := range m.prof.SampleType {
		types = append(types, st.Type)
	}
	if strings.Join(types, " ") != "wall cpu off_cpu" || m.prof.DefaultSampleType != "wall" {
		t.Fatalf("pprof sample types %v (default %q), want wall cpu off_cpu (wall)", types, m.prof.DefaultSampleType)
	}
	var wall, cpu, off int64
	for _, s := range m.prof.Sample {
		wall, cpu, off = wall+s.Value[0], cpu+s.Value[1], off+s.Value[2]
	}
	if wall != cpu+off || uint64(wall) != total(m.folded) {
		t.Errorf("pprof wall %d = cpu %d + off_cpu %d? folded total %d", wall, cpu, off, total(m.folded))
	}
	if spin := float64(self["spinner"].cpu); math.Abs(float64(cpu)-spin) > 0.2*spin {
		t.Errorf("pprof cpu %d ns, want about the spinner's %d (the others wait)", cpu, self["spinner"].cpu)
	}
}

// --wall beside --sample and --off-cpu: three probes in one run, each its
// own file and unit, wall holding the samples (at the period each) and
// the waits that the other two count, and still each thread's elapsed
// time.
func TestWallBesideSampleAndOffCPU(t *testing.T) {
	testgate.Root(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out") + "/"
	r := run(t, dir, "--wall", "--sample", "--off-cpu", "-F", "999", "-o", out, "--", fixture(t, "waits-nofp"))
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	self := parseWaits(t, r.stderr)
	files := perProbeFolded(t, out, 3)
	probe := func(name string) map[string]uint64 { return files[filepath.Join(out, name+".folded")] }
	const period = 1_000_000_000 / 999
	samples, waits, wall := total(probe("sample")), total(probe("off-cpu")), total(probe("wall"))
	if samples == 0 || waits == 0 || wall != samples*period+waits {
		t.Errorf("wall %d ns, want the %d samples at %d ns and the %d ns off CPU: %d", wall, samples, period, waits, samples*period+waits)
	}
	// Under emulation on a loaded host the guest loses CPU samples (the
	// spinner's 368 ms of CPU came out 183 ms at 999 Hz): the VMs check
	// the sum above, the host each thread's elapsed time.
	for thread, rep := range self {
		if inVM() {
			break
		}
		const tol = 0.02
		var got uint64
		for st, v := range probe("wall") {
			if strings.Contains(st, ";"+thread+";") { // (5.10's libpthread names no start_thread)
				got += v
			}
		}
		if math.Abs(float64(got)-float64(rep.elapsed)) > tol*float64(rep.elapsed) {
			t.Errorf("%s: %d ns wall, want its %d ns elapsed within %.0f%%", thread, got, rep.elapsed, 100*tol)
		}
	}
	for _, want := range []string{"sample: ", "off-cpu: ", "wall: "} {
		if !strings.Contains(r.stderr, "probee: "+want) {
			t.Errorf("no %q status line", want)
		}
	}
}
