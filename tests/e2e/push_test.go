package e2e

import (
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pushRun is one probee run pushing to a backend, with its local output.
type pushRun struct {
	service    string
	from, to   time.Time
	local      map[string]map[string]uint64 // probe -> stack (no comm, no _[k]) -> count
	r          result
	sent       int               // profiles sent (the status line)
	dropEvents map[string]uint64 // probe -> events in dropped profiles
}

// pushArgs are the arguments of a run pushing to srv every second, with a
// combined folded output in dir.
func pushArgs(srv *server, service, dir string, args ...string) []string {
	u := strings.Replace(srv.url(), "http", srv.name, 1) // pyroscope://, parca://
	return append([]string{"--push", u, "--push-interval", "1s", "--service-name", service, "--label", "run=e2e",
		"-o", filepath.Join(dir, "out.folded")}, args...)
}

// finishPush reads a finished run's local output and push summary.
func finishPush(t *testing.T, pr *pushRun, dir string) {
	t.Helper()
	pr.to = time.Now()
	if pr.r.code != 0 {
		t.Fatalf("probee exit %d", pr.r.code)
	}
	pr.local = byProbe(t, readFile(t, filepath.Join(dir, "out.folded")))
	m := regexp.MustCompile(`push: (\d+) profiles? sent`).FindStringSubmatch(pr.r.stderr)
	if m == nil {
		t.Fatalf("no push summary on stderr")
	}
	pr.sent, _ = strconv.Atoi(m[1])
	pr.dropEvents = map[string]uint64{}
	for _, d := range regexp.MustCompile(`push: dropped \d+ profiles? of (.*) \((\d+) [^)]*\)`).FindAllStringSubmatch(pr.r.stderr, -1) {
		n, _ := strconv.ParseUint(d[2], 10, 64)
		pr.dropEvents[d[1]] += n
	}
}

// runPush runs probee pushing to srv and reads its outputs.
func runPush(t *testing.T, srv *server, args ...string) *pushRun {
	t.Helper()
	dir := t.TempDir()
	pr := &pushRun{service: fmt.Sprintf("e2e-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano()), from: time.Now()}
	pr.r = run(t, dir, pushArgs(srv, pr.service, dir, args...)...)
	finishPush(t, pr, dir)
	return pr
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := exec.Command("cat", path).Output()
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(b)
}

// byProbe splits combined collapsed stacks by their probe root frame and
// names them as the backends do: pprof keeps comm as a label, not a frame,
// and names kernel functions without the _[k] suffix and inline frames
// without " (inlined)".
func byProbe(t *testing.T, text string) map[string]map[string]uint64 {
	out := map[string]map[string]uint64{}
	for stack, n := range folded(t, text) {
		frames := strings.Split(stack, ";")
		if len(frames) < 3 {
			t.Fatalf("stack %q has no frames below probe and comm", stack)
		}
		for i, f := range frames {
			// pprof has inline frames as lines of a location, not names.
			frames[i] = strings.TrimSuffix(strings.TrimSuffix(f, "_[k]"), " (inlined)")
		}
		probe := frames[0]
		if out[probe] == nil {
			out[probe] = map[string]uint64{}
		}
		out[probe][strings.Join(frames[2:], ";")] += n
	}
	return out
}

// stackQuery asks a backend for one probe's merged stacks.
type stackQuery func(profileType, sel string, from, to time.Time) (map[string]uint64, error)

// checkPushed waits (up to 30s: ingestion is asynchronous) until the
// backend's stacks of every probe equal the local ones, and fails t
// with the differences otherwise. drops are events that were dropped.
func checkPushed(t *testing.T, q stackQuery, pr *pushRun, profileType string) {
	t.Helper()
	if len(pr.local) == 0 {
		t.Fatal("no local stacks")
	}
	for _, probe := range slices.Sorted(maps.Keys(pr.local)) {
		want := pr.local[probe]
		var got map[string]uint64
		var err error
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(time.Second) {
			got, err = q(profileType, selector(pr.service, probe), pr.from.Add(-time.Minute), pr.to.Add(time.Minute))
			if err == nil && maps.Equal(got, want) {
				break
			}
		}
		if err != nil {
			t.Fatalf("query %s: %v", probe, err)
		}
		t.Logf("%s: local %d in %d stacks, pushed %d in %d stacks", probe, total(want), len(want), total(got), len(got))
		if !maps.Equal(got, want) {
			t.Errorf("%s: pushed stacks differ from the local .folded:\n%s", probe, stackDiff(want, got))
		}
	}
}

// stackDiff lists the stacks whose counts differ, at most 20.
func stackDiff(want, got map[string]uint64) string {
	var b strings.Builder
	keys := slices.Sorted(maps.Keys(want))
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	n := 0
	for _, k := range keys {
		if want[k] != got[k] && n < 20 {
			fmt.Fprintf(&b, "  local %d pushed %d: %s\n", want[k], got[k], k)
			n++
		}
	}
	fmt.Fprintf(&b, "  totals: local %d pushed %d", total(want), total(got))
	return b.String()
}

// samplingHz is the -F of the --sample push runs.
const samplingHz = 199

// perPeriod divides every stack's value by period, which must divide it.
func perPeriod(stacks map[string]uint64, period int64) (map[string]uint64, error) {
	out := map[string]uint64{}
	for k, v := range stacks {
		if v%uint64(period) != 0 {
			return nil, fmt.Errorf("%s: %d is not a multiple of the period %d", k, v, period)
		}
		out[k] = v / uint64(period)
	}
	return out, nil
}

// pushCases are the runs both backends get, each about 4 intervals long:
// a uprobe on a -- CMD, --sample, a tracepoint, and --latency
// (nanoseconds per stack). Kprobes take the same path; this kernel has none.
func pushCases(t *testing.T) []struct {
	name, profileType string
	args              []string
} {
	load, spin, lat := fixture(t, "load-fp"), fixture(t, "spin-nofp"), fixture(t, "latency-fp")
	return []struct {
		name, profileType string
		args              []string
	}{
		// 1000 calls every 0.2s (load paces by the thousand) for 4s.
		{"uprobe", typeHits, []string{"--uprobe", load + ":hit", "--", load, "20000", "1", "5000"}},
		{"sample", typeSamples, []string{"--sample", "-F", strconv.Itoa(samplingHz), "--", spin, "4"}},
		// load sleeps (clock_nanosleep) after every 1000 calls: 20 times.
		{"tracepoint", typeHits, []string{"--tracepoint", "syscalls:sys_enter_clock_nanosleep", "--", load, "20000", "1", "5000"}},
		// 200 calls of 20ms, then 100 of 10ms.
		{"latency", typeLatency, []string{"--latency", "--uprobe", lat + ":nap", "--", lat, "sleep", "100", "20"}},
	}
}

// Stacks and totals queried back from Pyroscope equal the local output,
// per probe, after at least 3 pushes.
func TestPushPyroscope(t *testing.T) { testPush(t, startPyroscope(t)) }

// The same against Parca.
func TestPushParca(t *testing.T) { testPush(t, startParca(t)) }

func testPush(t *testing.T, srv *server) {
	q := backendQuery(srv)
	for _, c := range pushCases(t) {
		t.Run(c.name, func(t *testing.T) {
			pr := runPush(t, srv, c.args...)
			if pr.sent < 3 || len(pr.dropEvents) > 0 {
				t.Errorf("%d profiles sent, drops %v; want at least 3 sent, no drops", pr.sent, pr.dropEvents)
			}
			checkPushed(t, q, pr, c.profileType)
		})
	}
}

// backendQuery is the stack query of srv's kind.
func backendQuery(srv *server) stackQuery {
	if srv.name == "pyroscope" {
		return func(pt, sel string, from, to time.Time) (map[string]uint64, error) {
			return pyroscopeStacks(srv, pt, sel, from, to)
		}
	}
	return func(pt, sel string, from, to time.Time) (map[string]uint64, error) {
		stacks, err := parcaStacks(srv, pt, sel, from, to)
		if err != nil || pt != typeSamples {
			return stacks, err
		}
		// Parca answers a samples/count query in samples times the period
		// (CPU nanoseconds, pkg/parcacol/querier.go): back to samples.
		return perPeriod(stacks, 1_000_000_000/samplingHz) // integer division, as probee computes it
	}
}
