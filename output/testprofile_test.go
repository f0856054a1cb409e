package output

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const (
	probeMalloc = "uprobe:libc:malloc"
	probeOpen   = "tracepoint:syscalls:sys_enter_openat"
	probeNever  = "uprobe:./fx:never_called"
)

func fn(name string) *Frame { return &Frame{Name: name, Module: "/opt/fx/fx", Address: 0x401000} }

func libc(name string, addr uint64) *Frame {
	return &Frame{Name: name, Module: "/usr/lib/x86_64-linux-gnu/libc.so.6", Offset: addr - 0x7f0000000000,
		Address: addr, BuildID: "c0ffee"}
}

func kfn(name string) *Frame { return &Frame{Name: name, Module: "[kernel.kallsyms]", Kernel: true} }

// smallProfile covers merging, unsymbolized and unknown frames, inline
// frames, source lines, kernel frames, names needing sanitizing and a probe
// without hits.
func smallProfile() *Profile {
	start := []*Frame{libc("__libc_start_main", 0x7f0000029d90), fn("main")}
	b := &Frame{Name: "b", Module: "/opt/fx/fx", File: "fx.c", Line: 10, Address: 0x401100}
	return &Profile{
		Measure: Measure{Kind: KindHits},
		Probes:  []string{probeMalloc, probeOpen, probeNever},
		Samples: []Sample{
			{Probe: probeMalloc, PID: 100, Comm: "fx", Count: 50,
				User: StackOf(append(clone(start), fn("a"), b, libc("malloc", 0x7f00000a50a0))...)},
			{Probe: probeMalloc, PID: 100, Comm: "fx", Count: 30,
				User: StackOf(append(clone(start), fn("a"), fn("c"),
					&Frame{Module: "/usr/lib/libfoo.so", Offset: 0x1234, Address: 0x7f1000001234},
					libc("malloc", 0x7f00000a50a0))...)},
			{Probe: probeMalloc, PID: 101, Comm: "fx", Count: 20,
				User: StackOf(append(clone(start), fn("a"), b, libc("malloc", 0x7f00000a50a0))...)},
			{Probe: probeMalloc, PID: 100, Comm: "fx", Count: 10,
				User: StackOf(append(clone(start),
					&Frame{Name: "outer", Module: "/opt/fx/fx", File: "fx.c", Line: 20, Address: 0x401200},
					&Frame{Name: "inner", Module: "/opt/fx/fx", File: "inl.h", Line: 5, Address: 0x401200, Inline: true},
					libc("malloc", 0x7f00000a50a0))...)},
			{Probe: probeMalloc, PID: 0, Comm: "", Count: 3,
				User: StackOf(&Frame{Name: "operator<<(std::ostream&; int)\nx", Module: "/opt/fx/fx", Address: 0x401300},
					&Frame{}, &Frame{Address: 0x7fff1234})},
			{Probe: probeOpen, PID: 200, Comm: "cat", Count: 7,
				User:   StackOf(libc("__libc_start_main", 0x7f0000029d90), fn("main"), libc("open64", 0x7f0000114690)),
				Kernel: StackOf(kfn("entry_SYSCALL_64"), kfn("do_syscall_64"), kfn("__x64_sys_openat"))},
			{Probe: probeOpen, PID: 200, Comm: "cat", Count: 0, User: StackOf(fn("ignored"))},
		},
		Drops: map[string]uint64{"stack_read": 2},
	}
}

func clone(f []*Frame) []*Frame { return append([]*Frame(nil), f...) }

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./output -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (go test ./output -update rewrites it):\n--- got\n%s\n--- want\n%s",
			name, clip(got), clip(want))
	}
}

func clip(b []byte) string {
	if len(b) > 4000 {
		return string(b[:4000]) + "..."
	}
	return string(b)
}
