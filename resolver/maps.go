package resolver

import (
	"io"

	"github.com/probee/probee/internal/procmaps"
)

// Mapping is one line of /proc/PID/maps (parsed by internal/procmaps,
// shared with unwind).
type Mapping = procmaps.Mapping

// ParseMaps parses the text of /proc/PID/maps. Malformed lines are an error
// naming the line; an empty input is no mappings.
func ParseMaps(r io.Reader) ([]Mapping, error) { return procmaps.Parse(r) }
