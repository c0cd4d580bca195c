/* Who talks to whom, and how much: each cycle finds the processes that used
 * CPU since the previous one, what connects them (pipes, Unix sockets,
 * loopback TCP, and the busy threads of one process) and the bytes and
 * messages per second on each channel: counted by the kernel where it
 * allows (traffic.h, conversations.h), estimated from /proc elsewhere; and
 * how busy each CPU was. Idle
 * processes cost one read of /proc/PID/stat, and long-idle ones that only
 * every few samples. An active one also costs a read of the BPF iterator
 * of its files (taskiter.h): its pipe and socket fds and, with one thread,
 * its times, switches and I/O bytes; with several threads, also one of the
 * iterator of its threads. Where those cannot be loaded, its io
 * and fds and, when it has several threads, each thread's schedstat are read
 * from /proc, and, for one on a channel, each thread's status; all through
 * fds (or iterator links) kept open while it stays active. */
#pragma once

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

struct sampler;

/* How active processes are read, from the cheapest: those active at the
 * previous sample in one read of the BPF batch iterator, each through BPF
 * iterators of its own, or each from /proc. */
enum sampler_reading {
	SAMPLER_READ_BATCH,
	SAMPLER_READ_EACH,
	SAMPLER_READ_PROC,
};

/* Where the kernel counts traffic per channel (traffic.h): where it allows
 * the programs that cost only the traffic counted, also pipes at every
 * system call's exit where it refuses those (every system call of the
 * machine pays a little), or nowhere (estimated from /proc). */
enum sampler_counting {
	SAMPLER_COUNT_AUTO,
	SAMPLER_COUNT_SYSCALLS,
	SAMPLER_COUNT_NO,
};

/* Reads active processes as want says, or the next way down where the
 * kernel refuses it (sampler_note() says why), and counts traffic as
 * counting says (not at all with want SAMPLER_READ_PROC: no BPF). A root
 * other than "" is read from /proc, with no counters: the iterators and
 * the counters see this machine's processes. */
int sampler_new(const char *root, enum sampler_reading want, enum sampler_counting counting, struct sampler **ret);
void sampler_free(struct sampler *s);
enum sampler_reading sampler_reading(const struct sampler *s);
/* Why it reads further down than it was asked to, for a person; NULL when
 * it reads as asked. */
const char *sampler_note(const struct sampler *s);
/* "bpf" or "proc": where active processes are read from. */
const char *sampler_source(const struct sampler *s);
const char *sampler_reading_to_string(enum sampler_reading r);
/* What the kernel counts exactly, per channel (traffic.h): "pipes and
 * sockets", "sockets", "pipes" or "none"; the rest is estimated from each
 * process's read(2)/write(2) bytes. And why not all, or NULL. */
const char *sampler_counted(const struct sampler *s);
const char *sampler_counted_note(const struct sampler *s);
/* The CPU time the last sample took to read the counts and make them
 * channels, in microseconds: what the counters cost a sample. */
uint64_t sampler_counting_usec(const struct sampler *s);
/* The calls the counters lost in the last sample's window because their
 * maps were full (traffic_lost()): when not 0, that sample's channels were
 * all estimated from /proc, as without counters. */
uint64_t sampler_counts_lost(const struct sampler *s);

/* One cycle at now_usec (CLOCK_MONOTONIC). The first call only takes the
 * baseline and returns an empty result. */
int sampler_sample(struct sampler *s, uint64_t now_usec, struct sampler_result **ret);
void sampler_result_free(struct sampler_result *r);

/* Where pid is in r->procs (sorted by pid), or -1 when it was not active. */
long sampler_result_index(const struct sampler_result *r, pid_t pid);

const char *channel_kind_to_string(enum channel_kind k);
