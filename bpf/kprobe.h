// kprobe, kretprobe and kprobe_multi programs (included at the end of
// probee.bpf.c). They run in kernel context: the kernel stack comes from
// bpf_get_stack on ctx (kept in kstacks by content hash), the user stack
// from the task's saved user registers, walked like a tracepoint's (FP or
// DWARF). The cookie is the
// probe id only: the user registers are at a syscall or interrupt, never at
// a function's first instruction.
//
// kprobe_multi programs have their own expected attach type, so their DWARF
// step program needs its own prog array (steps_kmulti). They share the
// SLOT_KPROBE state with plain kprobes: both run under the per-CPU
// bpf_prog_active guard, so one cannot interrupt the other on a CPU.

#ifndef PROBEE_KPROBE_H
#define PROBEE_KPROBE_H

ONE_STEP_ARRAY(steps_kmulti);

// user_regs copies the current task's user registers into regs.
static __always_inline int user_regs(struct pt_regs *regs)
{
	struct pt_regs *uregs = task_user_regs();

	return bpf_probe_read_kernel(regs, sizeof(*regs), uregs);
}

// Also used for kretprobes (link.Kretprobe with the same program).
SEC("kprobe")
int probee_kprobe(struct pt_regs *ctx)
{
	struct pt_regs *regs = scratch_regs(SLOT_KPROBE);
	__u64 cookie = probe_cookie(ctx) & 0xffffffffULL;

	if (!regs || user_regs(regs))
		return 0;
	return record(ctx, cookie, regs, 1, SLOT_KPROBE, steps_kprobe, STEP_KPROBE);
}

SEC("kprobe.multi")
int probee_kprobe_multi(struct pt_regs *ctx)
{
	struct pt_regs *regs = scratch_regs(SLOT_KPROBE);
	__u64 cookie = probe_cookie(ctx) & 0xffffffffULL;

	if (!regs || user_regs(regs))
		return 0;
	return record(ctx, cookie, regs, 1, SLOT_KPROBE, steps_kmulti, 0);
}

SEC("kprobe.multi")
int probee_step_kprobe_multi(struct pt_regs *ctx)
{
	return step_program(ctx, SLOT_KPROBE, steps_kmulti, 0);
}

#endif
