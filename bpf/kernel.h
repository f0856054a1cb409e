// Minimal CO-RE views of the kernel structures probee reads, relocated
// through the kernel's BTF: no vmlinux.h, no kernel headers. Flavors
// (struct x___y) are views of the same kernel structure that one reader
// needs and the others do not declare.
#ifndef PROBEE_KERNEL_H
#define PROBEE_KERNEL_H

#include <linux/types.h>
#include <bpf/bpf_core_read.h>

struct xol_area { unsigned long vaddr; } __attribute__((preserve_access_index));
struct uprobes_state { struct xol_area *xol_area; } __attribute__((preserve_access_index));
// mm_context_t (x86): the vDSO's text address (vma.h).
struct mm_context { void *vdso; } __attribute__((preserve_access_index));
struct mm_struct {
	struct uprobes_state uprobes_state;
	struct mm_context context;
	unsigned long start_stack; // the initial stack pointer: frames lie below it
	unsigned long start_brk, brk; // the heap (vma.h: no code there)
} __attribute__((preserve_access_index));
struct return_instance {
	unsigned long stack;          // address of the hijacked return address slot
	unsigned long orig_ret_vaddr; // the real return address
	struct return_instance *next;
} __attribute__((preserve_access_index));
struct uprobe_task { struct return_instance *return_instances; } __attribute__((preserve_access_index));
struct thread_struct { unsigned long fsbase; } __attribute__((preserve_access_index)); // x86-64: the TLS base (Go's g, unwind.h)
// live: the threads of the process that have not begun to exit (atomic_t).
struct signal_struct { struct { int counter; } live; } __attribute__((preserve_access_index));
struct task_struct {
	unsigned int flags; // PF_EXITING
	unsigned int in_execve:1;
	int pid;
	int tgid;
	char comm[16]; // TASK_COMM_LEN
	struct mm_struct *mm;
	struct uprobe_task *utask;
	struct task_struct *real_parent;
	__u64 parent_exec_id; // 64 bits since 5.7
	__u64 self_exec_id;
	void *stack; // the kernel stack (compat.h)
	struct thread_struct thread;
	struct task_struct *group_leader;
	__u64 start_boottime; // what /proc/PID/stat's start time counts (5.5+)
	struct signal_struct *signal;
} __attribute__((preserve_access_index));

#define PF_EXITING 0x00000004 // task_struct.flags: the task began to exit

// The mapping of an address (vma.h).
struct super_block { __u32 s_dev; } __attribute__((preserve_access_index));
struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
} __attribute__((preserve_access_index));
struct file { struct inode *f_inode; } __attribute__((preserve_access_index));
struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_end;
	unsigned long vm_pgoff;
	struct file *vm_file;
	struct mm_struct *vm_mm;
	unsigned long vm_flags; // VM_EXEC, VM_GROWSDOWN (a union member since 6.3)
} __attribute__((preserve_access_index));

#define VM_EXEC_FLAG 0x4        // VM_EXEC
#define VM_GROWSDOWN_FLAG 0x100 // VM_GROWSDOWN

// What the root gate reads of a task: its root directory (stopgate.h).
struct dentry { struct inode *d_inode; } __attribute__((preserve_access_index));
struct path { struct dentry *dentry; } __attribute__((preserve_access_index));
struct fs_struct { struct path root; } __attribute__((preserve_access_index));
struct task_struct___root { struct fs_struct *fs; } __attribute__((preserve_access_index));

// The kernel stack of a task, for the latency exit hook (latency.h).
struct task_struct___lat {
	void *stack;
} __attribute__((preserve_access_index));

#endif
