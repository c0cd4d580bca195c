/* Exact traffic counters, kept by the kernel (daemon/sample/bpf/traffic.bpf.c):
 * for each pipe or socket, each process and each direction, the bytes it
 * moved and the calls that moved them (messages: one write(2), send(2),
 * read(2), recv(2) or splice(2) that moved a byte or more). Unlike
 * /proc/PID/io they count send(2) and recv(2), credit a process's I/O to
 * the one channel it went through, and show how often a pair wakes the
 * other even when it moves few bytes.
 *
 * Each part is counted where the kernel lets ccxd load and attach its
 * programs, and only there (traffic_note() tells why not):
 *   pipes    anonymous pipes (pipe:[INODE] in /proc), by BPF programs at
 *            the exit of the kernel's pipe read and write functions, and of
 *            do_splice() for splice(2) (not vmsplice(2) nor tee(2)); or, on
 *            request, where the kernel refuses those (some refuse fexit
 *            programs even to root), at the exit of their system calls;
 *   sockets  any family, by the tracepoints sock_send_length and
 *            sock_recv_length (Linux 6.3): all that goes through sendmsg
 *            and recvmsg (not splice(2) out of a socket; peeks are not
 *            counted).
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
	TRAFFIC_SOCKET,
};

enum traffic_direction {
	TRAFFIC_WRITE,             /* write(2), send(2), splice(2) into a pipe */
	TRAFFIC_READ,              /* read(2), recv(2), splice(2) out of a pipe */
};

struct traffic_entry {
	uint64_t inode;            /* the pipe's or socket's, as /proc/PID/fd shows it */
	pid_t pid;                 /* the process (tgid), as ccxd's pid namespace numbers it */
	enum traffic_kind kind;
	enum traffic_direction direction;
	uint64_t bytes;
	uint64_t messages;         /* the calls that moved a byte or more */
};

/* The counts since the previous read (since traffic_new() at the first),
 * one entry per (inode, pid, kind, direction) that moved a byte, sorted by
 * inode, pid, kind and direction; the caller frees *ret. It waits for the
 * programs running on other CPUs to finish (an RCU grace period: under a
 * millisecond on an idle machine, tens of milliseconds on a loaded one) so
 * that none of their counts falls between two reads. Processes outside
 * ccxd's pid namespace are not counted. */
int traffic_read(struct traffic *t, struct traffic_entry **ret, size_t *n);

/* The calls that were not counted because there were more than
 * TRAFFIC_ENTRIES (16384) channel, process and direction triples between
 * two reads, since traffic_new(). */
uint64_t traffic_lost(const struct traffic *t);

/* The first of the entries of e (n, as traffic_read() sorts them) with
 * inode and pid, the others (the other direction) right after it; NULL
 * when none has. */
const struct traffic_entry *traffic_find(const struct traffic_entry *e, size_t n, uint64_t inode, pid_t pid);
