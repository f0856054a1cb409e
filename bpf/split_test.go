package bpf

import (
	"errors"
	"slices"
	"testing"
)

// splitRefused isolates exactly the refused targets, attaches the others in
// as few links as halving allows, and ends at once on a stop error.
func TestSplitRefused(t *testing.T) {
	refused := map[int]bool{3: true, 17: true, 18: true}
	var attached, skipped []int
	links := 0
	try := func(part []int) error {
		for _, x := range part {
			if refused[x] {
				return errors.New("refused")
			}
		}
		attached = append(attached, part...)
		links++
		return nil
	}
	noStop := func([]int, error) (error, bool) { return nil, false }
	skip := func(x int, _ error) { skipped = append(skipped, x) }
	group := make([]int, 32)
	for i := range group {
		group[i] = i
	}
	if err := splitRefused(group, try, noStop, skip); err != nil {
		t.Fatal(err)
	}
	slices.Sort(attached)
	if len(attached) != 29 || !slices.Equal(skipped, []int{3, 17, 18}) {
		t.Errorf("attached %d, skipped %v; want 29 and [3 17 18]", len(attached), skipped)
	}
	if links > 12 {
		t.Errorf("%d links for 3 refused targets in 32, want <= 12", links)
	}

	fatal := errors.New("no permission")
	tries := 0
	stop := func([]int, error) (error, bool) { return fatal, true }
	err := splitRefused(group, func([]int) error { tries++; return errors.New("x") }, stop, skip)
	if !errors.Is(err, fatal) || tries != 1 {
		t.Errorf("stop error: got %v after %d tries, want %v after 1", err, tries, fatal)
	}
	if err := splitRefused(nil, try, noStop, skip); err != nil {
		t.Errorf("empty group: %v", err)
	}
}
