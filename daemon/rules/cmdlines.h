/* Command lines, read off the event loop. /proc/PID/cmdline is read from
 * the process's own memory, and a process may map a file over its
 * arguments: one on a FUSE mount that never answers blocks whoever reads
 * them until it does. So each read runs in a thread of its own, at most
 * CMDLINES_THREADS at once, and the loop never waits for one: a decision
 * that needs a command line not read yet waits for it, and is made again
 * once it is there (the ready callback).
 *
 * A user one of whose reads is still under way after CMDLINES_SLOW_USEC
 * gets no other until it returns: their processes' command lines count as
 * unreadable meanwhile (a rule's cmdline glob does not match them), and
 * other users' reads go on. */
#pragma once

#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#define CMDLINES_THREADS 8
#define CMDLINES_SLOW_USEC 100000
/* Reads waiting for a thread; past it a read is not made. */
#define CMDLINES_QUEUE_MAX 1024
/* The longest command line read: the rules' globs see this much. */
#define CMDLINES_MAX 4096

struct cmdlines;

/* A read under way for pid is done: its command line is there for
 * cmdlines_get() for the length of this call. tag is the caller's, from
 * cmdlines_get(). */
typedef void (*cmdlines_ready)(void *userdata, pid_t pid, int tag);

int cmdlines_new(sd_event *e, const char *root, cmdlines_ready ready, void *userdata, struct cmdlines **ret);
/* Threads still blocked in a read are left to finish; what they hold is
 * theirs to free. */
void cmdlines_free(struct cmdlines *c);

/* pid's command line (start_time tells the process; uid is its owner's):
 * 0 and *ret, malloc'd ("" where the process would not let it be read), in
 * the ready callback of the read made for it; -EINPROGRESS when a read is
 * under way or waits for a thread (the callback comes once it is done);
 * -EBUSY when its user's read blocks, -EAGAIN when the queue is full, and
 * -ENOMEM: then it cannot be read now. */
int cmdlines_get(struct cmdlines *c, pid_t pid, uint64_t start_time, uid_t uid, int tag, char **ret);

struct cmdlines_stats {
	uint64_t read;             /* reads done */
	uint64_t refused;          /* reads not made: a user's read blocked, or the queue was full */
	unsigned blocked;          /* reads under way past CMDLINES_SLOW_USEC now */
};
struct cmdlines_stats cmdlines_stats(const struct cmdlines *c);
