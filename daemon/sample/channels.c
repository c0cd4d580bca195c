#include "channels.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int compare_endpoint(const void *a, const void *b) {
	const struct endpoint *x = a, *y = b;

	if (x->kind != y->kind)
		return (x->kind > y->kind) - (x->kind < y->kind);
	if (x->inode != y->inode)
		return (x->inode > y->inode) - (x->inode < y->inode);
	return (x->proc > y->proc) - (x->proc < y->proc);
}

int channels_add_endpoints(struct endpoint **eps, size_t *n, size_t *allocated, struct procfs_fd *fds, size_t n_fds,
			   size_t proc) {
	for (size_t f = 0; f < n_fds; f++) {
		struct endpoint *grown = util_grow(*eps, allocated, *n + 1, sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		*eps = grown;
		grown[(*n)++] = (struct endpoint){ .kind = fds[f].kind, .inode = fds[f].inode, .proc = proc,
						   .readable = fds[f].readable, .writable = fds[f].writable };
	}
	return 0;
}

/* One entry per (kind, inode, process): a process holding the same end
 * twice (dup2, or stdout and stderr) holds it once. */
void channels_merge_endpoints(struct endpoint *eps, size_t *n) {
	size_t k = 0;

	/* eps is NULL when no process holds a pipe or socket: qsort() must not see it. */
	if (*n > 1)
		qsort(eps, *n, sizeof(*eps), compare_endpoint);
	for (size_t i = 0; i < *n; i++) {
		if (k > 0 && eps[k - 1].kind == eps[i].kind && eps[k - 1].inode == eps[i].inode &&
		    eps[k - 1].proc == eps[i].proc) {
			eps[k - 1].readable |= eps[i].readable;
			eps[k - 1].writable |= eps[i].writable;
			continue;
		}
		eps[k++] = eps[i];
	}
	*n = k;
}

long channels_socket_owner(const struct endpoint *eps, size_t n, uint64_t inode) {
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct endpoint *e = &eps[mid];
		if (e->kind < PROCFS_FD_SOCKET || (e->kind == PROCFS_FD_SOCKET && e->inode < inode))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && eps[lo].kind == PROCFS_FD_SOCKET && eps[lo].inode == inode)
		return (long)eps[lo].proc;
	return -1;
}

struct sampler_channel *channels_add(struct sampler_result *r, size_t *allocated) {
	struct sampler_channel *c = util_grow(r->channels, allocated, r->n_channels + 1, sizeof(*c));

	if (!c)
		return NULL;
	r->channels = c;
	memset(&c[r->n_channels], 0, sizeof(*c));
	return &c[r->n_channels++];
}

/* A pipe that two active processes alone hold, each with both ends. */
struct held_whole {
	size_t a, b;               /* procs[], a < b */
	uint64_t inode;
};

static int compare_held_whole(const void *x, const void *y) {
	const struct held_whole *p = x, *q = y;

	if (p->a != q->a)
		return (p->a > q->a) - (p->a < q->a);
	if (p->b != q->b)
		return (p->b > q->b) - (p->b < q->b);
	return (p->inode > q->inode) - (p->inode < q->inode);
}

/* Two processes that hold both ends of the same two pipes or more talk
 * both ways through them (perf bench sched pipe, a parent and the child it
 * answers): one channel between them, whose direction /proc cannot tell
 * (shared). One such pipe alone is no conversation: a make jobserver's
 * pipe, a self-pipe a server's workers inherited. Whether they use them is
 * for channels_share_bytes() to tell, from both ends' wake-ups. */
static int pipes_held_whole(struct held_whole *held, size_t n, struct sampler_result *res, size_t *allocated) {
	if (n > 1)
		qsort(held, n, sizeof(*held), compare_held_whole);
	for (size_t i = 0; i < n;) {
		size_t end = i;
		struct sampler_channel *c;

		while (end < n && held[end].a == held[i].a && held[end].b == held[i].b)
			end++;
		if (end - i >= 2) {
			c = channels_add(res, allocated);
			if (!c)
				return -ENOMEM;
			*c = (struct sampler_channel){ .kind = CHANNEL_PIPE, .from = res->procs[held[i].a].pid,
						       .to = res->procs[held[i].b].pid, .inode = held[i].inode,
						       .shared = true };
		}
		i = end;
	}
	return 0;
}

