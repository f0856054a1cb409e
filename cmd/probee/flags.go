package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/probespec"
	"github.com/probee/probee/trace"
)

// groupContainer is the --group-by value that groups stacks by container.
const groupContainer = "container"

// usageError is a bad command line or spec, or a run that cannot work
// (trace.UsageError): exit code 2.
type usageError = trace.UsageError

func usagef(format string, args ...any) error {
	return &usageError{Msg: fmt.Sprintf(format, args...)}
}

// probeArg is one probe flag as given, in command-line order.
type probeArg struct {
	flag string         // "--uprobe", "-e", ...
	kind probespec.Kind // kind implied by the flag (KindInvalid for -e)
	text string         // the spec as given: the probe's label
	spec probespec.Spec
}

// config is the parsed command line.
type config struct {
	probes         []probeArg
	list           bool     // --list-probes, -l
	listSpecs      []string // the positional arguments: specs to list
	json           bool
	verbose        bool
	quiet          bool
	pid            int
	duration       time.Duration
	interval       time.Duration // --interval: periodic drains (0: only at the end)
	intervalOn     bool          // --interval was given
	outputs        []string
	unwind         trace.UnwindMode
	sample         bool
	freq           int
	noUprobeMulti  bool // --no-uprobe-multi: one uprobe link per function
	noKprobeMulti  bool // --no-kprobe-multi: one kprobe link per function
	maxStacks      int
	noTail         bool          // --no-tail-calls: DWARF unwinding with the inline loop only
	unwindBudget   byteSize      // --unwind-budget: bytes of unwind tables in the kernel (0: default)
	noTableCache   bool          // --no-table-cache: build every table, read and write no cache file
	tableCacheDir  string        // --table-cache-dir: the on-disk table cache ("": the default place)
	tableCacheSize byteSize      // --table-cache-size: bound of the on-disk table cache (0: default)
	idle           bool          // --include-idle: keep idle samples with --sample
	lines          bool          // --lines: append :file:line to frames
	noInline       bool          // --no-inline: no inline frames from DWARF
	groupBy        string        // --group-by: "container", or "" (no grouping)
	latency        bool          // --latency: time function probes from entry to return
	minLatency     time.Duration // --min-latency: stacks of slower calls only
	weight         weightArg     // --weight: sum an argument per stack
	command        []string      // what follows "--"
	push           pushArgs      // --push and its flags (pushflags.go)
	offCPU         offCPUArgs    // --off-cpu and its bounds (offcpuflags.go)
	help           bool
}

