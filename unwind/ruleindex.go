package unwind

import (
	"fmt"
	"math"
)

// ruleIndex numbers the distinct rules of one table in order of first use.
// Every CFI row asks it for its rule's number, so a direct-mapped cache of
// recent rules answers before the map (hashing a Rule for the map was the
// largest cost of building libLLVM-14's table).
type ruleIndex struct {
	list  []Rule
	m     map[Rule]uint16
	cache [ruleCacheSlots]struct {
		r  Rule
		i  uint16
		ok bool
	}
}

const ruleCacheSlots = 256

func newRuleIndex() ruleIndex {
	return ruleIndex{list: []Rule{{}}, m: map[Rule]uint16{{}: 0}}
}

// of returns r's number, numbering it when new. A table holds at most
// 65536 rules: entries keep a u16 index.
func (x *ruleIndex) of(r Rule) (uint16, error) {
	s := &x.cache[ruleSlot(r)]
	if s.ok && s.r == r {
		return s.i, nil
	}
	i, ok := x.m[r]
	if !ok {
		if len(x.list) > math.MaxUint16 {
			return 0, fmt.Errorf("more than %d distinct unwind rules", math.MaxUint16+1)
		}
		i = uint16(len(x.list))
		x.list = append(x.list, r)
		x.m[r] = i
	}
	s.r, s.i, s.ok = r, i, true
	return i, nil
}

func ruleSlot(r Rule) uint8 {
	h := uint32(r.CFAOffset)*0x9e3779b1 ^ uint32(r.RBPOffset)*0x85ebca77 ^
		uint32(r.CFA)<<24 ^ uint32(r.RBP)<<28 ^ uint32(r.PLTThreshold)<<16
	return uint8(h>>24 ^ h>>8)
}
