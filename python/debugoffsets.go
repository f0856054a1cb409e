package python

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// debugOffsets is CPython 3.13's _Py_DebugOffsets (Include/internal/
// pycore_runtime.h), at the start of _PyRuntime: the interpreter's own
// account of its layout, for debuggers and profilers. 3.14 adds fields
// in the middle, so it is read for 3.13 alone.
type debugOffsets struct {
	Cookie       [8]byte
	Version      uint64 // PY_VERSION_HEX
	FreeThreaded uint64
	Runtime      struct{ Size, Finalizing, InterpretersHead uint64 }
	Interp       struct {
		Size, ID, Next, ThreadsHead, GC, ImportsModules, Sysdict, Builtins, CevalGIL uint64
		GILRuntimeState, GILEnabled, GILLocked, GILHolder                            uint64
	}
	Thread struct {
		Size, Prev, Next, Interp, CurrentFrame, ThreadID, NativeThreadID, DatastackChunk, Status uint64
	}
	Frame struct{ Size, Previous, Executable, InstrPtr, Localsplus, Owner uint64 }
	Code  struct {
		Size, Filename, Name, Qualname, Linetable, Firstlineno, Argcount uint64
		LocalsplusNames, LocalsplusKinds, CodeAdaptive                   uint64
	}
	Object  struct{ Size, ObType uint64 }
	Type    struct{ Size, TpName, TpRepr, TpFlags uint64 }
	Tuple   struct{ Size, ObItem, ObSize uint64 }
	List    struct{ Size, ObItem, ObSize uint64 }
	Dict    struct{ Size, MaKeys, MaValues uint64 }
	Float   struct{ Size, ObFval uint64 }
	Long    struct{ Size, LvTag, ObDigit uint64 }
	Bytes   struct{ Size, ObSize, ObSval uint64 }
	Unicode struct{ Size, State, Length, ASCIIObjectSize uint64 }
	GC      struct{ Size, Collecting uint64 }
}

// debugOffsetsSize is the bytes of debugOffsets (584).
var debugOffsetsSize = binary.Size(debugOffsets{})

var debugCookie = [8]byte{'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y'}

// maxStructOffset bounds the offsets taken from an interpreter's own
// account: its structures are a few KiB (3.13's PyInterpreterState, the
// largest, is 0x1cb0 bytes to its threads); an offset past this is junk.
const maxStructOffset = 1 << 20

var errNoDebugOffsets = errors.New("no _Py_DebugOffsets cookie at the start of _PyRuntime")

// parseDebugOffsets reads the layout of b, the start of a 3.13
// interpreter's _PyRuntime, checking its cookie and version against v.
func parseDebugOffsets(b []byte, v Version) (Layout, error) {
	var d debugOffsets
	if len(b) < debugOffsetsSize {
		return Layout{}, fmt.Errorf("_PyRuntime holds %d bytes, want %d of _Py_DebugOffsets", len(b), debugOffsetsSize)
	}
	if err := binary.Read(bytes.NewReader(b), binary.LittleEndian, &d); err != nil {
		return Layout{}, fmt.Errorf("read _Py_DebugOffsets: %w", err)
	}
	if d.Cookie != debugCookie {
		return Layout{}, errNoDebugOffsets
	}
	if got := versionOfHex(d.Version); got != v {
		return Layout{}, fmt.Errorf("_Py_DebugOffsets says version %v, the interpreter %v", got, v)
	}
	if d.FreeThreaded != 0 {
		return Layout{}, fmt.Errorf("a free-threaded (no GIL) build of %v: its frames are not read yet", v)
	}
	l := Layout{Version: v, RuntimeInterpreters: d.Runtime.InterpretersHead, InterpThreads: d.Interp.ThreadsHead,
		ThreadNext: d.Thread.Next, ThreadID: d.Thread.ThreadID, ThreadFrame: d.Thread.CurrentFrame,
		InterpreterFrames: true, FramePrevious: d.Frame.Previous, FrameCode: d.Frame.Executable,
		FrameInstr: d.Frame.InstrPtr, FrameOwner: d.Frame.Owner,
		CodeFilename: d.Code.Filename, CodeName: d.Code.Name, CodeQualname: d.Code.Qualname,
		CodeFirstLine: d.Code.Firstlineno, CodeLineTable: d.Code.Linetable, CodeAdaptive: d.Code.CodeAdaptive,
		StrLength: d.Unicode.Length, StrState: d.Unicode.State, StrASCIIData: d.Unicode.ASCIIObjectSize,
		// PyCompactUnicodeObject adds utf8_length and utf8 (3.12+).
		StrCompactData: d.Unicode.ASCIIObjectSize + 16, BytesSize: d.Bytes.ObSize, BytesData: d.Bytes.ObSval}
	if err := l.check(); err != nil {
		return Layout{}, fmt.Errorf("_Py_DebugOffsets: %w", err)
	}
	return l, nil
}

// check refuses a layout with an offset past maxStructOffset.
func (l Layout) check() error {
	for _, o := range []uint64{l.RuntimeInterpreters, l.InterpThreads, l.ThreadNext, l.ThreadID, l.ThreadFrame,
		l.CFrameCurrent, l.FramePrevious, l.FrameCode, l.FrameInstr, l.FrameOwner, l.FrameIsEntry, l.CodeFilename, l.CodeName,
		l.CodeQualname, l.CodeFirstLine, l.CodeLineTable, l.CodeAdaptive, l.StrLength, l.StrState, l.StrASCIIData,
		l.StrCompactData, l.BytesSize, l.BytesData} {
		if o > maxStructOffset {
			return fmt.Errorf("an offset of %#x, past any structure of the interpreter", o)
		}
	}
	return nil
}

// versionOfHex is the version of a PY_VERSION_HEX (0xMMmmPPRS).
func versionOfHex(h uint64) Version { return Version{int(h >> 24 & 0xff), int(h >> 16 & 0xff)} }
