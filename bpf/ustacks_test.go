package bpf

import (
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
			m := spec.Maps[c.name]
			if m == nil {
				t.Fatalf("%s: no map %s", name, c.name)
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
		for _, c := range ustackClasses {
			got = append(got, spec.Maps[c.name].MaxEntries)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("n=%d prealloc=%v: sizes %v, want %v", tc.n, tc.prealloc, got, tc.want)
		}
	}
}

// A drain moves every stack of every class into Go and empties the
// kernel's stack maps: the stacks its counts name, and the others (a stack
// whose count went to the other map, or was lost), over several batches.
// The final drain hands them over with its counts and empties the
// accumulator.
func TestTakeStacks(t *testing.T) {
	s := openSession(t, Options{MaxStacks: 4096})
	pcs := func(n int) []uint64 {
		out := make([]uint64, n)
		for i := range out {
			out[i] = 0x400000 + uint64(n*1000+i)
		}
		return out
	}
	short, mid, deep := pcs(3), pcs(60), pcs(200)
	var st probeeUstackShort
	st.Len = uint32(len(short))
	copy(st.Pcs[:], short)
	put(t, s.objs.UstacksShort, uint64(0x100|1), &st)
	for i := range 5 * stackBatch { // unnamed by any count
		var other probeeUstackShort
		other.Len, other.Pcs[0] = 1, uint64(i)
		put(t, s.objs.UstacksShort, uint64(0x1000+i)<<2|1, &other)
	}
	var sm probeeUstackMid
	sm.Len = uint32(len(mid))
	copy(sm.Pcs[:], mid)
	put(t, s.objs.UstacksMid, uint64(0x200|2), &sm)
	var sd probeeUserStack
	sd.Len, sd.Flags = uint32(len(deep)), stackTruncated
	copy(sd.Pcs[:], deep)
	put(t, s.objs.Ustacks, uint64(0x300|3), &sd)
	var sk probeeKernelStack
	sk.Len, sk.Pcs[0], sk.Pcs[1] = 2, 0xffffffff81000000, 0xffffffff81000100
	put(t, s.objs.Kstacks, uint64(0x77), &sk)
	for i, u := range []uint64{0x101, 0x202, 0x303} {
		key := probeeCountKey{Probe: uint32(i), Tgid: 1, Ustack: u, Kstack: 0x77}
		put(t, s.objs.Counts0, &key, uint64(i+1))
	}
	s.dmu.Lock()
	err := s.takeStacks()
	taken := len(s.acc.ustacks)
	s.dmu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if taken != 3+5*stackBatch {
		t.Errorf("%d user stacks in Go, want %d", taken, 3+5*stackBatch)
	}
	snap, err := s.Drain(3)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]uint64{short, mid, deep}
	if len(snap.Counts) != 3 {
		t.Fatalf("%d counts, want 3", len(snap.Counts))
	}
	for _, c := range snap.Counts {
		if !slices.Equal(c.User.PCs(), want[c.Probe]) || c.UserLost || c.UserTruncated != (c.Probe == 2) || c.Kernel.Len() != 2 {
			t.Errorf("probe %d: user %d pcs (lost %v, truncated %v), kernel %v; want %d pcs", c.Probe,
				c.User.Len(), c.UserLost, c.UserTruncated, c.Kernel.PCs(), len(want[c.Probe]))
		}
	}
	if n := len(s.acc.ustacks) + len(s.acc.kstacks) + len(s.acc.counts); n != 0 {
		t.Errorf("%d stacks and counts left in the accumulator after the final drain", n)
	}
	maps := s.objs.ustackMaps()
	for _, m := range append(maps[:], s.objs.Kstacks) {
		var k uint64
		if err := m.NextKey(nil, &k); err == nil {
			t.Errorf("%v: not empty after the drain (key %#x)", m, k)
		}
	}
}

func put(t *testing.T, m *ebpf.Map, k, v any) {
	t.Helper()
	if err := m.Put(k, v); err != nil {
		t.Fatal(err)
	}
}
