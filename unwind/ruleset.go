package unwind

import (
	"errors"
	"fmt"
	"math"
)

// ErrRuleSetFull means a RuleSet has no room for a table's new rules.
var ErrRuleSetFull = errors.New("shared unwind rule set is full")

// maxRuleSet is the most rules entries can index: they hold u16 indexes.
const maxRuleSet = math.MaxUint16 + 1

// RuleSet is a rule array shared by several tables (the BPF side keeps one
// rule map for all binaries). Index 0 is the CFANone rule.
type RuleSet struct {
	Rules []Rule
	limit int
	index map[Rule]uint16
}

// NewRuleSet returns a set holding only the CFANone rule that grows to at
// most limit rules (the size of the rule map it is written to; capped at
// 65536, what a u16 index reaches).
func NewRuleSet(limit int) *RuleSet {
	return &RuleSet{Rules: []Rule{{}}, limit: min(max(limit, 1), maxRuleSet), index: map[Rule]uint16{{}: 0}}
}

// Entries adds t's rules to the set and returns t's entries as the BPF
// entry map holds them (one u32 each, pc_low | rule << 16), their rule
// indexes into s.Rules. A table that breaks the layout is refused with a
// *FormatError; a set without room for t's new rules is left unchanged and
// ErrRuleSetFull returned.
func (s *RuleSet) Entries(t *Table) ([]uint32, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	remap, err := s.add(t.Rules)
	if err != nil {
		return nil, err
	}
	return t.encodeEntries(remap, len(s.Rules))
}

// add interns rules, all or none, and returns remap[i] = index of rules[i].
func (s *RuleSet) add(rules []Rule) ([]uint16, error) {
	fresh := map[Rule]bool{}
	for _, r := range rules {
		if _, ok := s.index[r]; !ok {
			fresh[r] = true
		}
	}
	if len(s.Rules)+len(fresh) > s.limit {
		return nil, fmt.Errorf("%w: %d rules held, %d more needed, room for %d", ErrRuleSetFull, len(s.Rules), len(fresh), s.limit)
	}
	remap := make([]uint16, len(rules))
	for i, r := range rules {
		j, ok := s.index[r]
		if !ok {
			j = uint16(len(s.Rules))
			s.Rules = append(s.Rules, r)
			s.index[r] = j
		}
		remap[i] = j
	}
	return remap, nil
}
