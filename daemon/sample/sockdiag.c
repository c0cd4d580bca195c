#include "sockdiag.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

/* The head of the kernel's struct tcp_info, which only ever grows at its
 * end: glibc's copy is too old to have the byte counters, and <linux/tcp.h>
 * clashes with the <netinet/tcp.h> that libnl brings in. */
struct sockdiag_tcp_info {
	uint8_t u8s[8];
	uint32_t u32s[24];
	uint64_t pacing_rate, max_pacing_rate;
	uint64_t bytes_acked, bytes_received;
};
_Static_assert(offsetof(struct sockdiag_tcp_info, bytes_acked) == 120, "tcp_info layout");

#define TCP_ESTABLISHED_STATE 1
#define SOCKDIAG_MSG_SIZE 32768

struct sockdiag {
	struct nl_sock *sock;
};

/* What a dump's callback fills in. */
struct collect {
	void *items;
	size_t n, allocated, size;
	int error;
};

static void *collect_next(struct collect *c) {
	if (c->n == c->allocated) {
		size_t na = c->allocated ? c->allocated * 2 : 64;
		void *p = realloc(c->items, na * c->size);
		if (!p) {
			c->error = -ENOMEM;
			return NULL;
		}
		c->items = p;
		c->allocated = na;
	}
	return (char *)c->items + c->size * c->n++;
}

int sockdiag_new(struct sockdiag **ret) {
	struct sockdiag *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return -ENOMEM;
	d->sock = nl_socket_alloc();
	if (!d->sock) {
		free(d);
		return -ENOMEM;
	}
	r = nl_connect(d->sock, NETLINK_SOCK_DIAG);
	if (r < 0) {
		sockdiag_free(d);
		return r == -NLE_PERM ? -EPERM : -EPROTONOSUPPORT;
	}
	/* A lookup's answer is the socket, or an error: an acknowledgement
	 * after it would be left for the next request to trip over. */
	nl_socket_disable_auto_ack(d->sock);
	/* One recvmsg(2) per message instead of libnl's two (a peek at its
	 * size first): the kernel makes a dump's messages no larger than
	 * 32 KiB, however large the reader's buffer. */
	nl_socket_disable_msg_peek(d->sock);
	r = nl_socket_set_msg_buf_size(d->sock, SOCKDIAG_MSG_SIZE);
	if (r < 0) {
		sockdiag_free(d);
		return -ENOMEM;
	}
	*ret = d;
	return 0;
}

void sockdiag_free(struct sockdiag *d) {
	if (!d)
		return;
	nl_socket_free(d->sock);
	free(d);
}

/* Sends one dump request and feeds every answer to parse. */
static int dump(struct sockdiag *d, const void *req, size_t len, nl_recvmsg_msg_cb_t parse, struct collect *c) {
	int r;

	r = nl_socket_modify_cb(d->sock, NL_CB_VALID, NL_CB_CUSTOM, parse, c);
	if (r >= 0)
		r = nl_send_simple(d->sock, SOCK_DIAG_BY_FAMILY, NLM_F_DUMP, (void *)req, len);
	if (r >= 0)
		r = nl_recvmsgs_default(d->sock);
	if (r < 0) {
		free(c->items);
		return -EIO;
	}
	if (c->error < 0) {
		free(c->items);
		return c->error;
	}
	return 0;
}

static int parse_unix(struct nl_msg *msg, void *arg) {
	struct collect *c = arg;
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct nlattr *tb[UNIX_DIAG_MAX + 1];
	const struct unix_diag_msg *u;
	struct sockdiag_unix *item;

	if (nlmsg_datalen(h) < (int)sizeof(*u) || nlmsg_parse(h, sizeof(*u), tb, UNIX_DIAG_MAX, NULL) < 0)
		return NL_SKIP;
	u = nlmsg_data(h);
	if (!tb[UNIX_DIAG_PEER] || nla_len(tb[UNIX_DIAG_PEER]) < (int)sizeof(uint32_t))
		return NL_OK;   /* not connected: nobody to talk to */
	item = collect_next(c);
	if (!item)
		return NL_STOP;
	item->inode = u->udiag_ino;
	item->peer = nla_get_u32(tb[UNIX_DIAG_PEER]);
	item->rqueue = tb[UNIX_DIAG_RQLEN] && nla_len(tb[UNIX_DIAG_RQLEN]) >= (int)sizeof(uint32_t)
			       ? nla_get_u32(tb[UNIX_DIAG_RQLEN]) : 0;
	return NL_OK;
}

int sockdiag_unix(struct sockdiag *d, struct sockdiag_unix **ret, size_t *n) {
	struct unix_diag_req req = {
		.sdiag_family = AF_UNIX,
		.udiag_states = ~0u,
		.udiag_show = UDIAG_SHOW_PEER | UDIAG_SHOW_RQLEN,
	};
	struct collect c = { .size = sizeof(struct sockdiag_unix) };
	int r = dump(d, &req, sizeof(req), parse_unix, &c);

	if (r < 0)
		return r;
	*ret = c.items;
	*n = c.n;
	return 0;
}

