package python

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Walk is the frame walk the BPF programs do at each event, in Go: from
// the runtime to the thread state of the running thread (the one whose
// thread_id, pthread_self(), is the thread's fs base), then from its
// innermost frame along the callers. It serves the tests, as the
// reference the kernel's walk is checked against.

// Frame is one Python frame: its code object, its code unit (Layout.Unit)
// and whether it is the first frame its activation of the eval loop ran
// (the frame a native _PyEval_EvalFrameDefault stands for, with the ones
// after it up to the next Entry).
type Frame struct {
	Code, Unit uint64
	Entry      bool
}

// FRAME_OWNED_BY_CSTACK (3.12+): the eval loop's entry shim, on the C stack.
const ownedByCStack = 3

// MaxThreads bounds the threads a walk looks through for the running one.
const MaxThreads = 256

// errNoThread is returned when no thread state has the thread's id.
var errNoThread = errors.New("no Python thread state for this thread")

// Walk reads the Python frames of the thread whose pthread_self() is
// threadID in the process whose memory m is, innermost first, at most
// max of them.
func (p *Process) Walk(m io.ReaderAt, threadID uint64, max int) ([]Frame, error) {
	l := &p.Layout
	ts, err := p.threadState(m, threadID)
	if err != nil {
		return nil, err
	}
	frame, err := readPtr(m, ts+l.ThreadFrame)
	if err == nil && l.HasCFrame && frame != 0 {
		frame, err = readPtr(m, frame+l.CFrameCurrent)
	}
	var out []Frame
	for frame != 0 && err == nil && len(out) < max {
		var f Frame
		var shim bool
		f, shim, err = p.frame(m, frame)
		if err != nil {
			break
		}
		if shim && len(out) > 0 { // the activation's start: the frame before it was its entry
			out[len(out)-1].Entry = true
		} else if !shim {
			out = append(out, f)
		}
		frame, err = readPtr(m, frame+l.FramePrevious)
	}
	return out, err
}

// threadState finds the thread state whose thread_id is threadID among
// the first interpreter's threads.
func (p *Process) threadState(m io.ReaderAt, threadID uint64) (uint64, error) {
	l := &p.Layout
	interp, err := readPtr(m, p.Runtime+l.RuntimeInterpreters)
	if err != nil || interp == 0 {
		return 0, fmt.Errorf("no interpreter: %w", cmpErr(err, errNoThread))
	}
	ts, err := readPtr(m, interp+l.InterpThreads)
	for i := 0; ts != 0 && err == nil && i < MaxThreads; i++ {
		var id uint64
		if id, err = readPtr(m, ts+l.ThreadID); err == nil && id == threadID {
			return ts, nil
		}
		ts, err = readPtr(m, ts+l.ThreadNext)
	}
	return 0, cmpErr(err, errNoThread)
}

// frame reads the frame at addr; shim is true for the eval loop's entry
// shim (3.12+), which runs no code.
func (p *Process) frame(m io.ReaderAt, addr uint64) (f Frame, shim bool, err error) {
	l := &p.Layout
	var b [8]byte
	switch {
	case l.FrameIsEntry != 0: // 3.11
		if err = readFull(m, b[:1], addr+l.FrameIsEntry); err != nil {
			return f, false, err
		}
		f.Entry = b[0] != 0
	case l.InterpreterFrames:
		if err = readFull(m, b[:1], addr+l.FrameOwner); err != nil {
			return f, false, err
		}
		if b[0] == ownedByCStack {
			return f, true, nil
		}
	default:
		f.Entry = true // one activation a frame
	}
	if f.Code, err = readPtr(m, addr+l.FrameCode); err != nil {
		return f, false, err
	}
	if err = readFull(m, b[:], addr+l.FrameInstr); err != nil {
		return f, false, err
	}
	raw := binary.LittleEndian.Uint64(b[:])
	if !l.InterpreterFrames {
		raw = uint64(binary.LittleEndian.Uint32(b[:4])) // int f_lasti
	}
	f.Unit, _ = l.Unit(f.Code, raw)
	return f, false, nil
}

func readPtr(m io.ReaderAt, addr uint64) (uint64, error) {
	var b [8]byte
	if err := readFull(m, b[:], addr); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// cmpErr is err, or else def.
func cmpErr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}
