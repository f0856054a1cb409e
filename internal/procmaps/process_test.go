package procmaps

import (
	"os"
	"testing"
)

// A process that execs while it is read: its comm and maps change between
// reads. ReadProcess returns a comm only with maps read between two reads
// of that same comm.
func TestReadProcess(t *testing.T) {
	const shMaps = "1000-2000 r-xp 00000000 fd:01 11 /usr/bin/sh\n"
	const envMaps = "3000-4000 r-xp 00000000 fd:01 22 /usr/bin/env\n"
	for _, c := range []struct {
		name     string
		comms    []string // successive reads of comm (the last repeats)
		maps     []string // successive reads of maps (the last repeats)
		want     string   // path of the maps returned
		wantComm string
	}{
		{"steady", []string{"sh"}, []string{shMaps}, "/usr/bin/sh", "sh"},
		{"exec during the read", []string{"sh", "env"}, []string{shMaps, envMaps}, "/usr/bin/env", "env"},
		{"exec mid-way", []string{"sh", "env"}, []string{envMaps}, "/usr/bin/env", "env"},
		{"never still", []string{"a", "b", "c", "d", "e"}, []string{shMaps}, "/usr/bin/sh", ""},
		{"no comm", nil, []string{shMaps}, "/usr/bin/sh", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			next := map[string][]string{"/p/comm": c.comms, "/p/maps": c.maps}
			read := func(name string) ([]byte, error) {
				q := next[name]
				if len(q) == 0 {
					return nil, os.ErrNotExist
				}
				if len(q) > 1 {
					next[name] = q[1:]
				}
				return []byte(q[0] + "\n"), nil
			}
			maps, comm, err := readProcess("/p", read)
			if err != nil {
				t.Fatal(err)
			}
			if len(maps) != 1 || maps[0].Path != c.want || comm != c.wantComm {
				t.Errorf("got %v, comm %q; want %s, comm %q", maps, comm, c.want, c.wantComm)
			}
		})
	}
	if _, _, err := readProcess("/gone", func(string) ([]byte, error) { return nil, os.ErrNotExist }); err == nil {
		t.Error("no error for a process gone")
	}
}
