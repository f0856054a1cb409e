package e2e

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// dropRE matches probee's drop report lines on stderr.
var dropRE = regexp.MustCompile(`(?m)^probee: warning: dropped (\d+): (.+)$`)

// drops parses the drops probee reports on stderr, by cause.
func drops(stderr string) map[string]uint64 {
	out := map[string]uint64{}
	for _, m := range dropRE.FindAllStringSubmatch(stderr, -1) {
		n, _ := strconv.ParseUint(m[1], 10, 64)
		out[m[2]] += n
	}
	return out
}

// The drop causes of events lost entirely (no count).
const (
	countsFull   = "counts map full"
	countsSwitch = "counts map switched"
)

// lostEvents sums the drops that lose whole events (the others lose part
// of a stack, and the event is still counted).
func lostEvents(d map[string]uint64) uint64 {
	var n uint64
	for cause, v := range d {
		if strings.HasPrefix(cause, countsFull) || strings.HasPrefix(cause, countsSwitch) {
			n += v
		}
	}
	return n
}

// drainsRE matches probee's report of the periodic drains (--interval).
var drainsRE = regexp.MustCompile(`(?m)^probee: periodic drains: (\d+) every .*, (\d+) events moved`)

// loadRun traces bin's probe running with args and returns the total
// count and the drops. With --interval in flags it checks that periodic
// drains ran and moved events.
func loadRun(t *testing.T, probe string, flags []string, bin string, args ...string) (uint64, map[string]uint64) {
	t.Helper()
	argv := append([]string{"--uprobe", bin + ":" + probe}, flags...)
	argv = append(append(argv, "--", bin), args...)
	r := run(t, "", argv...)
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	if i := slices.Index(flags, "--interval"); i >= 0 && flags[i+1] != "0" {
		m := drainsRE.FindStringSubmatch(r.stderr)
		if m == nil || m[1] == "0" || m[2] == "0" {
			t.Errorf("no periodic drain reported: %q", m)
		} else {
			t.Logf("periodic drains: %s, events moved: %s", m[1], m[2])
		}
	}
	return total(folded(t, r.stdout)), drops(r.stderr)
}

// loadCalls is the calls per thread of TestLoadExactCounts: 500000, or
// PROBEE_LOAD_CALLS (5000000 for the 10 million calls, which took
// ~8 minutes on a loaded 2-vCPU VM with DWARF unwinding: too slow for CI).
func loadCalls() int {
	if n, err := strconv.Atoi(os.Getenv("PROBEE_LOAD_CALLS")); err == nil && n > 0 {
		return n
	}
	return 500000
}

// Calls from 2 threads: every call counted, none lost. Reporting a loss is
// not enough here (a probee losing every event and saying so would pass):
// the calls make one count key (one probe, process, comm and stack), so the
// counts map cannot fill, and without --interval there is no map switch to
// lose an event to. With --interval an event is lost only when the maps
// switch twice while it is being counted: the next switch waits for the
// drain, which waits until no event still counts in the old map, so that
// needs one program run to stall for a whole interval (20 ms) between its two
// reads of the active map. Hence no loss is allowed in either case.
func TestLoadExactCounts(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "load-fp")
	for _, tc := range []struct {
		interval string
		maxLost  uint64
	}{{"0", 0}, {"20ms", 0}} {
		t.Run("interval="+tc.interval, func(t *testing.T) {
			per := loadCalls()
			calls := uint64(2 * per)
			n, d := loadRun(t, "hit", []string{"--interval", tc.interval}, bin, strconv.Itoa(per), "2")
			lost := lostEvents(d)
			t.Logf("calls %d, counts %d, drops %v", calls, n, d)
			if n+lost != calls {
				t.Errorf("counts %d + lost %d = %d, want %d calls", n, lost, n+lost, calls)
			}
			if lost > tc.maxLost || n < calls-min(calls, tc.maxLost) {
				t.Errorf("counts %d of %d calls, %d reported lost: want at most %d lost", n, calls, lost, tc.maxLost)
			}
		})
	}
}

// Stack-map pressure: N calls through N distinct stacks.
func TestManyStacks(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "manystacks-fp")
	for _, tc := range []struct {
		name      string
		calls     int
		flags     []string
		wantDrops bool
	}{
		// Without periodic drains the map sizes are the limit.
		{"50K-defaults", 50000, []string{"--interval", "0"}, false},
		{"200K-defaults", 200000, []string{"--interval", "0"}, true},
		{"200K-max-stacks", 200000, []string{"--interval", "0", "--max-stacks", "262144"}, false},
		// Periodic drains empty the maps: the defaults hold 200K stacks.
		{"200K-interval", 200000, []string{"--interval", "20ms"}, false},
		// At the default 1s interval too: a map half full is drained at
		// once. 50K new stacks come in ~2 s, four times what 8192-entry
		// maps hold a second (before: 41,808 of the 50K lost).
		{"50K-small-maps-default-interval", 50000, []string{"--max-stacks", "8192"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, d := loadRun(t, "leaf", tc.flags, bin, strconv.Itoa(tc.calls))
			lost := lostEvents(d)
			t.Logf("calls %d, counts %d, drops %v", tc.calls, n, d)
			if n+lost != uint64(tc.calls) {
				t.Errorf("counts %d + lost %d = %d, want %d calls", n, lost, n+lost, tc.calls)
			}
			if got := len(d) > 0; got != tc.wantDrops {
				t.Errorf("drops %v, want drops: %v", d, tc.wantDrops)
			}
			if tc.wantDrops && lost == 0 {
				t.Errorf("no %q drops reported", countsFull)
			}
		})
	}
}
