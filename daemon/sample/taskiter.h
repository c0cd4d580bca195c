/* What the sampler reads of an active process, through BPF iterators
 * (daemon/sample/bpf/taskiter.bpf.c) instead of /proc: its threads' times,
 * context switches and I/O bytes, and its pipe and socket fds, in one
 * read(2) each instead of one system call per file and per fd; and, with
 * the batch iterator, those of many processes in one read(2), with what
 * the stat of idle ones would tell.
 *
 * Needs a kernel with BTF and task iterators bound to a process (6.1 and
 * later) and the right to load BPF programs (CAP_BPF and CAP_PERFMON, or
 * root). Without them taskiter_new() fails and the sampler reads /proc.
 * The batch iterator needs Linux 6.13 (bpf_task_from_vpid()) and a kernel
 * that lets ccxd load a map-element iterator (some refuse it with EPERM
 * even to root); without it taskiter_can_batch() is false and processes are
 * read one by one. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procfs.h"

struct taskiter;

/* Loads the iterators, with the batch iterator when batch is asked for and
 * the kernel gives it (taskiter_no_batch() tells why not, then). */
int taskiter_new(bool batch, struct taskiter **ret);
void taskiter_free(struct taskiter *it);

enum taskiter_kind {
	TASKITER_THREADS,
	TASKITER_FILES,
};

/* An iterator over pid's threads or files: an fd to read with the
 * functions below as often as wanted, and close(2) when done. It names the
 * pid, not the process: the readers check the process's start time. */
int taskiter_open(const struct taskiter *it, pid_t pid, enum taskiter_kind kind);

struct taskiter_thread {
	pid_t tid;                 /* as the host numbers it, also in a container: only
				    * to know a thread again at the next read */
	uint64_t ns;               /* running, and runnable waiting for a CPU */
};

struct taskiter_process {
	uint64_t run_ns;           /* its CPU time, ended threads included */
	struct procfs_io io;       /* its live threads' read(2)/write(2) bytes: not those of threads
				    * that ended, nor of the children it reaped (syscr, syscw: 0) */
	struct procfs_switches switches;   /* of its threads */
	struct taskiter_thread *threads;   /* by tid */
	size_t n_threads;
};

/* Through taskiter_open(TASKITER_THREADS) of the process that started at
 * start_time (clock ticks since boot, as /proc/PID/stat has it). -ESRCH when
 * that process is gone. */
int taskiter_read_threads(int fd, uint64_t start_time, struct taskiter_process *ret);

/* Its pipe and socket fds, as procfs_list_fds_at() lists them, through
 * taskiter_open(TASKITER_FILES); and, when it has a single thread, all that
 * taskiter_read_threads() would tell in *single (n_threads 0 otherwise: a
 * process with several threads, or without files). -ESRCH when that
 * process is gone. */
int taskiter_read_files(int fd, uint64_t start_time, struct procfs_fd **ret, size_t *n,
			struct taskiter_process *single);

/* ---- many processes in one read -------------------------------------- */

bool taskiter_can_batch(const struct taskiter *it);
/* Why the batch iterator was asked for and is not there, in words for a
 * person; NULL when it is there or was not asked for. */
const char *taskiter_no_batch(const struct taskiter *it);

struct taskiter_batch_entry {
	pid_t pid;                 /* asked: the process that started at start_time */
	uint64_t start_time;       /* (clock ticks since boot) */
	bool stat_only;            /* asked: only what its stat tells (threads to run_ns),
				    * not process nor fds */
	int r;                     /* 0: read. -ESRCH: gone, or the pid is another's. Not read
				    * here: -E2BIG, more pipes and sockets than a batch holds
				    * (TASKITER_BATCH_FDS); -ENOSPC, more processes */
	unsigned threads;          /* how many it has */
	int last_cpu;              /* of its first thread, as /proc/PID/stat has it */
	char comm[16];
	bool kthread;
	uint64_t run_ns;           /* its CPU time, all threads' and the ended ones' */
	struct taskiter_process process;   /* of a single thread; n_threads 0 with several:
					    * read those through taskiter_read_threads() */
	struct procfs_fd *fds;     /* as taskiter_read_files() */
	size_t n_fds;
};

/* What taskiter_read_threads() and taskiter_read_files() would tell of the
 * processes of e (n, sorted by pid), or what their stat would, in one
 * read(2) and no other system call (the pids are written into the memory
 * of a BPF map). The caller frees each entry's fds and process.threads,
 * whatever it returns: 0, or -errno when the read failed. */
int taskiter_read_batch(struct taskiter *it, struct taskiter_batch_entry *e, size_t n);
