package unwind

import (
	"errors"
	"slices"
	"testing"
)

func TestRuleSetShared(t *testing.T) {
	tab, _ := libcTable(t)
	rs := NewRuleSet(maxRuleSet)
	first, err := rs.Entries(tab)
	if err != nil {
		t.Fatal(err)
	}
	again, err := rs.Entries(tab)
	if err != nil || len(rs.Rules) != len(tab.Rules) || !slices.Equal(first, again) {
		t.Fatalf("adding the same table twice grew the set to %d rules (%v)", len(rs.Rules), err)
	}
	if len(first) != len(tab.Entries) {
		t.Fatalf("%d entries encoded, want %d", len(first), len(tab.Entries))
	}
}

// A full set refuses a table with new rules whole, and still takes tables
// whose rules it holds.
func TestRuleSetFull(t *testing.T) {
	a := smallTable() // rules: none, rsp+8, rbp+16
	b := smallTable()
	b.Rules[2].CFAOffset = 32 // one new rule
	rs := NewRuleSet(3)
	if _, err := rs.Entries(a); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Entries(b); !errors.Is(err, ErrRuleSetFull) {
		t.Fatalf("4th rule in a set of 3: %v, want ErrRuleSetFull", err)
	}
	if len(rs.Rules) != 3 {
		t.Errorf("the refused table left %d rules, want 3", len(rs.Rules))
	}
	if _, err := rs.Entries(smallTable()); err != nil {
		t.Errorf("a table of known rules was refused: %v", err)
	}
	if got := NewRuleSet(1 << 20).limit; got != 1<<16 {
		t.Errorf("limit %d, want it capped at %d (u16 rule indexes)", got, 1<<16)
	}
}
