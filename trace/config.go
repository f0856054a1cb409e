package trace

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/output"
	"github.com/probee/probee/probespec"
	"github.com/probee/probee/push"
)

// Config is one tracing run, as the command line asked for it and
// cmd/probee validated it: Run refuses only what needs the machine to
// tell (a command or pid that does not exist, outputs that cannot be
// written, maps that would not fit).
type Config struct {
	Probes        []Probe       // by probe id: the order they were given in
	PID           int           // -p: trace this process and its children; 0: none
	Command       []string      // -- CMD: start it held at its exec and trace it and its children
	Duration      time.Duration // -d: stop after this long (0: at ctx's end or the traced process's exit)
	Interval      time.Duration // --interval: drain the kernel's maps this often (0: only at the end)
	IntervalGiven bool          // --interval was given: the drains' summary is a status line, not progress
	Outputs       []string      // -o, as given (output.Plan)
	Stdout        io.Writer     // where the outputs that go to stdout go; nil: nowhere

	Unwind         UnwindMode // --unwind
	NoTailCalls    bool       // --no-tail-calls: DWARF unwinding with the inline loop only
	UnwindBudget   uint64     // --unwind-budget: bytes of unwind tables in the kernel (0: default)
	NoTableCache   bool       // --no-table-cache: build every table, read and write no cache file
	TableCacheDir  string     // --table-cache-dir: the on-disk table cache ("": the default place)
	TableCacheSize uint64     // --table-cache-size: bound of the on-disk table cache (0: default)

	Sample        bool // --sample: a CPU profile, sampled on every CPU
	Freq          int  // -F: sampling frequency, Hz
	IncludeIdle   bool // --include-idle: keep idle samples with --sample
	NoUprobeMulti bool // --no-uprobe-multi: one uprobe link per function
	NoKprobeMulti bool // --no-kprobe-multi: one kprobe link per function
	MaxStacks     int  // --max-stacks: sizes the kernel's maps (0: default)
	Lines         bool // --lines: append :file:line to frames
	NoInline      bool // --no-inline: no inline frames from DWARF
	ByContainer   bool // --group-by container

	Latency    bool          // --latency: time function probes from entry to return
	MinLatency time.Duration // --min-latency: stacks of slower calls only
	Weight     *Weight       // --weight: sum an argument per stack; nil: none
	OffCPU     bool          // --off-cpu: the time traced threads wait, per stack at the switch-out
	Wall       bool          // --wall: CPU samples and waits as one probe, "wall", in ns, alone or beside Sample and OffCPU (wall.go)
	Wakers     bool          // --wakers: each wait joined to the stacks of the thread that woke it (bpf/wakers.go)
	MinBlock   time.Duration // --min-block: stacks of waits this long or longer (0: all)
	MaxBlock   time.Duration // --max-block: stacks of waits this long or shorter (0: all)
	Push       *Push         // --push; nil: none

	Status Reporter // the run's status lines; nil: none
}

// Probe is one probe as given: its spec, and how the command line named
// it, for its label and messages.
type Probe struct {
	Flag string // "--uprobe", "-e", ...
	Text string // the spec as given: the probe's label
	Spec probespec.Spec
}

// Weight is --weight ARG[:UNIT]: the integer argument whose sum weighs
// each stack (0-5) and the unit pprof names it in.
type Weight struct {
	Arg  int
	Unit string
}

// Push is --push and its flags: where the interval profiles go, and the
// bounds of their queue.
type Push struct {
	Endpoint     push.Endpoint
	Labels       []push.Label  // --label, after service_name and host
	ServiceName  string        // --service-name ("": the command's base name, else the host's)
	Interval     time.Duration // --push-interval
	Queue        int           // --push-queue: profiles that may wait
	QueueBytes   uint64        // --push-queue-bytes: their encoded size
	FlushTimeout time.Duration // --push-flush-timeout: the final flush's bound
}

// Result is what a run made: the profile the outputs were written from,
// its report, and how the traced command ended.
type Result struct {
	Profile *output.Profile
	Report  *Report
	// CommandExit is the traced command's exit status when it ended by
	// itself before tracing stopped and not with 0: its status, or 128 +
	// the signal that killed it. 0 otherwise.
	CommandExit int
}

// Reporter receives the status lines of a run as it goes: cmd/probee
// prints them on stderr.
type Reporter interface {
	Infof(format string, args ...any)  // a summary or a step: silenced by -q
	Warnf(format string, args ...any)  // a warning: never silenced
	Notef(format string, args ...any)  // what probee changed on the machine: never silenced
	Debugf(format string, args ...any) // progress: on a terminal only
	Report(*Report)                    // the hits and losses, once the counts are drained
}

// defaults gives a Config without a Reporter or Stdout ones that drop
// what they are given.
func (cfg *Config) defaults() {
	if cfg.Status == nil {
		cfg.Status = silent{}
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
}

// silent is the Reporter of a Config without one.
type silent struct{}

func (silent) Infof(string, ...any)  {}
func (silent) Warnf(string, ...any)  {}
func (silent) Notef(string, ...any)  {}
func (silent) Debugf(string, ...any) {}
func (silent) Report(*Report)        {}

// MaxProbes is how many probes (Config.Probes) one run counts.
const MaxProbes = bpf.MaxProbes

// MeasureMode is what the run's function probes measure.
func (cfg Config) MeasureMode() bpf.MeasureMode {
	switch {
	case cfg.Latency:
		return bpf.MeasureLatency
	case cfg.Weight != nil:
		return bpf.MeasureWeight
	}
	return bpf.MeasureCount
}

// UsageError is a Config that cannot work on this machine (a command not
// found, no such pid, an output that cannot be written, maps that would
// not fit): the caller's to fix, not a failure of the run (probee exits
// with 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{fmt.Sprintf(format, args...)}
}

// Quote shows a spec in a message: single-quoted as typed when it is short
// printable text, else Go-quoted (NULs, invalid UTF-8) and cut to 100 bytes.
func Quote(s string) string {
	const max = 100
	cut := len(s) > max
	if cut {
		s = s[:max]
	}
	q := "'" + s + "'"
	if strings.ContainsAny(s, "'") || !utf8.ValidString(s) || strings.IndexFunc(s, notPrintable) >= 0 {
		q = strconv.Quote(s)
	}
	if cut {
		q += "..."
	}
	return q
}

func notPrintable(r rune) bool { return !unicode.IsPrint(r) }
