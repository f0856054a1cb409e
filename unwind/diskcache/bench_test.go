package diskcache

import (
	"os"
	"testing"
	"time"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/unwind"
)

// libLLVM is the largest table of issue 14 (860,973 CFI rows).
const libLLVM = "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"

// BenchmarkLLVM compares building libLLVM-14's table with loading it from
// the table cache. build reports the process's first build apart (cold-ms:
// a cold heap, nothing reused; run the benchmark alone for that figure);
// load reports the file's size. Skipped without libLLVM-14.
func BenchmarkLLVM(b *testing.B) {
	if _, err := os.Stat(libLLVM); err != nil {
		b.Skip("libLLVM-14 is not installed (apt install llvm-14)")
	}
	id, err := fileid.OfPath(libLLVM)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	tab, err := unwind.BuildFile(libLLVM)
	if err != nil {
		b.Fatal(err)
	}
	cold := time.Since(start)
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			if _, err := unwind.BuildFile(libLLVM); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cold.Microseconds())/1000, "cold-ms")
	})
	b.Run("load", func(b *testing.B) {
		d, err := Open(b.TempDir(), Options{Warnf: b.Fatalf})
		if err != nil {
			b.Fatal(err)
		}
		save(d, id.Key(), tab)
		fi, err := os.Stat(d.File(id.Key()))
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, ok := d.Load(id.Key()); !ok {
				b.Fatal("not loaded")
			}
		}
		b.ReportMetric(float64(fi.Size()), "file-bytes")
	})
}
