package bpf

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/output"
	"github.com/probee/probee/unwind"
)

// probee.h is the single source of the values the programs share with Go:
// bpf2go -type emits its enums as Go constants, which the package uses.
// These tests cover what the generated constants cannot reach: packages
// that must not import bpf (unwind, output, bpf/wire) keep their own
// copies, which are compared here with the compiled object's BTF or the
// generated constants, and the Go tables that must cover an enum whole.

// enumValues reads enum name from the object's BTF.
func enumValues(t *testing.T, spec *ebpf.CollectionSpec, name string) map[string]uint64 {
	t.Helper()
	var e *btf.Enum
	if err := spec.Types.TypeByName(name, &e); err != nil {
		t.Fatalf("enum %s in the object's BTF: %v (is it in struct probee_enums?)", name, err)
	}
	m := make(map[string]uint64, len(e.Values))
	for _, v := range e.Values {
		m[v.Name] = v.Value
	}
	return m
}

// enumValue reads one enumerator of enum name.
func enumValue(t *testing.T, spec *ebpf.CollectionSpec, name, value string) uint64 {
	t.Helper()
	v, ok := enumValues(t, spec, name)[value]
	if !ok {
		t.Fatalf("enum %s has no %s", name, value)
	}
	return v
}

func loadProbeeT(t *testing.T) *ebpf.CollectionSpec {
	t.Helper()
	spec, err := loadProbee()
	if err != nil {
		t.Fatalf("load the collection spec: %v", err)
	}
	return spec
}

// TestUnwindRuleKinds: unwind encodes the rules the programs read, with
// its own CFAType and RBPType: every enumerator of enum cfa_type and
// enum rbp_type has its Go constant, with the same value, and no more.
func TestUnwindRuleKinds(t *testing.T) {
	spec := loadProbeeT(t)
	for _, tc := range []struct {
		enum string
		goes map[string]uint64
	}{
		{"cfa_type", map[string]uint64{
			"CFA_NONE": uint64(unwind.CFANone), "CFA_RSP": uint64(unwind.CFARSP),
			"CFA_RBP": uint64(unwind.CFARBP), "CFA_PLT": uint64(unwind.CFAPLT),
			"CFA_SIGNAL": uint64(unwind.CFASignal), "CFA_UNSUPPORTED": uint64(unwind.CFAUnsupported),
			"CFA_END": uint64(unwind.CFAEndOfStack), "CFA_RSP_RET_RDI": uint64(unwind.CFARSPRetRDI),
			"CFA_RBX": uint64(unwind.CFARBX), "CFA_REG": uint64(unwind.CFAReg),
		}},
		{"rbp_type", map[string]uint64{
			"RBP_SAME": uint64(unwind.RBPSame), "RBP_OFFSET": uint64(unwind.RBPOffset),
			"RBP_UNDEFINED": uint64(unwind.RBPUndefined),
		}},
	} {
		c := enumValues(t, spec, tc.enum)
		for name, v := range c {
			if g, ok := tc.goes[name]; !ok {
				t.Errorf("enum %s: %s = %d has no unwind constant", tc.enum, name, v)
			} else if g != v {
				t.Errorf("enum %s: %s is %d in C, %d in unwind", tc.enum, name, v, g)
			}
		}
		for name := range tc.goes {
			if _, ok := c[name]; !ok {
				t.Errorf("enum %s has no %s", tc.enum, name)
			}
		}
	}
}

// TestSharedConstants compares the copies that packages which must not
// import bpf keep with the object's BTF.
func TestSharedConstants(t *testing.T) {
	spec := loadProbeeT(t)
	var rule *btf.Struct
	if err := spec.Types.TypeByName("unwind_rule", &rule); err != nil {
		t.Fatalf("struct unwind_rule: %v", err)
	}
	for _, tc := range []struct {
		name  string
		goes  uint64
		inBTF uint64
	}{
		{"MAX_STACK_SWITCHES (unwind.MaxStackSwitches)", unwind.MaxStackSwitches, enumValue(t, spec, "walk_depth", "MAX_STACK_SWITCHES")},
		{"HIST_BUCKETS (output.HistBuckets)", output.HistBuckets, enumValue(t, spec, "limit", "HIST_BUCKETS")},
		{"sizeof(struct unwind_rule) (unwind.RuleSize)", unwind.RuleSize, uint64(rule.Size)},
	} {
		if tc.goes != tc.inBTF {
			t.Errorf("%s: %d in Go, %d in probee.h", tc.name, tc.goes, tc.inBTF)
		}
	}
}

