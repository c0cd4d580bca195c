/* A sample: the processes that used CPU in a window, the channels between
 * them, and how busy each CPU was. The data alone, shared by the sampler
 * that makes it (sampler.h) and its parts, and by the policies that read
 * it (groups.h): no reading of the system here. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procfs.h"

enum channel_kind {
	CHANNEL_PIPE,
	CHANNEL_UNIX,
	CHANNEL_TCP,
	CHANNEL_THREADS,           /* a process's own busy threads: from == to */
};

/* A thread that ran, or waited runnable for a CPU, at least half of the
 * window is busy: it needs a CPU of its own most of the time, while two
 * threads below that can share one. A process with two busy threads or more
 * is a group of its threads. */
#define SAMPLER_BUSY_THREAD 0.5

struct sampler_process {
	pid_t pid;
	uint64_t start_time;
	char comm[PROCFS_COMM_MAX];
	double cpu;                /* CPUs' worth of time used in the window: 1.0 = one CPU busy */
	double read_bps, write_bps; /* read(2)/write(2) bytes per second */
	unsigned busy_threads;     /* threads busy in the window (SAMPLER_BUSY_THREAD); 0: not
				    * measured (one thread, or the first look at its threads) */
	int last_cpu;              /* the CPU its main thread ran on last; -1 if unknown */
	double wakeups_per_s;      /* its threads' voluntary context switches: sleeps ended by a wake-up */
	double switches_per_s;     /* all its threads' context switches; both 0 on the first look,
				    * and for a process on no channel (not read) */
	double counted_read_bps, counted_write_bps;  /* of its bytes, those on channels the
						      * kernel counts (traffic.h) */
};

/* Between two processes, one per pair and kind where exact; where
 * estimated, one per pipe or socket found in /proc. */
struct sampler_channel {
	enum channel_kind kind;
	pid_t from, to;            /* from writes, to reads (exact: from sent the more); estimated
				    * sockets: the two ends */
	uint64_t inode;            /* a pipe's inode, or a Unix socket's (exact: the receiving
				    * end's, of the busiest); 0 for exact TCP */
	double bytes_per_s;        /* both directions; threads: the process's read+write bytes */
	double messages_per_s;     /* the calls that received them, where exact; else estimated
				    * from the ends' wake-ups */
	bool both;                 /* exact, and both directions carried something */
	bool exact;                /* counted by the kernel (traffic.h), not estimated */
	bool shared;               /* estimated pipes that both processes hold whole, two or
				    * more, which carry their talk both ways (channels.h) */
};

struct sampler_result {
	uint64_t window_usec;      /* time since the previous sample */
	struct sampler_process *procs;   /* the processes that used CPU, by pid */
	size_t n_procs;
	struct sampler_channel *channels;
	size_t n_channels;
	size_t n_scanned;          /* processes looked at */
	double *cpu_load;          /* by CPU number: the share of the window it was busy, 0..1 */
	size_t n_cpu_load;         /* 0 on the first sample, or without /proc/stat */
};

void sampler_result_free(struct sampler_result *r);
/* Where pid is in r->procs (sorted by pid), or -1 when it was not active. */
long sampler_result_index(const struct sampler_result *r, pid_t pid);
const char *channel_kind_to_string(enum channel_kind k);
