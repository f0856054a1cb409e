// What the kernel offers, decided at build time and at load time.
//
// The object is built twice (gen.go). probee serves kernels whose loader
// takes BPF callbacks (5.13+). probee_legacy (-DPROBEE_LEGACY) serves older
// ones (5.10): 5.10 refuses to load a program that only references a
// callback, even in code the verifier never reaches ("number of funcs in
// func_info doesn't match number of subprogs"), so the legacy build has no
// bpf_loop (the inline walk is a bounded loop), no bpf_find_vma (tables come
// from the per-process mapping arrays), no BTF task pointer (5.11: the task
// is read with CO-RE probes) and no atomic compare-and-exchange (5.12).
//
// Decided by the loader (rodata) in both builds: BPF cookies (5.15; without
// them each program is loaded once per cookie, with fixed_cookie set) and
// bpf_task_pt_regs (5.15; without it the user registers are found at the top
// of the task's kernel stack, as the kernel's task_pt_regs does).
#ifndef PROBEE_COMPAT_H
#define PROBEE_COMPAT_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "kernel.h"

const volatile __u32 have_cookie = 1;
const volatile __u64 fixed_cookie = 0;
const volatile __u32 have_task_regs = 1;

// probe_cookie is the attach cookie of the event's probe.
static __always_inline __u64 probe_cookie(void *ctx)
{
	if (have_cookie)
		return bpf_get_attach_cookie(ctx);
	return fixed_cookie;
}

#ifdef PROBEE_LEGACY
#define current_task() ((struct task_struct *)bpf_get_current_task())
#else
#define current_task() ((struct task_struct *)bpf_get_current_task_btf())
#endif

// task_comm copies the current thread's name: plain loads of the BTF
// task pointer where there is one (the kernel keeps comm NUL-padded, as
// bpf_get_current_comm gives it), the helper in the legacy build.
static __always_inline void task_comm(char comm[16])
{
#ifdef PROBEE_LEGACY
	bpf_get_current_comm(comm, 16);
#else
	struct task_struct *t = current_task();
	__u64 *dst = (__u64 *)comm;

	dst[0] = *(__u64 *)&t->comm[0];
	dst[1] = *(__u64 *)&t->comm[8];
#endif
}

// KREAD reads field f (a member path: a.b) of the kernel structure at p, a
// pointer from current_task() or from an earlier KREAD: a plain load of a
// BTF pointer (5.11+; ~50 ns less than a probe read), a CO-RE probe read in
// the legacy build. Both give 0 where p is NULL.
#ifdef PROBEE_LEGACY
#define KREAD(p, f) BPF_CORE_READ(p, f)
#else
#define KREAD(p, f) ((p)->f)
#endif

// KREAD_BITFIELD reads bitfield f of the kernel structure at p, as KREAD.
#ifdef PROBEE_LEGACY
#define KREAD_BITFIELD(p, f) BPF_CORE_READ_BITFIELD_PROBED(p, f)
#else
#define KREAD_BITFIELD(p, f) BPF_CORE_READ_BITFIELD(p, f)
#endif

// THREAD_SIZE of x86-64 (16 KiB kernel stacks; Debian's kernels have no
// KASAN, which doubles it).
#define X86_THREAD_SIZE 16384

// task_user_regs is where the current task's user registers are saved;
// the caller reads them with bpf_probe_read_kernel.
static __always_inline struct pt_regs *task_user_regs(void)
{
#ifndef PROBEE_LEGACY
	if (have_task_regs)
		return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
#endif
	void *stack = BPF_CORE_READ(current_task(), stack);

	if (!stack)
		return NULL;
	return (struct pt_regs *)(stack + X86_THREAD_SIZE) - 1;
}

// VERIFIED_ONCE marks a function the verifier checks once for all its
// callers (a global function). 5.10 takes only scalars and the context as
// a global function's arguments ("Arg#0 type PTR ... is not supported
// yet"), so the legacy build makes these static subprograms, checked at
// each call.
#ifdef PROBEE_LEGACY
#define VERIFIED_ONCE static __attribute__((noinline))
#else
#define VERIFIED_ONCE __attribute__((noinline))
#endif

#endif
