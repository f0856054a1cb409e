package main

import (
	"io"

	"github.com/probee/probee/trace"
)

// traceConfig is the run cfg asks for, its outputs to stdout and its
// status lines to status.
func (cfg *config) traceConfig(stdout io.Writer, status trace.Reporter) trace.Config {
	tc := trace.Config{
		PID: cfg.pid, Command: cfg.command, Duration: cfg.duration,
		Interval: cfg.interval, IntervalGiven: cfg.intervalOn,
		Outputs: cfg.outputs, Stdout: stdout,
		Unwind: cfg.unwind, NoTailCalls: cfg.noTail, UnwindBudget: uint64(cfg.unwindBudget),
		NoTableCache: cfg.noTableCache, TableCacheDir: cfg.tableCacheDir, TableCacheSize: uint64(cfg.tableCacheSize),
		Sample: cfg.sample, Freq: cfg.freq, IncludeIdle: cfg.idle,
		NoUprobeMulti: cfg.noUprobeMulti, NoKprobeMulti: cfg.noKprobeMulti, MaxStacks: cfg.maxStacks,
		Lines: cfg.lines, NoInline: cfg.noInline, ByContainer: cfg.groupBy == groupContainer,
		Latency: cfg.latency, MinLatency: cfg.minLatency,
		OffCPU: cfg.offCPU.on, Wall: cfg.offCPU.wall, Wakers: cfg.offCPU.wakers, MinBlock: cfg.offCPU.minBlock, MaxBlock: cfg.offCPU.maxBlock,
		Status: status,
	}
	for _, p := range cfg.probes {
		tc.Probes = append(tc.Probes, trace.Probe{Flag: p.flag, Text: p.text, Spec: p.spec})
	}
	if cfg.weight.set {
		tc.Weight = &trace.Weight{Arg: cfg.weight.arg, Unit: cfg.weight.unit}
	}
	if pa := cfg.push; pa.url != "" {
		tc.Push = &trace.Push{Endpoint: pa.endpoint, Labels: pa.labels, ServiceName: pa.serviceName,
			Interval: pa.interval, Queue: pa.queue, QueueBytes: pa.queueBytes, FlushTimeout: pa.flushTimeout}
	}
	return tc
}
