#include "reader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

/* A thread of an active process at the previous sample. */
struct thread_seen {
	pid_t tid;
	uint64_t ns;               /* running, and runnable waiting for a CPU */
	bool have_ns;              /* ns was read (several threads, and schedstat) */
	int schedstat_fd, status_fd;   /* kept open (keep()); -1 if not */
};

/* The processes read in one read of the batch iterator. */
struct batch {
	struct taskiter_batch_entry *e;   /* by pid */
	size_t n, next;            /* next: where reader_batched() has come to */
	uint64_t usec;             /* when they were read */
};

struct reader {
	const char *root;
	struct taskiter *bpf;      /* NULL: everything is read from /proc */
	bool batch;                /* those active at the previous sample in one read (bpf) */
	char note[320];            /* why it reads further down than asked; "" when it does not */
	size_t n_kept, max_kept;   /* /proc fds and iterator links kept open, and how many may be */
	struct batch batched;      /* this sample's batch, until reader_batch_free() */
};

/* From now on reads each active process through iterators of its own, or
 * everything from /proc; why goes into the note. */
static void read_each(struct reader *rd, const char *why) {
	rd->batch = false;
	snprintf(rd->note, sizeof(rd->note), "%s", why);
}

static void read_proc(struct reader *rd, const char *why) {
	taskiter_free(rd->bpf);
	rd->bpf = NULL;
	read_each(rd, why);
}

int reader_new(const char *root, enum sampler_reading want, struct reader **ret) {
	struct reader *rd = calloc(1, sizeof(*rd));
	int r;

	if (!rd)
		return -ENOMEM;
	rd->root = root;
	/* Half of the fds for kept /proc files: the rest is for pidfds,
	 * clients and the rest of ccxd. */
	struct rlimit rl;
	rd->max_kept = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? rl.rlim_cur / 2 : 512;
	if (want == SAMPLER_READ_PROC || *root) {
		*ret = rd;
		return 0;
	}
	r = taskiter_new(want == SAMPLER_READ_BATCH, &rd->bpf);
	if (r < 0) {
		snprintf(rd->note, sizeof(rd->note), "no BPF task iterators (%s): active processes are read from /proc",
			 strerror(-r));
		log_info("Sampling: %s", rd->note);
		rd->bpf = NULL;
	} else if (taskiter_no_batch(rd->bpf)) {
		snprintf(rd->note, sizeof(rd->note), "%s: each active process is read through iterators of its own, "
			 "at more CPU per sample (bpf = per-process skips the attempt)", taskiter_no_batch(rd->bpf));
		log_info("Sampling: %s", rd->note);
	}
	rd->batch = rd->bpf && taskiter_can_batch(rd->bpf);
	*ret = rd;
	return 0;
}

void reader_free(struct reader *rd) {
	if (!rd)
		return;
	taskiter_free(rd->bpf);
	free(rd);
}

enum sampler_reading reader_reading(const struct reader *rd) {
	return rd->batch ? SAMPLER_READ_BATCH : rd->bpf ? SAMPLER_READ_EACH : SAMPLER_READ_PROC;
}

const char *reader_note(const struct reader *rd) {
	return rd->note[0] ? rd->note : NULL;
}

const char *reader_source(const struct reader *rd) {
	return rd->bpf ? "bpf" : "proc";
}

/* ---- /proc files kept open ------------------------------------------- */

/* The fd of /proc/PID/NAME (of thread TID when tid > 0) in *fd, opened
 * unless it is open already: reading an active process's files through fds
 * kept open from sample to sample costs a third of opening, reading and
 * closing them each time. An fd is bound to the process it was opened for,
 * so one kept across a pid's reuse reads -ESRCH, never the newcomer. */
static int keep(struct reader *rd, int *fd, pid_t pid, pid_t tid, const char *name) {
	if (*fd < 0) {
		*fd = procfs_open(rd->root, pid, tid, name);
		if (*fd >= 0)
			rd->n_kept++;
	}
	return *fd;
}

/* keep() for an iterator link of pid's threads or files. */
static int keep_link(struct reader *rd, int *fd, pid_t pid, enum taskiter_kind kind) {
	if (*fd < 0) {
		*fd = taskiter_open(rd->bpf, pid, kind);
		if (*fd >= 0)
			rd->n_kept++;
	}
	return *fd;
}

static void let_go(struct reader *rd, int *fd) {
	if (*fd >= 0) {
		close(*fd);
		rd->n_kept--;
		*fd = -1;
	}
}

