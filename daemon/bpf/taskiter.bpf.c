/* BPF iterators over the threads and the files of one process (the link's
 * pid): what the sampler would otherwise read of an active process through
 * /proc, its threads' CPU and wait time, context switches and I/O bytes
 * (task/TID/schedstat, status, io) and its pipes and sockets (fd/, one
 * readlinkat per fd and an lstat per pipe), in one read(2) each.
 *
 * Only the fields read are declared here; CO-RE relocates them to the
 * running kernel's layout (its BTF), so no kernel headers are needed. */
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "../taskiter-records.h"

#define PIPEFS_MAGIC 0x50495045
#define SOCKFS_MAGIC 0x534F434B

struct seq_file;
struct bpf_iter_meta {
	struct seq_file *seq;
	__u64 seq_num;             /* objects shown before this one */
} __attribute__((preserve_access_index));
struct task_io_accounting {
	__u64 rchar, wchar;
} __attribute__((preserve_access_index));
struct sched_entity {
	__u64 sum_exec_runtime;
} __attribute__((preserve_access_index));
struct sched_info {
	unsigned long long run_delay;
} __attribute__((preserve_access_index));
struct signal_struct {
	int nr_threads;
	struct task_io_accounting ioac;
} __attribute__((preserve_access_index));
struct task_struct {
	int pid;
	__u64 start_boottime;
	unsigned long nvcsw, nivcsw;
	struct sched_entity se;
	struct sched_info sched_info;
	struct task_io_accounting ioac;
	struct signal_struct *signal;
	struct task_struct *group_leader;
} __attribute__((preserve_access_index));
struct super_block {
	unsigned long s_magic;
} __attribute__((preserve_access_index));
struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
} __attribute__((preserve_access_index));
struct file {
	struct inode *f_inode;
	unsigned int f_mode;
} __attribute__((preserve_access_index));
struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
} __attribute__((preserve_access_index));
struct bpf_iter__task_file {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
	__u32 fd;
	struct file *file;
} __attribute__((preserve_access_index));

static __always_inline void write_thread(struct seq_file *seq, struct task_struct *t) {
	struct taskiter_thread_record r = { 0 };

	r.leader_start_ns = t->group_leader->start_boottime;
	r.tid = (__u32)t->pid;
	r.threads = (__u32)t->signal->nr_threads;
	r.run_ns = t->se.sum_exec_runtime;
	r.wait_ns = t->sched_info.run_delay;
	r.voluntary = t->nvcsw;
	r.involuntary = t->nivcsw;
	r.rchar = t->ioac.rchar;
	r.wchar = t->ioac.wchar;
	r.ended_rchar = t->signal->ioac.rchar;
	r.ended_wchar = t->signal->ioac.wchar;
	bpf_seq_write(seq, &r, sizeof(r));
}

SEC("iter/task")
int threads(struct bpf_iter__task *ctx) {
	struct task_struct *t = ctx->task;   /* checked once, used as checked */

	if (t)
		write_thread(ctx->meta->seq, t);
	return 0;
}

/* Anonymous pipes (pipefs, as /proc shows "pipe:[INODE]") and sockets;
 * before the first file, the thread whose files they are: all a
 * single-threaded process needs. */
SEC("iter/task_file")
int files(struct bpf_iter__task_file *ctx) {
	struct task_struct *t = ctx->task;
	struct file *f = ctx->file;
	struct taskiter_file_record r = { 0 };
	unsigned long magic;

	if (!t || !f)
		return 0;
	if (ctx->meta->seq_num == 0)
		write_thread(ctx->meta->seq, t);
	magic = f->f_inode->i_sb->s_magic;
	if (magic != PIPEFS_MAGIC && magic != SOCKFS_MAGIC)
		return 0;
	r.leader_start_ns = t->group_leader->start_boottime;
	r.inode = f->f_inode->i_ino;
	r.fd = ctx->fd;
	r.socket = magic == SOCKFS_MAGIC;
	r.f_mode = f->f_mode;
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
