// Finding a pc's unwind table without per-process registration (issue
// 15): bpf_find_vma (5.17+) gives the mapping that holds the pc, and the
// table is found by the identity of the mapped file (file_tables, keyed by
// device and inode), so a forked child, a new process of a known binary or
// a process probee never saw unwinds completely from its first event.
#ifndef PROBEE_VMA_H
#define PROBEE_VMA_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include "probee.h"
#include "kernel.h"
#include "compat.h"
#include "unwind_state.h"
#include "unwind_maps.h"
#include "defer.h"

// VMA_DATA: the heap (brk), the main stack or the walking thread's own
// stack (the mapping holding the walk's stack pointer: a thread's stack is
// an anonymous mapping like JIT code), not executable: no code lives
// there, so a pc in it is a misread return address (not JIT code, which
// W^X runtimes may make writable a moment, but never there).
enum vma_kind { VMA_NONE = 0, VMA_ANON = 1, VMA_FILE = 2, VMA_DATA = 3 };

struct vma_found {
	__u64 start, end, off;
	struct file_key key;
	__u32 kind;
	__u64 sp; // in: the walk's stack pointer (0: none)
};

#ifndef PROBEE_LEGACY
// The callback's vma is a BTF pointer: its fields, and those of the
// structures it points to, are plain loads (the probe reads of CO-RE
// helpers cost ~50 ns each, and a lookup took seven).

// in_heap reports whether the mapping starting at start is the heap (brk).
// Read only for mappings that are not executable: code, which most
// lookups find, needs no more reads.
static __always_inline int in_heap(struct vm_area_struct *vma, __u64 start)
{
	struct mm_struct *mm = vma->vm_mm;

	return mm && start >= mm->start_brk && start < mm->brk;
}

static long vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_found *v = data;
	struct file *f = vma->vm_file;

	v->start = vma->vm_start;
	v->end = vma->vm_end;
	v->off = (__u64)vma->vm_pgoff << 12;
	v->kind = VMA_ANON;
	__u64 flags = vma->vm_flags;
	int own_stack = v->sp >= v->start && v->sp < v->end;
	if (!(flags & VM_EXEC_FLAG) && ((flags & VM_GROWSDOWN_FLAG) || own_stack || in_heap(vma, v->start))) {
		v->kind = VMA_DATA;
		return 0;
	}
	struct inode *ino = f ? f->f_inode : NULL;
	if (ino) {
		v->key.dev = ino->i_sb ? ino->i_sb->s_dev : 0;
		v->key.ino = ino->i_ino;
		v->kind = VMA_FILE;
	} else if (!f && vma->vm_mm && v->start == (__u64)vma->vm_mm->context.vdso) {
		// The vDSO has no file: its table is filed under a key no file
		// has (bpf/filetables.go), at offset 0.
		v->key.dev = VDSO_KEY_DEV;
		v->key.ino = 0;
		v->off = 0;
		v->kind = VMA_FILE;
	}
	return 0;
}
#endif

// find_vma finds the mapping of addr into v (bpf_find_vma's result).
static __always_inline long find_vma(__u64 addr, struct vma_found *v)
{
#ifdef PROBEE_LEGACY
	return -2; // ENOENT
#else
	return bpf_find_vma(bpf_get_current_task_btf(), addr, vma_cb, v, 0);
#endif
}

// file_mapping fills m for the mapping v of file table t; 0: the
// mapping's offset is in none of the table's segments.
static __always_inline int file_mapping(struct unwind_mapping *m, struct vma_found *v, struct file_table *t)
{
	for (int i = 0; i < FILE_SEGS; i++) {
		if (i >= t->nsegs)
			break;
		struct file_seg *sg = &t->segs[i];
		if (v->off >= sg->off && v->off < sg->end) {
			m->bias = v->start - v->off - sg->delta + t->base;
			m->pages_off = t->pages_off;
			m->npages = t->npages;
			m->entries_off = t->entries_off;
			m->flags = t->flags;
			return 1;
		}
	}
	return 0;
}

// vma_mapping finds the mapping of the walk's pc through bpf_find_vma,
// in the walk's one-entry cache (vma) first. A file whose table is not
// loaded (yet) and anonymous code (JIT) get frame-pointer steps; the
// first marks the stack partial. NULL: no mapping holds the pc, the pc is
// in the heap or the stack (status.unknown set: a return address read
// from a frame that was not one, such as a signal frame sampled while
// rt_sigreturn restores the registers), or the lookup failed
// (status.busy: the walk is handed to user space from this frame,
// defer.h).
static __always_inline struct unwind_mapping *vma_mapping(struct unwind_state *s)
{
	struct vma_found v = {};
	struct unwind_mapping *m = &s->vma.m;

#ifdef PROBEE_LEGACY
	return NULL; // no bpf_find_vma (compat.h)
#endif
	if (!have_find_vma)
		return NULL;
	if (s->vma.ok && s->cur.ip >= m->start && s->cur.ip < m->end)
		return m;
	s->vma.ok = 0;
	v.sp = s->cur.sp;
	long err = find_vma(s->cur.ip, &v);
	if (err == -2 /* ENOENT */ || (!err && v.kind == VMA_NONE))
		return NULL;
	if (!err && v.kind == VMA_DATA) {
		s->status.unknown = 1; // not a frame (unwind_step drops it)
		return NULL;
	}
	if (err) {
		// -EBUSY: in interrupt context (sampling) bpf_find_vma works
		// once per event (the mmap lock is released by an irq_work that
		// has not run yet). User space finishes the walk from here.
		defer_mark(s);
		s->status.partial = 1;
		s->status.busy = 1;
		return NULL;
	}
	m->start = v.start;
	m->end = v.end;
	m->flags = 0;
	if (v.kind == VMA_FILE) {
		struct file_table *t = bpf_map_lookup_elem(&file_tables, &v.key);
		if (!t || !file_mapping(m, &v, t)) {
			m->flags = 0;
			defer_mark(s);
			s->status.partial = 1;
		}
	}
	s->vma.ok = 1;
	return m;
}

#endif
