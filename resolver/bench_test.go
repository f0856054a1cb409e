package resolver

import (
	"io"
	"os"
	"testing"

	"github.com/probee/probee/probespec"
)

// BenchmarkResolveLibcAll is the in-process half of tests/bench/20-list-probes.sh:
// resolve "libc:*" (ld.so.cache lookup, ELF scan with the debug file)
// and write the list, with a fresh per-run index each time.
func BenchmarkResolveLibcAll(b *testing.B) {
	benchList(b, uspec(libT("libc"), probespec.MatchGlob, "*"))
}

func llvmSpec(b *testing.B, kind probespec.MatcherKind, pattern string) probespec.Spec {
	if _, err := os.Stat(llvmLib); err != nil {
		b.Skipf("%s is missing (apt-get install libllvm14): %v", llvmLib, err)
	}
	return uspec(pathT(llvmLib), kind, pattern)
}

// BenchmarkResolveLLVMAll resolves and lists every function of libLLVM
// (34000 C++ names, none demangled).
func BenchmarkResolveLLVMAll(b *testing.B) {
	benchList(b, llvmSpec(b, probespec.MatchGlob, "*"))
}

// BenchmarkResolveLLVMDemangled resolves a demangled glob on libLLVM: the
// prefilter leaves a handful of names to demangle.
func BenchmarkResolveLLVMDemangled(b *testing.B) {
	benchList(b, llvmSpec(b, probespec.MatchDemangled, "llvm::SmallVectorBase<*>::grow_pod*"))
}

// BenchmarkResolveLLVMDemangledAll resolves a demangled glob with no
// identifier to prefilter on: every name of libLLVM is demangled.
func BenchmarkResolveLLVMDemangledAll(b *testing.B) {
	benchList(b, llvmSpec(b, probespec.MatchDemangled, "*::operator[]*"))
}

func benchList(b *testing.B, spec probespec.Spec) {
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
