/* BPF iterators over the threads and the files of one process (the link's
 * pid): what the sampler would otherwise read of an active process through
 * /proc, its threads' CPU and wait time, context switches and I/O bytes
 * (task/TID/stat and schedstat, status, io) and its pipes and sockets (fd/,
 * one readlinkat per fd and an lstat per pipe), in one read(2) each; and an
 * iterator over the pids of a map that reads all of that for many
 * processes in one read(2) (the sampler's active processes).
 *
 * The kernel's structures it reads are declared in ../../bpf/kernel.h. */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "../../bpf/kernel.h"
#include "../taskiter-records.h"

#define PIPEFS_MAGIC 0x50495045
#define SOCKFS_MAGIC 0x534F434B
#define PF_KTHREAD 0x00200000
#define BPF_TASK_ITER_PROC_THREADS 2   /* the kernel's enum, kernel/bpf/task_iter.c */

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
struct bpf_iter__bpf_map_elem {
	struct bpf_iter_meta *meta;
	void *map;
	void *key;
	void *value;
} __attribute__((preserve_access_index));

/* Linux 6.13 and later. Weak: where they are missing, the loader leaves
 * the program that calls them out (taskiter.c). */
extern struct task_struct *bpf_task_from_vpid(__s32 vpid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;
struct bpf_iter_task {
	__u64 __opaque[3];
} __attribute__((aligned(8)));
extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task, unsigned int flags) __ksym __weak;
extern struct task_struct *bpf_iter_task_next(struct bpf_iter_task *it) __ksym __weak;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __ksym __weak;

static __always_inline void fill_thread(struct taskiter_thread_record *r, struct task_struct *t) {
	r->leader_start_ns = t->group_leader->start_boottime;
	r->tid = (__u32)t->pid;
	r->threads = (__u32)t->signal->nr_threads;
	r->run_ns = t->se.sum_exec_runtime;
	r->ended_run_ns = t->signal->sum_sched_runtime;
	r->wait_ns = t->sched_info.run_delay;
	r->voluntary = t->nvcsw;
	r->involuntary = t->nivcsw;
	r->rchar = t->ioac.rchar;
	r->wchar = t->ioac.wchar;
}

