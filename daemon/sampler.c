#include "sampler.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include "channels.h"
#include "cpuload.h"
#include "log.h"
#include "peers.h"
#include "taskiter.h"

/* A thread of an active process at the previous sample. */
struct thread_seen {
	pid_t tid;
	uint64_t ns;               /* running, and runnable waiting for a CPU */
	bool have_ns;              /* ns was read (several threads, and schedstat) */
	int schedstat_fd, status_fd;   /* kept open (keep()); -1 if not */
};

/* What was seen of a process at the previous sample. */
struct seen {
	pid_t pid;
	uint64_t start_time;
	uint64_t ticks;            /* utime + stime */
	uint64_t ticks_usec;       /* when they were read: several samples ago for the long idle */
	uint64_t run_ns;           /* its CPU time to the nanosecond, when read in the batch; else 0 */
	uint64_t busy_cycle;       /* the sample that last saw its CPU time grow (or first saw it) */
	bool kthread;              /* a kernel thread: never placed, looked at only for pid reuse */
	bool active;               /* used CPU in that window */
	int stat_fd;               /* its /proc/PID/stat, kept open for every process; -1 if none */
	int io_fd, fd_dir, task_dir;   /* kept open while it is active; -1 if not */
	int threads_link, files_link;  /* its BPF iterators (taskiter), kept the same way */
	uint64_t fds_retry_cycle;  /* its fds were not ours to read: the sample to try again */
	bool have_io;
	struct procfs_io io;       /* read at io_usec, which may be several samples ago */
	uint64_t io_usec;
	bool have_switches;
	struct procfs_switches switches; /* of all its threads, read at switches_usec */
	uint64_t switches_usec;
	bool have_fresh_switches;  /* read along with its threads this sample, at fresh_usec */
	struct procfs_switches fresh_switches;
	uint64_t fresh_usec;
	struct thread_seen *threads; /* read at that sample, by tid; NULL when it was not active */
	size_t n_threads;
};

struct sampler {
	const char *root;
	pid_t self;                /* ccxd places others, never itself */
	long ticks_per_s;
	struct seen *seen;
	size_t n_seen;
	uint64_t last_usec;
	uint64_t cycle;            /* samples taken */
	pid_t last_pid;            /* the pid given out last, when /proc was last listed */
	off_t pid_offset;          /* what /proc adds to a pid to make its entry's position; -1: unknown */
	bool have_baseline;
	struct cpuload *cpuload;
	struct peers *peers;       /* who is at the other end of sockets */
	struct taskiter *bpf;      /* NULL: everything is read from /proc */
	bool batch;                /* those active at the previous sample in one read (bpf) */
	char note[320];            /* why it reads further down than asked; "" when it does not */
	size_t n_kept, max_kept;   /* /proc fds and iterator links kept open, and how many may be */
};

const char *channel_kind_to_string(enum channel_kind k) {
	switch (k) {
	case CHANNEL_PIPE: return "pipe";
	case CHANNEL_UNIX: return "unix";
	case CHANNEL_TCP: return "tcp";
	case CHANNEL_THREADS: return "threads";
	}
	return "unknown";
}

const char *sampler_reading_to_string(enum sampler_reading r) {
	switch (r) {
	case SAMPLER_READ_BATCH: return "batch";
	case SAMPLER_READ_EACH: return "per-process";
	case SAMPLER_READ_PROC: return "proc";
	}
	return "unknown";
}

/* From now on reads each active process through iterators of its own, or
 * everything from /proc; why goes into the note. */
static void read_each(struct sampler *s, const char *why) {
	s->batch = false;
	snprintf(s->note, sizeof(s->note), "%s", why);
}

static void read_proc(struct sampler *s, const char *why) {
	taskiter_free(s->bpf);
	s->bpf = NULL;
	read_each(s, why);
}