/* A pipe connects each process that writes it to each that reads it. A
 * process holding both ends (the one that made it and has not closed one
 * yet) is neither: that is how a parent and its child holding the same pipe
 * never make a pair of their own, unless they hold two that way
 * (pipes_held_whole()). */
int channels_pipes(const struct endpoint *eps, size_t n, struct sampler_result *res, size_t *allocated) {
	struct held_whole *held = NULL;
	size_t n_held = 0, allocated_held = 0;
	int r = 0;

	for (size_t i = 0; r >= 0 && i < n;) {
		size_t end = i;

		while (end < n && eps[end].kind == eps[i].kind && eps[end].inode == eps[i].inode)
			end++;
		if (eps[i].kind == PROCFS_FD_PIPE && end - i == 2 && eps[i].readable && eps[i].writable &&
		    eps[i + 1].readable && eps[i + 1].writable) {
			struct held_whole *grown = util_grow(held, &allocated_held, n_held + 1, sizeof(*grown));
			if (!grown) {
				r = -ENOMEM;
				break;
			}
			held = grown;
			/* Merged eps are by process within an inode: a < b. */
			held[n_held++] = (struct held_whole){ .a = eps[i].proc, .b = eps[i + 1].proc, .inode = eps[i].inode };
		}
		for (size_t w = i; eps[i].kind == PROCFS_FD_PIPE && w < end; w++) {
			if (!eps[w].writable || eps[w].readable)
				continue;
			for (size_t rd = i; rd < end; rd++) {
				struct sampler_channel *c;
				if (!eps[rd].readable || eps[rd].writable || eps[rd].proc == eps[w].proc)
					continue;
				c = channels_add(res, allocated);
				if (!c) {
					r = -ENOMEM;
					break;
				}
				c->kind = CHANNEL_PIPE;
				c->from = res->procs[eps[w].proc].pid;
				c->to = res->procs[eps[rd].proc].pid;
				c->inode = eps[i].inode;
			}
		}
		i = end;
	}
	if (r >= 0)
		r = pipes_held_whole(held, n_held, res, allocated);
	free(held);
	return r;
}

/* A process with busy threads is a channel of its own. What its threads
 * exchange has no counter: its read(2)/write(2) bytes stand for its
 * progress, and may be 0 (a thread group that only computes). */
int channels_threads(struct sampler_result *res, size_t *allocated) {
	for (size_t i = 0; i < res->n_procs; i++) {
		const struct sampler_process *p = &res->procs[i];
		struct sampler_channel *c;

		if (p->busy_threads < 2)
			continue;
		c = channels_add(res, allocated);
		if (!c)
			return -ENOMEM;
		c->kind = CHANNEL_THREADS;
		c->from = c->to = p->pid;
		c->bytes_per_s = p->read_bps + p->write_bps;
	}
	return 0;
}

/* A process's bytes that no counted channel took, never below nothing. */
static double uncounted(double bps, double counted) {
	return bps > counted ? bps - counted : 0;
}

/* Per active process while a sample is built: how its bytes are shared
 * out, its writes over the channels it writes into, its reads over those
 * it reads from (a socket's end both). */
struct share {
	unsigned out, in;
};

/* Where the kernel does not count them, pipes and Unix sockets have no byte
 * counters of their own: a process's read(2)/write(2) bytes, less what it
 * moved on the channels that are counted, are shared out evenly over its
 * other channels, and a channel carries what the busier of its ends
 * counted. Not the lesser: one end may move its bytes with splice(2) or
 * sendfile(2), which the counters do not see (pv reads its pipe that way).
 * An end that splices sleeps on the pipe, though: where one seldom wakes,
 * what it counted bounds what a one-way pipe carried (a loop that never
 * reads the pipe on its stdin counted the reads of its start, its
 * libraries, while the writer streams into /dev/null). The middle stage of a pipeline writes one pipe and reads another: each
 * gets all of its writes, or all of its reads. But a pipe carries nothing
 * unless both ends show they used it (bytes, or wake-ups for one that
 * splices): a process writing to a file or to
 * /dev/null with a pipe to a sleeping process on stderr does not stream
 * into it. Pipes that two processes hold whole (shared) carry both ways,
 * as a socket does, and are in use only when both ends wake: their bytes
 * alone may be a file's. Messages are the fewer of the two ends' wake-ups,
 * shared out the same way: a wake-up may have another cause, a message may
 * not wake anyone; an estimate, as the bytes are. */
