package main

import (
	"flag"
	"time"
)

// offCPUArgs are --off-cpu, --wall and the bounds of their waits.
type offCPUArgs struct {
	on                 bool          // --off-cpu
	wall               bool          // --wall: --sample and --off-cpu as one probe
	minBlock, maxBlock time.Duration // --min-block, --max-block (0: none)
}

func addOffCPUFlags(fs *flag.FlagSet, a *offCPUArgs) {
	fs.BoolVar(&a.on, "off-cpu", false, "")
	fs.BoolVar(&a.wall, "wall", false, "")
	fs.DurationVar(&a.minBlock, "min-block", 0, "")
	fs.DurationVar(&a.maxBlock, "max-block", 0, "")
}

// waits reports whether the run times waits: --off-cpu or --wall.
func (a offCPUArgs) waits() bool { return a.on || a.wall }

// validate checks --wall against --sample and --off-cpu, which it holds,
// and the bounds: they need waits to bound, and make a range.
func (a offCPUArgs) validate(sample bool) error {
	if a.wall && (a.on || sample) {
		return usagef("--wall holds --sample's CPU samples and --off-cpu's waits (pprof: -sample_index=cpu or off_cpu): give --wall alone")
	}
	for _, b := range []struct {
		flag string
		d    time.Duration
	}{{"--min-block", a.minBlock}, {"--max-block", a.maxBlock}} {
		switch {
		case b.d != 0 && !a.waits():
			return usagef("%s needs --off-cpu or --wall (it bounds the waits that keep their stacks)", b.flag)
		case b.d < 0:
			return usagef("%s %v: want a positive duration such as 1ms", b.flag, b.d)
		}
	}
	if a.maxBlock > 0 && a.maxBlock < a.minBlock {
		return usagef("--max-block %v is below --min-block %v: no wait would keep its stack", a.maxBlock, a.minBlock)
	}
	return nil
}
