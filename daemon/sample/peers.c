#include "peers.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "sockdiag.h"
#include "util.h"

struct tcp_seen {
	uint64_t inode;
	uint64_t bytes;            /* acked + received */
};

struct peers {
	struct sockdiag *diag;     /* NULL: sockets are not sampled */
	uint64_t cycle;            /* the sample being built */
	struct sockdiag_unix *unix_socks;    /* the last dump of connected Unix sockets, by inode */
	size_t n_unix;
	uint64_t *not_unix;        /* socket inodes the last dump did not have (TCP, UDP, listeners) */
	size_t n_not_unix;
	uint64_t unix_cycle;       /* the sample that dumped them */
	struct tcp_seen *tcp;
	size_t n_tcp;
	uint64_t tcp_usec;         /* when those were read */
	struct sockdiag_tcp *tcp_known;  /* the last dump's loopback connections, by inode */
	size_t n_tcp_known;
	uint64_t *not_tcp;         /* active sockets neither Unix nor in that dump (UDP, listeners) */
	size_t n_not_tcp;
	uint64_t tcp_cycle;        /* the sample that dumped them */
};

int peers_new(struct peers **ret) {
	struct peers *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	r = sockdiag_new(&p->diag);
	if (r < 0) {
		log_warning_errno(r, "No socket diagnostics (%m): only pipes will be sampled");
		p->diag = NULL;
	}
	*ret = p;
	return 0;
}

void peers_free(struct peers *p) {
	if (!p)
		return;
	sockdiag_free(p->diag);
	free(p->tcp);
	free(p->unix_socks);
	free(p->not_unix);
	free(p->tcp_known);
	free(p->not_tcp);
	free(p);
}

/* Inodes, and the records that begin with one (struct tcp_seen,
 * sockdiag_unix, sockdiag_tcp): a pointer to a struct points to its first
 * member. */
static int compare_u64(const void *a, const void *b) {
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}
_Static_assert(offsetof(struct tcp_seen, inode) == 0, "tcp_seen begins with its inode");
_Static_assert(offsetof(struct sockdiag_unix, inode) == 0, "sockdiag_unix begins with its inode");
_Static_assert(offsetof(struct sockdiag_tcp, inode) == 0, "sockdiag_tcp begins with its inode");

/* A dump lists every Unix socket of the machine, ten thousand on a busy
 * one, while a connected socket's peer never changes: the last dump answers
 * for as long as it knows every socket the active processes hold, and for
 * no longer than this many samples (a datagram socket may connect anew). */
#define UNIX_DUMP_MAX_AGE 10

static const struct sockdiag_unix *unix_peer_of(const struct peers *p, uint64_t inode) {
	struct sockdiag_unix key = { .inode = inode };

	return p->n_unix ? bsearch(&key, p->unix_socks, p->n_unix, sizeof(key), compare_u64) : NULL;
}

/* Whether inode is in a sorted list of them. */
static bool in_list(const uint64_t *list, size_t n, uint64_t inode) {
	return n && bsearch(&inode, list, n, sizeof(inode), compare_u64);
}

/* Whether the last dump still answers for every socket in eps. */
static bool unix_dump_fresh(const struct peers *p, const struct endpoint *eps, size_t n) {
	if (!p->unix_cycle || p->cycle - p->unix_cycle >= UNIX_DUMP_MAX_AGE)
		return false;
	for (size_t i = 0; i < n; i++)
		if (eps[i].kind == PROCFS_FD_SOCKET && !unix_peer_of(p, eps[i].inode) &&
		    !in_list(p->not_unix, p->n_not_unix, eps[i].inode))
			return false;
	return true;
}

static bool unix_listed(const struct peers *p, uint64_t inode) {
	return unix_peer_of(p, inode) != NULL;
}

/* The sockets of eps that a dump did not list (listed() says which it
 * did), sorted, as a fresh list in place of *list. */
static int note_unlisted(const struct peers *p, const struct endpoint *eps, size_t n,
			 bool (*listed)(const struct peers *, uint64_t), uint64_t **list, size_t *n_list) {
	uint64_t *others = calloc(n ? n : 1, sizeof(*others));
	size_t k = 0;

	if (!others)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (eps[i].kind == PROCFS_FD_SOCKET && !listed(p, eps[i].inode))
			others[k++] = eps[i].inode;
	if (k > 1)
		qsort(others, k, sizeof(*others), compare_u64);
	free(*list);
	*list = others;
	*n_list = k;
	return 0;
}

/* Dumps the Unix sockets again, and notes which of eps's sockets are not
 * among them. */
