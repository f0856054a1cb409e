// The identity under which the unwinder finds a file's table (issue 21),
// asked for by user space (fileKeyOf in filetables.go). vma_cb keys
// file_tables by the mapped file's inode (vm_file->f_inode): for a file
// of an overlayfs (a container's image), that is the layer's file, while
// /proc/PID/maps and the kernel's mapping records show the overlay's
// inode (file_user_inode, kernels 6.9+). So user space maps the file
// itself and runs this program on that address with BPF_PROG_TEST_RUN, in
// its own context: the key it reads back is the unwinder's, whatever the
// file system. Included at the end of probee.bpf.c.
#ifndef PROBEE_FILEKEY_H
#define PROBEE_FILEKEY_H

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct file_key);
} file_key_out SEC(".maps");

// probee_file_key: args[0] is an address in the caller's file mapping; the
// mapped file's key goes to file_key_out. Returns 0, or 1 when no file
// mapping holds the address (or the lookup failed: -EBUSY under mmap
// lock contention, retried by user space).
SEC("raw_tp")
int probee_file_key(struct bpf_raw_tracepoint_args *ctx)
{
	struct vma_found v = {};
	__u32 zero = 0;

	if (!have_find_vma)
		return 1;
	if (find_vma(ctx->args[0], &v) || v.kind != VMA_FILE)
		return 1;
	bpf_map_update_elem(&file_key_out, &zero, &v.key, BPF_ANY);
	return 0;
}

#endif
