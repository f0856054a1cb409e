package perfmap

import (
	"reflect"
	"testing"
)

func TestParsePerfMap(t *testing.T) {
	for _, c := range []struct {
		name, text string
		final      bool
		want       []Symbol
		consumed   int
	}{
		{"v8", "3ef4c0a2b3c0 5c JS:*fib /tmp/fib.js:1:13\n", false,
			[]Symbol{{0x3ef4c0a2b3c0, 0x5c, "JS:*fib /tmp/fib.js:1:13", 0}}, 41},
		{"0x and tabs", "0x1000\t0X20 \t a;b  c\r\n", false, []Symbol{{0x1000, 0x20, "a;b  c", 0}}, 22},
		{"unterminated", "1000 10 a\n2000 10 b", false, []Symbol{{0x1000, 0x10, "a", 0}}, 10},
		{"unterminated final", "1000 10 a\n2000 10 b", true,
			[]Symbol{{0x1000, 0x10, "a", 0}, {0x2000, 0x10, "b", 1}}, 19},
		{"garbage skipped", "\n\nzz 10 a\n1000 zz a\n1000 0 zero\n1000 10\n1000 10 \n" +
			"ffffffffffffffff 2 wraps\n 1000 10 lead\n-1 1 neg\n1000 10 ok\n", false,
			[]Symbol{{0x1000, 0x10, "ok", 0}}, 108},
		{"empty", "", true, nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, n := parsePerfMap([]byte(c.text), c.final, 0)
			if !reflect.DeepEqual(got, c.want) || n != c.consumed {
				t.Errorf("parsePerfMap(%q) = %+v, %d; want %+v, %d", c.text, got, n, c.want, c.consumed)
			}
		})
	}
}

// A line longer than maxPerfLine is skipped whole, the next one is read.
func TestParsePerfMapLongLine(t *testing.T) {
	long := make([]byte, maxPerfLine+10)
	for i := range long {
		long[i] = 'x'
	}
	text := "1000 10 " + string(long) + "\n2000 10 b\n"
	got, n := parsePerfMap([]byte(text), false, 5)
	if len(got) != 1 || got[0].Name != "b" || got[0].Seq != 5 || n != len(text) {
		t.Errorf("got %+v, %d", got, n)
	}
}

// Later lines win where ranges overlap; elsewhere earlier lines stay.
func TestPerfSegments(t *testing.T) {
	syms, _ := parsePerfMap([]byte(
		"1000 100 outer\n"+ // [1000,1100)
			"1040 20 inner\n"+ // inside outer
			"1080 100 moved\n"+ // overlaps outer's end
			"3000 10 old\n"+
			"3000 10 new\n"+ // same range again
			"2000 10 gap\n"), false, 0)
	segs := perfSegments(syms)
	name := func(addr uint64) string {
		if i := lookupSeg(segs, addr); i >= 0 {
			return syms[segs[i].sym].Name
		}
		return ""
	}
	for addr, want := range map[uint64]string{
		0xfff: "", 0x1000: "outer", 0x103f: "outer", 0x1040: "inner", 0x105f: "inner",
		0x1060: "outer", 0x107f: "outer", 0x1080: "moved", 0x117f: "moved", 0x1180: "",
		0x2005: "gap", 0x2010: "", 0x3000: "new", 0x300f: "new", 0x3010: "",
	} {
		if got := name(addr); got != want {
			t.Errorf("0x%x: %q, want %q", addr, got, want)
		}
	}
	if len(segs) != 6 {
		t.Errorf("%d segments, want 6: %+v", len(segs), segs)
	}
}

// FuzzParsePerfMap: no panics; every entry is a non-empty range with a
// name; the consumed bytes are within the input; the segments are sorted,
// disjoint and each lies within its line's range.
func FuzzParsePerfMap(f *testing.F) {
	f.Add([]byte("3ef4c0a2b3c0 5c JS:*fib /tmp/fib.js:1:13\n1000 10 a\n"), false)
	f.Add([]byte("1000 100 a\n1040 20 b\n1080 100 c\n1000 100 d"), true)
	f.Fuzz(func(t *testing.T, b []byte, final bool) {
		syms, n := parsePerfMap(b, final, 0)
		if n < 0 || n > len(b) || (final && n != len(b)) {
			t.Fatalf("consumed %d of %d bytes (final %v)", n, len(b), final)
		}
		for _, s := range syms {
			if s.Size == 0 || s.Start+s.Size < s.Start || s.Name == "" {
				t.Fatalf("bad entry %+v", s)
			}
		}
		var last uint64
		for i, g := range perfSegments(syms) {
			s := syms[g.sym]
			if g.start >= g.end || (i > 0 && g.start < last) || g.start < s.Start || g.end > s.Start+s.Size {
				t.Fatalf("bad segment %+v of %+v", g, s)
			}
			last = g.end
		}
	})
}
