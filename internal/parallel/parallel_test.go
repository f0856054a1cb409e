package parallel

import (
	"sync/atomic"
	"testing"
)

// Every index is visited once, however n compares with the workers.
func TestForVisitsEachOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000} {
		seen := make([]atomic.Int32, n)
		For(n, 3, func(i int) { seen[i].Add(1) })
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("n=%d: index %d visited %d times", n, i, c)
			}
		}
	}
}
