package push

import (
	"encoding/binary"

	"github.com/probee/probee/output"
)

// Delta turns the cumulative profiles of one run into interval profiles.
// Samples are identified by probe, process, comm, container and the
// addresses of their frames (names only for frames without an address,
// such as "[user stack lost]"), not by symbol names: a stack symbolized
// differently at two pushes is still one stack.
type Delta struct {
	prev map[string]totals
}

type totals struct{ count, value uint64 }

// Next returns what cum holds beyond the previous cumulative profile given
// to Next: samples with their new counts (and values), the zero ones left
// out. cum is not modified; the result shares its frames.
func (d *Delta) Next(cum *output.Profile) *output.Profile {
	cur := make(map[string]totals, len(cum.Samples))
	out := &output.Profile{Measure: cum.Measure, Measures: cum.Measures, Probes: cum.Probes}
	var kb keyBuf
	for _, s := range cum.Samples {
		k := string(kb.key(&s))
		t := cur[k]
		t.count += s.Count
		t.value += s.Value
		cur[k] = t
	}
	seen := map[string]bool{}
	for _, s := range cum.Samples {
		k := string(kb.key(&s))
		if seen[k] {
			continue // merged above; the first sample carries the frames
		}
		seen[k] = true
		now, was := cur[k], d.prev[k]
		if now.count <= was.count && now.value <= was.value {
			continue
		}
		s.Count, s.Value = now.count-min(was.count, now.count), now.value-min(was.value, now.value)
		out.Samples = append(out.Samples, s)
	}
	d.prev = cur
	return out
}

// keyBuf makes sample identities in buffers reused from sample to sample.
type keyBuf struct {
	b      []byte
	frames []*output.Frame
}

// key is s's identity (valid until the next call).
func (kb *keyBuf) key(s *output.Sample) []byte {
	b := kb.b[:0]
	for _, str := range []string{s.Probe, s.Comm, s.Container.ID, s.Container.Cgroup} {
		b = append(append(b, str...), 0)
	}
	b = binary.AppendVarint(b, int64(s.PID))
	for _, stack := range []output.Stack{s.User, s.Kernel} {
		b = append(b, 1)
		kb.frames = stack.Append(kb.frames[:0])
		for _, f := range kb.frames {
			if f.Inline {
				continue // depends on --no-inline, not on the stack
			}
			if f.Address == 0 {
				b = append(append(b, f.Name...), 0)
			}
			b = binary.AppendUvarint(b, f.Address)
		}
	}
	kb.b = b
	return b
}
