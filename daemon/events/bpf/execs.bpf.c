/* Exec events filtered in the kernel (daemon/events/execs.c loads them): a record
 * reaches ccxd only for an exec that can concern it, so the execs of all
 * other programs cost it nothing, not even a wake-up.
 *
 *   prepare  the raw tracepoint sched_prepare_exec, as the exec begins to
 *            replace the old program (before the old memory is let go,
 *            which takes most of an exec's time): the comm it will give,
 *            the last part of its path. Reported for the names reported at
 *            rename, so that ccxd pins the task while the exec runs, and
 *            decides it there; where it did both in time, the rename
 *            brings no record (its map of pins says so).
 *   rename   the raw tracepoint task_rename, as the exec gives the task its
 *            new comm (begin_new_exec()): before the new program is mapped,
 *            and before the proc connector's event. Reported when a rule
 *            names that comm and needs nothing the exec has yet to set up
 *            (the command line is written later).
 *   end      the raw tracepoint sched_process_exec, when the exec is done,
 *            where the proc connector sends its event. Reported for the
 *            other names the rules name, for every exec when some rule may
 *            name any comm, and for the processes in ccxd's table. Of an
 *            exec reported at its rename it notes, in a map ccxd reads,
 *            that it is done, and whether the task holds ccxd's pin.
 *
 * The kernel's structures it reads are declared in ../../bpf/kernel.h. */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "../execs-records.h"
#include "../../bpf/kernel.h"


struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EXECS_NAMES_MAX);
	__type(key, struct execs_name);
	__type(value, __u8);
} names SEC(".maps");

/* The processes in ccxd's table: a bit each, by tgid, for every pid the
 * kernel gives out (the loader sizes it from pid_max), so that it never
 * fills up. An array map, whose lookup the verifier inlines; ccxd maps it
 * and sets the bits in its own memory, with no system call. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);    /* set by the loader from pid_max */
	__type(key, __u32);
	__type(value, __u64);
} known SEC(".maps");

/* The execs reported at their rename (execs-records.h): not reported again
 * at their end, and, to ccxd, whether the new program can have run before
 * ccxd's pin (execs_pinned_first()). By the task's start too: a pid reused
 * after an exec that failed past its point of no return is another task. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, EXECS_RUNNING_SLOTS);
	__type(key, __u32);
	__type(value, struct execs_running);
} running SEC(".maps");

/* The pin ccxd set last, as its exec began or named the task: the exec's
 * end notes whether the task holds it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct execs_pin);
} pin SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct execs_settings);
} settings SEC(".maps");

/* Records that found the ring full: ccxd rescans /proc when this grows. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} dropped SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} records SEC(".maps");

static int is_known(__u32 tgid) {
	__u32 word = tgid / 64;
	__u64 *bits = bpf_map_lookup_elem(&known, &word);

	return bits && (*bits >> (tgid % 64)) & 1;
}

/* task's pid's inode in pidfs (Linux 6.9 and later), or 0. */
static __u64 pid_ino(struct task_struct *task) {
	return bpf_core_field_exists(((struct pid *)0)->ino) ? BPF_CORE_READ(task, thread_pid, ino) : 0;
}

/* task: the current one. Its affinity and start go with the record, so that
 * ccxd pins it first and opens its pidfd after (placements.h). */
