package output

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// kernelMapping is the pprof mapping name of the kernel image, as perf and
// pprof's own converters name it.
const kernelMapping = "[kernel.kallsyms]"

// WritePprof writes p as a gzipped pprof profile (profile.proto) that `go
// tool pprof` reads:
//   - sample types hits/count for probes; samples/count and cpu/nanoseconds
//     (count times PeriodNanos) for sampling; calls/count and
//     time/nanoseconds (the calls' summed time from entry to return) for
//     KindLatency; calls/count and ValueType/ValueUnit (e.g. arg0/bytes)
//     for KindWeight; blocks/count and off_cpu/nanoseconds for
//     KindOffCPU; the second type being the default; for KindWall
//     wall/nanoseconds (the default), cpu/nanoseconds and
//     off_cpu/nanoseconds (each sample's in one of them). Probes measured
//     otherwise (Profile.Measures) add their types: each sample fills
//     its probe's and leaves the others 0;
//   - labels probe and comm (strings, control characters made spaces) and pid (numeric, unit "pid");
//     with --group-by container also container (the full id, when known) and cgroup;
//   - one mapping per module, build-id and bias; locations at the
//     frames' addresses, which for code symbolized from its ELF file are
//     addresses in that file (as addr2line takes them), the same in every
//     process; kernel frames map to "[kernel.kallsyms]" (or "[module]");
//   - functions with their source file, lines with their line number; an
//     inline frame becomes an extra Line of the Location of the physical
//     frame it was inlined into, innermost first as profile.proto wants;
//   - unsymbolized frames get a function named like the collapsed frame
//     ("libfoo.so+0x1234") so reports show them by module and offset;
//   - comments with the hits per probe (zero included) and the drops;
//   - time_nanos and duration_nanos from Start and Duration, when set.
//
// opts is accepted for symmetry; pprof always carries files and lines.
func WritePprof(w io.Writer, p *Profile, opts Options) error {
	b := newPprofBuilder(p)
	for _, i := range sortedSamples(p) {
		b.add(&p.Samples[i])
	}
	orderMappings(b.prof.Mapping)
	if err := b.prof.CheckValid(); err != nil {
		return fmt.Errorf("build pprof profile: %w", err)
	}
	return b.prof.Write(w)
}

type pprofBuilder struct {
	p         *Profile
	prof      *profile.Profile
	mappings  map[mapKey]*profile.Mapping
	functions map[funcKey]*profile.Function
	locations map[locKey]*profile.Location
	samples   map[string]*profile.Sample
	stacks    map[[2]Stack][]*profile.Location // by user and kernel stack
	columns   map[string][]int                 // by probe label: its values' sample types
	scratch   []byte
}

func newPprofBuilder(p *Profile) *pprofBuilder {
	prof := &profile.Profile{Period: 1}
	b := &pprofBuilder{p: p, prof: prof, mappings: map[mapKey]*profile.Mapping{},
		functions: map[funcKey]*profile.Function{}, locations: map[locKey]*profile.Location{},
		samples: map[string]*profile.Sample{}, stacks: map[[2]Stack][]*profile.Location{},
		columns: map[string][]int{}}
	b.sampleTypes()
	if !p.Start.IsZero() {
		prof.TimeNanos, prof.DurationNanos = p.Start.UnixNano(), p.Duration.Nanoseconds()
	}
	for _, l := range ProbeLabels(p) {
		m := p.MeasureOf(l)
		c := fmt.Sprintf("probe %s: %d %s", cleanName(l), p.total(forProbe(l)), cleanName(m.unit()))
		if m.weighted() {
			c += fmt.Sprintf(" over %d %s", p.calls(forProbe(l)), m.callsWord())
		}
		prof.Comments = append(prof.Comments, c)
	}
	if d := p.dropSummary(); d != "" {
		prof.Comments = append(prof.Comments, d)
	}
	return b
}

// sampleTypes sets the profile's sample types: those of each probe's
// measure (pprofTypes), each type once, and the columns of each probe's
// values among them. The period and default type are the first probe's.
func (b *pprofBuilder) sampleTypes() {
	index := map[profile.ValueType]int{}
	for i, l := range ProbeLabels(b.p) {
		m := b.p.MeasureOf(l)
		types, def := pprofTypes(m)
		if i == 0 {
			b.prof.PeriodType, b.prof.Period = def, max(m.PeriodNanos, 1)
			if m.weighted() {
				b.prof.DefaultSampleType = def.Type
			}
		}
		for _, t := range types {
			col, ok := index[*t]
			if !ok {
				col = len(b.prof.SampleType)
				index[*t] = col
				b.prof.SampleType = append(b.prof.SampleType, t)
			}
			b.columns[l] = append(b.columns[l], col)
		}
	}
	if len(b.prof.SampleType) == 0 { // no probe
		b.prof.SampleType = []*profile.ValueType{{Type: "hits", Unit: "count"}}
		b.prof.PeriodType = b.prof.SampleType[0]
	}
}

