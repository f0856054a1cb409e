package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// errUsage marks command-line mistakes (exit code 2).
var errUsage = errors.New("usage: stackcmp compare -name NAME -probee OUT.folded -perf PERF.txt [-perf2 PERF2.txt] [-js] [-event uprobe|once] [-fp-leaf] [-from FRAME] [-verdicts FILE] [-top N] [-top-names N] | stackcmp summary FILE")

func main() {
	err := run(os.Args[1:], os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "stackcmp: %v\n", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	switch args[0] {
	case "compare":
		return compareCmd(args[1:], stdout)
	case "summary":
		if len(args) != 2 {
			return errUsage
		}
		return summaryCmd(args[1], stdout)
	}
	return fmt.Errorf("unknown command %q: %w", args[0], errUsage)
}

func compareCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	name := fs.String("name", "", "workload name, for the verdicts")
	probeePath := fs.String("probee", "", "probee's collapsed stacks")
	perfPath := fs.String("perf", "", "output of perf script -F comm,tid,ip,sym,dso --no-inline")
	perf2Path := fs.String("perf2", "", "the same of a second perf run, for the noise ceiling of the overlap")
	var o Options
	fs.BoolVar(&o.JS, "js", false, "also compare the share of samples with a named JS frame")
	fs.StringVar(&o.From, "from", "", "compare caller chains from this frame (PREFIX* for a frame starting with PREFIX) on, where they hold it")
	fs.StringVar(&o.Event, "event", "", "the samples are events both tools saw alike, with a separate overlap target: "+
		eventUprobe+" (a uprobe's hits at a function's entry) or "+eventOnce+" (the events of one execution traced by both at once)")
	fpLeaf := fs.Bool("fp-leaf", false, "every sample's leaf made no frame (a system call wrapper): perf -g never sees its caller, so probee's is left out too")
	verdicts := fs.String("verdicts", "", "append the verdicts to this file")
	top := fs.Int("top", 0, "also print the N caller chains whose shares differ most")
	topNames := fs.Int("top-names", 0, "also print the N frame names whose shares of samples differ most")
	if err := fs.Parse(args); err != nil || *probeePath == "" || *perfPath == "" || fs.NArg() != 0 {
		return errUsage
	}
	if _, ok := eventKinds[o.Event]; o.Event != "" && !ok {
		return fmt.Errorf("-event %q: want %s or %s: %w", o.Event, eventUprobe, eventOnce, errUsage)
	}
	probee, err := readProfile(*probeePath, ParseProbee)
	if err != nil {
		return err
	}
	perf, err := readProfile(*perfPath, ParsePerf)
	if err != nil {
		return err
	}
	if *fpLeaf {
		HideLeafCaller(probee)
	}
	r := Compare(*name, probee, perf, o)
	if *perf2Path != "" {
		perf2, err := readProfile(*perf2Path, ParsePerf)
		if err != nil {
			return err
		}
		r.PerfSelf, r.HasPerfSelf, r.Perf2 = Overlap(perf, perf2, o.From), true, Measure(perf2)
		r.PerfSelfInner = InnerOverlap(perf, perf2, InnerCallers)
	}
	r.WriteTable(stdout)
	for _, d := range TopDiffs(probee, perf, o.From, *top) {
		fmt.Fprintf(stdout, "  %6.2f%% %6.2f%%  %s\n", 100*d.Probee, 100*d.Perf, d.Key)
	}
	for _, d := range TopNames(probee, perf, *topNames) {
		fmt.Fprintf(stdout, "  %6.2f%% %6.2f%%  frame %s\n", 100*d.Probee, 100*d.Perf, d.Key)
	}
	if *verdicts == "" {
		return nil
	}
	f, err := os.OpenFile(*verdicts, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("verdicts: %w", err)
	}
	if err := WriteVerdicts(f, r.Verdicts()); err != nil {
		f.Close()
		return fmt.Errorf("verdicts: %w", err)
	}
	return f.Close()
}

func readProfile(path string, parse func(io.Reader) (Profile, error)) (Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read stacks: %w", err)
	}
	defer f.Close()
	p, err := parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

func summaryCmd(path string, stdout io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			WriteSummary(stdout, nil)
			return nil
		}
		return fmt.Errorf("verdicts: %w", err)
	}
	defer f.Close()
	v, err := ReadVerdicts(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	WriteSummary(stdout, v)
	return nil
}
