package main

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/probee/probee/bpf"
)

func TestWeightArg(t *testing.T) {
	tests := []struct {
		in   string
		arg  int
		unit string
		ok   bool
	}{
		{"arg0", 0, "bytes", true},
		{"arg2:bytes", 2, "bytes", true},
		{"arg5:pages", 5, "pages", true},
		{"arg1:page_frames2", 1, "page_frames2", true},
		{"arg6", 0, "", false},
		{"arg", 0, "", false},
		{"0", 0, "", false},
		{"arg0:", 0, "", false},
		{"arg0:2x", 0, "", false},
		{"arg0:a b", 0, "", false},
		{"ARG0", 0, "", false},
		{"", 0, "", false},
	}
	for _, tt := range tests {
		var w weightArg
		err := w.Set(tt.in)
		if (err == nil) != tt.ok || tt.ok && (w.arg != tt.arg || w.unit != tt.unit || !w.set) {
			t.Errorf("Set(%q) = %+v, %v", tt.in, w, err)
		}
	}
}

func FuzzWeightArg(f *testing.F) {
	for _, s := range []string{"arg0", "arg3:bytes", "arg9", "arg0:é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var w weightArg
		if err := w.Set(s); err == nil {
			if w.arg < 0 || w.arg > 5 || w.unit == "" || strings.ContainsAny(w.unit, " ;/\n") {
				t.Fatalf("Set(%q) accepted %+v", s, w)
			}
			var again weightArg
			if again.Set(w.String()) != nil || again != w {
				t.Fatalf("String %q of %+v does not parse back", w.String(), w)
			}
		}
	})
}

func TestMeasureFlags(t *testing.T) {
	tests := []struct {
		args []string
		mode bpf.MeasureMode
		err  string // part of the usage error, "" for none
	}{
		{[]string{"--latency", "--uprobe", "libc:malloc"}, bpf.MeasureLatency, ""},
		{[]string{"--latency", "--min-latency", "5ms", "--kprobe", "vfs_read"}, bpf.MeasureLatency, ""},
		{[]string{"--weight", "arg2", "-e", "uprobe:libc:write"}, bpf.MeasureWeight, ""},
		{[]string{"--uprobe", "libc:malloc"}, bpf.MeasureCount, ""},
		{[]string{"--min-latency", "5ms", "--uprobe", "libc:malloc"}, 0, "--min-latency needs --latency"},
		{[]string{"--latency", "--min-latency", "-5ms", "--uprobe", "libc:malloc"}, 0, "want a positive duration"},
		{[]string{"--latency", "--weight", "arg0", "--uprobe", "libc:malloc"}, 0, "--latency and --weight both given"},
		{[]string{"--latency", "--sample"}, 0, "--sample has no calls"},
		{[]string{"--latency", "--tracepoint", "sched:sched_switch"}, 0, "a tracepoint has no return"},
		{[]string{"--latency", "--usdt", "python:function__entry"}, 0, "a USDT probe is a point"},
		{[]string{"--weight", "arg0", "-e", "usdt:fx:gated"}, 0, "a USDT probe is a point"},
		{[]string{"--latency", "--uprobe", "ret:libc:malloc"}, 0, "drop ret:"},
		{[]string{"--weight", "arg0", "--kprobe", "kretprobe:vfs_read"}, 0, "drop ret:"},
		{[]string{"--latency", "--uprobe", "libc:malloc+0x10"}, 0, "drop +0x10"},
		{[]string{"--weight", "arg0", "--uprobe", "./app:app.c:12"}, 0, "not a source line"},
		{[]string{"--weight", "arg7", "--uprobe", "libc:malloc"}, 0, "want arg0 to arg5"},
	}
	for _, tt := range tests {
		cfg, err := parseArgs(tt.args, io.Discard)
		var ue *usageError
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%q: %v", tt.args, err)
		case tt.err == "" && cfg.traceConfig(nil, nil).MeasureMode() != tt.mode:
			t.Errorf("%q: mode %d, want %d", tt.args, cfg.traceConfig(nil, nil).MeasureMode(), tt.mode)
		case tt.err != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: error %v, want a usage error with %q", tt.args, err, tt.err)
		}
	}
	cfg, err := parseArgs([]string{"--latency", "--min-latency", "5ms", "--uprobe", "x:f"}, io.Discard)
	if err != nil || cfg.minLatency != 5*time.Millisecond {
		t.Errorf("--min-latency 5ms: %v %v", cfg.minLatency, err)
	}
}
