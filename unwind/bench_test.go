package unwind

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// cpuTime is the process's user+system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// benchBinaries are the files BenchmarkBuild measures (missing ones skip).
func benchBinaries() []string {
	out := []string{systemLib("libc.so.6"), systemLib("ld-linux-x86-64.so.2"), systemLib("libstdc++.so.6"), largeBinary()}
	for _, f := range []string{"chain-nofp", "libfx.so", "cxx", "rustfx", "gofx"} {
		out = append(out, filepath.Join(fixtureDir, f))
	}
	return append(out, bigBinaries()...)
}

// bigBinaries are the largest tables of issue 14 (libLLVM-14, libclang-cpp
// 14, Rust's BOLT-optimized librustc_driver), those present.
func bigBinaries() []string {
	out := []string{systemLib("libLLVM-14.so.1"), systemLib("libclang-cpp.so.14")}
	home, _ := os.UserHomeDir()
	rustc, _ := filepath.Glob(filepath.Join(home, ".rustup/toolchains/stable-*/lib/librustc_driver-*.so"))
	return append(out, rustc...)
}

// BenchmarkBuild measures building each binary's table from a file already
// in the page cache (warm), and reports its size figures: CFI rows, merged
// entries, distinct rules, encoded bytes and bytes per original row.
func BenchmarkBuild(b *testing.B) {
	for _, p := range benchBinaries() {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			continue
		}
		b.Run(filepath.Base(p), func(b *testing.B) {
			var tab *Table
			cpu0 := cpuTime()
			for b.Loop() {
				var err error
				if tab, err = BuildFile(p); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time per build: on a shared machine it is steadier than wall time.
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
			s := tab.Size()
			b.ReportMetric(float64(tab.Stats.Rows), "rows")
			b.ReportMetric(float64(len(tab.Entries)), "entries")
			b.ReportMetric(float64(len(tab.Rules)), "rules")
			b.ReportMetric(float64(s), "bytes")
			b.ReportMetric(float64(s)/float64(max(tab.Stats.Rows, 1)), "bytes/row")
		})
	}
}

// BenchmarkLookup measures one table lookup in libc (the Go twin of the
// BPF binary search).
func BenchmarkLookup(b *testing.B) {
	tab, _ := libcTable(b)
	pcs := make([]uint64, 0, len(tab.Entries))
	for i := range tab.Entries {
		pcs = append(pcs, tab.EntryPC(i)+1)
	}
	i := 0
	for b.Loop() {
		tab.Lookup(pcs[i])
		if i++; i == len(pcs) {
			i = 0
		}
	}
}
