package main

import (
	"flag"
	"time"
)

// offCPUArgs are --off-cpu, --wall and the bounds of their waits.
type offCPUArgs struct {
	on                 bool          // --off-cpu
	wall               bool          // --wall: CPU samples and waits as one probe
	wakers             bool          // --wakers: the stacks that woke the waits
	minBlock, maxBlock time.Duration // --min-block, --max-block (0: none)
}

func addOffCPUFlags(fs *flag.FlagSet, a *offCPUArgs) {
	fs.BoolVar(&a.on, "off-cpu", false, "")
	fs.BoolVar(&a.wall, "wall", false, "")
	fs.BoolVar(&a.wakers, "wakers", false, "")
	fs.DurationVar(&a.minBlock, "min-block", 0, "")
	fs.DurationVar(&a.maxBlock, "max-block", 0, "")
}

// waits reports whether the run times waits: --off-cpu or --wall.
func (a offCPUArgs) waits() bool { return a.on || a.wall }

// validate checks the bounds: they need waits to bound, and make a
// range.
func (a offCPUArgs) validate() error {
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
	if a.wakers && !a.waits() {
		return usagef("--wakers needs --off-cpu or --wall (it shows who woke each wait)")
	}
	if a.maxBlock > 0 && a.maxBlock < a.minBlock {
		return usagef("--max-block %v is below --min-block %v: no wait would keep its stack", a.maxBlock, a.minBlock)
	}
	return nil
}