/* After a read through keep()'s fd, with its result: a failed read leaves
 * nothing worth keeping, and past the budget of kept fds each is closed
 * after its read, as if never kept. */
static void settle(struct reader *rd, int *fd, int r) {
	if (r < 0 || rd->n_kept > rd->max_kept)
		let_go(rd, fd);
}

static void let_go_threads(struct reader *rd, struct seen *seen) {
	for (size_t t = 0; t < seen->n_threads; t++) {
		let_go(rd, &seen->threads[t].schedstat_fd);
		let_go(rd, &seen->threads[t].status_fd);
	}
}

void reader_close(struct reader *rd, struct seen *seen, size_t n) {
	for (size_t i = 0; i < n; i++) {
		let_go(rd, &seen[i].stat_fd);
		let_go(rd, &seen[i].schedstat_fd);
		let_go(rd, &seen[i].io_fd);
		let_go(rd, &seen[i].fd_dir);
		let_go(rd, &seen[i].task_dir);
		let_go(rd, &seen[i].threads_link);
		let_go(rd, &seen[i].files_link);
		let_go_threads(rd, &seen[i]);
		free(seen[i].threads);
	}
}

int reader_read_stat(struct reader *rd, pid_t pid, int *fd, struct procfs_stat *st) {
	int r = *fd >= 0 ? procfs_pread_stat(*fd, pid, st) : -ESRCH;

	if (r < 0) {
		let_go(rd, fd);
		r = keep(rd, fd, pid, 0, "stat");
		if (r >= 0)
			r = procfs_pread_stat(r, pid, st);
	}
	settle(rd, fd, r);
	return r;
}

int reader_read_schedstat(struct reader *rd, pid_t pid, int *fd, struct procfs_schedstat *ss) {
	int r = *fd >= 0 ? procfs_pread_schedstat(*fd, ss) : -ESRCH;

	if (r < 0) {
		let_go(rd, fd);
		r = keep(rd, fd, pid, 0, "schedstat");
		if (r >= 0)
			r = procfs_pread_schedstat(r, ss);
	}
	settle(rd, fd, r);
	return r;
}

/* ---- an active process ---------------------------------------------- */

/* A process whose fds were not ours to read is tried again this many
 * samples later: permission is decided per process and seldom changes, and
 * each try would cost a listing of its fds. */
#define FDS_RETRY_SAMPLES 64

static int compare_thread(const void *a, const void *b) {
	pid_t x = ((const struct thread_seen *)a)->tid, y = ((const struct thread_seen *)b)->tid;

	return (x > y) - (x < y);
}

/* Whether thread t, read now, was busy since hit, its reading at the
 * previous sample (NULL: born since, all of its time is new). */
static bool thread_busy(const struct thread_seen *hit, const struct thread_seen *t, double window_s) {
	uint64_t wanted = hit && hit->have_ns && t->ns >= hit->ns ? t->ns - hit->ns : t->ns;

	return (double)wanted / 1e9 / window_s >= SAMPLER_BUSY_THREAD;
}

/* How many of an active process's threads (tids) were busy: ran, or
 * waited to run, SAMPLER_BUSY_THREAD of the window or more. Waiting counts
 * because a thread that wants a CPU needs one whether or not a crowded
 * machine gave it one, and so the CPU the process got says nothing of how
 * many threads wanted one. schedstat has the time to the nanosecond, where
 * CPU time comes in 10 ms ticks. The first time its threads are read is
 * their baseline: 0, not measured. Each thread's fds move from before's
 * entry to now's; a single thread is recorded only, for read_switches(). */
static unsigned read_threads(struct reader *rd, struct seen *before, struct seen *now, const pid_t *tids, size_t n,
			     double window_s) {
	bool baseline = before && before->threads;
	unsigned busy = 0;

	now->threads = calloc(n, sizeof(*now->threads));
	for (size_t i = 0; now->threads && i < n; i++) {
		struct thread_seen key = { .tid = tids[i] }, *hit = NULL, *t = &now->threads[now->n_threads];
		struct procfs_schedstat ss;
		int r;

		if (baseline)
			hit = bsearch(&key, before->threads, before->n_threads, sizeof(key), compare_thread);
		*t = (struct thread_seen){ .tid = tids[i], .schedstat_fd = -1, .status_fd = -1 };
		if (hit) {
			t->schedstat_fd = hit->schedstat_fd;
			t->status_fd = hit->status_fd;
			hit->schedstat_fd = hit->status_fd = -1;
		}
		now->n_threads++;
		if (n < 2)
			break;
		r = keep(rd, &t->schedstat_fd, now->pid, t->tid, "schedstat");
		if (r >= 0)
			r = procfs_pread_schedstat(r, &ss);
		settle(rd, &t->schedstat_fd, r);
		if (r < 0)
			continue;   /* ended meanwhile, or a kernel without schedstat */
		t->have_ns = true;
		t->ns = ss.run_ns + ss.wait_ns;
		if (thread_busy(hit, t, window_s))
			busy++;
	}
	if (now->n_threads > 1)
		qsort(now->threads, now->n_threads, sizeof(*now->threads), compare_thread);
	return baseline ? busy : 0;
}

