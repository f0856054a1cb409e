package resolver

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/probespec"
)

func TestDecodeReturns(t *testing.T) {
	tests := []struct {
		name string
		code []byte
		want Returns
		err  bool
	}{
		{"frame and ret", []byte{0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3}, Returns{RETs: []uint64{5}}, false},
		{"endbr64 first", []byte{0xf3, 0x0f, 0x1e, 0xfa, 0xc3}, Returns{RETs: []uint64{4}}, false},
		{"ret imm16", []byte{0xc2, 0x08, 0x00}, Returns{RETs: []uint64{0}}, false},
		{"two rets, a jump between them", []byte{0x74, 0x01, 0xc3, 0xc3}, Returns{RETs: []uint64{2, 3}}, false},
		{"tail call", []byte{0x90, 0xe9, 0x00, 0x01, 0x00, 0x00}, Returns{Exits: []int64{0x106}}, false},
		{"jump back before the start", []byte{0xeb, 0xf0}, Returns{Exits: []int64{-14}}, false},
		{"conditional tail call", []byte{0x0f, 0x85, 0x10, 0x00, 0x00, 0x00, 0xc3}, Returns{RETs: []uint64{6}, Exits: []int64{0x16}}, false},
		{"jump through a register", []byte{0xff, 0xe0}, Returns{Indirect: true}, false},
		{"vzeroupper, then ret", []byte{0xc5, 0xf8, 0x77, 0xc3}, Returns{RETs: []uint64{3}}, false},
		{"unknown instruction", []byte{0xc3, 0xc4, 0x00, 0x01, 0x00, 0x00}, Returns{RETs: []uint64{0}}, true},
		{"cut instruction", []byte{0xe8, 0x00}, Returns{}, true},
		{"empty", nil, Returns{}, false},
	}
	for _, tt := range tests {
		got, err := DecodeReturns(tt.code)
		if (err != nil) != tt.err || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, %v; want %+v, error %v", tt.name, got, err, tt.want, tt.err)
		}
		if err != nil && !errors.Is(err, ErrUndecodable) {
			t.Errorf("%s: error %v is not ErrUndecodable", tt.name, err)
		}
	}
}

func FuzzDecodeReturns(f *testing.F) {
	f.Add([]byte{0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3})
	f.Add([]byte{0xf3, 0x0f, 0x1e, 0xfa, 0xe9, 0, 0, 0, 0})
	f.Add([]byte{0xc4, 0x00, 0x01, 0x00, 0x00, 0x5d, 0xc3})
	f.Fuzz(func(t *testing.T, code []byte) {
		r, _ := DecodeReturns(code)
		for i, off := range r.RETs {
			if off >= uint64(len(code)) || i > 0 && off <= r.RETs[i-1] {
				t.Fatalf("RET offsets %v out of order or past %d bytes", r.RETs, len(code))
			}
			if b := code[off]; b != 0xc3 && b != 0xc2 && !isPrefix(b) {
				t.Fatalf("RET at +0x%x starts with 0x%02x", off, b)
			}
		}
		for _, e := range r.Exits {
			if e >= 0 && e < int64(len(code)) {
				t.Fatalf("exit %d lies inside the %d bytes", e, len(code))
			}
		}
	})
}

// isPrefix reports whether b can prefix a RET (rep ret, rex, operand size).
func isPrefix(b byte) bool {
	return b == 0xf3 || b == 0xf2 || b == 0x66 || b&0xf0 == 0x40 || b == 0x2e || b == 0x3e ||
		b == 0x26 || b == 0x36 || b == 0x64 || b == 0x65 || b == 0x67 || b == 0xf0
}

// returnTargets resolves the functions pattern matches in fixture bin and
// returns ReturnAttachPoints of the only one.
func returnTargets(t *testing.T, bin, pattern string, preferRET bool) (AttachPoint, []AttachPoint, error) {
	t.Helper()
	r := New(Scope{})
	ts, err := r.Resolve(uspec(pathT(maptest.Fixture(t, bin)), probespec.MatchExact, pattern))
	if err != nil || len(ts) != 1 {
		t.Fatalf("resolve %s:%s: %v %v", bin, pattern, ts, err)
	}
	rets, err := r.ReturnAttachPoints(ts[0], preferRET)
	return ts[0], rets, err
}

// checkRETs fails unless every target is a RET instruction of its file.
func checkRETs(t *testing.T, rets []AttachPoint) {
	t.Helper()
	for _, rt := range rets {
		b, err := os.ReadFile(rt.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !rt.RetInsn || rt.Ret || b[rt.FileOffset+rt.Offset] != 0xc3 {
			t.Errorf("%s+0x%x: not a RET probe on a 0xc3 byte: %+v", rt.Symbol, rt.Offset, rt)
		}
	}
}

func TestReturnAttachPoints(t *testing.T) {
	tests := []struct {
		bin, fn   string
		preferRET bool
		uret      bool   // a uretprobe, not RET instructions
		part      string // a RET in this .cold part
	}{
		{"golat", "main.nap", false, false, ""},
		{"golat", "main.panicky", true, false, ""},
		{"latency-fp", "nap", true, false, ""},
		{"latency-fp", "nap", false, true, ""},       // C without preferRET
		{"latency-fp", "nap_tail", true, true, ""},   // a tail call
		{"unwindfx", "_Z4tossi", true, false, ""},    // its jump to toss.cold stays inside
		{"cxx", "_ZN2ns7checkedEi", true, false, ""}, // idem
	}
	for _, tt := range tests {
		fn, rets, err := returnTargets(t, tt.bin, tt.fn, tt.preferRET)
		if err != nil {
			t.Errorf("%s:%s: %v", tt.bin, tt.fn, err)
			continue
		}
		if tt.uret {
			if len(rets) != 1 || !rets[0].Ret || rets[0].Offset != 0 || rets[0].Symbol != fn.Symbol {
				t.Errorf("%s:%s: want one uretprobe, got %+v", tt.bin, tt.fn, rets)
			}
			continue
		}
		if len(rets) == 0 {
			t.Errorf("%s:%s: no RET probes", tt.bin, tt.fn)
		}
		checkRETs(t, rets)
		if fn.Go != (tt.bin == "golat") {
			t.Errorf("%s:%s: Go = %v", tt.bin, tt.fn, fn.Go)
		}
	}
}

// A Go function without a RET cannot have its returns probed: the error
// says why a uretprobe is not the way out.
func TestReturnAttachPointsGoNoRET(t *testing.T) {
	_, rets, err := returnTargets(t, "golat", "runtime.goexit.abi0", false)
	var nr *NoReturnsError
	if !errors.As(err, &nr) || len(rets) != 0 {
		t.Fatalf("got %v, %v; want a NoReturnsError", rets, err)
	}
	for _, want := range []string{"runtime.goexit.abi0", "no RET instruction", "would crash the program", "drop ret:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
