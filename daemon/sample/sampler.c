#include "sampler.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channels.h"
#include "conversations.h"
#include "cpuload.h"
#include "log.h"
#include "peers.h"
#include "reader.h"
#include "traffic.h"
#include "util.h"

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
	struct reader *reader;     /* reads the processes */
	struct traffic *traffic;   /* the kernel's exact counts per channel; NULL: none */
	char traffic_note[160];    /* why there are none, when BPF was allowed */
	uint64_t counting_usec;    /* what reading them took the last sample */
	uint64_t lost;             /* the counters' calls lost when full, up to the last sample */
	uint64_t lost_last;        /* of those, the last sample's: it was estimated */
	pid_t *thinned;            /* the processes the counters thin (sampler_thin()), sorted */
	size_t n_thinned;
};

static const char *const reading_names[] = {
	[SAMPLER_READ_BATCH] = "batch",
	[SAMPLER_READ_EACH] = "per-process",
	[SAMPLER_READ_PROC] = "proc",
};

const char *sampler_reading_to_string(enum sampler_reading r) {
	const char *name = NAME_OF(reading_names, r);

	return name ? name : "unknown";
}

int sampler_new(const char *root, enum sampler_reading want, enum sampler_counting counting, struct sampler **ret) {
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
	r = peers_new(&s->peers);
	if (r >= 0)
		r = reader_new(root, want, &s->reader);
	if (r >= 0)
		r = cpuload_new(root, &s->cpuload);
	if (r < 0) {
		sampler_free(s);
		return r;
	}
	if (want != SAMPLER_READ_PROC && counting != SAMPLER_COUNT_NO && !*root &&
	    (r = traffic_new(counting == SAMPLER_COUNT_SYSCALLS, &s->traffic)) < 0) {
		snprintf(s->traffic_note, sizeof(s->traffic_note), "no traffic counters (%s)", strerror(-r));
		s->traffic = NULL;
	}
	*ret = s;
	return 0;
}

const char *sampler_counted(const struct sampler *s) {
	bool pipes = s->traffic && traffic_counts_pipes(s->traffic);
	bool sockets = s->traffic && traffic_counts_sockets(s->traffic);

	return pipes && sockets ? "pipes and sockets" : pipes ? "pipes" : sockets ? "sockets" : "none";
}

uint64_t sampler_counting_usec(const struct sampler *s) {
	return s->counting_usec;
}

uint64_t sampler_counts_lost(const struct sampler *s) {
	return s->lost_last;
}

const char *sampler_counted_note(const struct sampler *s) {
	if (s->traffic)
		return traffic_note(s->traffic);
	return s->traffic_note[0] ? s->traffic_note : NULL;
}

enum sampler_reading sampler_reading(const struct sampler *s) {
	return reader_reading(s->reader);
}

const char *sampler_note(const struct sampler *s) {
	return reader_note(s->reader);
}

const char *sampler_source(const struct sampler *s) {
	return reader_source(s->reader);
}

void sampler_free(struct sampler *s) {
	if (!s)
		return;
	peers_free(s->peers);
	traffic_free(s->traffic);
	free(s->thinned);
	reader_close(s->reader, s->seen, s->n_seen);
	reader_free(s->reader);
	free(s->seen);
	cpuload_free(s->cpuload);
	free(s);
}

static bool has_pid(const pid_t *pids, size_t n, pid_t pid) {
	return n && bsearch(&pid, pids, n, sizeof(*pids), util_compare_pid);
}

