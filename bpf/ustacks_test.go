package bpf

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/cilium/ebpf"
)

// Each depth class's map holds elements of the class's pcs, and the
// classes go from short to deep (store_user_stack picks the first that
// fits), in both builds.
func TestUstackClassesMatchMaps(t *testing.T) {
	for name, load := range map[string]func() (*ebpf.CollectionSpec, error){"probee": loadProbee, "probeelegacy": loadProbeeLegacy} {
		spec, err := load()
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range ustackClasses {
			m := spec.Maps[ustackMapNames[i]]
			if m == nil {
				t.Fatalf("%s: no map %s", name, ustackMapNames[i])
			}
			if want := uint32(16 + 8*c.pcs); m.ValueSize != want {
				t.Errorf("%s: %s: values of %d bytes, want %d (%d pcs)", name, m.Name, m.ValueSize, want, c.pcs)
			}
			if i > 0 && c.pcs <= ustackClasses[i-1].pcs {
				t.Errorf("class %d holds %d pcs, not more than class %d", i, c.pcs, i-1)
			}
		}
	}
}

// --max-stacks N is N stacks of each class; where maps are preallocated
// the deeper classes get N/2 and N/4.
func TestSizeUstacks(t *testing.T) {
	for _, tc := range []struct {
		n        int
		prealloc bool
		want     []uint32
	}{
		{0, false, []uint32{65536, 65536, 65536}},
		{1000, false, []uint32{1000, 1000, 1000}},
		{PreallocMaxStacks, true, []uint32{16384, 8192, 4096}},
		{2, true, []uint32{2, 1, 1}},
	} {
		spec, err := loadProbee()
		if err != nil {
			t.Fatal(err)
		}
		sizeUstacks(spec, tc.n, tc.prealloc)
		var got []uint32
		for _, name := range ustackMapNames {
			got = append(got, spec.Maps[name].MaxEntries)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("n=%d prealloc=%v: sizes %v, want %v", tc.n, tc.prealloc, got, tc.want)
		}
	}
}

func TestDecodeUserStack(t *testing.T) {
	enc := func(size int, n, flags uint32, pcs ...uint64) []byte {
		b := make([]byte, size)
		binary.NativeEndian.PutUint32(b[8:], n)
		binary.NativeEndian.PutUint32(b[12:], flags)
		for i, pc := range pcs {
			binary.NativeEndian.PutUint64(b[16+8*i:], pc)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want userStack
	}{
		{"two", enc(16+8*4, 2, 1, 0x10, 0x20), userStack{pcs: []uint64{0x10, 0x20}, flags: 1}},
		{"empty", enc(16+8*4, 0, 0), userStack{pcs: []uint64{}}},
		{"len past the element", enc(16+8*2, 9, 0, 1, 2), userStack{pcs: []uint64{1, 2}}},
		{"short buffer", []byte{1, 2, 3}, userStack{}},
	} {
		got := decodeUserStack(tc.b)
		if !slices.Equal(got.pcs, tc.want.pcs) || got.flags != tc.want.flags {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
