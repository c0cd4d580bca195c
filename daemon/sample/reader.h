/* Reads the processes the sampler looks at: the stat of each, and what an
 * active one did in the window (its threads, I/O bytes and context
 * switches, and its pipe and socket fds), from the cheapest of three
 * sources the kernel gives: the BPF batch iterator (those active at the
 * previous sample, in one read), BPF iterators of its own (taskiter.h), or
 * its files in /proc (procfs.h). Files and iterator links stay open from
 * sample to sample while the process stays active, within a budget of half
 * the fd limit. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procfs.h"
#include "sample.h"
#include "taskiter.h"

/* How active processes are read, from the cheapest: those active at the
 * previous sample in one read of the BPF batch iterator, each through BPF
 * iterators of its own, or each from /proc. */
enum sampler_reading {
	SAMPLER_READ_BATCH,
	SAMPLER_READ_EACH,
	SAMPLER_READ_PROC,
};


struct thread_seen;

/* What was seen of a process at the previous sample. The sampler keeps
 * one per process, by pid, and judges by the first fields whether it is
 * active; the rest is what the reader reads it through, and the counters
 * its rates are taken from. */
struct seen {
	pid_t pid;
	uint64_t start_time;
	uint64_t ticks;            /* utime + stime */
	uint64_t ticks_usec;       /* when they were read: several samples ago for the long idle */
	uint64_t run_ns;           /* its CPU time to the nanosecond, when read in the batch; else 0 */
	struct procfs_schedstat main;  /* its main thread's, when its stat was read from /proc */
	bool have_main;
	unsigned stat_threads;     /* its threads, as its stat counted them */
	uint64_t busy_cycle;       /* the sample that last saw it run (or first saw it) */
	bool kthread;              /* a kernel thread: never placed, looked at only for pid reuse */
	bool active;               /* ran in that window (sampler.c's usage_of()) */
	int stat_fd;               /* its /proc/PID/stat, kept open for every process; -1 if none */
	int schedstat_fd;          /* its /proc/PID/schedstat, kept the same way */
	int io_fd, fd_dir, task_dir;   /* kept open while it is active; -1 if not */
	int threads_link, files_link;  /* its BPF iterators (taskiter), kept the same way */
	uint64_t fds_retry_cycle;  /* its fds were not ours to read: the sample to try again */
	bool have_io;
	bool io_own;               /* io_fd is the main thread's own (task/PID/io) */
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

struct reader;

/* Reads as want says, or the next way down where the kernel refuses it
 * (reader_note() says why); from /proc under a root other than "". */
int reader_new(const char *root, enum sampler_reading want, struct reader **ret);
void reader_free(struct reader *rd);
/* As sampler_reading(), sampler_note() and sampler_source() say. */
enum sampler_reading reader_reading(const struct reader *rd);
const char *reader_note(const struct reader *rd);
const char *reader_source(const struct reader *rd);

/* Closes what the processes of seen (n) keep open, and frees their threads. */
void reader_close(struct reader *rd, struct seen *seen, size_t n);

/* The stat of pid through the fd its entry kept (*fd, -1 if none), and
 * through a new one when that fails: the process it was bound to is gone,
 * but the pid may be another's now. */
int reader_read_stat(struct reader *rd, pid_t pid, int *fd, struct procfs_stat *st);
/* The same for its main thread's schedstat: nanoseconds, where stat has
 * clock ticks, and how often it ran. */
int reader_read_schedstat(struct reader *rd, pid_t pid, int *fd, struct procfs_schedstat *ss);

/* Reads the processes of e (n of them, by pid, each one of seen's, which
 * is by pid too) through the batch iterator, and the threads of those with
 * several through their threads iterators; takes e, which reader_batched()
 * answers from until reader_batch_free(). 0 or -ENOMEM: where the batch
 * iterator fails, none is read, and each process is read on its own from
 * then on. */
int reader_read_batch(struct reader *rd, struct taskiter_batch_entry *e, size_t n, struct seen *seen);
/* The batch's entry for pid, if it was read; asked for by rising pid. */
struct taskiter_batch_entry *reader_batched(struct reader *rd, pid_t pid);
void reader_batch_free(struct reader *rd);

/* A process's counters carry over from before to now until read again. */
void reader_carry_counters(struct seen *now, const struct seen *before);

/* Reads what an active process did in the window into now and p: its
 * threads and its io; and into *fds (n_fds; NULL when none were read) its
 * pipe and socket fds, the caller's to free whatever it returns. Its
 * context switches wait for its channels (reader_read_switches()).
 * batched: its entry in the batch, when it was read there. cycle: the
 * sample's number. */
int reader_read_active(struct reader *rd, uint64_t cycle, struct seen *before, struct seen *now,
		       const struct procfs_stat *st, struct taskiter_batch_entry *batched, struct sampler_process *p,
		       double window_s, struct procfs_fd **fds, size_t *n_fds);

/* The context switches of an active process into p: as read along with
 * its threads this sample, else through each thread's status. */
void reader_read_switches(struct reader *rd, struct seen *seen, struct sampler_process *p);
/* Those of an active process whose switches are not read this sample: no
 * rate, and no baseline either. */
void reader_skip_switches(struct reader *rd, struct seen *seen);