int sampler_thin(struct sampler *s, const pid_t *pids, size_t n) {
	pid_t *now = NULL;

	if (!s->traffic)
		return 0;
	if (n) {
		now = malloc(n * sizeof(*now));
		if (!now)
			return -ENOMEM;
		memcpy(now, pids, n * sizeof(*now));
		qsort(now, n, sizeof(*now), util_compare_pid);
	}
	for (size_t i = 0; i < s->n_thinned; i++)
		if (!has_pid(now, n, s->thinned[i]))
			traffic_thin(s->traffic, s->thinned[i], false);
	for (size_t i = 0; i < n; i++)
		if (!has_pid(s->thinned, s->n_thinned, now[i]))
			traffic_thin(s->traffic, now[i], true);
	free(s->thinned);
	s->thinned = now;
	s->n_thinned = n;
	return 0;
}

/* util_compare_pid() sorts and finds the records that begin with a pid too. */
_Static_assert(offsetof(struct seen, pid) == 0, "seen begins with its pid");

/* ---- step 1: which processes used CPU, and what they hold ------------- */

struct scan {
	struct seen *seen;         /* this sample's, to become s->seen */
	size_t n_seen, allocated_seen;
	size_t allocated_procs;
	struct endpoint *eps;      /* the pipe and socket fds of the active processes */
	size_t n_eps, allocated_eps;
};

/* What usage_of() takes for running: a process that was put on a CPU as often
 * as a pipe in use wakes its ends (channels.c), or used a thousandth of a
 * CPU. A daemon's timer that fires once a second is neither; a light
 * stream, 64 MiB/s through a pipe at 0.3 % of a CPU, is both. */
#define SAMPLER_RUNS_PER_S 20.0
#define SAMPLER_RUN_SHARE 0.001

static uint64_t grown(uint64_t now, uint64_t before) {
	return now > before ? now - before : 0;
}

/* How long a process ran in the window since before (NULL: born since, all
 * its time is the window's), to the nanosecond, and how many times it was
 * put on a CPU (0: unknown): all its threads' from the batch (*whole), else
 * its main thread's from schedstat. False where neither was read at both
 * ends of the window. */
static bool ran_ns(const struct seen *before, const struct seen *now, uint64_t *ns, uint64_t *runs, bool *whole) {
	*whole = now->run_ns && (!before || before->run_ns);
	if (*whole) {
		*ns = grown(now->run_ns, before ? before->run_ns : 0);
		*runs = 0;
		return true;
	}
	if (!now->have_main || (before && !before->have_main))
		return false;
	*ns = grown(now->main.run_ns, before ? before->main.run_ns : 0);
	*runs = grown(now->main.runs, before ? before->main.runs : 0);
	return true;
}

/* What a process did in the window: whether it ran, and its CPU time in
 * CPUs. CPU time in stat comes in clock ticks of 10 ms, and on kernels that
 * account by the tick it moves only when a tick finds the process running:
 * the light stream above goes several seconds without one. Nanoseconds
 * decide where they are read; the ticks still count for the threads that
 * the main thread's schedstat does not cover. */
struct usage {
	bool ran;
	double cpu;
};

static struct usage usage_of(const struct seen *before, const struct seen *now, unsigned threads, uint64_t ticks,
			     long ticks_per_s, double window_s) {
	struct usage u = { .ran = ticks > 0, .cpu = (double)ticks / (double)ticks_per_s / window_s };
	uint64_t ns, runs;
	double ns_cpu;
	bool whole;

	if (!ran_ns(before, now, &ns, &runs, &whole))
		return u;
	ns_cpu = (double)ns / 1e9 / window_s;
	u.ran = u.ran || (double)runs >= SAMPLER_RUNS_PER_S * window_s || ns_cpu >= SAMPLER_RUN_SHARE;
	if (whole || threads == 1 || ns_cpu > u.cpu)
		u.cpu = ns_cpu;
	return u;
}

/* Ran in this window or the one before: one quiet window does not end a
 * process's activity. */
