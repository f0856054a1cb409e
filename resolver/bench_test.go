package resolver

import (
	"io"
	"testing"

	"github.com/probee/probee/probespec"
)

// BenchmarkResolveLibcAll is the in-process half of tests/bench/20-list-probes.sh:
// resolve "libc:*" (ld.so.cache lookup, ELF scan with the debug file,
// demangling) and write the list, with a fresh per-run index each time.
func BenchmarkResolveLibcAll(b *testing.B) {
	spec := uspec(libT("libc"), probespec.MatchGlob, "*")
	var n int
	for b.Loop() {
		ts, err := Resolve(spec, Scope{})
		if err != nil {
			b.Fatal(err)
		}
		if err := WriteList(io.Discard, ts, false); err != nil {
			b.Fatal(err)
		}
		n = len(ts)
	}
	b.ReportMetric(float64(n), "targets")
}
