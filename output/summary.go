package output

import (
	"fmt"
	"math"
	"strings"
)

// HistBuckets is the number of buckets of a Histogram: HIST_BUCKETS in
// bpf/probee.h, which bpf's TestSharedConstants compares.
const HistBuckets = 64

// Histogram is a log2 histogram as the kernel keeps it: bucket i counts
// the values in [2^i, 2^(i+1)) (bucket 0 also 0) and sums them.
type Histogram struct {
	Counts [HistBuckets]uint64
	Sums   [HistBuckets]uint64
}

// bucketRange is the values bucket i holds, [lo, hi].
func bucketRange(i int) (lo, hi uint64) {
	if i == 0 {
		return 0, 1
	}
	lo = 1 << uint(i)
	if i == HistBuckets-1 {
		return lo, math.MaxUint64
	}
	return lo, lo<<1 - 1
}

// Quantile estimates the q-quantile (0 < q <= 1) of the values counted:
// the mean of the bucket that holds it, so within a factor of two, and
// exact when the values in that bucket are alike. 0 when nothing was
// counted.
func (h *Histogram) Quantile(q float64) uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(n))) // the rank-th smallest value, 1-based
	rank = min(max(rank, 1), n)
	var before uint64
	for i, c := range h.Counts {
		if before+c < rank {
			before += c
			continue
		}
		lo, hi := bucketRange(i)
		return min(max(h.Sums[i]/c, lo), hi)
	}
	return 0
}

// ProbeSummary is what one probe's calls added up to, for the summary
// on stderr (WriteSummary).
type ProbeSummary struct {
	Label             string
	Calls, Total, Max uint64 // every call, also those --min-latency left without a stack
	Hist              Histogram
	Stacked           uint64 // calls counted with their stacks (at least --min-latency)
	MinLatency        uint64 // nanoseconds; 0: every call has its stack
	// Calls not timed (KindLatency).
	Unwound, Exited, Unmatched, TooDeep, NoRoom, InFlight uint64
}

// SummaryLines renders a probe's summary in the style of BCC's
// funclatency: a line with the calls, total, mean, p50, p90, p99 (from
// the histogram) and max, the histogram's non-empty range, and a line
// for the calls that were not timed. kind is KindLatency (values are
// nanoseconds) or KindWeight (values in unit).
func SummaryLines(s ProbeSummary, kind, unit string) []string {
	f := func(v uint64) string { return valueText(v, kind, unit) }
	head := fmt.Sprintf("%s: %s", s.Label, plural(s.Calls, "call"))
	if s.Calls > 0 {
		head += fmt.Sprintf(", %s in all, mean %s, p50 %s, p90 %s, p99 %s, max %s",
			f(s.Total), f(s.Total/s.Calls), f(s.Hist.Quantile(0.5)),
			f(s.Hist.Quantile(0.9)), f(s.Hist.Quantile(0.99)), f(s.Max))
	}
	lines := []string{head}
	if s.MinLatency > 0 {
		lines = append(lines, fmt.Sprintf("%s: %s of at least %s, with their stacks", s.Label,
			plural(s.Stacked, "call"), f(s.MinLatency)))
	}
	lines = append(lines, histLines(&s.Hist, kind, unit)...)
	if t := untimedText(s); t != "" {
		lines = append(lines, s.Label+": not timed: "+t)
	}
	return lines
}

// histLines draws the buckets from the first to the last non-empty one.
func histLines(h *Histogram, kind, unit string) []string {
	first, last := -1, -1
	var top uint64
	for i, c := range h.Counts {
		if c > 0 {
			if first < 0 {
				first = i
			}
			last = i
			top = max(top, c)
		}
	}
	if first < 0 {
		return nil
	}
	name := unit
	if kind == KindLatency {
		name = "nsecs"
	}
	lines := []string{fmt.Sprintf("%25s : %-9s distribution", name, "count")}
	for i := first; i <= last; i++ {
		lo, hi := bucketRange(i)
		stars := int(40 * h.Counts[i] / top)
		lines = append(lines, fmt.Sprintf("%11d -> %-11d : %-9d |%-40s|", lo, hi, h.Counts[i], strings.Repeat("*", stars)))
	}
	return lines
}

func untimedText(s ProbeSummary) string {
	var parts []string
	add := func(n uint64, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(s.Unwound, "never returned (longjmp, exception or panic past them)")
	add(s.Exited, "ended by their thread's exit")
	add(s.InFlight, "not returned when tracing stopped")
	add(s.Unmatched, "returns without their entry (begun before tracing)")
	add(s.TooDeep, "entered with too many calls in flight on their thread")
	add(s.NoRoom, "found no room for their thread's calls in flight")
	return strings.Join(parts, ", ")
}

// valueText renders a value: a duration for KindLatency, a number and
// unit otherwise.
func valueText(v uint64, kind, unit string) string {
	if kind != KindLatency {
		return thousands(v) + " " + unit
	}
	switch {
	case v < 1000:
		return fmt.Sprintf("%d ns", v)
	case v < 1000_000:
		return fmt.Sprintf("%.3g µs", float64(v)/1e3)
	case v < 1000_000_000:
		return fmt.Sprintf("%.3g ms", float64(v)/1e6)
	}
	return fmt.Sprintf("%.3g s", float64(v)/1e9)
}

func plural(n uint64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%s %ss", thousands(n), word)
}
