// Shared between probee.bpf.c and the Go loader (through bpf2go -type).
#ifndef PROBEE_H
#define PROBEE_H

#define MAX_STACK 127
#define MAX_PROBES 1024

#define COOKIE_ENTRY 1 // bit 32 of the cookie: probe at a function's first instruction

#define STACK_TRUNCATED 1

enum drop_cause {
	DROP_COUNTS_FULL = 0,     // counts map full
	DROP_USTACK_FULL = 1,     // user stack map full
	DROP_USTACK_COLLISION = 2,// two user stacks with one hash
	DROP_KSTACK_ERROR = 3,    // bpf_get_stackid failed
	DROP_KSTACK_COLLISION = 4,// kernel stack map bucket taken (-EEXIST)
	DROP_EVENT_LOST = 5,      // ring buffer full: a process notice was lost
	DROP_MAX = 6,
};

enum event_type {
	EVENT_NEW_PROCESS = 1,
	EVENT_EXIT = 2,
};

struct event {
	__u32 type;
	__u32 tgid;
	__u32 pid;
	__u32 pad;
};

struct count_key {
	__u32 probe;
	__u32 tgid;
	__u64 ustack; // key in ustacks, 0 when lost
	__s32 kstack; // id in kstacks, -1 when none
	__u32 pad;
	char comm[16];
};

struct user_stack {
	__u64 hash;
	__u32 len;
	__u32 flags;
	__u64 pcs[MAX_STACK];
};

#endif
