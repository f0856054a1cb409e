package output

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/probee/probee/internal/container"
)

// Kinds of Profile.
const (
	KindHits    = "hits"    // event-triggered probes: one count per hit
	KindSamples = "samples" // --sample: one count per CPU-clock sample
	KindLatency = "latency" // --latency: Count calls, Value their nanoseconds from entry to return
	KindWeight  = "weight"  // --weight: Count calls, Value the sum of an argument (ValueType)
	KindOffCPU  = "off-cpu" // --off-cpu: Count blocks, Value their nanoseconds off CPU
	// --wall: CPU samples (Value: Count x PeriodNanos) and blocks off CPU
	// (Value: their nanoseconds; a state frame tops their kernel stacks).
	KindWall = "wall"
)

// Frame is one symbolized (or not) stack frame: the one frame type from the
// symbolizer (package symbolize makes them) to the writers, named by
// FrameName alone. All fields are optional; the more are set, the better
// the frame renders (see FrameName for the rules).
type Frame struct {
	Name   string // function name, demangled; empty when unsymbolized
	Module string // path or name of the ELF object (or kernel module) holding Address
	Offset uint64 // Address relative to Module, used for unsymbolized frames
	File   string // source file, as the resolver reports it
	Line   int    // source line, 0 when unknown
	Kernel bool   // a kernel frame (frames in Sample.Kernel are kernel frames anyway)
	Inline bool   // an inlined call, sharing Address with the physical frame rootward of it
	// Address is, in an ELF file's code, the address in that file before
	// any load bias (the same in every process, wherever the file is
	// loaded; what addr2line takes), else the absolute address in the
	// process (JIT code, unreadable files) or the kernel.
	Address uint64
	BuildID string // hex build-id of Module, when known
}

// Sample is one distinct stack of one process under one probe and its count.
// Stacks are ordered root first (outermost caller) to leaf (where the event
// fired). Inline frames follow the physical frame they were inlined into.
type Sample struct {
	Probe  string // probe label: the spec as given on the command line
	PID    int    // process (tgid)
	Comm   string // process name
	User   Stack  // user stack, root..leaf
	Kernel Stack  // kernel stack, root..leaf (above the user stack); see WokenBy
	Count  uint64 // hits or samples; calls for KindLatency and KindWeight; blocks for KindOffCPU
	Value  uint64 // KindLatency, KindOffCPU: nanoseconds; KindWeight: the argument's sum
	// Container is where the process ran (--group-by container); zero
	// when not asked for. When set, collapsed stacks and flamegraphs get
	// its frame ("[container ID]", else "[cgroup PATH]") above comm, and
	// pprof samples the labels container (the full id) and cgroup.
	Container container.Info
}

// Profile is everything one run produced. Output writers never modify it.
type Profile struct {
	Measure                     // what the probes' samples count, but those Measures names
	Measures map[string]Measure // by probe label: probes measured otherwise (measure.go)
	Probes   []string           // labels in command-line order, including probes with 0 hits
	Samples  []Sample           // in any order; writers sort
	Drops    map[string]uint64  // cause -> count, informational
	// Start and Duration are the time the counts cover (pprof time_nanos
	// and duration_nanos); zero: not written. Backends (package push)
	// place a profile in time by them.
	Start    time.Time
	Duration time.Duration
}

// Options tune the writers.
type Options struct {
	// Lines appends ":file:line" to frames whose source position is known.
	Lines bool
	// WithProbe makes the probe label the root frame (WriteCollapsed, WriteSVG).
	// Write sets it by itself: on for combined outputs, off for per-probe files.
	WithProbe bool
	// Stdout receives the combined collapsed stacks when Write has no
	// destinations; nil means os.Stdout.
	Stdout io.Writer
	// Width of SVG flamegraphs in pixels; 0 means 1200.
	Width int
}

// unknown is the name of a frame about which nothing is known.
const unknown = "[unknown]"

