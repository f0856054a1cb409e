package symbolize

import (
	"sync"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/objfile"
)

// hotDWARF keeps the DWARF of the objects that each Prefetch call needs
// (each fold of a long run: the stacks of the processes gone in the last
// second) across calls, where Prefetch let go of every object's DWARF
// once its addresses were done. A churning machine's processes all pass
// through libc: with its debug file installed (libc6-dbg, or fetched by
// build-id) each fold read and parsed its 10 MB of DWARF again for the
// few addresses it had not seen, 2.5 of the 4.9 GB a 90 s run allocated,
// and the resident set swung by ~25% with the folds. An object used by
// two calls in a row keeps its DWARF while its sections (DWARFBytes) fit
// maxHotDWARF, all objects together, until hotCalls calls go by without
// it. What is held is ~2.3 times the sections' size: libc's 10 MB of
// sections held 23 MB (debug/dwarf parses every unit's abbreviations,
// 13 MB, beside the sections' bytes). Objects used once (a program run once, the final profile's
// objects) are let go as before.
type hotDWARF struct {
	mu    sync.Mutex
	calls uint64 // Prefetch calls so far
	objs  map[fileid.ID]hotObject
	bytes int64 // DWARFBytes of those kept
	max   int64 // maxHotDWARF, or a test's
}

// hotObject is what hotDWARF knows of one object.
type hotObject struct {
	o      *objfile.Object
	last   uint64 // the last call that used it
	streak int    // calls in a row that used it
	kept   int64  // its DWARFBytes while kept; 0: not kept
}

const (
	maxHotDWARF = 32 << 20 // bytes of DWARF sections kept, all objects (~2.3x that held)
	hotCalls    = 10       // calls a kept object may go unused
)

// begin starts a Prefetch call: objects unused for hotCalls calls are
// released and forgotten.
func (h *hotDWARF) begin() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls++
	for id, e := range h.objs {
		if h.calls-e.last <= hotCalls {
			continue
		}
		if e.kept > 0 {
			e.o.ReleaseDWARF()
			h.bytes -= e.kept
		}
		delete(h.objs, id)
	}
}

// done is called once o's addresses of this call are symbolized: o keeps
// its DWARF if the call before used it too and the budget allows, else
// lets go of it.
func (h *hotDWARF) done(o *objfile.Object) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.objs == nil {
		h.objs = map[fileid.ID]hotObject{}
	}
	e := h.objs[o.ID()]
	switch {
	case e.last == h.calls:
	case e.last+1 == h.calls && e.o != nil:
		e.streak++
	default:
		e.streak = 1
	}
	e.o, e.last = o, h.calls
	if e.kept == 0 && e.streak >= 2 {
		budget := h.max
		if budget == 0 {
			budget = maxHotDWARF
		}
		if n := o.DWARFBytes(); n > 0 && h.bytes+n <= budget {
			e.kept = n
			h.bytes += n
		}
	}
	if e.kept == 0 {
		o.ReleaseDWARF()
	}
	h.objs[o.ID()] = e
}
