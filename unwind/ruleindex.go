package unwind

import (
	"fmt"
	"math"
)

// ruleIndex numbers the distinct rules of one table in order of first use.
// Every CFI row asks it for its rule's number, so a direct-mapped cache of
// recent rules, keyed by the rule packed into two words, answers before
// the map (hashing a Rule for the map was the largest cost of building
// libLLVM-14's table).
type ruleIndex struct {
	list  []Rule
	m     map[Rule]uint16
	cache [ruleCacheSlots]struct {
		k  ruleKey
		i  uint16
		ok bool
	}
}

const ruleCacheSlots = 256

// ruleKey is a Rule in two words: equal keys, equal rules.
type ruleKey struct{ offsets, kinds uint64 }

func keyOf(r *Rule) ruleKey {
	return ruleKey{uint64(uint32(r.CFAOffset)) | uint64(uint32(r.RBPOffset))<<32,
		uint64(r.CFA) | uint64(r.RBP)<<8 | uint64(r.PLTThreshold)<<16 | uint64(uint8(r.RBXSlot))<<24 | uint64(r.Reg)<<32}
}

func newRuleIndex() ruleIndex {
	return ruleIndex{list: []Rule{{}}, m: map[Rule]uint16{{}: 0}}
}

// of returns r's number, numbering it when new. A table holds at most
// 65536 rules: entries keep a u16 index.
func (x *ruleIndex) of(r *Rule) (uint16, error) {
	k := keyOf(r)
	s := &x.cache[uint8((k.offsets*0x9e3779b97f4a7c15^k.kinds*0xc2b2ae3d27d4eb4f)>>56)]
	if s.ok && s.k == k {
		return s.i, nil
	}
	i, ok := x.m[*r]
	if !ok {
		if len(x.list) > math.MaxUint16 {
			return 0, fmt.Errorf("more than %d distinct unwind rules", math.MaxUint16+1)
		}
		i = uint16(len(x.list))
		x.list = append(x.list, *r)
		x.m[*r] = i
	}
	s.k, s.i, s.ok = k, i, true
	return i, nil
}
