package main

import (
	"math"
	"slices"
	"sort"
	"strings"
)

// unknownToken stands for every frame neither tool could name.
const unknownToken = "[unknown]"

// outermost are the names of the frames a complete stack starts at: the
// program's entry, ld.so's entry into it, and the thread entries; in Go,
// the entry, the threads' system stacks' (mstart) and every goroutine's
// (goexit, the return address its first function is given).
var outermost = map[string]bool{
	"_start": true, "_dl_start_user": true,
	"start_thread": true, "clone3": true, "clone": true,
	"__clone3": true, "__clone": true, "__GI___clone3": true, "__GI___clone": true,
	"_rt0_amd64_linux": true, "runtime.rt0_go.abi0": true, "runtime.mstart.abi0": true,
	"runtime.goexit.abi0": true,
}

type modOff struct {
	module string
	offset uint64
}

// LendNames names every unnamed frame of p that has a Module with the name
// from gives at the same module and offset.
func LendNames(p, from Profile) {
	names := map[modOff]string{}
	for _, s := range from {
		for _, f := range s.Frames {
			if f.Name != "" && f.Module != "" {
				names[modOff{f.Module, f.Offset}] = f.Name
			}
		}
	}
	for _, s := range p {
		for i, f := range s.Frames {
			if f.Name == "" && f.Module != "" {
				s.Frames[i].Name = names[modOff{f.Module, f.Offset}]
			}
		}
	}
}

// HideLeafCaller leaves out the leaf's caller in every stack of p of two
// frames or more, for a workload whose every sample is in a leaf that made
// no frame of its own (a libc system call wrapper): perf -g walks frame
// pointers from the frame pointer such a leaf leaves at its caller's
// frame, so it never sees that caller.
func HideLeafCaller(p Profile) {
	for i, s := range p {
		if n := len(s.Frames); n >= 2 {
			p[i].Frames = slices.Delete(slices.Clone(s.Frames), n-2, n-1)
		}
	}
}

// tokens are the frame names of s as compared, root first.
func tokens(s Stack) []string {
	t := make([]string, len(s.Frames))
	for i, f := range s.Frames {
		t[i] = f.Name
		if t[i] == "" {
			t[i] = unknownToken
		}
	}
	if len(t) > 1 && s.Frames[0].Name == "" && (t[1] == "__libc_start_main" || t[1] == "_dl_start") {
		t[0] = "_start" // a stripped executable's entry, or ld.so's (named only in its debug file)
	}
	return t
}

// Stats are the figures of one Profile.
type Stats struct {
	Samples uint64
	Reached uint64 // samples whose root frame is outermost
	Frames  uint64 // frames summed over samples
	JS      uint64 // samples with a named JavaScript frame
	// LeafOnly counts samples of one frame: the walk gave no caller
	// (what perf prints when its unwinder fails at the first step).
	LeafOnly uint64
}

// Measure computes the Stats of p.
func Measure(p Profile) Stats {
	var st Stats
	for _, s := range p {
		t := tokens(s)
		st.Samples += s.Count
		st.Frames += uint64(len(t)) * s.Count
		if len(t) > 0 && outermost[t[0]] {
			st.Reached += s.Count
		}
		if len(t) == 1 {
			st.LeafOnly += s.Count
		}
		for _, name := range t {
			if strings.HasPrefix(name, "JS:") {
				st.JS += s.Count
				break
			}
		}
	}
	return st
}

