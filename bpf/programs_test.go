package bpf

import (
	"errors"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
)

// TestRecordersLoadOnFirstUse: a session opens without the programs that
// walk stacks; the first use of one loads it and, under DWARF with tail
// calls, first puts its step program in its prog array (whose slot then
// holds the step program's id). With frame pointers no step program loads.
func TestRecordersLoadOnFirstUse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  Options
		steps bool
	}{
		{"dwarf", Options{DWARF: true}, true},
		{"dwarf-inline", Options{DWARF: true, NoTailCalls: true}, false},
		{"fp", Options{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openSession(t, tc.opts)
			for name, slot := range recorders {
				if s.progs.progs[progKey{name: name}] != nil || s.progs.progs[progKey{name: slot.step}] != nil {
					t.Fatalf("%s or %s loaded when the session opened", name, slot.step)
				}
			}
			for name, slot := range recorders {
				if _, err := s.program(name); err != nil {
					t.Fatalf("load %s: %v", name, err)
				}
				checkStepSlot(t, s, slot, tc.steps)
			}
		})
	}
}

// checkStepSlot checks that slot's prog array holds its step program, or
// (want false) that nothing loaded it.
func checkStepSlot(t *testing.T, s *Session, slot stepSlot, want bool) {
	t.Helper()
	var id uint32
	err := s.progs.shared[slot.array].Lookup(slot.index, &id)
	step := s.progs.progs[progKey{name: slot.step}]
	if !want {
		if step != nil || !errors.Is(err, ebpf.ErrKeyNotExist) {
			t.Fatalf("%s loaded (%v) or %s[%d] filled (lookup: %v) without tail calls", slot.step, step, slot.array, slot.index, err)
		}
		return
	}
	if err != nil || step == nil {
		t.Fatalf("%s[%d]: lookup %v, %s loaded: %v", slot.array, slot.index, err, slot.step, step != nil)
	}
	info, err := step.Info()
	if err != nil {
		t.Fatal(err)
	}
	if stepID, _ := info.ID(); uint32(stepID) != id {
		t.Fatalf("%s[%d] holds program %d, %s is %d", slot.array, slot.index, id, slot.step, stepID)
	}
}

// TestUnknownProgram: a name the object lacks is an error, not a panic.
func TestUnknownProgram(t *testing.T) {
	s := openSession(t, Options{})
	if _, err := s.program("probee_none"); err == nil {
		t.Fatal("no error for a program the object lacks")
	}
}

// TestProgramAfterClose: an attach racing the session's close gets an
// error, not a panic.
func TestProgramAfterClose(t *testing.T) {
	s := openSession(t, Options{})
	s.progs.close()
	if _, err := s.program("probee_uprobe"); err == nil {
		t.Fatal("no error after close")
	}
}

// Every program that walks stacks (each has a step program) is a
// recorder, loaded on first use: one left out was loaded, and verified,
// by every session (--wakers' did, and 6.18's verifier took it past a
// million instructions in the legacy build).
func TestEveryWalkLoadsOnFirstUse(t *testing.T) {
	steps := map[string]bool{}
	for _, slot := range recorders {
		steps[slot.step] = true
	}
	for name := range loadProbeeT(t).Programs {
		if strings.HasPrefix(name, "probee_step_") && !steps[name] {
			t.Errorf("%s is no recorder's step program: add its recorder to recorders", name)
		}
	}
}

// TestAttachDone: once the probes are attached, the session keeps only
// the instructions of the programs it may still load (lateLoads): a
// recorder not loaded by then is an error naming AttachDone, the ld.so
// gate's per-cookie copy still loads, and the spec it keeps is a small
// part of the object's.
func TestAttachDone(t *testing.T) {
	s := openSession(t, Options{DWARF: true})
	before := specInsns(s.progs.spec)
	s.AttachDone()
	if _, err := s.program("probee_uprobe"); err == nil || !strings.Contains(err.Error(), "AttachDone") {
		t.Errorf("a recorder after AttachDone: %v, want an error naming AttachDone", err)
	}
	if _, err := s.progs.get(progKey{"probee_ldso_gate", 0x1234, true}); err != nil {
		t.Errorf("the ld.so gate's copy after AttachDone: %v", err)
	}
	after := specInsns(s.progs.spec)
	t.Logf("instructions kept: %d of %d", after, before)
	if after*20 > before {
		t.Errorf("%d of %d instructions kept after AttachDone, want under 5%%", after, before)
	}
}

func specInsns(spec *ebpf.CollectionSpec) int {
	n := 0
	for _, p := range spec.Programs {
		n += len(p.Instructions)
	}
	return n
}
