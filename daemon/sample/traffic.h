/* Exact traffic counters, kept by the kernel (daemon/sample/bpf/traffic.bpf.c):
 * for each queue (a pipe, a Unix socket's receiving end, one direction of a
 * TCP connection), each process and each direction, the bytes it moved and
 * the calls that moved them (messages: one write(2), send(2), read(2),
 * recv(2) or splice(2) that moved a byte or more). Unlike /proc/PID/io they
 * count send(2) and recv(2), credit a process's I/O to the one channel it
 * went through, and show how often a pair wakes the other even when it
 * moves few bytes. Both ends of a queue name it alike, so that who wrote
 * into it and who read it out are known even of a connection that ended
 * before anyone could look at its sockets in /proc.
 *
 * Each part is counted where the kernel lets ccxd load and attach its
 * programs, and only there (traffic_note() tells why not):
 *   pipes    anonymous pipes (pipe:[INODE] in /proc), by BPF programs at
 *            the exit of the kernel's pipe read and write functions, and of
 *            do_splice() for splice(2) (not vmsplice(2) nor tee(2)); or, on
 *            request, where the kernel refuses those (some refuse fexit
 *            programs even to root), at the exit of their system calls;
 *   sockets  Unix and TCP ones, by the tracepoints sock_send_length and
 *            sock_recv_length (Linux 6.3): all that goes through sendmsg
 *            and recvmsg (not splice(2) out of a socket; peeks are not
 *            counted; nor a Unix datagram sent to an address rather than
 *            through a connected socket).
 * Both need a kernel with BTF and the right to load BPF tracing programs
 * (CAP_BPF and CAP_PERFMON, or root). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct traffic;

/* Loads and attaches what the kernel allows. With syscalls, where the
 * kernel refuses the pipe programs, pipes are counted at the exit of their
 * system calls instead: read(2), write(2), readv(2), writev(2), preadv2(2),
 * pwritev2(2), sendfile(2), splice(2) (x86-64), through a raw tracepoint
 * that runs at the exit of every system call of the machine, which costs
 * each of them a little. Fails (-errno) only where BPF cannot be used at
 * all (no BTF, no right to create maps); otherwise see
 * traffic_counts_pipes(), traffic_counts_sockets(), traffic_note(). */
int traffic_new(bool syscalls, struct traffic **ret);
void traffic_free(struct traffic *t);

bool traffic_counts_pipes(const struct traffic *t);
bool traffic_counts_sockets(const struct traffic *t);
/* What is not counted, and why (what the kernel refused, with its errno),
 * in words for a person; NULL when everything is. */
const char *traffic_note(const struct traffic *t);

enum traffic_kind {
	TRAFFIC_PIPE,
	TRAFFIC_UNIX,
	TRAFFIC_TCP,
};

enum traffic_direction {
	TRAFFIC_WRITE,             /* write(2), send(2), splice(2) into a pipe */
	TRAFFIC_READ,              /* read(2), recv(2), splice(2) out of a pipe */
};

struct traffic_entry {
	uint64_t queue;            /* a pipe's inode or a Unix socket's (the receiving
				    * end's), as /proc/PID/fd shows them; a hash of a TCP
				    * connection's receiving and sending ends */
	pid_t pid;                 /* the process (tgid), as ccxd's pid namespace numbers it */
	enum traffic_kind kind;
	enum traffic_direction direction;
	uint64_t bytes;
	uint64_t messages;         /* the calls that moved a byte or more */
};

/* The counts since the previous read (since traffic_new() at the first),
 * one entry per (kind, queue, pid, direction) that moved a byte, sorted so;
 * the caller frees *ret. It waits for the programs at work on other CPUs
 * to finish (microseconds) so that none of their counts falls between two
 * reads. Processes outside ccxd's pid namespace are not counted. */
int traffic_read(struct traffic *t, struct traffic_entry **ret, size_t *n);

/* Counts pid's calls one in 16 (TRAFFIC_THIN_EVERY), at random, each
 * counted one standing for that many and its bytes as many times (thin),
 * or each of them again: the counts stay estimates of the same totals, and
 * a process that makes hundreds of thousands of calls a second is spared
 * most of the counting's cost. -ERANGE for a pid above kernel.pid_max as
 * it was at traffic_new(). */
int traffic_thin(struct traffic *t, pid_t pid, bool thin);

/* The calls that were not counted because there were more than
 * TRAFFIC_ENTRIES (16384) channel, process and direction triples between
 * two reads, since traffic_new(). */
uint64_t traffic_lost(const struct traffic *t);

/* The first of the entries of e (n, as traffic_read() sorts them) of kind,
 * queue and pid, the other direction right after it; NULL when none. */
const struct traffic_entry *traffic_find(const struct traffic_entry *e, size_t n, enum traffic_kind kind,
					 uint64_t queue, pid_t pid);