static void report(struct task_struct *task, __u32 tgid, __u32 kind, const struct execs_name *name, __u64 exec_ns) {
	struct execs_record *rec = bpf_ringbuf_reserve(&records, sizeof(*rec), 0);
	__u32 zero = 0, size = bpf_core_field_size(task->cpus_mask);

	if (!rec) {
		__u64 *n = bpf_map_lookup_elem(&dropped, &zero);
		if (n)
			__sync_fetch_and_add(n, 1);
		return;
	}
	rec->at_ns = bpf_ktime_get_ns();
	rec->start_ns = BPF_CORE_READ(task, start_boottime);
	/* The leader's, the only task to report: its pid is the process's. */
	rec->pid_ino = pid_ino(task);
	rec->exec_ns = exec_ns;
	rec->tgid = tgid;
	rec->kind = kind;
	rec->ppid = BPF_CORE_READ(task, real_parent, tgid);
	rec->pad = 0;
	__builtin_memcpy(rec->comm, name->comm, sizeof(rec->comm));
	__builtin_memset(rec->mask, 0, sizeof(rec->mask));
	if (size > sizeof(rec->mask))
		size = sizeof(rec->mask);
	bpf_probe_read_kernel(rec->mask, size, &task->cpus_mask);
	bpf_ringbuf_submit(rec, 0);
}

/* tgid's slot, when it holds task's exec under way: written as the exec
 * was first reported. */
static struct execs_running *under_way(struct task_struct *task, __u32 tgid) {
	__u32 slot = tgid & (EXECS_RUNNING_SLOTS - 1);
	struct execs_running *run = bpf_map_lookup_elem(&running, &slot);

	if (!run || run->tgid != tgid || run->start_ns != BPF_CORE_READ(task, start_boottime) ||
	    (run->word & EXECS_RUN_STATE) != EXECS_RUN_UNDER_WAY)
		return 0;
	return run;
}

/* Marks task's exec, first reported now, under way in tgid's slot, before
 * the record, which publishes it (ccxd reads the word alone, written
 * whole). Returns the exec's id. */
static __u64 mark_under_way(struct task_struct *task, __u32 tgid) {
	__u32 slot = tgid & (EXECS_RUNNING_SLOTS - 1);
	struct execs_running *run = bpf_map_lookup_elem(&running, &slot);
	__u64 now = bpf_ktime_get_ns();

	if (run) {
		run->tgid = tgid;
		run->start_ns = BPF_CORE_READ(task, start_boottime);
		run->exec_ns = now;
		run->word = pid_ino(task) << EXECS_RUN_INO_SHIFT | EXECS_RUN_UNDER_WAY;
	}
	return now;
}

/* Whether ccxd pinned the exec in run as it began: it decides it there. */
static int pinned_as_it_began(struct task_struct *task, const struct execs_running *run) {
	__u32 zero = 0;
	struct execs_pin *p = bpf_map_lookup_elem(&pin, &zero);
	__u64 ino = pid_ino(task);

	return p && ino && p->pid_ino == ino && p->exec_ns == run->exec_ns;
}

/* task_rename(task, comm): comm is the new name, not yet cut to 15 bytes.
 * Renames other than an exec's (prctl(PR_SET_NAME), /proc/PID/comm) come
 * through the proc connector. */
SEC("raw_tp/task_rename")
int on_rename(struct bpf_raw_tracepoint_args *ctx) {
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	struct execs_name name = {};
	__u64 id = bpf_get_current_pid_tgid();
	struct execs_running *run;
	__u64 exec_ns;
	__u8 *when;

	if (!bpf_core_field_exists(task->in_execve) || (void *)task != (void *)bpf_get_current_task() ||
	    !BPF_CORE_READ_BITFIELD_PROBED(task, in_execve) || (__u32)id != (__u32)(id >> 32))
		return 0;
	bpf_probe_read_kernel_str(name.comm, EXECS_COMM_LEN, (const char *)ctx->args[1]);
	when = bpf_map_lookup_elem(&names, &name);
	if (!when || *when != EXECS_AT_RENAME)
		return 0;
	/* Reported as it began (its slot under way): where ccxd pinned it
	 * then, it decided it too, and this record would only wake it. */
	run = under_way(task, (__u32)id);
	if (run && pinned_as_it_began(task, run)) {
		run->word |= EXECS_RUN_LEFT_OUT;
		return 0;
	}
	exec_ns = run ? run->exec_ns : mark_under_way(task, (__u32)id);
	report(task, (__u32)id, EXECS_REC_RENAME, &name, exec_ns);
	return 0;
}