// pprofTypes are the sample types of a measure's values (pprofValues)
// and the default one.
func pprofTypes(m Measure) ([]*profile.ValueType, *profile.ValueType) {
	var vt *profile.ValueType
	switch m.Kind {
	case KindSamples:
		vt = &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}
		return []*profile.ValueType{{Type: "samples", Unit: "count"}, vt}, vt
	case KindLatency:
		vt = &profile.ValueType{Type: "time", Unit: "nanoseconds"}
	case KindOffCPU:
		vt = &profile.ValueType{Type: "off_cpu", Unit: "nanoseconds"}
	case KindWall:
		vt = &profile.ValueType{Type: "wall", Unit: "nanoseconds"}
		return []*profile.ValueType{vt, {Type: "cpu", Unit: "nanoseconds"}, {Type: "off_cpu", Unit: "nanoseconds"}}, vt
	case KindWeight:
		vt = &profile.ValueType{Type: cleanName(m.ValueType), Unit: cleanName(m.ValueUnit)}
	default:
		vt = &profile.ValueType{Type: "hits", Unit: "count"}
		return []*profile.ValueType{vt}, vt
	}
	return []*profile.ValueType{{Type: m.callsWord(), Unit: "count"}, vt}, vt
}

// pprofValues are s's values under measure m, as pprofTypes orders them.
func pprofValues(m Measure, s *Sample) []int64 {
	if m.Kind == KindWall {
		if offCPU(s) {
			return []int64{int64(s.Value), 0, int64(s.Value)}
		}
		return []int64{int64(s.Value), int64(s.Value), 0}
	}
	values := []int64{int64(s.Count)}
	switch {
	case m.Kind == KindSamples:
		values = append(values, int64(s.Count)*m.PeriodNanos)
	case m.weighted():
		values = append(values, int64(s.Value))
	}
	return values
}

// sortedSamples orders sample indexes by probe, comm, pid and stack, so the
// output does not depend on the order of p.Samples.
func sortedSamples(p *Profile) []int {
	keys := make([]string, len(p.Samples))
	idx := make([]int, 0, len(p.Samples))
	names := frameNames{opts: Options{WithProbe: true, Lines: true}}
	known := map[sampleID]string{} // samples alike share their key
	for i := range p.Samples {
		s := &p.Samples[i]
		id := idOfSample(s)
		k, ok := known[id]
		if !ok {
			k = joinNames(sampleFrames(s, &names))
			known[id] = k
		}
		keys[i] = k
		idx = append(idx, i)
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Or(strings.Compare(keys[a], keys[b]), cmp.Compare(p.Samples[a].PID, p.Samples[b].PID))
	})
	return idx
}

// add appends one sample, merged with an earlier one of the same probe,
// process and stack.
func (b *pprofBuilder) add(s *Sample) {
	if s.Count == 0 && b.p.Weight(s) == 0 {
		return
	}
	locs := b.locationsOf(s)
	kb := append(b.scratch[:0], s.Probe...)
	kb = append(append(kb, 0), s.Comm...)
	kb = append(append(kb, 0), s.Container.ID...)
	kb = append(append(kb, 0), s.Container.Cgroup...)
	kb = binary.AppendVarint(append(kb, 0), int64(s.PID))
	for _, l := range locs {
		kb = binary.AppendUvarint(kb, l.ID)
	}
	b.scratch = kb
	key := string(kb)
	values := make([]int64, len(b.prof.SampleType))
	for i, v := range pprofValues(b.p.MeasureOf(s.Probe), s) {
		values[b.columns[s.Probe][i]] = v
	}
	if prev, ok := b.samples[key]; ok {
		for i, v := range values {
			prev.Value[i] += v
		}
		return
	}
	ps := &profile.Sample{Location: locs, Value: values, Label: map[string][]string{"probe": {cleanName(s.Probe)}}}
	if s.Comm != "" {
		ps.Label["comm"] = []string{cleanName(s.Comm)}
	}
	if id := s.Container.ID; id != "" {
		ps.Label["container"] = []string{id}
	}
	if cg := s.Container.Cgroup; cg != "" {
		ps.Label["cgroup"] = []string{cleanName(cg)}
	}
	if s.PID != 0 {
		ps.NumLabel = map[string][]int64{"pid": {int64(s.PID)}}
		ps.NumUnit = map[string][]string{"pid": {"pid"}}
	}
	b.samples[key] = ps
	b.prof.Sample = append(b.prof.Sample, ps)
}

// locationsOf are the Locations of s's stacks, leaf first; samples sharing
// their stacks (Interner.Stack) share them.
func (b *pprofBuilder) locationsOf(s *Sample) []*profile.Location {
	id := [2]Stack{s.User, s.Kernel}
	if locs, ok := b.stacks[id]; ok {
		return locs
	}
	var locs []*profile.Location
	kernel := s.Kernel.Frames()
	w := wokenAt(kernel)
	for _, g := range slices.Backward(groupFrames(kernel[w:], false)) { // the waker's (--wakers)
		locs = append(locs, b.location(g))
	}
	for _, g := range slices.Backward(groupFrames(kernel[:w], true)) {
		locs = append(locs, b.location(g))
	}
	for _, g := range slices.Backward(groupFrames(s.User.Frames(), false)) {
		locs = append(locs, b.location(g))
	}
	b.stacks[id] = locs
	return locs
}

// frameGroup is one physical frame followed (leafward) by the frames
// inlined into it; all share one address and become one Location.
type frameGroup struct {
	frames []*Frame
	kernel bool
}

// groupFrames splits a root..leaf stack into frame groups: a frame starts a
// new group unless it is inline and follows a frame of the same address.
// Groups are sub-slices of frames.
func groupFrames(frames []*Frame, kernel bool) []frameGroup {
	var gs []frameGroup
	start := 0
	for i := 1; i <= len(frames); i++ {
		if i < len(frames) && frames[i].Inline && frames[i-1].Address == frames[i].Address {
			continue
		}
		gs = append(gs, frameGroup{frames: frames[start:i], kernel: kernel || frames[start].Kernel})
		start = i
	}
	return gs
}
