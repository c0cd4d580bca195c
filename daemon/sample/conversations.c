#include "conversations.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>

#include "channels.h"
#include "util.h"

static enum channel_kind channel_kind(enum traffic_kind k) {
	return k == TRAFFIC_PIPE ? CHANNEL_PIPE : k == TRAFFIC_UNIX ? CHANNEL_UNIX : CHANNEL_TCP;
}

static bool counted(enum channel_kind k, bool pipes, bool sockets) {
	return k == CHANNEL_PIPE ? pipes : (k == CHANNEL_UNIX || k == CHANNEL_TCP) && sockets;
}

/* What one writer moved to one reader through one queue. */
struct flow {
	enum traffic_kind kind;
	pid_t from, to;
	uint64_t queue;
	double bytes, messages;
};

struct flows {
	struct flow *f;
	size_t n, allocated;
};

/* One end of a queue: what a process wrote into it, or read out of it. */
struct end {
	pid_t pid;
	double bytes, messages;
};

/* The flows of one queue, e[0..n) (sorted by pid). A writer's share of
 * what a reader read is its share of what was written: several processes
 * write into one pipe (hackbench), several read out of one (a pool of
 * workers). Each pair carries the more of what its writer wrote and its
 * reader read, as a splice(2) may be counted at one end only; its messages
 * are the reader's calls, shared so: each is a wake-up of the reader at
 * most. */
static int queue_flows(const struct sampler_result *res, const struct traffic_entry *e, size_t n, struct flows *out) {
	double written = 0, read = 0;

	for (size_t i = 0; i < n; i++) {
		if (e[i].direction == TRAFFIC_WRITE)
			written += (double)e[i].bytes;
		else
			read += (double)e[i].bytes;
	}
	if (written <= 0 || read <= 0)
		return 0;
	for (size_t w = 0; w < n; w++) {
		if (e[w].direction != TRAFFIC_WRITE || sampler_result_index(res, e[w].pid) < 0)
			continue;
		for (size_t r = 0; r < n; r++) {
			struct flow *f;
			if (e[r].direction != TRAFFIC_READ || e[r].pid == e[w].pid || sampler_result_index(res, e[r].pid) < 0)
				continue;
			f = util_grow(out->f, &out->allocated, out->n + 1, sizeof(*f));
			if (!f)
				return -ENOMEM;
			out->f = f;
			out->f[out->n++] = (struct flow){
				.kind = e[w].kind,
				.from = e[w].pid,
				.to = e[r].pid,
				.queue = e[w].queue,
				.bytes = (double)e[w].bytes * (double)e[r].bytes / (written < read ? written : read),
				.messages = (double)e[r].messages * (double)e[w].bytes / written,
			};
		}
	}
	return 0;
}

/* By kind, then pair (the lower pid first), then the most bytes first. */
static int compare_flow(const void *a, const void *b) {
	const struct flow *x = a, *y = b;
	pid_t xl = x->from < x->to ? x->from : x->to, yl = y->from < y->to ? y->from : y->to;
	pid_t xh = x->from < x->to ? x->to : x->from, yh = y->from < y->to ? y->to : y->from;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (xl != yl)
		return xl < yl ? -1 : 1;
	if (xh != yh)
		return xh < yh ? -1 : 1;
	return (x->bytes < y->bytes) - (x->bytes > y->bytes);
}

/* The flows f[0..n) of one pair and kind, the largest first, as a channel. */
static int add_channel(struct sampler_result *res, size_t *allocated, const struct flow *f, size_t n,
		       double window_s) {
	double bytes[2] = { 0, 0 }, messages[2] = { 0, 0 };
	pid_t a = f[0].from, b = f[0].to;
	struct sampler_channel *c;
	bool back;

	for (size_t i = 0; i < n; i++) {
		int d = f[i].from != a;
		bytes[d] += f[i].bytes;
		messages[d] += f[i].messages;
	}
	c = channels_add(res, allocated);
	if (!c)
		return -ENOMEM;
	back = bytes[1] > bytes[0];
	c->kind = channel_kind(f[0].kind);
	c->from = back ? b : a;
	c->to = back ? a : b;
	/* A TCP queue is a hash, not an inode anyone could look up. */
	c->inode = f[0].kind == TRAFFIC_TCP ? 0 : f[0].queue;
	c->bytes_per_s = (bytes[0] + bytes[1]) / window_s;
	c->messages_per_s = (messages[0] + messages[1]) / window_s;
	c->both = messages[0] > 0 && messages[1] > 0;
	c->exact = true;
	return 0;
}

int conversations_add(struct sampler_result *res, size_t *allocated, const struct traffic_entry *e, size_t n,
		      double window_s, bool pipes, bool sockets) {
	struct flows flows = { 0 };
	size_t k = 0;
	int r = 0;

	if (window_s <= 0)
		return 0;
	/* What /proc showed of the kinds counted: the counts know better. */
	for (size_t i = 0; i < res->n_channels; i++)
		if (!counted(res->channels[i].kind, pipes, sockets))
			res->channels[k++] = res->channels[i];
	res->n_channels = k;
	for (size_t i = 0; i < n && r == 0;) {
		size_t end = i;
		long p;
		while (end < n && e[end].kind == e[i].kind && e[end].queue == e[i].queue)
			end++;
		if (counted(channel_kind(e[i].kind), pipes, sockets)) {
			r = queue_flows(res, e + i, end - i, &flows);
			for (size_t j = i; j < end; j++)
				if ((p = sampler_result_index(res, e[j].pid)) >= 0) {
					double bps = (double)e[j].bytes / window_s;
					if (e[j].direction == TRAFFIC_WRITE)
						res->procs[p].counted_write_bps += bps;
					else
						res->procs[p].counted_read_bps += bps;
				}
		}
		i = end;
	}
	if (flows.n > 1)
		qsort(flows.f, flows.n, sizeof(*flows.f), compare_flow);
	for (size_t i = 0; i < flows.n && r == 0;) {
		size_t end = i + 1;
		while (end < flows.n && flows.f[end].kind == flows.f[i].kind &&
		       ((flows.f[end].from == flows.f[i].from && flows.f[end].to == flows.f[i].to) ||
			(flows.f[end].from == flows.f[i].to && flows.f[end].to == flows.f[i].from)))
			end++;
		r = add_channel(res, allocated, flows.f + i, end - i, window_s);
		i = end;
	}
	free(flows.f);
	return r;
}