#define PATH_BYTES 256     /* a power of two: offsets into it are masked */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[PATH_BYTES]);
} paths SEC(".maps");

/* sched_prepare_exec(task, bprm) (Linux 6.10 and later): the exec will
 * name the task after the last part of bprm's path, cut to 15 bytes; the
 * path is read back to front up to its last '/', which keeps the
 * verifier's states to one per byte. Another thread's exec takes the main
 * thread's pid later: its rename reports it. */
SEC("raw_tp/sched_prepare_exec")
int on_prepare(struct bpf_raw_tracepoint_args *ctx) {
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	struct linux_binprm *bprm = (struct linux_binprm *)ctx->args[1];
	struct execs_name name = {};
	__u64 id = bpf_get_current_pid_tgid();
	__u32 zero = 0, base = 0;
	char *path = bpf_map_lookup_elem(&paths, &zero);
	__u8 *when;
	long n;

	if (!path || (void *)task != (void *)bpf_get_current_task() || (__u32)id != (__u32)(id >> 32))
		return 0;
	n = bpf_probe_read_kernel_str(path, PATH_BYTES, BPF_CORE_READ(bprm, filename));
	if (n <= 1)
		return 0;
	for (__u32 i = 1; i < PATH_BYTES; i++) {
		if (i >= n)
			break;
		if (path[(n - 1 - i) & (PATH_BYTES - 1)] == '/') {
			base = (__u32)(n - i);
			break;
		}
	}
	for (__u32 i = 0; i < EXECS_COMM_LEN - 1; i++) {
		char c = path[(base + i) & (PATH_BYTES - 1)];
		if (c == 0 || base + i >= n)
			break;
		name.comm[i] = c;
	}
	when = bpf_map_lookup_elem(&names, &name);
	if (when && *when == EXECS_AT_RENAME)
		report(task, (__u32)id, EXECS_REC_ENTER, &name, mark_under_way(task, (__u32)id));
	return 0;
}

/* Whether task, whose exec in run ends, holds the pin ccxd set on it: the
 * new program's threads, all made after this, inherit the mask read here
 * or a later one. */
static int holds_pin(struct task_struct *task, const struct execs_running *run) {
	__u32 zero = 0, size = bpf_core_field_size(task->cpus_mask);
	struct execs_pin *p = bpf_map_lookup_elem(&pin, &zero);
	__u64 mask[EXECS_MASK_WORDS] = {}, ino = pid_ino(task);

	if (!p || !ino || p->pid_ino != ino || p->exec_ns != run->exec_ns)
		return 0;
	if (size > sizeof(mask))
		size = sizeof(mask);
	bpf_probe_read_kernel(mask, size, &task->cpus_mask);
	for (int i = 0; i < EXECS_MASK_WORDS; i++)
		if (mask[i] != p->mask[i])
			return 0;
	return 1;
}

/* sched_process_exec(task, old_pid, bprm): the exec is done; task is the
 * current one, and the leader of its thread group. */
SEC("raw_tp/sched_process_exec")
int on_exec_end(struct bpf_raw_tracepoint_args *ctx) {
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	struct execs_name name = {};
	__u32 tgid = (__u32)(bpf_get_current_pid_tgid() >> 32), zero = 0;
	struct execs_settings *s = bpf_map_lookup_elem(&settings, &zero);
	struct execs_running *run = under_way(task, tgid);

	/* Reported already. (A later exec of the same task that was not
	 * finds the slot marked done, and is looked at below.) From here on
	 * the new program may run and make threads: marked before. */
	if (run) {
		run->word = (run->word & ~EXECS_RUN_STATE) | (holds_pin(task, run) ? EXECS_RUN_HELD : EXECS_RUN_ENDED);
		return 0;
	}
	bpf_get_current_comm(name.comm, EXECS_COMM_LEN);
	if ((s && s->every) || is_known(tgid) || bpf_map_lookup_elem(&names, &name))
		report(task, tgid, EXECS_REC_END, &name, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