static int unix_dump(struct peers *p, const struct endpoint *eps, size_t n) {
	struct sockdiag_unix *socks;
	size_t n_socks;
	int r = sockdiag_unix(p->diag, &socks, &n_socks);

	if (r < 0)
		return r;
	if (n_socks > 1)
		qsort(socks, n_socks, sizeof(*socks), compare_u64);
	free(p->unix_socks);
	p->unix_socks = socks;
	p->n_unix = n_socks;
	p->unix_cycle = p->cycle + 1;   /* never 0: 0 means no dump yet */
	return note_unlisted(p, eps, n, unix_listed, &p->not_unix, &p->n_not_unix);
}

static int unix_channels(struct peers *p, const struct endpoint *eps, size_t n, struct sampler_result *res,
			 size_t *allocated) {
	int r;

	if (!unix_dump_fresh(p, eps, n) && (r = unix_dump(p, eps, n)) < 0)
		return log_debug_errno(r, "Failed to dump Unix sockets, ignoring: %m"), 0;
	/* eps is sorted by kind, then inode: each socket of an active process once. */
	for (size_t i = 0; i < n; i++) {
		const struct sockdiag_unix *u = eps[i].kind == PROCFS_FD_SOCKET ? unix_peer_of(p, eps[i].inode) : NULL;
		long a, b;
		struct sampler_channel *c;

		/* Each connection from both ends: keep the one from the lower inode. */
		if (!u || u->peer < u->inode || (i > 0 && eps[i - 1].kind == eps[i].kind && eps[i - 1].inode == eps[i].inode))
			continue;
		a = channels_socket_owner(eps, n, u->inode);
		b = channels_socket_owner(eps, n, u->peer);
		if (a < 0 || b < 0 || a == b)
			continue;
		c = channels_add(res, allocated);
		if (!c)
			return -ENOMEM;
		c->kind = CHANNEL_UNIX;
		c->from = res->procs[a].pid;
		c->to = res->procs[b].pid;
		c->inode = u->inode;
	}
	return 0;
}

static uint64_t tcp_bytes_before(const struct peers *p, uint64_t inode, bool *found) {
	struct tcp_seen key = { .inode = inode }, *hit;

	hit = p->n_tcp ? bsearch(&key, p->tcp, p->n_tcp, sizeof(key), compare_u64) : NULL;
	*found = hit != NULL;
	return hit ? hit->bytes : 0;
}

/* A TCP dump walks the kernel's whole table of connections, twice (IPv4 and
 * IPv6), however few there are: the connections it found are asked for one
 * by one instead, each a hash lookup, while they are every socket the
 * active processes hold that could be TCP, and for no longer than this many
 * samples. */
#define TCP_DUMP_MAX_AGE 10

static const struct sockdiag_tcp *tcp_known(const struct peers *p, uint64_t inode) {
	struct sockdiag_tcp key = { .inode = inode };

	return p->n_tcp_known ? bsearch(&key, p->tcp_known, p->n_tcp_known, sizeof(key), compare_u64) : NULL;
}

/* The active processes' sockets that could be TCP: those no Unix dump has. */
static bool maybe_tcp(const struct peers *p, const struct endpoint *e) {
	return e->kind == PROCFS_FD_SOCKET && !unix_peer_of(p, e->inode);
}

static bool tcp_listed(const struct peers *p, uint64_t inode) {
	return unix_peer_of(p, inode) || tcp_known(p, inode);
}

/* Dumps the loopback connections and keeps them, with the candidates they
 * do not include, for the lookups of the next samples. */
static int tcp_dump(struct peers *p, const struct endpoint *eps, size_t n, struct sockdiag_tcp **ret,
		    size_t *n_ret) {
	struct sockdiag_tcp *socks, *known;
	size_t n_socks;
	int r = sockdiag_tcp_loopback(p->diag, &socks, &n_socks);

	if (r < 0)
		return r;
	known = calloc(n_socks ? n_socks : 1, sizeof(*known));
	if (!known) {
		free(socks);
		return -ENOMEM;
	}
	if (n_socks)
		memcpy(known, socks, n_socks * sizeof(*known));
	if (n_socks > 1)
		qsort(known, n_socks, sizeof(*known), compare_u64);
	free(p->tcp_known);
	p->tcp_known = known;
	p->n_tcp_known = n_socks;
	p->tcp_cycle = p->cycle + 1;   /* never 0: 0 means no dump yet */
	r = note_unlisted(p, eps, n, tcp_listed, &p->not_tcp, &p->n_not_tcp);
	if (r < 0) {
		free(socks);
		return r;
	}
	*ret = socks;
	*n_ret = n_socks;
	return 0;
}

/* The active processes' loopback connections with their counters now: by
 * lookups while the last dump knows them all, else by a new dump. */