/* Wake-ups (voluntary switches: each sleep ends in one) and all context
 * switches per second of a process's threads since they were last read,
 * which may be several samples ago; now's counters become the next
 * baseline. A thread that ended takes its counts with it: a sum that fell
 * gives no figure. */
static void switch_rates(struct seen *now, struct sampler_process *p, const struct procfs_switches *sw,
			 uint64_t read_usec) {
	if (now->have_switches && read_usec > now->switches_usec && sw->voluntary >= now->switches.voluntary &&
	    sw->involuntary >= now->switches.involuntary) {
		double span = (double)(read_usec - now->switches_usec) / 1e6;
		uint64_t vol = sw->voluntary - now->switches.voluntary;
		uint64_t invol = sw->involuntary - now->switches.involuntary;
		p->wakeups_per_s = (double)vol / span;
		p->switches_per_s = (double)(vol + invol) / span;
	}
	now->have_switches = true;
	now->switches = *sw;
	now->switches_usec = read_usec;
}

/* Through each thread's status: the dearest file of /proc, every mask of
 * the task printed into it. */
static void read_switches(struct reader *rd, struct seen *now, struct sampler_process *p) {
	struct procfs_switches sw = { 0 };

	for (size_t t = 0; t < now->n_threads; t++) {
		struct thread_seen *th = &now->threads[t];
		struct procfs_switches one;
		int r = keep(rd, &th->status_fd, now->pid, th->tid, "status");

		if (r >= 0)
			r = procfs_pread_switches(r, &one);
		settle(rd, &th->status_fd, r);
		if (r < 0)
			continue;   /* ended meanwhile */
		sw.voluntary += one.voluntary;
		sw.involuntary += one.involuntary;
	}
	switch_rates(now, p, &sw, util_usec(CLOCK_MONOTONIC));
}

/* Bytes through read(2) and write(2) per second since they were last read,
 * from io read at read_usec: the clock at that very read, since a rate over
 * the time the timer meant to pass would be off by however late this cycle
 * ran, which depends on how busy the CPUs are, and so on the very placement
 * being measured. */
static void io_rates(struct seen *now, struct sampler_process *p, const struct procfs_io *io, uint64_t read_usec) {
	if (now->have_io && read_usec > now->io_usec) {
		double span = (double)(read_usec - now->io_usec) / 1e6;
		/* Less than before where a thread ended (its bytes were its own). */
		p->read_bps = io->rchar > now->io.rchar ? (double)(io->rchar - now->io.rchar) / span : 0;
		p->write_bps = io->wchar > now->io.wchar ? (double)(io->wchar - now->io.wchar) / span : 0;
	}
	now->have_io = true;
	now->io = *io;
	now->io_usec = read_usec;
}

/* A process's own read(2)/write(2) bytes. With one thread, that thread's
 * (task/PID/io): /proc/PID/io adds those of the children it reaped, all at
 * once as it reaps them, which would make a shell that waits for a busy
 * child seem to move what the child moved. With several threads, the whole
 * process's, children included: reading each thread's would cost a file
 * per thread. */
static void read_io(struct reader *rd, struct seen *now, struct sampler_process *p, unsigned threads) {
	bool own = threads <= 1;
	struct procfs_io io;
	int r;

	if (now->io_own != own) {   /* other counts: a new baseline */
		let_go(rd, &now->io_fd);
		now->have_io = false;
		now->io_own = own;
	}
	r = keep(rd, &now->io_fd, now->pid, own ? now->pid : 0, "io");

	if (r >= 0)
		r = procfs_pread_io(r, &io);
	settle(rd, &now->io_fd, r);
	if (r >= 0)
		io_rates(now, p, &io, util_usec(CLOCK_MONOTONIC));
}

/* The pipe and socket fds of an active process, into *fds (n_fds). One
 * whose fds are not ours to read is left out, and not tried again for a
 * while. */