int sampler_new(const char *root, enum sampler_reading want, struct sampler **ret) {
	struct sampler *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->root = root;
	s->self = getpid();
	s->pid_offset = -1;
	s->ticks_per_s = sysconf(_SC_CLK_TCK);
	if (s->ticks_per_s <= 0)
		s->ticks_per_s = 100;
	/* Half of the fds for kept /proc files: the rest is for pidfds,
	 * clients and the rest of ccxd. */
	struct rlimit rl;
	s->max_kept = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? rl.rlim_cur / 2 : 512;
	r = peers_new(&s->peers);
	if (r >= 0)
		r = cpuload_new(root, &s->cpuload);
	if (r < 0) {
		sampler_free(s);
		return r;
	}
	if (want == SAMPLER_READ_PROC || *root) {
		*ret = s;
		return 0;
	}
	r = taskiter_new(want == SAMPLER_READ_BATCH, &s->bpf);
	if (r < 0) {
		snprintf(s->note, sizeof(s->note), "no BPF task iterators (%s): active processes are read from /proc",
			 strerror(-r));
		log_info("Sampling: %s", s->note);
		s->bpf = NULL;
	} else if (taskiter_no_batch(s->bpf)) {
		snprintf(s->note, sizeof(s->note), "%s: each active process is read through iterators of its own, "
			 "at more CPU per sample (bpf = per-process skips the attempt)", taskiter_no_batch(s->bpf));
		log_info("Sampling: %s", s->note);
	}
	s->batch = s->bpf && taskiter_can_batch(s->bpf);
	*ret = s;
	return 0;
}

enum sampler_reading sampler_reading(const struct sampler *s) {
	return s->batch ? SAMPLER_READ_BATCH : s->bpf ? SAMPLER_READ_EACH : SAMPLER_READ_PROC;
}

const char *sampler_note(const struct sampler *s) {
	return s->note[0] ? s->note : NULL;
}

const char *sampler_source(const struct sampler *s) {
	return s->bpf ? "bpf" : "proc";
}

/* ---- /proc files kept open ------------------------------------------- */

/* The fd of /proc/PID/NAME (of thread TID when tid > 0) in *fd, opened
 * unless it is open already: reading an active process's files through fds
 * kept open from sample to sample costs a third of opening, reading and
 * closing them each time. An fd is bound to the process it was opened for,
 * so one kept across a pid's reuse reads -ESRCH, never the newcomer. */
static int keep(struct sampler *s, int *fd, pid_t pid, pid_t tid, const char *name) {
	if (*fd < 0) {
		*fd = procfs_open(s->root, pid, tid, name);
		if (*fd >= 0)
			s->n_kept++;
	}
	return *fd;
}

/* keep() for an iterator link of pid's threads or files. */
static int keep_link(struct sampler *s, int *fd, pid_t pid, enum taskiter_kind kind) {
	if (*fd < 0) {
		*fd = taskiter_open(s->bpf, pid, kind);
		if (*fd >= 0)
			s->n_kept++;
	}
	return *fd;
}

static void let_go(struct sampler *s, int *fd) {
	if (*fd >= 0) {
		close(*fd);
		s->n_kept--;
		*fd = -1;
	}
}

/* After a read through keep()'s fd, with its result: a failed read leaves
 * nothing worth keeping, and past the budget of kept fds each is closed
 * after its read, as if never kept. */
static void settle(struct sampler *s, int *fd, int r) {
	if (r < 0 || s->n_kept > s->max_kept)
		let_go(s, fd);
}

static void let_go_threads(struct sampler *s, struct seen *seen) {
	for (size_t t = 0; t < seen->n_threads; t++) {
		let_go(s, &seen->threads[t].schedstat_fd);
		let_go(s, &seen->threads[t].status_fd);
	}
}

static void close_seen(struct sampler *s, struct seen *seen, size_t n) {
	for (size_t i = 0; i < n; i++) {
		let_go(s, &seen[i].stat_fd);
		let_go(s, &seen[i].io_fd);
		let_go(s, &seen[i].fd_dir);
		let_go(s, &seen[i].task_dir);
		let_go(s, &seen[i].threads_link);
		let_go(s, &seen[i].files_link);
		let_go_threads(s, &seen[i]);
		free(seen[i].threads);
	}
}

void sampler_free(struct sampler *s) {
	if (!s)
		return;
	peers_free(s->peers);
	close_seen(s, s->seen, s->n_seen);
	taskiter_free(s->bpf);
	free(s->seen);
	cpuload_free(s->cpuload);
	free(s);
}