func newFlagSet(cfg *config, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("probee", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addProbe := func(name string, kind probespec.Kind) {
		fs.Func(name, "", func(s string) error {
			cfg.probes = append(cfg.probes, probeArg{flag: dashes(name) + name, kind: kind, text: s})
			return nil
		})
	}
	addProbe("uprobe", probespec.Uprobe)
	addProbe("kprobe", probespec.Kprobe)
	addProbe("tracepoint", probespec.Tracepoint)
	addProbe("usdt", probespec.USDT)
	addProbe("event", probespec.KindInvalid)
	addProbe("e", probespec.KindInvalid)
	fs.BoolVar(&cfg.list, "list-probes", false, "")
	fs.BoolVar(&cfg.list, "l", false, "")
	fs.BoolVar(&cfg.json, "json", false, "")
	fs.BoolVar(&cfg.verbose, "v", false, "")
	fs.BoolVar(&cfg.verbose, "verbose", false, "")
	fs.BoolVar(&cfg.quiet, "q", false, "")
	fs.BoolVar(&cfg.quiet, "quiet", false, "")
	fs.Func("p", "", func(s string) error { return parsePID(s, &cfg.pid) })
	fs.Func("pid", "", func(s string) error { return parsePID(s, &cfg.pid) })
	fs.DurationVar(&cfg.duration, "d", 0, "")
	fs.DurationVar(&cfg.duration, "duration", 0, "")
	addOut := func(s string) error { cfg.outputs = append(cfg.outputs, s); return nil }
	fs.Func("o", "", addOut)
	fs.Func("output", "", addOut)
	fs.Var(&cfg.unwind, "unwind", "")
	fs.BoolVar(&cfg.sample, "sample", false, "")
	fs.IntVar(&cfg.freq, "F", 99, "")
	fs.IntVar(&cfg.freq, "frequency", 99, "")
	fs.BoolVar(&cfg.noUprobeMulti, "no-uprobe-multi", false, "")
	fs.BoolVar(&cfg.noKprobeMulti, "no-kprobe-multi", false, "")
	fs.Func("max-stacks", "", func(s string) error { return parseMaxStacks(s, &cfg.maxStacks) })
	fs.DurationVar(&cfg.interval, "interval", -1, "")
	fs.BoolVar(&cfg.noTail, "no-tail-calls", false, "")
	fs.Var(&cfg.unwindBudget, "unwind-budget", "")
	fs.BoolVar(&cfg.noTableCache, "no-table-cache", false, "")
	fs.StringVar(&cfg.tableCacheDir, "table-cache-dir", "", "")
	fs.Var(&cfg.tableCacheSize, "table-cache-size", "")
	fs.BoolVar(&cfg.idle, "include-idle", false, "")
	fs.BoolVar(&cfg.lines, "lines", false, "")
	fs.BoolVar(&cfg.noInline, "no-inline", false, "")
	fs.BoolVar(&cfg.latency, "latency", false, "")
	fs.DurationVar(&cfg.minLatency, "min-latency", 0, "")
	fs.Var(&cfg.weight, "weight", "")
	fs.Func("group-by", "", func(s string) error {
		if s != groupContainer {
			return fmt.Errorf("want %s", groupContainer)
		}
		cfg.groupBy = s
		return nil
	})
	addPushFlags(fs, &cfg.push)
	addOffCPUFlags(fs, &cfg.offCPU)
	fs.BoolVar(&cfg.help, "h", false, "")
	fs.BoolVar(&cfg.help, "help", false, "")
	onceFlags(fs)
	return fs
}

func flagError(fs *flag.FlagSet, err error) error {
	if _, ok := err.(*usageError); ok {
		return err
	}
	return usagef("%s (see probee --help)", flagMessage(fs, err))
}

// badValue matches the flag package's message for a value a flag refused.
var badValue = regexp.MustCompile(`^invalid (?:boolean )?value (".*") for (?:flag )?-([\w-]+): `)

// flagMessage words a flag package error with the flag as typed:
// "unknown flag --uprbe (did you mean --uprobe?)", `invalid value "magic"
// for --unwind: ...`.
func flagMessage(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return "unknown flag " + dashes(name) + name + didYouMean(fs, name)
	}
	if m := badValue.FindStringSubmatchIndex(msg); m != nil {
		name, value := msg[m[4]:m[5]], msg[m[2]:m[3]]
		if secretFlags[name] {
			value = "(not shown)"
		}
		return "invalid value " + value + " for " + dashes(name) + name + ": " + msg[m[1]:]
	}
	return msg
}

// dashes is the prefix probee's help gives a flag: "-" for one letter.
func dashes(name string) string {
	if len(name) == 1 {
		return "-"
	}
	return "--"
}

func parsePID(s string, pid *int) error {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return fmt.Errorf("invalid pid %q: want a positive process id", s)
	}
	*pid = n
	return nil
}

// parseMaxStacks reads --max-stacks: a number of stacks, at least 1 (the
// default is no flag); what it costs is checked later (bpf.CheckMemory).
func parseMaxStacks(s string, n *int) error {
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || v > bpf.MaxStacksLimit {
		return fmt.Errorf("want a number of stacks from 1 to %d (the default is 65536)", bpf.MaxStacksLimit)
	}
	*n = v
	return nil
}

// parseArgs parses and validates args (without the program name).
func parseArgs(args []string, stderr io.Writer) (*config, error) {
	cfg := &config{}
	fs := newFlagSet(cfg, stderr)
	cl := splitArgs(fs, args)
	if err := cl.parse(fs, args); err != nil {
		return nil, err
	}
	cfg.command = cl.command
	if cfg.help {
		return cfg, nil
	}
	if err := cfg.parseSpecs(); err != nil {
		return nil, err
	}
	cfg.dropRepeatedSpecs(stderr)
	if err := cfg.takePositional(args, cl); err != nil {
		return nil, err
	}
	return cfg, cfg.validate()
}

// takePositional makes the positional arguments the specs of --list-probes;
// without it they are a command given without "--".
func (cfg *config) takePositional(args []string, cl cmdLine) error {
	if !cfg.list && len(cl.positional) > 0 {
		return cl.misplacedCommand(args)
	}
	if cfg.list && len(cl.positional) == 0 {
		return usagef("--list-probes needs a SPEC to list, e.g. probee --list-probes 'libc:malloc*' (several SPECs list them all)")
	}
	cfg.listSpecs = cl.positional
	return nil
}

