package main

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// --off-cpu, --wall and their bounds: what the run gets, and a usage
// error naming the problem for each bad combination.
func TestOffCPUFlags(t *testing.T) {
	tests := []struct {
		args               []string
		offCPU, wall, samp bool
		err                string // part of the usage error, "" for none
	}{
		{[]string{"--off-cpu"}, true, false, false, ""},
		{[]string{"--off-cpu", "--min-block", "1ms", "--max-block", "2s", "--uprobe", "libc:malloc"}, true, false, false, ""},
		{[]string{"--off-cpu", "--sample"}, true, false, true, ""},
		{[]string{"--wall", "--min-block", "1ms"}, false, true, false, ""},
		{[]string{"--min-block", "1ms", "--sample"}, false, false, false, "--min-block needs --off-cpu or --wall"},
		{[]string{"--off-cpu", "--max-block", "-1ms"}, false, false, false, "--max-block -1ms: want a positive duration"},
		{[]string{"--off-cpu", "--min-block", "5ms", "--max-block", "1ms"}, false, false, false, "--max-block 1ms is below --min-block 5ms"},
		{[]string{"--wall", "--wakers"}, false, true, false, ""},
		{[]string{"--wakers", "--sample"}, false, false, false, "--wakers needs --off-cpu or --wall"},
		{[]string{"--wall", "--sample"}, false, true, true, ""},
		{[]string{"--wall", "--off-cpu", "--sample", "--uprobe", "libc:malloc"}, true, true, true, ""},
		{[]string{"--wall", "--latency", "--uprobe", "libc:malloc"}, false, false, false, "--wall has no calls to measure"},
		{[]string{"-l", "--off-cpu", "libc:malloc"}, false, false, false, "--list-probes only lists"},
	}
	for _, tt := range tests {
		cfg, err := parseArgs(tt.args, io.Discard)
		var ue *usageError
		if tt.err != "" {
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want a usage error with %q", tt.args, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		tc := cfg.traceConfig(nil, nil)
		if tc.OffCPU != tt.offCPU || tc.Wall != tt.wall || tc.Sample != tt.samp {
			t.Errorf("%q: off-cpu %v wall %v sample %v, want %v %v %v", tt.args, tc.OffCPU, tc.Wall, tc.Sample, tt.offCPU, tt.wall, tt.samp)
		}
	}
	cfg, _ := parseArgs([]string{"--off-cpu", "--min-block", "1ms", "--max-block", "2s"}, io.Discard)
	if tc := cfg.traceConfig(nil, nil); tc.MinBlock != time.Millisecond || tc.MaxBlock != 2*time.Second {
		t.Errorf("bounds %v %v, want 1ms 2s", tc.MinBlock, tc.MaxBlock)
	}
}