static int tcp_fetch(struct peers *p, const struct endpoint *eps, size_t n, struct sockdiag_tcp **ret,
		     size_t *n_ret) {
	struct sockdiag_tcp *socks;
	size_t k = 0;
	bool fresh = p->tcp_cycle && p->cycle - p->tcp_cycle < TCP_DUMP_MAX_AGE;

	for (size_t i = 0; fresh && i < n; i++)
		fresh = !maybe_tcp(p, &eps[i]) || tcp_known(p, eps[i].inode) ||
			in_list(p->not_tcp, p->n_not_tcp, eps[i].inode);
	if (!fresh)
		return tcp_dump(p, eps, n, ret, n_ret);
	socks = calloc(n ? n : 1, sizeof(*socks));
	if (!socks)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct sockdiag_tcp *known = maybe_tcp(p, &eps[i]) ? tcp_known(p, eps[i].inode) : NULL;
		int r;
		if (!known || (i > 0 && eps[i - 1].kind == eps[i].kind && eps[i - 1].inode == eps[i].inode))
			continue;
		r = sockdiag_tcp_lookup(p->diag, known, &socks[k]);
		if (r == -ENOENT)
			continue;   /* closed since */
		if (r < 0) {
			free(socks);
			return tcp_dump(p, eps, n, ret, n_ret);
		}
		k++;
	}
	*ret = socks;
	*n_ret = k;
	return 0;
}

/* Loopback TCP: the two sockets of a connection have each other's ports.
 * tcp_info counts the bytes for real, both ways. */
static int tcp_channels(struct peers *p, const struct endpoint *eps, size_t n, struct sampler_result *res,
			size_t *allocated) {
	struct sockdiag_tcp *socks;
	struct tcp_seen *now;
	size_t n_socks;
	uint64_t dump_usec;
	double span;
	bool any = false;
	int r;

	for (size_t i = 0; !any && i < n; i++)
		any = maybe_tcp(p, &eps[i]);
	if (!any) {
		/* Counters from before a gap would make a rate over the wrong span. */
		free(p->tcp);
		p->tcp = NULL;
		p->n_tcp = 0;
		p->tcp_usec = 0;
		return 0;
	}
	r = tcp_fetch(p, eps, n, &socks, &n_socks);
	if (r < 0)
		return log_debug_errno(r, "Failed to read TCP sockets, ignoring: %m"), 0;
	/* Over the time between the two reads, for the reason io_rates() (reader.c) gives. */
	dump_usec = util_usec(CLOCK_MONOTONIC);
	span = p->tcp_usec && dump_usec > p->tcp_usec ? (double)(dump_usec - p->tcp_usec) / 1e6 : 1.0;
	p->tcp_usec = dump_usec;
	now = calloc(n_socks ? n_socks : 1, sizeof(*now));
	if (!now) {
		free(socks);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n_socks; i++) {
		now[i].inode = socks[i].inode;
		now[i].bytes = socks[i].bytes_acked + socks[i].bytes_received;
	}
	for (size_t i = 0; i < n_socks; i++) {
		long a = channels_socket_owner(eps, n, socks[i].inode), b = -1;
		size_t j;
		bool found_i, found_j;
		uint64_t before_i, before_j;
		struct sampler_channel *c;

		if (a < 0 || socks[i].sport > socks[i].dport)
			continue;   /* each connection once, from its lower port */
		for (j = 0; j < n_socks; j++)
			if (j != i && socks[j].sport == socks[i].dport && socks[j].dport == socks[i].sport)
				break;
		if (j == n_socks || (b = channels_socket_owner(eps, n, socks[j].inode)) < 0 || a == b)
			continue;
		before_i = tcp_bytes_before(p, socks[i].inode, &found_i);
		before_j = tcp_bytes_before(p, socks[j].inode, &found_j);
		c = channels_add(res, allocated);
		if (!c) {
			free(now);
			free(socks);
			return -ENOMEM;
		}
		c->kind = CHANNEL_TCP;
		c->from = res->procs[a].pid;
		c->to = res->procs[b].pid;
		c->inode = socks[i].inode;
		/* Each byte is acked at one end and received at the other: half of
		 * the sum of both ends is what crossed, both ways together. */
		if (found_i && found_j)
			c->bytes_per_s = (double)(now[i].bytes - before_i + now[j].bytes - before_j) / 2.0 / span;
	}
	free(socks);
	if (n_socks > 1)   /* now may be NULL without loopback TCP sockets */
		qsort(now, n_socks, sizeof(*now), compare_u64);
	free(p->tcp);
	p->tcp = now;
	p->n_tcp = n_socks;
	return 0;
}

int peers_channels(struct peers *p, uint64_t cycle, const struct endpoint *eps, size_t n, struct sampler_result *res,
		   size_t *allocated) {
	int r;

	if (!p->diag)
		return 0;
	p->cycle = cycle;
	r = unix_channels(p, eps, n, res, allocated);
	if (r >= 0)
		r = tcp_channels(p, eps, n, res, allocated);
	return r;
}