func (cfg *config) parseSpecs() error {
	for i := range cfg.probes {
		p := &cfg.probes[i]
		var err error
		if p.kind == probespec.KindInvalid {
			p.spec, err = probespec.Parse(probespec.Uprobe, p.text)
		} else {
			p.spec, err = probespec.ParseFlag(p.kind, p.text)
		}
		if err != nil {
			return specError(p.flag, p.text, err)
		}
	}
	return nil
}

// dropRepeatedSpecs keeps one of the probes whose specs are the same
// (--uprobe libc:malloc twice, or also as -e uprobe:libc:malloc), with a
// note: each would count every hit again, under labels that look alike.
func (cfg *config) dropRepeatedSpecs(stderr io.Writer) {
	seen := map[string]string{} // canonical spec -> the first as given
	kept := cfg.probes[:0]
	for _, p := range cfg.probes {
		key := p.spec.String()
		if first, ok := seen[key]; ok {
			if !cfg.quiet {
				fmt.Fprintf(stderr, "probee: %s %s is %s again: traced once\n", p.flag, trace.Quote(p.text), first)
			}
			continue
		}
		seen[key] = trace.Quote(p.text)
		kept = append(kept, p)
	}
	cfg.probes = kept
}

// specError formats a spec error as `--uprobe 'malloc+0xZZ': 1:8: ...` plus
// the caret display.
func specError(flagName, text string, err error) error {
	msg := fmt.Sprintf("%s %s: %v", flagName, trace.Quote(text), err)
	var pe *probespec.Error
	if errors.As(err, &pe) {
		msg += "\n" + pe.Caret()
	}
	return &usageError{Msg: msg}
}

func (cfg *config) validate() error {
	if cfg.pid != 0 && len(cfg.command) > 0 {
		return usagef("-p and -- CMD both given: trace either a running process (-p PID) or a new command (-- CMD ARGS), not both")
	}
	if cfg.list {
		if cfg.push.url != "" {
			return usagef("--push only applies to tracing, not to --list-probes")
		}
		if cfg.groupBy != "" {
			return usagef("--group-by only applies to tracing, not to --list-probes")
		}
		if len(cfg.probes) > 0 || cfg.sample || cfg.offCPU.waits() {
			return usagef("--list-probes only lists: drop the --uprobe/--kprobe/--tracepoint/--usdt/--sample/--off-cpu/--wall flags (a command to trace goes after --)")
		}
		return nil
	}
	if cfg.json {
		return usagef("--json only applies to --list-probes")
	}
	if len(cfg.probes) == 0 && !cfg.sample && !cfg.offCPU.waits() {
		return usagef("nothing to trace: give at least one --uprobe, --kprobe, --tracepoint, --usdt or -e SPEC, or --sample, --off-cpu or --wall (see probee --help)")
	}
	if len(cfg.probes) > trace.MaxProbes {
		return usagef("%d probes given; probee counts at most %d per run", len(cfg.probes), trace.MaxProbes)
	}
	if cfg.duration < 0 {
		return usagef("-d %v: want a positive duration such as 5s or 2m", cfg.duration)
	}
	if err := cfg.defaultInterval(); err != nil {
		return err
	}
	if cfg.freq <= 0 || cfg.freq > 10000 {
		return usagef("-F %d: want a sampling frequency between 1 and 10000 Hz", cfg.freq)
	}
	if err := cfg.validatePush(); err != nil {
		return err
	}
	if err := cfg.offCPU.validate(); err != nil {
		return err
	}
	return cfg.validateMeasure()
}

// defaultInterval checks --interval. Its default, 1s, keeps the kernel's
// maps nearly empty on long runs (65536 new distinct stacks a second fit
// the default map sizes) for a cost of one short drain a second; a drain
// waits only for the events in flight (bpf/gate.go), microseconds.
func (cfg *config) defaultInterval() error {
	if cfg.interval == -1 {
		cfg.interval = time.Second
		return nil
	}
	cfg.intervalOn = true
	if cfg.interval < 0 || (cfg.interval > 0 && cfg.interval < 10*time.Millisecond) {
		return usagef("--interval %v: want 0 (drain only at the end) or a period of at least 10ms, such as 5s", cfg.interval)
	}
	return nil
}