static __always_inline void write_thread(struct seq_file *seq, struct task_struct *t) {
	struct taskiter_thread_record r = { 0 };

	fill_thread(&r, t);
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

/* ---- many processes in one read ------------------------------------- */

/* The processes to read, written by the reader straight into a map's
 * memory: arrays, so that changing which are read costs no system call.
 * Elements past the last process hold pid 0, and still cost a call of the
 * program each: the reader uses the smallest array that holds them all. */
#define WANTED(size)                                                  \
	struct {                                                      \
		__uint(type, BPF_MAP_TYPE_ARRAY);                     \
		__uint(map_flags, BPF_F_MMAPABLE);                    \
		__uint(max_entries, size);                            \
		__type(key, __u32);                                   \
		__type(value, struct taskiter_wanted);                \
	} wanted_##size SEC(".maps")
WANTED(64);
WANTED(256);
WANTED(1024);
WANTED(4096);

/* One process's output, gathered before it is written in one piece: the
 * kernel's buffer holds 32 KiB of one element's output at most. */
struct {
	struct taskiter_batch_record head;
	struct taskiter_file_record fds[TASKITER_BATCH_FDS];
} out;

/* Whether a file is an anonymous pipe or a socket: its record, added to
 * out. -1 when out is full. */
static __always_inline int add_file(struct file *f, __u32 fd) {
	struct inode *inode = BPF_CORE_READ(f, f_inode);
	unsigned long magic = BPF_CORE_READ(inode, i_sb, s_magic);
	__u32 n = out.head.n_fds;

	if (magic != PIPEFS_MAGIC && magic != SOCKFS_MAGIC)
		return 0;
	if (n >= TASKITER_BATCH_FDS)
		return -1;
	out.fds[n].leader_start_ns = out.head.thread.leader_start_ns;
	out.fds[n].inode = BPF_CORE_READ(inode, i_ino);
	out.fds[n].fd = fd;
	out.fds[n].socket = magic == SOCKFS_MAGIC;
	out.fds[n].f_mode = BPF_CORE_READ(f, f_mode);
	out.head.n_fds = n + 1;
	return 0;
}

struct fd_walk {
	struct file **fd;
	unsigned long *open_fds;
};

/* The open fds among the 64 of word w of the open_fds bitmap (a bpf_loop()
 * callback): the files that /proc/PID/fd lists. */
static int walk_word(__u32 w, struct fd_walk *walk) {
	unsigned long bits;

	if (bpf_probe_read_kernel(&bits, sizeof(bits), walk->open_fds + w) < 0)
		return 1;
	for (__u32 i = 0; i < 64 && bits; i++, bits >>= 1) {
		struct file *f;
		__u32 fd = w * 64 + i;
		if (!(bits & 1) || bpf_probe_read_kernel(&f, sizeof(f), walk->fd + fd) < 0 || !f)
			continue;
		if (add_file(f, fd) < 0) {
			out.head.truncated = 1;
			return 1;
		}
	}
	return 0;
}

/* The CPU time of all of t's threads, those that ended included, as
 * /proc/PID/stat sums it (without its lock: a thread that ends meanwhile
 * may be counted twice, or not at all, this once). */
static __always_inline __u64 process_run_ns(struct task_struct *t) {
	struct bpf_iter_task it;
	struct task_struct *thread;
	__u64 ns = t->signal->sum_sched_runtime;

	bpf_iter_task_new(&it, t, BPF_TASK_ITER_PROC_THREADS);
	while ((thread = bpf_iter_task_next(&it)))
		ns += thread->se.sum_exec_runtime;
	bpf_iter_task_destroy(&it);
	return ns;
}

/* For each pid of the map: the figures of its first thread (all of a
 * single-threaded process), its CPU time and its pipes and sockets, or
 * nothing when no process has that pid. */
SEC("iter/bpf_map_elem")
int batch(struct bpf_iter__bpf_map_elem *ctx) {
	struct fdtable *fdt;
	struct fd_walk walk;
	struct task_struct *t;
	struct taskiter_wanted *want = ctx->value;
	__u32 words, size;

	if (!want || !want->pid)
		return 0;
	t = bpf_task_from_vpid((__s32)want->pid);
	if (!t)
		return 0;
	__builtin_memset(&out.head, 0, sizeof(out.head));
	fill_thread(&out.head.thread, t);
	out.head.pid = want->pid;
	if (bpf_core_field_exists(t->thread_info.cpu))
		out.head.cpu = t->thread_info.cpu;
	else
		out.head.cpu = t->cpu;
	bpf_probe_read_kernel(out.head.comm, sizeof(out.head.comm), t->comm);
	out.head.kthread = (t->flags & PF_KTHREAD) != 0;
	out.head.run_ns = out.head.thread.threads == 1 ? out.head.thread.ended_run_ns + out.head.thread.run_ns
						       : process_run_ns(t);
	if (want->flags & TASKITER_BATCH_STAT_ONLY) {
		bpf_task_release(t);
		bpf_seq_write(ctx->meta->seq, &out.head, sizeof(out.head));
		return 0;
	}
	fdt = BPF_CORE_READ(t, files, fdt);   /* NULL for a process that is exiting */
	walk.fd = BPF_CORE_READ(fdt, fd);
	walk.open_fds = BPF_CORE_READ(fdt, open_fds);
	words = (BPF_CORE_READ(fdt, max_fds) + 63) / 64;
	if (fdt && walk.fd && walk.open_fds)
		bpf_loop(words, walk_word, &walk, 0);
	bpf_task_release(t);

	size = out.head.n_fds;
	if (size > TASKITER_BATCH_FDS)
		size = TASKITER_BATCH_FDS;
	bpf_seq_write(ctx->meta->seq, &out, sizeof(out.head) + size * sizeof(out.fds[0]));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
