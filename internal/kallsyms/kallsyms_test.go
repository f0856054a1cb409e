package kallsyms

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	f, _ := os.Open("testdata/kallsyms")
	defer f.Close()
	ks, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	want := []Symbol{
		{0xffffffff81000000, "_stext", ""}, {0xffffffff81100000, "vfs_read", ""},
		{0xffffffff81100100, "vfs_write", ""}, {0xffffffff81100300, "weak_fn", ""},
		{0xffffffffc0000000, "ext4_file_open", "ext4"}, {0xffffffffc0000100, "ext4_file_read_iter", "ext4"},
	}
	if !reflect.DeepEqual(ks, want) {
		t.Errorf("got %+v", ks)
	}
}

// Lookup names an address by the last symbol at or below it; nothing below
// the first, nor from addresses hidden as 0.
func TestLookup(t *testing.T) {
	ks := []Symbol{{0x100, "a", ""}, {0x200, "b", "m"}}
	for _, c := range []struct {
		addr uint64
		want string
	}{{0xff, ""}, {0x100, "a"}, {0x1ff, "a"}, {0x200, "b"}, {1 << 40, "b"}} {
		if s, ok := Lookup(ks, c.addr); s.Name != c.want || ok != (c.want != "") {
			t.Errorf("Lookup(%#x) = %+v %v, want %q", c.addr, s, ok, c.want)
		}
	}
	if _, ok := Lookup([]Symbol{{0, "hidden", ""}}, 0x10); ok {
		t.Error("a symbol at address 0 named an address")
	}
}

// FuzzParse: any text parses without a panic into sorted symbols, and
// Lookup answers for any address.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("testdata/kallsyms"); err == nil {
		f.Add(string(b))
	}
	f.Add("ffffffff81000000 T x [mod]\n")
	f.Fuzz(func(t *testing.T, s string) {
		ks, _ := Parse(strings.NewReader(s))
		for i := 1; i < len(ks); i++ {
			if ks[i].Addr < ks[i-1].Addr {
				t.Fatalf("unsorted at %d", i)
			}
		}
		Lookup(ks, 0xffffffff81000010)
	})
}
