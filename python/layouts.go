package python

import "fmt"

// Version is a CPython version, major.minor.
type Version struct{ Major, Minor int }

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Layout is where a frame walk finds what it reads, as byte offsets in
// the interpreter's structures: from _PyRuntime to the interpreters, from
// an interpreter to its threads, from a thread to its innermost frame,
// from a frame to the one that called it and to its code, and in a code
// object to its names and line table.
type Layout struct {
	Version Version

	// _PyRuntime (struct pyruntimestate): the first interpreter.
	RuntimeInterpreters uint64

	// PyInterpreterState (struct _is): the first of its threads
	// (tstate_head before 3.11, threads.head since).
	InterpThreads uint64

	// PyThreadState (struct _ts): the next thread of the interpreter,
	// its pthread_self() (on x86-64 the thread's fs base, which tells
	// the running thread's state apart), and its innermost frame:
	// ThreadFrame holds it (frame before 3.11, current_frame from 3.13),
	// or for 3.11 and 3.12 a _PyCFrame whose CFrameCurrent holds it
	// (HasCFrame).
	ThreadNext, ThreadID, ThreadFrame uint64
	HasCFrame                         bool
	CFrameCurrent                     uint64

	// A frame: PyFrameObject before 3.11, _PyInterpreterFrame since
	// (InterpreterFrames). FramePrevious is the caller's frame (f_back,
	// previous), FrameCode its code object (f_code, f_executable in
	// 3.13), FrameInstr the instruction: f_lasti, an int index, before
	// 3.11, else a pointer into the code's co_code_adaptive (prev_instr,
	// instr_ptr in 3.13). FrameOwner (3.11+) says who owns the frame: a
	// frame owned by the C stack (3.12+) is the eval loop's entry shim,
	// no Python function. In 3.11, FrameIsEntry flags the first frame an
	// activation of the eval loop ran (0: none; 3.12+ has the shims).
	InterpreterFrames                    bool
	FramePrevious, FrameCode, FrameInstr uint64
	FrameOwner, FrameIsEntry             uint64

	// PyCodeObject: its file, name, qualified name (3.11+; 0: none),
	// first line, line table (co_lnotab before 3.10, co_linetable since)
	// and, 3.11+, where its instructions begin (co_code_adaptive).
	CodeFilename, CodeName, CodeQualname uint64
	CodeFirstLine, CodeLineTable         uint64
	CodeAdaptive                         uint64

	// A compact str: its length, its state bits (kind, compact, ascii)
	// and where its characters begin: after a PyASCIIObject when ASCII,
	// else after a PyCompactUnicodeObject.
	StrLength, StrState, StrASCIIData, StrCompactData uint64

	// A bytes object (the line table): its size and its bytes.
	BytesSize, BytesData uint64
}

// layouts are the layouts of release builds by minor version, read from
// the DWARF of pyenv's builds (3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1,
// 3.13.0) and checked against it by TestLayoutsMatchDWARF.
var layouts = map[Version]Layout{
	{3, 8}: layout38,
	{3, 9}: layout38, // the same
	{3, 10}: {RuntimeInterpreters: 32, InterpThreads: 8, ThreadNext: 8, ThreadID: 176, ThreadFrame: 24,
		FramePrevious: 24, FrameCode: 32, FrameInstr: 96,
		CodeFilename: 104, CodeName: 112, CodeFirstLine: 40, CodeLineTable: 120,
		StrLength: 16, StrState: 32, StrASCIIData: 48, StrCompactData: 72,
		BytesSize: 16, BytesData: 32},
	{3, 11}: {RuntimeInterpreters: 40, InterpThreads: 16, ThreadNext: 8, ThreadID: 152, ThreadFrame: 56,
		HasCFrame: true, CFrameCurrent: 8,
		InterpreterFrames: true, FramePrevious: 48, FrameCode: 32, FrameInstr: 56, FrameOwner: 69, FrameIsEntry: 68,
		CodeFilename: 112, CodeName: 120, CodeQualname: 128, CodeFirstLine: 72, CodeLineTable: 136, CodeAdaptive: 184,
		StrLength: 16, StrState: 32, StrASCIIData: 48, StrCompactData: 72,
		BytesSize: 16, BytesData: 32},
	{3, 12}: {RuntimeInterpreters: 40, InterpThreads: 72, ThreadNext: 8, ThreadID: 136, ThreadFrame: 56,
		HasCFrame: true, CFrameCurrent: 0,
		InterpreterFrames: true, FramePrevious: 8, FrameCode: 0, FrameInstr: 56, FrameOwner: 70,
		CodeFilename: 112, CodeName: 120, CodeQualname: 128, CodeFirstLine: 68, CodeLineTable: 136, CodeAdaptive: 192,
		StrLength: 16, StrState: 32, StrASCIIData: 40, StrCompactData: 56,
		BytesSize: 16, BytesData: 32},
	{3, 13}: {RuntimeInterpreters: 632, InterpThreads: 7344, ThreadNext: 8, ThreadID: 152, ThreadFrame: 72,
		InterpreterFrames: true, FramePrevious: 8, FrameCode: 0, FrameInstr: 56, FrameOwner: 70,
		CodeFilename: 112, CodeName: 120, CodeQualname: 128, CodeFirstLine: 68, CodeLineTable: 136, CodeAdaptive: 200,
		StrLength: 16, StrState: 32, StrASCIIData: 40, StrCompactData: 56,
		BytesSize: 16, BytesData: 32},
}

var layout38 = Layout{RuntimeInterpreters: 32, InterpThreads: 8, ThreadNext: 8, ThreadID: 176, ThreadFrame: 24,
	FramePrevious: 24, FrameCode: 32, FrameInstr: 104,
	CodeFilename: 104, CodeName: 112, CodeFirstLine: 40, CodeLineTable: 120,
	StrLength: 16, StrState: 32, StrASCIIData: 48, StrCompactData: 72,
	BytesSize: 16, BytesData: 32}

// MinVersion and MaxVersion bound the versions with a layout.
var (
	MinVersion = Version{3, 8}
	MaxVersion = Version{3, 13}
)

// tableLayout is v's layout from the table.
func tableLayout(v Version) (Layout, bool) {
	l, ok := layouts[v]
	l.Version = v
	return l, ok
}
