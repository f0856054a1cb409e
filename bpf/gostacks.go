package bpf

import (
	"fmt"

	"github.com/probee/probee/unwind"
)

// maxGoStacks is go_stacks' size (MAX_GO_STACKS): the distinct Go
// binaries a session walks on from runtime.morestack.
const maxGoStacks = uint32(probeeLimitMAX_GO_STACKS)

// goStacks gives each distinct unwind.GoStack its element of go_stacks,
// which MAPPING_GO mappings index (unwind.h's go_switch_step). Guarded by
// Session.tmu.
type goStacks struct {
	index map[unwind.GoStack]uint32
}

// goMapping makes um, the mapping of a Go binary without a table, walk on
// from its runtime.morestack: its flags and index, and the load bias
// (go_switch_step compares ELF virtual addresses). With go_stacks full
// it stays a frame-pointer mapping.
func (s *Session) goMapping(um *probeeUnwindMapping, m unwind.Module) error {
	i, ok := s.gostacks.index[*m.Go]
	if !ok {
		i = uint32(len(s.gostacks.index))
		if i >= maxGoStacks {
			return fmt.Errorf("%s: more than %d Go binaries: its stacks that grow are walked only to runtime.morestack", m.Path, maxGoStacks)
		}
		g := m.Go
		v := probeeGoStack{Ret: g.Return, Tls: g.TLS, G_m: g.GM, M_curg: g.MCurg,
			SchedPc: g.SchedPC, SchedSp: g.SchedSP, SchedBp: g.SchedBP}
		if err := s.objs.GoStacks.Put(i, &v); err != nil {
			return fmt.Errorf("%s: write its runtime.morestack: %w", m.Path, err)
		}
		if s.gostacks.index == nil {
			s.gostacks.index = map[unwind.GoStack]uint32{}
		}
		s.gostacks.index[*m.Go] = i
	}
	um.Bias, um.EntriesOff, um.Flags = m.Bias, i, mappingGo
	return nil
}
