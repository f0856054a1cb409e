package push

import (
	"maps"
	"slices"
)

// Reasons a profile was dropped.
const (
	DropQueueFull  = "queue full"                   // the oldest waiting profile made room for a new one
	DropQueueBytes = "queue over its size in bytes" // the oldest waiting profiles made room in bytes for a new one
	DropRejected   = "rejected by the backend"      // a 4xx answer other than 429: retrying cannot help
	DropUnsent     = "not sent before the timeout"  // still waiting when Close's flush timeout ran out
	DropEncode     = "could not be encoded"
)

// Tally is a number of profiles and the events they hold: hits, samples,
// calls' nanoseconds or weights, whatever the local outputs count.
type Tally struct {
	Profiles int
	Events   uint64
}

func (t *Tally) add(it *item) {
	t.Profiles++
	t.Events += it.events
}

// ProbeStats is what became of one probe's profiles.
type ProbeStats struct {
	Sent    Tally
	Dropped map[string]Tally // by reason (Drop*)
}

// Stats is what a Pusher did.
type Stats struct {
	Retries  int                    // failed attempts that were retried
	Failures int                    // failed attempts, retried or not
	LastErr  string                 // the last failure, "" for none
	Probes   map[string]*ProbeStats // by probe label
}

// ProbeLabels are the probes of s, sorted.
func (s Stats) ProbeLabels() []string {
	return slices.Sorted(maps.Keys(s.Probes))
}

// Sent is every profile delivered.
func (s Stats) Sent() Tally {
	var t Tally
	for _, p := range s.Probes {
		t.Profiles += p.Sent.Profiles
		t.Events += p.Sent.Events
	}
	return t
}

// Dropped is every profile dropped, for any reason.
func (s Stats) Dropped() Tally {
	var t Tally
	for _, p := range s.Probes {
		for _, d := range p.Dropped {
			t.Profiles += d.Profiles
			t.Events += d.Events
		}
	}
	return t
}

func (s *Stats) probe(label string) *ProbeStats {
	if s.Probes == nil {
		s.Probes = map[string]*ProbeStats{}
	}
	p := s.Probes[label]
	if p == nil {
		p = &ProbeStats{Dropped: map[string]Tally{}}
		s.Probes[label] = p
	}
	return p
}

func (s *Stats) drop(it *item, reason string) {
	d := s.probe(it.probe).Dropped
	t := d[reason]
	t.add(it)
	d[reason] = t
}

// clone is a deep copy, for callers outside the lock.
func (s *Stats) clone() Stats {
	out := *s
	out.Probes = map[string]*ProbeStats{}
	for k, p := range s.Probes {
		out.Probes[k] = &ProbeStats{Sent: p.Sent, Dropped: maps.Clone(p.Dropped)}
	}
	return out
}
