package trace

import "testing"

// Freed heap memory is handed back once there is enough of it: past
// idleFloor and an eighth of the heap in use, not for every page.
func TestIdleWorth(t *testing.T) {
	for _, tc := range []struct {
		free, inUse uint64
		want        bool
	}{
		{0, 40 << 20, false},
		{4 << 20, 8 << 20, false},    // below the floor
		{10 << 20, 400 << 20, false}, // a fortieth of the heap
		{10 << 20, 40 << 20, true},   // a quarter
		{100 << 20, 800 << 20, true}, // an eighth
	} {
		if got := idleWorth(tc.free, tc.inUse); got != tc.want {
			t.Errorf("idleWorth(%d MB free, %d MB in use) = %v, want %v", tc.free>>20, tc.inUse>>20, got, tc.want)
		}
	}
}
