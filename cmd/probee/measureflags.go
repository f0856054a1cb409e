package main

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/probee/probee/probespec"
	"github.com/probee/probee/trace"
)

// weightArg is --weight ARG[:UNIT]: the integer argument whose sum weighs
// each stack (arg0-arg5) and the unit pprof names it in (default bytes).
type weightArg struct {
	set  bool
	arg  int
	unit string
}

var weightRE = regexp.MustCompile(`^arg([0-5])(?::([A-Za-z][A-Za-z0-9_]{0,31}))?$`)

func (w *weightArg) String() string {
	if !w.set {
		return ""
	}
	return fmt.Sprintf("arg%d:%s", w.arg, w.unit)
}

// Set parses arg0..arg5 with an optional :UNIT (a word).
func (w *weightArg) Set(s string) error {
	m := weightRE.FindStringSubmatch(s)
	if m == nil {
		return errors.New("want arg0 to arg5, optionally with a unit: arg0, arg2:bytes, arg1:pages")
	}
	w.arg, _ = strconv.Atoi(m[1])
	w.unit = m[2]
	if w.unit == "" {
		w.unit = "bytes"
	}
	w.set = true
	return nil
}

// validateMeasure checks --latency, --min-latency and --weight against
// each other and the probes: both measure functions from their entry.
func (cfg *config) validateMeasure() error {
	if cfg.minLatency != 0 && !cfg.latency {
		return usagef("--min-latency needs --latency (it keeps the stacks of the calls slower than it)")
	}
	if cfg.minLatency < 0 {
		return usagef("--min-latency %v: want a positive duration such as 5ms", cfg.minLatency)
	}
	if cfg.latency && cfg.weight.set {
		return usagef("--latency and --weight both given: a run measures either time or an argument; run probee twice")
	}
	flag := map[bool]string{true: "--latency", false: "--weight"}[cfg.latency]
	if !cfg.latency && !cfg.weight.set {
		return nil
	}
	if cfg.sample || cfg.offCPU.wall {
		return usagef("%s measures function probes; %s has no calls to measure: run it apart", flag,
			map[bool]string{true: "--sample", false: "--wall"}[cfg.sample])
	}
	for _, p := range cfg.probes {
		if err := measurable(p, flag); err != nil {
			return err
		}
	}
	return nil
}

// measurable refuses what --latency and --weight cannot measure: both
// start at a function's entry.
func measurable(p probeArg, flag string) error {
	s := p.spec
	switch {
	case s.Kind == probespec.Tracepoint:
		return usagef("%s %s: %s measures functions (--uprobe, --kprobe) from their entry; a tracepoint has no return or arguments to read", p.flag, trace.Quote(p.text), flag)
	case s.Kind == probespec.USDT:
		return usagef("%s %s: %s measures functions (--uprobe, --kprobe) from their entry; a USDT probe is a point in the code, with no return, and its arguments are not function arguments: measure the function around it with --uprobe", p.flag, trace.Quote(p.text), flag)
	case s.Ret:
		return usagef("%s %s: %s measures each call from the function's entry: drop ret: (the return is found by itself)", p.flag, trace.Quote(p.text), flag)
	case s.Offset != 0:
		return usagef("%s %s: %s measures calls from the function's first instruction: drop +0x%x", p.flag, trace.Quote(p.text), flag, s.Offset)
	case s.IsSource():
		return usagef("%s %s: %s measures calls of functions: name the function, not a source line", p.flag, trace.Quote(p.text), flag)
	}
	return nil
}
