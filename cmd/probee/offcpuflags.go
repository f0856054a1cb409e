package main

import (
	"flag"
	"time"
)

// offCPUArgs are --off-cpu and its bounds.
type offCPUArgs struct {
	on                 bool          // --off-cpu
	minBlock, maxBlock time.Duration // --min-block, --max-block (0: none)
}

func addOffCPUFlags(fs *flag.FlagSet, a *offCPUArgs) {
	fs.BoolVar(&a.on, "off-cpu", false, "")
	fs.DurationVar(&a.minBlock, "min-block", 0, "")
	fs.DurationVar(&a.maxBlock, "max-block", 0, "")
}

// validate checks the bounds: they need --off-cpu, and make a range.
func (a offCPUArgs) validate() error {
	for _, b := range []struct {
		flag string
		d    time.Duration
	}{{"--min-block", a.minBlock}, {"--max-block", a.maxBlock}} {
		switch {
		case b.d != 0 && !a.on:
			return usagef("%s needs --off-cpu (it bounds the waits that keep their stacks)", b.flag)
		case b.d < 0:
			return usagef("%s %v: want a positive duration such as 1ms", b.flag, b.d)
		}
	}
	if a.maxBlock > 0 && a.maxBlock < a.minBlock {
		return usagef("--max-block %v is below --min-block %v: no wait would keep its stack", a.maxBlock, a.minBlock)
	}
	return nil
}