// FrameName renders f as it appears in collapsed stacks and flamegraphs:
//   - Name when set, else "module+0xOFF" (module base name) when Module is
//     set, else "0xADDR" when Address is set, else "[unknown]";
//   - " (inlined)" appended for inline frames;
//   - ":file:line" appended with lines set and File known (":file" without a line);
//   - "_[k]" appended for kernel frames (kernel true or f.Kernel), but
//     markers (a name in brackets and nothing else, such as an off-CPU
//     state's "[sleep]" above the kernel stack).
//
// The result is sanitized (see Sanitize), so it never holds ';' or newlines.
func FrameName(f Frame, kernel, lines bool) string {
	withLine := lines && f.File != ""
	kernel = (kernel || f.Kernel) && !isMarker(f)
	if f.Name != "" && !f.Inline && !withLine && !kernel {
		return Sanitize(f.Name) // the common case, without copying
	}
	b := make([]byte, 0, len(f.Name)+len(f.File)+24)
	switch {
	case f.Name != "":
		b = append(b, f.Name...)
	case f.Module != "":
		b = append(b, filepath.Base(f.Module)...)
		b = strconv.AppendUint(append(b, "+0x"...), f.Offset, 16)
	case f.Address != 0:
		b = strconv.AppendUint(append(b, "0x"...), f.Address, 16)
	default:
		b = append(b, unknown...)
	}
	if f.Inline {
		b = append(b, " (inlined)"...)
	}
	if withLine {
		b = append(append(b, ':'), f.File...)
		if f.Line > 0 {
			b = strconv.AppendInt(append(b, ':'), int64(f.Line), 10)
		}
	}
	if kernel {
		b = append(b, "_[k]"...)
	}
	return Sanitize(string(b))
}

// WokenBy begins the name of the marker ("[woken by NAME]") that follows
// an off-CPU wait's kernel stack and state with --wakers: the frames
// after it in Sample.Kernel are those of the thread that woke the wait,
// from the wake-up to its root, kernel frames by their Kernel flag and
// user frames.
const WokenBy = "[woken by "

// wokenAt is the index of the WokenBy marker in frames, a sample's kernel
// stack, or len(frames): the frames before it are kernel frames.
func wokenAt(frames []*Frame) int {
	for i, f := range frames {
		if strings.HasPrefix(f.Name, WokenBy) && isMarker(*f) {
			return i
		}
	}
	return len(frames)
}

// isMarker reports whether f is a marker: a bracketed name, no place.
func isMarker(f Frame) bool {
	n := f.Name
	return len(n) > 2 && n[0] == '[' && n[len(n)-1] == ']' && f.Module == "" && f.Address == 0 && f.File == ""
}

// Sanitize makes s safe as one frame of a collapsed line: ';' (the frame
// separator) becomes ',' (so Rust's "[u8; 4]" reads "[u8, 4]"), and CR, LF,
// tab and other control characters become a space, and invalid UTF-8 (and
// the non-characters U+FFFE, U+FFFF, which XML forbids) becomes U+FFFD. An
// empty s becomes "[unknown]". Spaces are kept: readers split the count off
// at the last space.
func Sanitize(s string) string {
	if s == "" {
		return unknown
	}
	if !strings.ContainsFunc(s, needsSanitize) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == ';':
			return ','
		case r < 0x20 || r == 0x7f:
			return ' '
		case r == 0xfffe || r == 0xffff:
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

func needsSanitize(r rune) bool {
	return r == ';' || r < 0x20 || r == 0x7f || r == utf8.RuneError || r == 0xfffe || r == 0xffff
}

// commName is the frame naming a sample's process.
func commName(s *Sample) string {
	if s.Comm != "" {
		return Sanitize(s.Comm)
	}
	if s.PID > 0 {
		return fmt.Sprintf("[pid %d]", s.PID)
	}
	return unknown
}

// ProbeLabels returns p.Probes without duplicates, followed (sorted) by
// labels that samples carry but p.Probes lacks, so no sample is ever lost.
func ProbeLabels(p *Profile) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range p.Probes {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	var extra []string
	for i := range p.Samples {
		l := p.Samples[i].Probe
		if !seen[l] {
			seen[l] = true
			extra = append(extra, l)
		}
	}
	sortStrings(extra)
	return append(out, extra...)
}

// calls returns the sum of the counts of the samples accepted by keep.
func (p *Profile) calls(keep func(*Sample) bool) uint64 {
	var n uint64
	for i := range p.Samples {
		if keep(&p.Samples[i]) {
			n += p.Samples[i].Count
		}
	}
	return n
}

// total returns the sum of the weights of the samples accepted by keep
// (nil: all).
func (p *Profile) total(keep func(*Sample) bool) uint64 {
	var n uint64
	for i := range p.Samples {
		if keep == nil || keep(&p.Samples[i]) {
			n += p.Weight(&p.Samples[i])
		}
	}
	return n
}

func sortStrings(s []string) { slices.Sort(s) }
