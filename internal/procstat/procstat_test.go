package procstat

import (
	"os"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	rest := " 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 4242 19 20\n"
	for _, c := range []struct {
		text string
		want Stat
		err  bool
	}{
		{"7 (a) b) S 3" + rest, Stat{State: 'S', PPID: 3, Start: 4242}, false},
		{"7 (sh) Z 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 20\n", Stat{State: 'Z', PPID: 1, Start: 4242}, false},
		{"7 (sh", Stat{}, true},
		{"7 (sh) S 1 2\n", Stat{}, true},
		{"7 (sh) S x 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\n", Stat{}, true},
	} {
		got, err := Parse([]byte(c.text))
		if (err != nil) != c.err || !c.err && got != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v (error %v)", c.text, got, err, c.want, c.err)
		}
	}
	if !(Stat{State: 'Z'}).Exited() || (Stat{State: 'S'}).Exited() {
		t.Error("Exited")
	}
}

// Our own stat file: running, a parent, a start time.
func TestReadSelf(t *testing.T) {
	st, err := Read("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	if st.Exited() || st.PPID != os.Getppid() || st.Start == 0 {
		t.Errorf("%+v, want parent %d", st, os.Getppid())
	}
	if _, err := Read("/proc/self/nothing"); err == nil || !strings.Contains(err.Error(), "nothing") {
		t.Errorf("missing file: %v", err)
	}
}

// Parse never panics, and what it accepts has a state and says so again
// when printed back in the kernel's form.
func FuzzParse(f *testing.F) {
	f.Add([]byte("7 (a) b) S 3 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 4242 19 20\n"))
	f.Add([]byte("1 (init) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 9 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := Parse(b)
		if err == nil && st.State == 0 {
			t.Errorf("Parse(%q) = %+v without a state", b, st)
		}
	})
}
