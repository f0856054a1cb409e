// Package python finds what naming the Python functions a CPython
// interpreter runs takes (issue 47): whether a mapped ELF object is an
// interpreter (a python binary or libpython3.X.so, found by its
// _PyRuntime symbol), its version, and the layout of the runtime
// structures a frame walk follows from the runtime to a thread's frames
// and from a frame to its code object's names (Layout).
//
// The layout comes from the interpreter itself where it publishes it
// (3.13's _Py_DebugOffsets, at the start of _PyRuntime), else from a table
// per minor version (layouts.go), 3.8 to 3.13. The table was read from
// the DWARF of pyenv's builds of each version and is checked against it
// by the tests; release builds of one minor version share it (CPython
// keeps these structures' layout within a minor version). A debug build
// (--with-pydebug, known by its _Py_NegativeRefcount) or a free-threaded
// 3.13 build has another layout: they are refused by name, as are
// versions outside the table, and stay native-only.
//
// A process's copy is placed by its mappings (Locate: where _PyRuntime
// and _PyEval_EvalFrameDefault are in it), and Walk reads a thread's
// frames the way the BPF programs are to at each event: from _PyRuntime
// to the first interpreter's thread states, the one whose thread_id
// (pthread_self(), the thread's fs base on x86-64) is the running
// thread's, then from its innermost frame along the callers, each frame
// marked where an activation of the eval loop (a native
// _PyEval_EvalFrameDefault frame) began. Code objects are read from the
// process's memory (ReadCode): names, file, and the line of a code unit
// in each version's line-table format.
//
// Nothing here opens a process or a file: files and memory in (an
// *elf.File, an io.ReaderAt), values out. The reads of an
// object are bounded (internal/safeelf). Written in-house: no Go library
// reads CPython's layouts (otel-ebpf-profiler keeps its own tables inside
// its agent; facts from it are cited where used).
package python