static bool is_loopback(uint8_t family, const uint32_t addr[4]) {
	static const uint32_t v6_loopback[4] = { 0, 0, 0, 0 };
	const uint8_t *b = (const uint8_t *)addr;

	if (family == AF_INET)
		return b[0] == 127;
	/* ::1, or ::ffff:127.x.y.z */
	if (memcmp(addr, v6_loopback, 12) == 0 && addr[3] == htonl(1))
		return true;
	return addr[0] == 0 && addr[1] == 0 && addr[2] == htonl(0xffff) && b[12] == 127;
}

static int parse_tcp(struct nl_msg *msg, void *arg) {
	struct collect *c = arg;
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct nlattr *tb[INET_DIAG_MAX + 1];
	const struct inet_diag_msg *m;
	struct sockdiag_tcp_info info = { 0 };
	struct sockdiag_tcp *item;

	if (nlmsg_datalen(h) < (int)sizeof(*m) || nlmsg_parse(h, sizeof(*m), tb, INET_DIAG_MAX, NULL) < 0)
		return NL_SKIP;
	m = nlmsg_data(h);
	if (!is_loopback(m->idiag_family, m->id.idiag_src) || !is_loopback(m->idiag_family, m->id.idiag_dst) ||
	    !tb[INET_DIAG_INFO])
		return NL_OK;
	/* Older kernels send a shorter tcp_info: without the counters, no rate. */
	if (nla_len(tb[INET_DIAG_INFO]) < (int)sizeof(info))
		return NL_OK;
	memcpy(&info, nla_data(tb[INET_DIAG_INFO]), sizeof(info));
	item = collect_next(c);
	if (!item)
		return NL_STOP;
	item->inode = m->idiag_inode;
	item->family = m->idiag_family;
	item->sport = ntohs(m->id.idiag_sport);
	item->dport = ntohs(m->id.idiag_dport);
	memcpy(item->src, m->id.idiag_src, sizeof(item->src));
	memcpy(item->dst, m->id.idiag_dst, sizeof(item->dst));
	item->ifindex = m->id.idiag_if;
	item->bytes_acked = info.bytes_acked;
	item->bytes_received = info.bytes_received;
	return NL_OK;
}

int sockdiag_tcp_loopback(struct sockdiag *d, struct sockdiag_tcp **ret, size_t *n) {
	static const uint8_t families[] = { AF_INET, AF_INET6 };
	struct collect c = { .size = sizeof(struct sockdiag_tcp) };

	for (size_t i = 0; i < sizeof(families); i++) {
		struct inet_diag_req_v2 req = {
			.sdiag_family = families[i],
			.sdiag_protocol = IPPROTO_TCP,
			.idiag_ext = 1 << (INET_DIAG_INFO - 1),
			.idiag_states = 1 << TCP_ESTABLISHED_STATE,
		};
		struct collect part = { .size = c.size, .items = c.items, .n = c.n, .allocated = c.allocated };
		int r = dump(d, &req, sizeof(req), parse_tcp, &part);
		if (r < 0)
			return r;   /* dump() freed the items */
		c = part;
	}
	*ret = c.items;
	*n = c.n;
	return 0;
}

int sockdiag_tcp_lookup(struct sockdiag *d, const struct sockdiag_tcp *known, struct sockdiag_tcp *ret) {
	struct inet_diag_req_v2 req = {
		.sdiag_family = known->family,
		.sdiag_protocol = IPPROTO_TCP,
		.idiag_ext = 1 << (INET_DIAG_INFO - 1),
		.idiag_states = ~0u,
		.id = {
			.idiag_sport = htons(known->sport),
			.idiag_dport = htons(known->dport),
			.idiag_if = known->ifindex,
			.idiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE },
		},
	};
	struct collect c = { .size = sizeof(struct sockdiag_tcp) };
	int r;

	memcpy(req.id.idiag_src, known->src, sizeof(req.id.idiag_src));
	memcpy(req.id.idiag_dst, known->dst, sizeof(req.id.idiag_dst));
	r = nl_socket_modify_cb(d->sock, NL_CB_VALID, NL_CB_CUSTOM, parse_tcp, &c);
	if (r >= 0)
		r = nl_send_simple(d->sock, SOCK_DIAG_BY_FAMILY, 0, &req, sizeof(req));
	if (r >= 0)
		r = nl_recvmsgs_default(d->sock);
	if (r < 0 || c.error < 0 || c.n != 1) {
		free(c.items);
		if (c.error < 0)
			return c.error;
		return r == -NLE_OBJ_NOTFOUND || r >= 0 ? -ENOENT : -EIO;
	}
	*ret = *(struct sockdiag_tcp *)c.items;
	free(c.items);
	/* The same addresses and ports may belong to a newer connection. */
	return ret->inode == known->inode ? 0 : -ENOENT;
}