// TestWireConstants: bpf/wire, which proctrack reads in place of bpf,
// copies the user stack depth and the process notice kinds: each equals
// its generated constant, and enum event_type has no kind wire lacks.
func TestWireConstants(t *testing.T) {
	if wire.MaxUserStack != int(probeeLimitMAX_USTACK) {
		t.Errorf("wire.MaxUserStack is %d, MAX_USTACK %d", wire.MaxUserStack, probeeLimitMAX_USTACK)
	}
	kinds := map[string]struct{ wire, gen uint64 }{
		"EVENT_NEW_PROCESS": {uint64(wire.EventNewProcess), uint64(probeeEventTypeEVENT_NEW_PROCESS)},
		"EVENT_EXIT":        {uint64(wire.EventExit), uint64(probeeEventTypeEVENT_EXIT)},
		"EVENT_GATE":        {uint64(wire.EventGate), uint64(probeeEventTypeEVENT_GATE)},
	}
	for name, k := range kinds {
		if k.wire != k.gen {
			t.Errorf("%s is %d in probee.h, %d in bpf/wire", name, k.gen, k.wire)
		}
	}
	for name, v := range enumValues(t, loadProbeeT(t), "event_type") {
		if k, ok := kinds[name]; !ok {
			t.Errorf("enum event_type: %s = %d has no bpf/wire constant", name, v)
		} else if k.wire != v {
			t.Errorf("enum event_type: %s is %d in the object, %d in bpf/wire", name, v, k.wire)
		}
	}
}

// TestEnumTables: the Go tables indexed by an enum cover it whole.
func TestEnumTables(t *testing.T) {
	for d, c := range dropCauses {
		if c.text == "" {
			t.Errorf("drop cause %d has no description in dropCauses", d)
		}
	}
	if addedUstacks+len(ustackClasses) != addedKinds {
		t.Errorf("ADDED_KINDS is %d, want ADDED_USTACKS + %d depth classes", addedKinds, len(ustackClasses))
	}
	// A class's enum ustack_class value is its index plus one.
	classes := [...]probeeUstackClass{probeeUstackClassUSTACK_SHORT, probeeUstackClassUSTACK_MID, probeeUstackClassUSTACK_DEEP}
	pcs := [...]int{len(probeeUstackShort{}.Pcs), len(probeeUstackMid{}.Pcs), len(probeeUserStack{}.Pcs)}
	for i, c := range ustackClasses {
		if int(classes[i]) != i+1 || c.pcs != pcs[i] {
			t.Errorf("ustackClasses[%d] (%s): class %d, %d pcs; probee.h has %d, %d", i, c.name, i+1, c.pcs, classes[i], pcs[i])
		}
	}
}

// TestLegacyEnums: the legacy build, whose Go types are probee's, has
// the same enums.
func TestLegacyEnums(t *testing.T) {
	cur := loadProbeeT(t)
	legacy, err := loadProbeeLegacy()
	if err != nil {
		t.Fatalf("load the legacy spec: %v", err)
	}
	var all *btf.Struct
	if err := cur.Types.TypeByName("probee_enums", &all); err != nil {
		t.Fatalf("struct probee_enums: %v", err)
	}
	for _, m := range all.Members {
		name := m.Type.TypeName()
		c, l := enumValues(t, cur, name), enumValues(t, legacy, name)
		if len(c) != len(l) {
			t.Errorf("enum %s: %d values, %d in the legacy build", name, len(c), len(l))
		}
		for k, v := range c {
			if lv, ok := l[k]; !ok || lv != v {
				t.Errorf("enum %s: %s = %d, in the legacy build %d (present: %v)", name, k, v, lv, ok)
			}
		}
	}
}

// Exactly the causes that count the event with an incomplete stack are
// partial; their descriptions say how the stack came out, not that it is
// partial (the status line and the profile's drops say that).
func TestDropCausePartial(t *testing.T) {
	partial := map[DropCause]bool{DropNoTables: true, DropUnknownPC: true, DropCut: true}
	for d := DropCause(0); d < dropMax; d++ {
		if d.Partial() != partial[d] {
			t.Errorf("cause %d (%s): Partial %v, want %v", d, d, d.Partial(), partial[d])
		}
		if strings.HasPrefix(d.String(), "partial") {
			t.Errorf("cause %d: description %q starts with partial", d, d)
		}
	}
	if DropCause(-1).Partial() || dropMax.Partial() {
		t.Error("a cause out of range is partial")
	}
}