// Share is part/whole, 0 for an empty whole.
func Share(part, whole uint64) float64 {
	if whole == 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

// callerChains is the share of samples per caller chain: comm and the
// frames without the leaf. With from set, a chain holding a frame named
// from (or, for "PREFIX*", a frame starting with PREFIX) starts at that
// frame (the first one).
func callerChains(p Profile, from string) map[string]float64 {
	prefix, glob := strings.CutSuffix(from, "*")
	return chainShares(p, func(t []string) []string {
		i := slices.IndexFunc(t, func(f string) bool {
			return f == from || glob && strings.HasPrefix(f, prefix)
		})
		if from != "" && i > 0 {
			return t[i:]
		}
		return t
	})
}

// innerChains is the share of samples per chain of the leaf's n innermost
// callers (comm and those frames).
func innerChains(p Profile, n int) map[string]float64 {
	return chainShares(p, func(t []string) []string { return t[max(0, len(t)-n):] })
}

// chainShares is the share of samples per comm and cut(frames without the
// leaf).
func chainShares(p Profile, cut func([]string) []string) map[string]float64 {
	counts := map[string]uint64{}
	var total uint64
	for _, s := range p {
		t := tokens(s)
		if len(t) > 0 {
			t = t[:len(t)-1]
		}
		counts[s.Comm+";"+strings.Join(cut(t), ";")] += s.Count
		total += s.Count
	}
	return shares(counts, total)
}

// InnerCallers is how many callers of the leaf InnerOverlap compares.
const InnerCallers = 8

// InnerOverlap is Overlap over chains of the leaf's n innermost callers:
// what the top of a flamegraph shows. It does not depend on where a walk
// ended toward the root (perf's stack copy, 64 KiB at most, cuts the outer frames
// of deep stacks), and it settles with fewer samples than whole chains,
// dozens of frames deep, which two runs of one tool rarely sample alike.
func InnerOverlap(a, b Profile, n int) float64 {
	return sumMin(innerChains(a, n), innerChains(b, n))
}

func sumMin(sa, sb map[string]float64) float64 {
	sum := 0.0
	for k, x := range sa {
		sum += min(x, sb[k])
	}
	return sum
}

// Overlap is the sum over caller chains of the smaller of the two shares:
// 1 for the same distribution, 0 for disjoint ones. from is as for
// callerChains.
func Overlap(a, b Profile, from string) float64 {
	return sumMin(callerChains(a, from), callerChains(b, from))
}

// ShareDiff is one caller chain or frame name (Key) with its share of
// samples in each profile.
type ShareDiff struct {
	Key          string
	Probee, Perf float64
}

// TopDiffs are the n caller chains whose shares differ most, largest
// difference first (ties by chain, for a stable order).
func TopDiffs(probee, perf Profile, from string, n int) []ShareDiff {
	return topShares(callerChains(probee, from), callerChains(perf, from), n)
}

// topShares are the n keys whose shares in sa and sb differ most.
func topShares(sa, sb map[string]float64, n int) []ShareDiff {
	var d []ShareDiff
	for k, x := range sa {
		d = append(d, ShareDiff{k, x, sb[k]})
	}
	for k, y := range sb {
		if _, ok := sa[k]; !ok {
			d = append(d, ShareDiff{k, 0, y})
		}
	}
	sort.Slice(d, func(i, j int) bool {
		di, dj := math.Abs(d[i].Probee-d[i].Perf), math.Abs(d[j].Probee-d[j].Perf)
		if di != dj {
			return di > dj
		}
		return d[i].Key < d[j].Key
	})
	return d[:min(n, len(d))]
}

// TopNames are the n frame names whose shares of samples differ most,
// largest difference first: where the tools name frames differently, or
// one of them misses a frame.
func TopNames(probee, perf Profile, n int) []ShareDiff {
	return topShares(nameShares(probee), nameShares(perf), n)
}

// nameShares is the share of samples holding each frame name.
func nameShares(p Profile) map[string]float64 {
	counts := map[string]uint64{}
	var total uint64
	for _, s := range p {
		seen := map[string]bool{}
		for _, t := range tokens(s) {
			if !seen[t] {
				seen[t] = true
				counts[t] += s.Count
			}
		}
		total += s.Count
	}
	return shares(counts, total)
}

// shares divides each count by total.
func shares(counts map[string]uint64, total uint64) map[string]float64 {
	out := make(map[string]float64, len(counts))
	for k, n := range counts {
		out[k] = Share(n, total)
	}
	return out
}
