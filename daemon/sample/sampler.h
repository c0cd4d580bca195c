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

#include "reader.h"
#include "sample.h"

struct sampler;


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

/* Has the kernel count the calls of pids (n of them) one in 16, as
 * estimates of the same totals (traffic_thin()), and every call of the
 * processes it thinned before and that are not among them. What a process
 * that makes hundreds of thousands of calls a second, and whose group is
 * settled, is spared. Nothing where traffic is not counted. */
int sampler_thin(struct sampler *s, const pid_t *pids, size_t n);

/* One cycle at now_usec (CLOCK_MONOTONIC). The first call only takes the
 * baseline and returns an empty result. */
int sampler_sample(struct sampler *s, uint64_t now_usec, struct sampler_result **ret);