static bool is_active(const struct sampler *s, const struct seen *before, bool now_ran) {
	return s->have_baseline && (now_ran || (before && before->active));
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

/* Whether an idle process with one thread has not run since it was read:
 * then its stat has nothing new either (a thread it started, its CPU time,
 * its CPU), and its schedstat, read through the fd kept for it (so of the
 * same process), costs less to read. Its reading then stands for now. */
static bool still(struct seen *before, uint64_t now_usec) {
	struct procfs_schedstat ss;

	if (before->kthread || before->active || !before->have_main || before->stat_threads != 1 ||
	    procfs_pread_schedstat(before->schedstat_fd, &ss) < 0 || ss.run_ns != before->main.run_ns ||
	    ss.runs != before->main.runs)
		return false;
	before->ticks_usec = now_usec;
	return true;
}

/* Keeps what was seen of a process into this sample's list, with the fds
 * it keeps open. */
static int carry_over(struct scan *sc, struct seen *before) {
	struct seen *grown = util_grow(sc->seen, &sc->allocated_seen, sc->n_seen + 1, sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	sc->seen = grown;
	sc->seen[sc->n_seen++] = *before;
	/* They are the new entry's now. */
	before->stat_fd = before->schedstat_fd = before->io_fd = before->fd_dir = before->task_dir = -1;
	before->threads_link = before->files_link = -1;
	before->threads = NULL;
	before->n_threads = 0;
	return 0;
}

/* The processes active at the previous sample, read through BPF in one
 * read: they are active at this one too (is_active()), and what the batch
 * tells of them is all that their stat would. Those with several threads
 * are read through their threads iterators too. The same read tells what
 * their stat would of the idle processes whose turn it is (look_now()),
 * at a fifth of what reading it costs. */
static int read_batch(struct sampler *s) {
	struct taskiter_batch_entry *e;
	size_t n = 0, k = 0;

	for (size_t i = 0; i < s->n_seen; i++)
		n += s->seen[i].active || look_now(s, &s->seen[i]);
	if (n == 0)
		return 0;
	e = calloc(n, sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_seen; i++)
		if (s->seen[i].active || look_now(s, &s->seen[i]))
			e[k++] = (struct taskiter_batch_entry){ .pid = s->seen[i].pid,
								.start_time = s->seen[i].start_time,
								.stat_only = !s->seen[i].active };
	return reader_read_batch(s->reader, e, n, s->seen);
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

/* An active process into the sample: what it used, its channels' ends.
 * Returns 0, or -errno to end the scan. */
static int add_active(struct sampler *s, struct sampler_result *res, struct scan *sc, struct seen *now,
		      struct seen *before, const struct procfs_stat *st, struct taskiter_batch_entry *e,
		      const struct usage *u, double window_s) {
	struct sampler_process *p = util_grow(res->procs, &sc->allocated_procs, res->n_procs + 1, sizeof(*p));
	struct procfs_fd *fds;
	size_t n_fds;
	int r;

	if (!p)
		return -ENOMEM;
	res->procs = p;
	p = &p[res->n_procs++];
	memset(p, 0, sizeof(*p));
	p->cpu = u->cpu;
	now->active = u->ran;
	p->pid = now->pid;
	p->start_time = st->start_time;
	memcpy(p->comm, st->comm, sizeof(p->comm));
	p->last_cpu = st->processor;
	r = reader_read_active(s->reader, s->cycle, before, now, st, e && !e->stat_only ? e : NULL, p, window_s,
			       &fds, &n_fds);
	if (r >= 0)
		r = channels_add_endpoints(&sc->eps, &sc->n_eps, &sc->allocated_eps, fds, n_fds, res->n_procs - 1);
	free(fds);
	return r;
}

/* A process read afresh: what it used since it was read last (before: the
 * same process then, or NULL), added to the sample when active, and kept
 * for the next. Returns 0, or -errno to end the scan. */
static int measure(struct sampler *s, uint64_t now_usec, double default_window_s, struct sampler_result *res,
		   struct scan *sc, struct seen *now, struct seen *before, const struct procfs_stat *st,
		   struct taskiter_batch_entry *e) {
	uint64_t used = ticks_used(before, now);
	/* Over the time since they were read, which for a process that slept
	 * long is several samples. */
	double window_s = before && now_usec > before->ticks_usec ? (double)(now_usec - before->ticks_usec) / 1e6
								  : default_window_s;
	struct usage u = usage_of(before, now, st->threads, used, s->ticks_per_s, window_s);
	struct seen *grown;
	int r = 0;

	res->n_scanned++;
	now->busy_cycle = !u.ran && before ? before->busy_cycle : s->cycle;
	if (before)
		reader_carry_counters(now, before);
	if (is_active(s, before, u.ran))
		r = add_active(s, res, sc, now, before, st, e, &u, window_s);
	grown = r < 0 ? NULL : util_grow(sc->seen, &sc->allocated_seen, sc->n_seen + 1, sizeof(*grown));
	if (!grown) {
		reader_close(s->reader, now, 1);
		return -ENOMEM;
	}
	sc->seen = grown;
	sc->seen[sc->n_seen++] = *now;
	return 0;
}

/* One process of the scan; old is what the last sample kept of its pid, or
 * NULL. Carried over as it was when it needs no look now, else read and
 * measured. Returns 0, or -errno to end the scan. */
static int scan_one(struct sampler *s, uint64_t now_usec, double default_window_s, struct sampler_result *res,
		    struct scan *sc, pid_t pid, struct seen *old) {
	struct taskiter_batch_entry *e = old ? reader_batched(s->reader, pid) : NULL;
	bool look = old && !e && look_now(s, old);
	struct procfs_stat st;
	struct seen now, *before = NULL;
	int fd = -1, schedstat_fd = -1, r;

	if (old && !e && (!look || still(old, now_usec))) {
		res->n_scanned += look;
		return carry_over(sc, old);
	}
	if (old) {
		fd = old->stat_fd;
		old->stat_fd = -1;   /* moves to this sample's entry */
	}
	if (e)
		stat_of(s, e, &st);
	else if (reader_read_stat(s->reader, pid, &fd, &st) < 0)
		return 0;
	if (old) {
		schedstat_fd = old->schedstat_fd;
		old->schedstat_fd = -1;   /* the same */
		if (old->start_time == st.start_time)
			before = old;
	}
	now = (struct seen){ .pid = pid, .start_time = st.start_time, .ticks = st.utime + st.stime,
			     .run_ns = e ? e->run_ns : 0, .ticks_usec = now_usec, .stat_fd = fd,
			     .schedstat_fd = schedstat_fd, .io_fd = -1, .fd_dir = -1, .task_dir = -1,
			     .threads_link = -1, .files_link = -1, .stat_threads = st.threads };
	if (st.flags & PROCFS_PF_KTHREAD) {
		now.kthread = true;
		r = carry_over(sc, &now);
		if (r < 0)
			reader_close(s->reader, &now, 1);
		return r;
	}
	if (!e)
		now.have_main = reader_read_schedstat(s->reader, pid, &now.schedstat_fd, &now.main) >= 0;
	return measure(s, now_usec, default_window_s, res, sc, &now, before, &st, e);
}

static int scan_processes(struct sampler *s, uint64_t now_usec, struct sampler_result *res, struct scan *sc) {
	/* A process born since the last sample: its ticks over the window. */
	double default_window_s = res->window_usec ? (double)res->window_usec / 1e6 : 1.0;
	pid_t *pids;
	size_t n, k = 0;
	int r = list_processes(s, &pids, &n);

	if (r < 0)
		return r;
	if (n > 1)   /* pids is NULL for an empty /proc (a test's fixture) */
		qsort(pids, n, sizeof(*pids), util_compare_pid);
	if (reader_reading(s->reader) == SAMPLER_READ_BATCH)
		r = read_batch(s);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		if (pids[i] == s->self)
			continue;
		/* Both lists are sorted by pid: walk the old one alongside. */
		while (k < s->n_seen && s->seen[k].pid < pids[i])
			k++;
		r = scan_one(s, now_usec, default_window_s, res, sc, pids[i],
			     k < s->n_seen && s->seen[k].pid == pids[i] ? &s->seen[k] : NULL);
	}
	reader_batch_free(s->reader);
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
		struct seen *seen = bsearch(&res->procs[i].pid, sc->seen, sc->n_seen, sizeof(*sc->seen), util_compare_pid);
		if (!seen)
			continue;
		if (member && member[i])
			reader_read_switches(s->reader, seen, &res->procs[i]);
		else
			reader_skip_switches(s->reader, seen);
	}
	free(member);
}

/* The kernel's counts since the last sample (the first only starts them):
 * true with them in *e, *n; false when there are none to go by this time,
 * and the channels are estimated from /proc instead. A map that was full
 * lost calls of some channels and not of others (anyone can fill it, with
 * pipes of their own): such counts are not exact, and are dropped whole. */
static bool read_counts(struct sampler *s, struct traffic_entry **e, size_t *n) {
	uint64_t lost;
	int r;

	*e = NULL;
	*n = 0;
	if (!s->traffic)
		return false;
	r = traffic_read(s->traffic, e, n);
	if (r < 0) {
		log_debug_errno(r, "Reading the traffic counters failed, estimating this sample: %m");
		return false;
	}
	lost = traffic_lost(s->traffic);
	s->lost_last = lost - s->lost;
	s->lost = lost;
	if (s->lost_last == 0)
		return true;
	free(*e);
	*e = NULL;
	*n = 0;
	return false;
}

int sampler_sample(struct sampler *s, uint64_t now_usec, struct sampler_result **ret) {
	struct sampler_result *res = calloc(1, sizeof(*res));
	struct traffic_entry *counts;
	struct scan sc = { 0 };
	size_t allocated = 0, n_counts;
	uint64_t started;
	bool counted;
	int r;

	if (!res)
		return -ENOMEM;
	res->window_usec = s->have_baseline && now_usec > s->last_usec ? now_usec - s->last_usec : 0;

	r = scan_processes(s, now_usec, res, &sc);
	channels_merge_endpoints(sc.eps, &sc.n_eps);
	started = util_usec(CLOCK_THREAD_CPUTIME_ID);
	counted = read_counts(s, &counts, &n_counts);
	/* What the kernel counted needs no looking for in /proc. */
	if (r >= 0 && !(counted && traffic_counts_pipes(s->traffic)))
		r = channels_pipes(sc.eps, sc.n_eps, res, &allocated);
	if (r >= 0 && !(counted && traffic_counts_sockets(s->traffic)))
		r = peers_channels(s->peers, s->cycle, sc.eps, sc.n_eps, res, &allocated);
	if (r >= 0 && counted) {
		r = conversations_add(res, &allocated, counts, n_counts, (double)res->window_usec / 1e6,
				      traffic_counts_pipes(s->traffic), traffic_counts_sockets(s->traffic));
		s->counting_usec = util_usec(CLOCK_THREAD_CPUTIME_ID) - started;
	}
	free(counts);
	if (r >= 0)
		r = channels_threads(res, &allocated);
	if (r >= 0)
		switches_of_members(s, &sc, res);
	free(sc.eps);
	if (r < 0) {
		reader_close(s->reader, sc.seen, sc.n_seen);
		free(sc.seen);
		sampler_result_free(res);
		return r;
	}
	channels_share_bytes(res);
	cpuload_sample(s->cpuload, &res->cpu_load, &res->n_cpu_load);

	/* What is left open in the old list belongs to processes that are gone,
	 * or went idle. */
	reader_close(s->reader, s->seen, s->n_seen);
	free(s->seen);
	s->seen = sc.seen;
	s->n_seen = sc.n_seen;
	s->last_usec = now_usec;
	s->cycle++;
	s->have_baseline = true;
	*ret = res;
	return 0;
}