static int read_fds(struct reader *rd, uint64_t cycle, struct seen *now, struct procfs_fd **fds, size_t *n_fds) {
	int r;

	if (cycle < now->fds_retry_cycle)
		return 0;
	r = keep(rd, &now->fd_dir, now->pid, 0, "fd");
	if (r >= 0)
		r = procfs_list_fds_at(r, fds, n_fds);
	settle(rd, &now->fd_dir, r);
	if (r == -EACCES)
		now->fds_retry_cycle = cycle + FDS_RETRY_SAMPLES;
	if (r < 0 && r != -ENOMEM)
		return 0;   /* gone, or not ours to read */
	return r;
}

/* The threads of an active process through its BPF threads iterator. */
static int read_threads_bpf(struct reader *rd, struct seen *now, struct taskiter_process *tp) {
	int r = keep_link(rd, &now->threads_link, now->pid, TASKITER_THREADS);

	if (r >= 0)
		r = taskiter_read_threads(r, now->start_time, tp);
	settle(rd, &now->threads_link, r);
	return r;
}

/* What was read of an active process through BPF into now and p: its
 * threads, io and switches (tp), read at read_usec. Takes tp's threads.
 * The switches are kept for reader_read_switches(). */
static int take_bpf(const struct seen *before, struct seen *now, struct sampler_process *p, double window_s,
		    struct taskiter_process *tp, uint64_t read_usec) {
	bool baseline = before && before->threads;
	unsigned busy = 0;

	now->threads = calloc(tp->n_threads, sizeof(*now->threads));
	if (!now->threads) {
		free(tp->threads);
		return -ENOMEM;
	}
	for (size_t i = 0; i < tp->n_threads; i++) {
		struct thread_seen *t = &now->threads[i], *hit = NULL;
		*t = (struct thread_seen){ .tid = tp->threads[i].tid, .ns = tp->threads[i].ns, .have_ns = true,
					   .schedstat_fd = -1, .status_fd = -1 };
		if (baseline)
			hit = bsearch(t, before->threads, before->n_threads, sizeof(*t), compare_thread);
		if (tp->n_threads > 1 && thread_busy(hit, t, window_s))
			busy++;
	}
	now->n_threads = tp->n_threads;
	free(tp->threads);
	p->busy_threads = baseline ? busy : 0;
	io_rates(now, p, &tp->io, read_usec);
	now->have_fresh_switches = true;
	now->fresh_switches = tp->switches;
	now->fresh_usec = read_usec;
	return 0;
}

/* reader_read_active() through the process's BPF iterators: its pipe and
 * socket fds in one read, which for a single-threaded process also has its
 * times, switches and I/O bytes; those of a process with several threads
 * in another. -EOPNOTSUPP when the iterators could not be read: then /proc
 * is. */
static int read_active_bpf(struct reader *rd, struct seen *before, struct seen *now, struct sampler_process *p,
			   double window_s, struct procfs_fd **fds, size_t *n_fds) {
	struct taskiter_process tp;
	int r = keep_link(rd, &now->files_link, now->pid, TASKITER_FILES);

	if (r >= 0)
		r = taskiter_read_files(r, now->start_time, fds, n_fds, &tp);
	settle(rd, &now->files_link, r);
	if (r >= 0 && tp.n_threads == 0)
		r = read_threads_bpf(rd, now, &tp);
	uint64_t read_usec = util_usec(CLOCK_MONOTONIC);
	if (r < 0) {
		free(*fds);
		*fds = NULL;
		*n_fds = 0;
	}
	if (r == -ESRCH)
		return 0;   /* ended meanwhile */
	if (r == -ENOMEM)
		return r;
	if (r == -EMFILE || r == -ENFILE)
		return -EOPNOTSUPP;   /* /proc reads, one file at a time */
	if (r < 0) {
		char why[128];
		snprintf(why, sizeof(why), "reading process %d through BPF iterators failed (%s): /proc from now on",
			 (int)now->pid, strerror(-r));
		log_warning("Sampling: %s", why);
		read_proc(rd, why);
		return -EOPNOTSUPP;
	}
	return take_bpf(before, now, p, window_s, &tp, read_usec);
}

void reader_carry_counters(struct seen *now, const struct seen *before) {
	now->have_io = before->have_io;
	now->io_own = before->io_own;
	now->io = before->io;
	now->io_usec = before->io_usec;
	now->have_switches = before->have_switches;
	now->switches = before->switches;
	now->switches_usec = before->switches_usec;
	now->fds_retry_cycle = before->fds_retry_cycle;
}