void sampler_result_free(struct sampler_result *r) {
	if (!r)
		return;
	free(r->procs);
	free(r->channels);
	free(r->cpu_load);
	free(r);
}

long sampler_result_index(const struct sampler_result *res, pid_t pid) {
	size_t lo = 0, hi = res->n_procs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (res->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < res->n_procs && res->procs[lo].pid == pid ? (long)lo : -1;
}

/* pids, and the records that begin with one (struct seen). */
static int compare_pid(const void *a, const void *b) {
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}
_Static_assert(offsetof(struct seen, pid) == 0, "seen begins with its pid");


static void *grow(void *p, size_t *allocated, size_t n, size_t size) {
	void *q;

	if (n < *allocated)
		return p;
	q = realloc(p, (*allocated ? *allocated * 2 : 64) * size);
	if (q)
		*allocated = *allocated ? *allocated * 2 : 64;
	return q;
}

/* ---- step 1: which processes used CPU, and what they hold ------------- */

/* A process whose fds were not ours to read is tried again this many
 * samples later: permission is decided per process and seldom changes, and
 * each try would cost a listing of its fds. */
#define FDS_RETRY_SAMPLES 64

struct scan {
	struct seen *seen;         /* this sample's, to become s->seen */
	size_t n_seen, allocated_seen;
	size_t allocated_procs;
	struct endpoint *eps;      /* the pipe and socket fds of the active processes */
	size_t n_eps, allocated_eps;
};

static uint64_t monotonic_usec(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Used CPU since the previous sample. CPU time comes in clock ticks (10 ms):
 * a light stream, say 64 MiB/s through a pipe, costs its writer a tick or
 * two a second, so one quiet window does not end a process's activity. */
static bool is_active(const struct sampler *s, const struct seen *before, uint64_t used) {
	return s->have_baseline && (used > 0 || (before && before->active));
}

/* The clock ticks used since before; all of them for one born since. The
 * batch's figure may be a tick more than stat's (stat_of()): a process read
 * through stat and then through the batch (once after its birth) may seem
 * to have used a tick it did not, and is read as active once more. Not
 * counting that tick would hide a light process's first one for longer. */
static uint64_t ticks_used(const struct seen *before, const struct seen *now) {
	if (!before)
		return now->ticks;
	return now->ticks > before->ticks ? now->ticks - before->ticks : 0;
}

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
static unsigned read_threads(struct sampler *s, struct seen *before, struct seen *now, const pid_t *tids, size_t n,
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
		r = keep(s, &t->schedstat_fd, now->pid, t->tid, "schedstat");
		if (r >= 0)
			r = procfs_pread_schedstat(r, &ss);
		settle(s, &t->schedstat_fd, r);
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
static void read_switches(struct sampler *s, struct seen *now, struct sampler_process *p) {
	struct procfs_switches sw = { 0 };

	for (size_t t = 0; t < now->n_threads; t++) {
		struct thread_seen *th = &now->threads[t];
		struct procfs_switches one;
		int r = keep(s, &th->status_fd, now->pid, th->tid, "status");

		if (r >= 0)
			r = procfs_pread_switches(r, &one);
		settle(s, &th->status_fd, r);
		if (r < 0)
			continue;   /* ended meanwhile */
		sw.voluntary += one.voluntary;
		sw.involuntary += one.involuntary;
	}
	switch_rates(now, p, &sw, monotonic_usec());
}

/* Bytes through read(2) and write(2) per second since they were last read,
 * from io read at read_usec: the clock at that very read, since a rate over
 * the time the timer meant to pass would be off by however late this cycle
 * ran, which depends on how busy the CPUs are, and so on the very placement
 * being measured. */
static void io_rates(struct seen *now, struct sampler_process *p, const struct procfs_io *io, uint64_t read_usec) {
	if (now->have_io && read_usec > now->io_usec) {
		double span = (double)(read_usec - now->io_usec) / 1e6;
		p->read_bps = (double)(io->rchar - now->io.rchar) / span;
		p->write_bps = (double)(io->wchar - now->io.wchar) / span;
	}
	now->have_io = true;
	now->io = *io;
	now->io_usec = read_usec;
}

static void read_io(struct sampler *s, struct seen *now, struct sampler_process *p) {
	struct procfs_io io;
	int r = keep(s, &now->io_fd, now->pid, 0, "io");

	if (r >= 0)
		r = procfs_pread_io(r, &io);
	settle(s, &now->io_fd, r);
	if (r >= 0)
		io_rates(now, p, &io, monotonic_usec());
}

/* The pipe and socket fds of an active process (procs[proc]), into
 * sc->eps. One whose fds are not ours to read is left out, and not tried
 * again for a while. */
static int read_fds(struct sampler *s, struct scan *sc, struct seen *now, size_t proc) {
	struct procfs_fd *fds;
	size_t n_fds;
	int r;

	if (s->cycle < now->fds_retry_cycle)
		return 0;
	r = keep(s, &now->fd_dir, now->pid, 0, "fd");
	if (r >= 0)
		r = procfs_list_fds_at(r, &fds, &n_fds);
	settle(s, &now->fd_dir, r);
	if (r == -EACCES)
		now->fds_retry_cycle = s->cycle + FDS_RETRY_SAMPLES;
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return 0;   /* gone, or not ours to read */
	r = channels_add_endpoints(&sc->eps, &sc->n_eps, &sc->allocated_eps, fds, n_fds, proc);
	free(fds);
	return r;
}

/* The threads of an active process through its BPF threads iterator. */
static int read_threads_bpf(struct sampler *s, struct seen *now, struct taskiter_process *tp) {
	int r = keep_link(s, &now->threads_link, now->pid, TASKITER_THREADS);

	if (r >= 0)
		r = taskiter_read_threads(r, now->start_time, tp);
	settle(s, &now->threads_link, r);
	return r;
}

/* What was read of an active process through BPF into now and p: its
 * threads, io and switches (tp) and its fds, read at read_usec. Takes tp's
 * threads and fds. The switches are kept for switches_of_members(). */
static int take_bpf(struct scan *sc, const struct seen *before, struct seen *now, struct sampler_process *p,
		    size_t proc, double window_s, struct taskiter_process *tp, struct procfs_fd *fds, size_t n_fds,
		    uint64_t read_usec) {
	bool baseline = before && before->threads;
	unsigned busy = 0;
	int r;

	now->threads = calloc(tp->n_threads, sizeof(*now->threads));
	if (!now->threads) {
		free(tp->threads);
		free(fds);
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
	r = channels_add_endpoints(&sc->eps, &sc->n_eps, &sc->allocated_eps, fds, n_fds, proc);
	free(fds);
	return r;
}

/* read_active() through the process's BPF iterators: its pipe and socket
 * fds in one read, which for a single-threaded process also has its times,
 * switches and I/O bytes; those of a process with several threads in
 * another. -EOPNOTSUPP when the iterators could not be read: then /proc
 * is. */
static int read_active_bpf(struct sampler *s, struct scan *sc, struct seen *before, struct seen *now,
			   struct sampler_process *p, size_t proc, double window_s) {
	struct taskiter_process tp;
	struct procfs_fd *fds = NULL;
	size_t n_fds = 0;
	int r = keep_link(s, &now->files_link, now->pid, TASKITER_FILES);

	if (r >= 0)
		r = taskiter_read_files(r, now->start_time, &fds, &n_fds, &tp);
	settle(s, &now->files_link, r);
	if (r >= 0 && tp.n_threads == 0)
		r = read_threads_bpf(s, now, &tp);
	uint64_t read_usec = monotonic_usec();
	if (r < 0)
		free(fds);
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
		read_proc(s, why);
		return -EOPNOTSUPP;
	}
	return take_bpf(sc, before, now, p, proc, window_s, &tp, fds, n_fds, read_usec);
}

/* Reads what an active process did in the window into p: its threads,
 * its io and its fds (its context switches wait for its channels). */
static int read_active(struct sampler *s, struct scan *sc, struct seen *before, struct seen *now,
		       const struct procfs_stat *st, struct taskiter_batch_entry *batched, uint64_t batch_usec,
		       struct sampler_process *p, size_t proc, double window_s) {
	pid_t *tids = NULL, pid = now->pid;
	size_t n_tids = 0;
	int r;

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
		struct procfs_fd *fds = batched->fds;
		batched->process.threads = NULL;   /* both are take_bpf()'s now */
		batched->fds = NULL;
		return take_bpf(sc, before, now, p, proc, window_s, &tp, fds, batched->n_fds, batch_usec);
	}
	if (s->bpf) {
		r = read_active_bpf(s, sc, before, now, p, proc, window_s);
		if (r != -EOPNOTSUPP)
			return r;
	}
	if (st->threads > 1) {
		r = keep(s, &now->task_dir, pid, 0, "task");
		if (r >= 0)
			r = procfs_list_tasks_at(r, &tids, &n_tids);
		settle(s, &now->task_dir, r);
	}
	p->busy_threads = n_tids ? read_threads(s, before, now, tids, n_tids, window_s)
				 : read_threads(s, before, now, &pid, 1, window_s);
	free(tids);
	if (!now->threads)
		return -ENOMEM;
	read_io(s, now, p);
	return read_fds(s, sc, now, proc);
}

/* Whether to read a process's stat this sample. Most processes sleep most
 * of the time, and reading each one's stat is most of what a sample costs:
 * one idle for 3 samples is read every 4th, for 10 every 8th, and a kernel
 * thread every 8th (only to see its pid go to another process). Spread by
 * pid, so that each sample reads an even share. A process that wakes after
 * a long sleep is therefore noticed within 8 samples; a new one at once. */
static bool look_now(const struct sampler *s, const struct seen *before) {
	uint64_t idle = s->cycle - before->busy_cycle;
	unsigned period = before->kthread || idle >= 10 ? 8 : idle >= 3 ? 4 : 1;

	return (s->cycle + (uint64_t)before->pid) % period == 0;
}

/* Keeps what was seen of a process into this sample's list, with the fds
 * it keeps open. */
static int carry_over(struct scan *sc, struct seen *before) {
	struct seen *grown = grow(sc->seen, &sc->allocated_seen, sc->n_seen, sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	sc->seen = grown;
	sc->seen[sc->n_seen++] = *before;
	/* They are the new entry's now. */
	before->stat_fd = before->io_fd = before->fd_dir = before->task_dir = -1;
	before->threads_link = before->files_link = -1;
	before->threads = NULL;
	before->n_threads = 0;
	return 0;
}

/* The stat of pid through the fd its entry kept (*fd, -1 if none), and
 * through a new one when that fails: the process it was bound to is gone,
 * but the pid may be another's now. */
static int read_stat(struct sampler *s, pid_t pid, int *fd, struct procfs_stat *st) {
	int r = *fd >= 0 ? procfs_pread_stat(*fd, pid, st) : -ESRCH;

	if (r < 0) {
		let_go(s, fd);
		r = keep(s, fd, pid, 0, "stat");
		if (r >= 0)
			r = procfs_pread_stat(r, pid, st);
	}
	settle(s, fd, r);
	return r;
}

/* The processes active at the previous sample, read through BPF in one
 * read: they are active at this one too (is_active()), and what the batch
 * tells of them is all that their stat would. Those with several threads
 * are read through their threads iterators too. The same read tells what
 * their stat would of the idle processes whose turn it is (look_now()),
 * at a fifth of what reading it costs. */
struct batch {
	struct taskiter_batch_entry *e;   /* by pid */
	size_t n, next;            /* next: where scan_processes() has come to */
	uint64_t usec;             /* when they were read */
};

static void batch_free(struct batch *b) {
	for (size_t i = 0; i < b->n; i++) {
		free(b->e[i].fds);
		free(b->e[i].process.threads);
	}
	free(b->e);
}

static int read_batch(struct sampler *s, struct batch *b) {
	size_t n = 0;
	int r;

	for (size_t i = 0; i < s->n_seen; i++)
		n += s->seen[i].active || look_now(s, &s->seen[i]);
	if (n == 0)
		return 0;
	b->e = calloc(n, sizeof(*b->e));
	if (!b->e)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_seen; i++)
		if (s->seen[i].active || look_now(s, &s->seen[i]))
			b->e[b->n++] = (struct taskiter_batch_entry){ .pid = s->seen[i].pid,
								      .start_time = s->seen[i].start_time,
								      .stat_only = !s->seen[i].active };
	r = taskiter_read_batch(s->bpf, b->e, b->n);
	b->usec = monotonic_usec();
	if (r < 0 && r != -ENOMEM) {
		char why[128];
		snprintf(why, sizeof(why), "reading through the BPF batch iterator failed (%s): one by one from now on",
			 strerror(-r));
		log_warning("Sampling: %s", why);
		read_each(s, why);
		r = 0;
	}
	if (!s->batch || r < 0) {
		batch_free(b);
		*b = (struct batch){ .e = NULL };
		return r;
	}
	for (size_t i = 0, k = 0; i < b->n; i++) {
		struct taskiter_batch_entry *e = &b->e[i];
		if (e->r < 0 || e->stat_only || e->process.n_threads > 0)
			continue;
		while (s->seen[k].pid != e->pid)   /* both by pid, every entry from seen */
			k++;
		r = read_threads_bpf(s, &s->seen[k], &e->process);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			e->r = r;   /* then read as any other, from its stat */
	}
	return 0;
}

/* The batch's entry for pid, if it was read; b->next walks along. */
static struct taskiter_batch_entry *batched(struct batch *b, pid_t pid) {
	while (b->next < b->n && b->e[b->next].pid < pid)
		b->next++;
	return b->next < b->n && b->e[b->next].pid == pid && b->e[b->next].r == 0 ? &b->e[b->next] : NULL;
}

/* What stat would tell of a process read in the batch. Its CPU time in
 * clock ticks is at times one more than stat's, which rounds user and
 * system time down each: the difference from one sample to the next is
 * taken as none when it is less than none. */
static void stat_of(const struct sampler *s, const struct taskiter_batch_entry *e, struct procfs_stat *st) {
	*st = (struct procfs_stat){ .pid = e->pid,
				    .flags = e->kthread ? PROCFS_PF_KTHREAD : 0,
				    .utime = e->run_ns / (1000000000 / (uint64_t)s->ticks_per_s),
				    .threads = e->threads,
				    .start_time = e->start_time,
				    .processor = e->last_cpu };
	memcpy(st->comm, e->comm, sizeof(st->comm));
}

/* /proc is listed whole every LIST_EVERY samples: listing it costs about a
 * microsecond per process, most of a sample among thousands of idle ones.
 * In between, the processes are those seen before and those born since:
 * Linux gives pids out in rising order (from 300 again after pid_max), so
 * those are the pids after the last given out at the previous listing, up
 * to the last given out now, listed from the first one's position. The
 * ended are dropped when their stat is next read, or at the next whole
 * listing. */
#define LIST_EVERY 8

static int list_born(struct sampler *s, pid_t last, pid_t **ret, size_t *n) {
	pid_t *high, *low = NULL;
	size_t n_high, n_low = 0;
	int r;

	if (last >= s->last_pid)
		return procfs_list_pids_range(s->root, s->pid_offset, s->last_pid + 1, last, ret, n);
	/* Wrapped around: those after the last, then those from the lowest. */
	r = procfs_list_pids_range(s->root, s->pid_offset, s->last_pid + 1, INT_MAX, &high, &n_high);
	if (r < 0)
		return r;
	r = procfs_list_pids_range(s->root, s->pid_offset, 1, last, &low, &n_low);
	if (r < 0 || !(*ret = realloc(low, (n_low + n_high + 1) * sizeof(*low)))) {
		free(high);
		free(low);
		return r < 0 ? r : -ENOMEM;
	}
	if (n_high > 0)   /* high is NULL when none were listed */
		memcpy(*ret + n_low, high, n_high * sizeof(*high));   /* by pid still */
	*n = n_low + n_high;
	free(high);
	return 0;
}

static int list_processes(struct sampler *s, pid_t **ret, size_t *n) {
	size_t n_born, k = 0, count = 0;
	pid_t last = 0, *born, *pids;
	int r = procfs_read_last_pid(s->root, &last);

	if (r < 0 || *s->root || s->pid_offset < 0 || s->cycle % LIST_EVERY == 0) {
		off_t offset;
		/* Without ns_last_pid, or with another root's /proc: whole each time. */
		bool partial = r >= 0 && !*s->root;
		r = procfs_list_pids_offset(s->root, ret, n, &offset);
		s->pid_offset = partial && r >= 0 ? offset : -1;
		s->last_pid = last;
		return r;
	}
	r = list_born(s, last, &born, &n_born);
	if (r < 0)
		return r;
	s->last_pid = last;
	pids = malloc((s->n_seen + n_born + 1) * sizeof(*pids));
	if (!pids) {
		free(born);
		return -ENOMEM;
	}
	/* Both by pid: merged, each once. */
	for (size_t i = 0; i < s->n_seen; i++) {
		while (k < n_born && born[k] < s->seen[i].pid)
			pids[count++] = born[k++];
		if (k < n_born && born[k] == s->seen[i].pid)
			k++;
		pids[count++] = s->seen[i].pid;
	}
	while (k < n_born)
		pids[count++] = born[k++];
	free(born);
	*ret = pids;
	*n = count;
	return 0;
}

static int scan_processes(struct sampler *s, uint64_t now_usec, struct sampler_result *res, struct scan *sc) {
	/* A process born since the last sample: its ticks over the window. */
	double default_window_s = res->window_usec ? (double)res->window_usec / 1e6 : 1.0;
	struct batch b = { .e = NULL };
	pid_t *pids;
	size_t n, k = 0;
	int r = list_processes(s, &pids, &n);

	if (r < 0)
		return r;
	if (n > 1)   /* pids is NULL for an empty /proc (a test's fixture) */
		qsort(pids, n, sizeof(*pids), compare_pid);
	if (s->batch)
		r = read_batch(s, &b);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		struct taskiter_batch_entry *e;
		struct procfs_stat st;
		struct seen now, *before = NULL;
		uint64_t used;
		double window_s;
		int fd = -1;

		if (pids[i] == s->self)
			continue;
		/* Both lists are sorted by pid: walk the old one alongside. */
		while (k < s->n_seen && s->seen[k].pid < pids[i])
			k++;
		bool known = k < s->n_seen && s->seen[k].pid == pids[i];
		e = known ? batched(&b, pids[i]) : NULL;
		if (known && !e && !look_now(s, &s->seen[k])) {
			r = carry_over(sc, &s->seen[k]);
			if (r < 0)
				break;
			continue;
		}
		if (known) {
			fd = s->seen[k].stat_fd;
			s->seen[k].stat_fd = -1;   /* moves to this sample's entry */
		}
		if (e)
			stat_of(s, e, &st);
		else if (read_stat(s, pids[i], &fd, &st) < 0)
			continue;
		if (known && s->seen[k].start_time == st.start_time)
			before = &s->seen[k];
		now = (struct seen){ .pid = pids[i], .start_time = st.start_time, .ticks = st.utime + st.stime,
				     .run_ns = e ? e->run_ns : 0, .ticks_usec = now_usec, .stat_fd = fd, .io_fd = -1, .fd_dir = -1, .task_dir = -1,
				     .threads_link = -1, .files_link = -1 };
		if (st.flags & PROCFS_PF_KTHREAD) {
			now.kthread = true;
			r = carry_over(sc, &now);
			if (r < 0) {
				let_go(s, &now.stat_fd);
				break;
			}
			continue;
		}
		res->n_scanned++;
		used = ticks_used(before, &now);
		now.busy_cycle = used == 0 && before ? before->busy_cycle : s->cycle;
		/* Over the time since they were read, which for a process that
		 * slept long is several samples. */
		window_s = before && now_usec > before->ticks_usec ? (double)(now_usec - before->ticks_usec) / 1e6
								  : default_window_s;

		if (before) {
			/* Counters carry over until read again. */
			now.have_io = before->have_io;
			now.io = before->io;
			now.io_usec = before->io_usec;
			now.have_switches = before->have_switches;
			now.switches = before->switches;
			now.switches_usec = before->switches_usec;
			now.fds_retry_cycle = before->fds_retry_cycle;
		}
		if (is_active(s, before, used)) {
			struct sampler_process *p = grow(res->procs, &sc->allocated_procs, res->n_procs, sizeof(*p));
			if (!p) {
				let_go(s, &now.stat_fd);
				r = -ENOMEM;
				break;
			}
			res->procs = p;
			p = &p[res->n_procs++];
			memset(p, 0, sizeof(*p));
			p->cpu = (double)used / (double)s->ticks_per_s / window_s;
			now.active = used > 0;
			/* To the nanosecond where both samples read it so: a light
			 * stream does not use a tick each window. */
			if (before && before->run_ns && now.run_ns) {
				uint64_t used_ns = now.run_ns > before->run_ns ? now.run_ns - before->run_ns : 0;
				p->cpu = (double)used_ns / 1e9 / window_s;
				now.active = used_ns > 0;
			}
			if (now.active)
				now.busy_cycle = s->cycle;
			p->pid = pids[i];
			p->start_time = st.start_time;
			memcpy(p->comm, st.comm, sizeof(p->comm));
			p->last_cpu = st.processor;
			r = read_active(s, sc, before, &now, &st, e && !e->stat_only ? e : NULL, b.usec, p,
					res->n_procs - 1, window_s);
		}
		struct seen *grown = r < 0 ? NULL : grow(sc->seen, &sc->allocated_seen, sc->n_seen, sizeof(*grown));
		if (!grown) {
			close_seen(s, &now, 1);
			r = -ENOMEM;
			break;
		}
		sc->seen = grown;
		sc->seen[sc->n_seen++] = now;
	}
	batch_free(&b);
	free(pids);
	return r < 0 ? r : 0;
}

/* Context switches are read only of the processes on a channel: they are
 * figures of the groups, and reading a status costs more than all the rest
 * of what an active process is read for. */
static void switches_of_members(struct sampler *s, struct scan *sc, struct sampler_result *res) {
	bool *member = calloc(res->n_procs, sizeof(*member));

	for (size_t c = 0; member && c < res->n_channels; c++) {
		long from = sampler_result_index(res, res->channels[c].from);
		long to = sampler_result_index(res, res->channels[c].to);
		if (from >= 0)
			member[from] = true;
		if (to >= 0)
			member[to] = true;
	}
	for (size_t i = 0; i < res->n_procs; i++) {
		/* Both lists are sorted by pid, and every active process has its entry. */
		struct seen *seen = bsearch(&res->procs[i].pid, sc->seen, sc->n_seen, sizeof(*sc->seen), compare_pid);
		if (!seen)
			continue;
		if (member && member[i]) {
			if (seen->have_fresh_switches)
				switch_rates(seen, &res->procs[i], &seen->fresh_switches, seen->fresh_usec);
			else
				read_switches(s, seen, &res->procs[i]);
			continue;
		}
		/* Not read, so not a baseline either. */
		seen->have_switches = false;
		for (size_t t = 0; t < seen->n_threads; t++)
			let_go(s, &seen->threads[t].status_fd);
	}
	free(member);
}

int sampler_sample(struct sampler *s, uint64_t now_usec, struct sampler_result **ret) {
	struct sampler_result *res = calloc(1, sizeof(*res));
	struct scan sc = { 0 };
	size_t allocated = 0;
	int r;

	if (!res)
		return -ENOMEM;
	res->window_usec = s->have_baseline && now_usec > s->last_usec ? now_usec - s->last_usec : 0;

	r = scan_processes(s, now_usec, res, &sc);
	channels_merge_endpoints(sc.eps, &sc.n_eps);
	if (r >= 0)
		r = channels_pipes(sc.eps, sc.n_eps, res, &allocated);
	if (r >= 0)
		r = peers_channels(s->peers, s->cycle, sc.eps, sc.n_eps, res, &allocated);
	if (r >= 0)
		r = channels_threads(res, &allocated);
	if (r >= 0)
		switches_of_members(s, &sc, res);
	free(sc.eps);
	if (r < 0) {
		close_seen(s, sc.seen, sc.n_seen);
		free(sc.seen);
		sampler_result_free(res);
		return r;
	}
	channels_share_bytes(res);
	cpuload_sample(s->cpuload, &res->cpu_load, &res->n_cpu_load);

	/* What is left open in the old list belongs to processes that are gone,
	 * or went idle. */
	close_seen(s, s->seen, s->n_seen);
	free(s->seen);
	s->seen = sc.seen;
	s->n_seen = sc.n_seen;
	s->last_usec = now_usec;
	s->cycle++;
	s->have_baseline = true;
	*ret = res;
	return 0;
}
