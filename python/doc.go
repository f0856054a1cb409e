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
// Nothing here touches a process: files in, values out. The reads of an
// object are bounded (internal/safeelf). Written in-house: no Go library
// reads CPython's layouts (otel-ebpf-profiler keeps its own tables inside
// its agent; facts from it are cited where used).
package python