int reader_read_active(struct reader *rd, uint64_t cycle, struct seen *before, struct seen *now,
		       const struct procfs_stat *st, struct taskiter_batch_entry *batched, struct sampler_process *p,
		       double window_s, struct procfs_fd **fds, size_t *n_fds) {
	pid_t *tids = NULL, pid = now->pid;
	size_t n_tids = 0;
	int r;

	*fds = NULL;
	*n_fds = 0;
	if (before) {   /* what it kept open moves to this sample's entry */
		now->io_fd = before->io_fd;
		now->fd_dir = before->fd_dir;
		now->task_dir = before->task_dir;
		now->threads_link = before->threads_link;
		now->files_link = before->files_link;
		before->io_fd = before->fd_dir = before->task_dir = before->threads_link = before->files_link = -1;
	}
	if (batched) {   /* read already, with the others of the batch */
		struct taskiter_process tp = batched->process;
		*fds = batched->fds;
		*n_fds = batched->n_fds;
		batched->process.threads = NULL;   /* threads are take_bpf()'s now, fds the caller's */
		batched->fds = NULL;
		return take_bpf(before, now, p, window_s, &tp, rd->batched.usec);
	}
	if (rd->bpf) {
		r = read_active_bpf(rd, before, now, p, window_s, fds, n_fds);
		if (r != -EOPNOTSUPP)
			return r;
	}
	if (st->threads > 1) {
		r = keep(rd, &now->task_dir, pid, 0, "task");
		if (r >= 0)
			r = procfs_list_tasks_at(r, &tids, &n_tids);
		settle(rd, &now->task_dir, r);
	}
	p->busy_threads = n_tids ? read_threads(rd, before, now, tids, n_tids, window_s)
				 : read_threads(rd, before, now, &pid, 1, window_s);
	free(tids);
	if (!now->threads)
		return -ENOMEM;
	read_io(rd, now, p, (unsigned)st->threads);
	return read_fds(rd, cycle, now, fds, n_fds);
}

void reader_read_switches(struct reader *rd, struct seen *seen, struct sampler_process *p) {
	if (seen->have_fresh_switches)
		switch_rates(seen, p, &seen->fresh_switches, seen->fresh_usec);
	else
		read_switches(rd, seen, p);
}

void reader_skip_switches(struct reader *rd, struct seen *seen) {
	/* Not read, so not a baseline either. */
	seen->have_switches = false;
	for (size_t t = 0; t < seen->n_threads; t++)
		let_go(rd, &seen->threads[t].status_fd);
}

/* ---- the batch ------------------------------------------------------- */

static void batch_free(struct batch *b) {
	for (size_t i = 0; i < b->n; i++) {
		free(b->e[i].fds);
		free(b->e[i].process.threads);
	}
	free(b->e);
}

int reader_read_batch(struct reader *rd, struct taskiter_batch_entry *e, size_t n, struct seen *seen) {
	struct batch *b = &rd->batched;
	int r;

	*b = (struct batch){ .e = e, .n = n };
	r = taskiter_read_batch(rd->bpf, b->e, b->n);
	b->usec = util_usec(CLOCK_MONOTONIC);
	if (r < 0 && r != -ENOMEM) {
		char why[128];
		snprintf(why, sizeof(why), "reading through the BPF batch iterator failed (%s): one by one from now on",
			 strerror(-r));
		log_warning("Sampling: %s", why);
		read_each(rd, why);
		r = 0;
	}
	if (!rd->batch || r < 0) {
		batch_free(b);
		*b = (struct batch){ .e = NULL };
		return r;
	}
	for (size_t i = 0, k = 0; i < b->n; i++) {
		struct taskiter_batch_entry *entry = &b->e[i];
		if (entry->r < 0 || entry->stat_only || entry->process.n_threads > 0)
			continue;
		while (seen[k].pid != entry->pid)   /* both by pid, every entry from seen */
			k++;
		r = read_threads_bpf(rd, &seen[k], &entry->process);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			entry->r = r;   /* then read as any other, from its stat */
	}
	return 0;
}

/* b->next walks along. */
struct taskiter_batch_entry *reader_batched(struct reader *rd, pid_t pid) {
	struct batch *b = &rd->batched;

	while (b->next < b->n && b->e[b->next].pid < pid)
		b->next++;
	return b->next < b->n && b->e[b->next].pid == pid && b->e[b->next].r == 0 ? &b->e[b->next] : NULL;
}

void reader_batch_free(struct reader *rd) {
	batch_free(&rd->batched);
	rd->batched = (struct batch){ .e = NULL };
}
