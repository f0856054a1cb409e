package procmaps

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
)

// readTries is how often ReadProcess reads the maps of a process whose
// comm changes meanwhile: an exec is over in microseconds.
const readTries = 3

// ReadProcess reads the mappings of the process whose /proc directory is
// dir, and the comm they go with. An exec replaces both, but not at once
// and not in one read: the comm is read before and after the maps, and
// the maps again while the two differ (an exec happened in between). The
// comm is "" when it never held still, or cannot be read: the mappings
// cannot be told apart from another image's by name then.
func ReadProcess(dir string) ([]Mapping, string, error) {
	return readProcess(dir, readBounded)
}

// readBounded reads the file at path (a /proc file, whose size stat does
// not tell), at most MaxMapsBytes of it.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxMapsBytes+1))
	if err == nil && int64(len(b)) > MaxMapsBytes {
		return nil, fmt.Errorf("%s: %w", path, tooLarge())
	}
	return b, err
}

func readProcess(dir string, read func(string) ([]byte, error)) ([]Mapping, string, error) {
	comm := func() string {
		b, err := read(dir + "/comm")
		if err != nil {
			return ""
		}
		return strings.TrimSuffix(string(b), "\n")
	}
	before := comm()
	for try := 1; ; try++ {
		b, err := read(dir + "/maps")
		if err != nil {
			return nil, "", err
		}
		maps, err := Parse(bytes.NewReader(b))
		if err != nil {
			return nil, "", err
		}
		after := comm()
		switch {
		case after == before:
			return maps, after, nil
		case try == readTries:
			return maps, "", nil
		}
		before = after
	}
}
