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
//     for KindWeight, the second type being the default;
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
	scratch   []byte
}

func newPprofBuilder(p *Profile) *pprofBuilder {
	prof := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "hits", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "hits", Unit: "count"},
		Period:     1,
	}
	switch p.Kind {
	case KindSamples:
		prof.SampleType = []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}
		prof.PeriodType = &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}
		prof.Period = p.PeriodNanos
	case KindLatency, KindWeight:
		vt := &profile.ValueType{Type: "time", Unit: "nanoseconds"}
		if p.Kind == KindWeight {
			vt = &profile.ValueType{Type: cleanName(p.ValueType), Unit: cleanName(p.ValueUnit)}
		}
		prof.SampleType = []*profile.ValueType{{Type: "calls", Unit: "count"}, vt}
		prof.DefaultSampleType = vt.Type
		prof.PeriodType, prof.Period = vt, 1
	}
	if !p.Start.IsZero() {
		prof.TimeNanos, prof.DurationNanos = p.Start.UnixNano(), p.Duration.Nanoseconds()
	}
	for _, l := range ProbeLabels(p) {
		c := fmt.Sprintf("probe %s: %d %s", cleanName(l), p.total(forProbe(l)), cleanName(p.unit()))
		if p.weighted() {
			c += fmt.Sprintf(" over %d calls", p.calls(forProbe(l)))
		}
		prof.Comments = append(prof.Comments, c)
	}
	if d := p.dropSummary(); d != "" {
		prof.Comments = append(prof.Comments, d)
	}
	return &pprofBuilder{p: p, prof: prof, mappings: map[mapKey]*profile.Mapping{},
		functions: map[funcKey]*profile.Function{}, locations: map[locKey]*profile.Location{},
		samples: map[string]*profile.Sample{}, stacks: map[[2]Stack][]*profile.Location{}}
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
	values := []int64{int64(s.Count)}
	switch {
	case b.p.Kind == KindSamples:
		values = append(values, int64(s.Count)*b.p.PeriodNanos)
	case b.p.weighted():
		values = append(values, int64(s.Value))
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
	for _, g := range slices.Backward(groupFrames(s.Kernel.Frames(), true)) {
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