/* Wake-ups a second that show an end of a pipe in use when no bytes do: a
 * program that splices wakes far more often; one that just started may
 * sleep a few times on its first page faults, which is no use of a pipe. */
#define CHANNELS_USE_WAKEUPS 20.0

/* What a one-way pipe in use carried: the busier end's count, at most
 * that of an end that wakes too seldom to splice. */
static double pipe_bytes(double out, double out_wakes, double in, double in_wakes) {
	double bytes = out > in ? out : in;

	if (out_wakes < CHANNELS_USE_WAKEUPS && out < bytes)
		bytes = out;
	if (in_wakes < CHANNELS_USE_WAKEUPS && in < bytes)
		bytes = in;
	return bytes;
}

void channels_share_bytes(struct sampler_result *res) {
	struct share *share = calloc(res->n_procs ? res->n_procs : 1, sizeof(*share));

	if (!share)
		return;
	for (size_t i = 0; i < res->n_channels; i++) {
		long a = sampler_result_index(res, res->channels[i].from), b = sampler_result_index(res, res->channels[i].to);
		bool two_way = res->channels[i].kind != CHANNEL_PIPE || res->channels[i].shared;
		if (res->channels[i].kind == CHANNEL_THREADS || res->channels[i].exact)
			continue;   /* a process's own, or counted: its rate is known */
		if (a >= 0) {
			share[a].out++;
			share[a].in += two_way;
		}
		if (b >= 0) {
			share[b].in++;
			share[b].out += two_way;
		}
	}
	for (size_t i = 0; i < res->n_channels; i++) {
		struct sampler_channel *c = &res->channels[i];
		long a = sampler_result_index(res, c->from), b = sampler_result_index(res, c->to);
		const struct sampler_process *pa, *pb;
		double a_out, a_in = 0, b_out = 0, b_in, a_wakes, b_wakes;
		bool two_way = c->kind == CHANNEL_UNIX || c->shared, used;

		if (c->kind == CHANNEL_THREADS || c->exact || a < 0 || b < 0)
			continue;
		pa = &res->procs[a];
		pb = &res->procs[b];
		a_wakes = pa->wakeups_per_s / (share[a].out + share[a].in);
		b_wakes = pb->wakeups_per_s / (share[b].out + share[b].in);
		c->messages_per_s = a_wakes < b_wakes ? a_wakes : b_wakes;
		if (c->kind == CHANNEL_TCP)
			continue;   /* its bytes are the socket's own (peers.h) */
		a_out = uncounted(pa->write_bps, pa->counted_write_bps) / share[a].out;
		b_in = uncounted(pb->read_bps, pb->counted_read_bps) / share[b].in;
		if (two_way) {
			a_in = uncounted(pa->read_bps, pa->counted_read_bps) / share[a].in;
			b_out = uncounted(pb->write_bps, pb->counted_write_bps) / share[b].out;
		}
		if (c->shared)
			used = a_wakes >= CHANNELS_USE_WAKEUPS && b_wakes >= CHANNELS_USE_WAKEUPS;
		else
			used = c->kind != CHANNEL_PIPE || ((a_out > 0 || a_wakes >= CHANNELS_USE_WAKEUPS) &&
							   (b_in > 0 || b_wakes >= CHANNELS_USE_WAKEUPS));
		if (!used) {
			c->bytes_per_s = c->messages_per_s = 0;
			continue;
		}
		if (two_way)
			c->bytes_per_s = (a_out > b_in ? a_out : b_in) + (b_out > a_in ? b_out : a_in);
		else
			c->bytes_per_s = pipe_bytes(a_out, a_wakes, b_in, b_wakes);
	}
	free(share);
}
