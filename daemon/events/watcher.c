#include "watcher.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "log.h"

/* Bursts of fork/exec/exit (a parallel build) outrun the default 208 KiB
 * socket buffer; each event is about 100 bytes on the wire. */
#define WATCHER_RCVBUF (8 * 1024 * 1024)
/* Datagrams taken per recvmmsg, and batches per wake-up before other
 * sources get their turn. A proc event datagram is about 100 bytes. */
#define WATCHER_BATCH 64
#define WATCHER_ROUNDS_MAX 16
#define WATCHER_DATAGRAM_MAX 512
/* The kernel answers LISTEN at once; silence this long means a PID namespace. */
#define WATCHER_ALL 0xffffffffu

/* Since Linux 6.6 a LISTEN may carry a filter; the uapi headers of older
 * distributions do not know it yet. */
struct watcher_listen_filter {
	enum proc_cn_mcast_op mcast_op;
	uint32_t event_type;
};

#define WATCHER_ACK_TIMEOUT_USEC (1000 * 1000)

enum watcher_state {
	WATCHER_WAITING_ACK,
	WATCHER_ACTIVE,
	WATCHER_UNAVAILABLE,
};

struct watcher {
	sd_event *event;
	struct nl_sock *sock;
	sd_event_source *io;
	sd_event_source *ack_timer;
	sd_event_source *defer;        /* reports unavailability from the loop */
	const struct watcher_ops *ops;
	void *userdata;
	enum watcher_state state;
	/* The kernel broadcasts its answer to every LISTEN to all listeners:
	 * ours carries this ack + 1 (its seq is the kernel's own counter). */
	uint32_t listen_ack;
	uint32_t subscribed;           /* event kinds asked for */
	char why[256];
	struct watcher_stats stats;
	char buffers[WATCHER_BATCH][WATCHER_DATAGRAM_MAX] __attribute__((aligned(NLMSG_ALIGNTO)));
};

static void set_unavailable(struct watcher *w, const char *fmt, const char *detail);

static void dispatch(struct watcher *w, const struct cn_msg *cn, const struct proc_event *ev) {
	/* Until our LISTEN is answered, what arrives is another listener's:
	 * in a PID namespace, where ours is ignored, its acknowledgement would
	 * pass for ours and its events carry another namespace's pids. (What
	 * happened before is what the start-up scan finds.) */
	if (w->state == WATCHER_WAITING_ACK &&
	    (ev->what != PROC_EVENT_NONE || cn->ack != w->listen_ack + 1))
		return;
	switch (ev->what) {
	case PROC_EVENT_NONE:
		if (w->state == WATCHER_WAITING_ACK) {
			w->state = WATCHER_ACTIVE;
			w->ack_timer = sd_event_source_disable_unref(w->ack_timer);
			log_debug("proc connector is listening");
			/* Only an unfiltered listener sees the acknowledgement, so
			 * the filter goes out after it. */
			watcher_subscribe(w, w->subscribed);
		}
		return;
	case PROC_EVENT_FORK:
		w->ops->fork(w->userdata, ev->event_data.fork.parent_tgid,
			     ev->event_data.fork.child_pid, ev->event_data.fork.child_tgid);
		break;
	case PROC_EVENT_EXEC:
		w->ops->exec(w->userdata, ev->event_data.exec.process_tgid, ev->timestamp_ns);
		break;
	case PROC_EVENT_COMM:
		w->ops->comm(w->userdata, ev->event_data.comm.process_pid, ev->event_data.comm.process_tgid);
		break;
	case PROC_EVENT_EXIT:
		w->ops->exit(w->userdata, ev->event_data.exit.process_pid, ev->event_data.exit.process_tgid);
		break;
	default:
		return;
	}
	w->stats.events++;
}

static void handle_message(struct watcher *w, const struct nlmsghdr *h) {
	const struct cn_msg *cn;
	struct proc_event ev;
	int len = nlmsg_datalen(h);

	/* Connector messages arrive as NLMSG_DONE. */
	if (h->nlmsg_type != NLMSG_DONE || len < (int)sizeof(struct cn_msg))
		return;
	cn = nlmsg_data(h);
	if (cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC ||
	    cn->len > (unsigned)len - sizeof(struct cn_msg) ||
	    cn->len < offsetof(struct proc_event, event_data) + sizeof(((struct proc_event *)0)->event_data.exit))
		return;
	/* The event starts 36 bytes into the message (nlmsghdr, cn_msg): not
	 * where its 64-bit timestamp may be read in place. A copy is. */
	memset(&ev, 0, sizeof(ev));
	memcpy(&ev, cn->data, cn->len < sizeof(ev) ? cn->len : sizeof(ev));
	dispatch(w, cn, &ev);
}

/* One recvmmsg takes every queued event: a burst costs one system call, and
 * a short batch tells that the queue is empty without another one. libnl
 * (which reads a datagram a call) sets the socket up; its nlmsg helpers walk
 * what arrives. */
static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
	struct watcher *w = userdata;

	(void)s;
	(void)revents;
	for (int round = 0; round < WATCHER_ROUNDS_MAX; round++) {
		struct sockaddr_nl from[WATCHER_BATCH];
		struct mmsghdr msgs[WATCHER_BATCH];
		struct iovec iov[WATCHER_BATCH];
		int n;

		for (int i = 0; i < WATCHER_BATCH; i++) {
			iov[i] = (struct iovec){ .iov_base = w->buffers[i], .iov_len = sizeof(w->buffers[i]) };
			msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_name = &from[i], .msg_namelen = sizeof(from[i]),
								  .msg_iov = &iov[i], .msg_iovlen = 1 } };
		}
		n = recvmmsg(fd, msgs, WATCHER_BATCH, MSG_DONTWAIT, NULL);
		if (n < 0) {
			if (errno == ENOBUFS) {
				/* The kernel dropped events; the socket keeps working. */
				w->stats.lost++;
				w->ops->lost(w->userdata);
				continue;
			}
			if (errno != EAGAIN && errno != EINTR)
				log_warning_errno(-errno, "Failed to receive proc events: %m");
			break;
		}
		for (int i = 0; i < n; i++) {
			struct nlmsghdr *h = (struct nlmsghdr *)w->buffers[i];
			int rem = (int)msgs[i].msg_len;

			/* Only the kernel speaks for the kernel. */
			if (from[i].nl_pid != 0 || (msgs[i].msg_hdr.msg_flags & MSG_TRUNC))
				continue;
			for (; nlmsg_ok(h, rem); h = nlmsg_next(h, &rem))
				handle_message(w, h);
		}
		if (n < WATCHER_BATCH)
			break;
	}
	return 0;
}

static int on_ack_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
	struct watcher *w = userdata;

	(void)s;
	(void)usec;
	if (w->state == WATCHER_WAITING_ACK)
		set_unavailable(w, "%s", "the proc connector did not acknowledge LISTEN (PID namespace?)");
	return 0;
}

static int on_report_unavailable(sd_event_source *s, void *userdata) {
	struct watcher *w = userdata;

	(void)s;
	w->defer = sd_event_source_disable_unref(w->defer);
	w->ops->unavailable(w->userdata, w->why);
	return 0;
}

static void set_unavailable(struct watcher *w, const char *fmt, const char *detail) {
	w->state = WATCHER_UNAVAILABLE;
	snprintf(w->why, sizeof(w->why), fmt, detail);
	w->io = sd_event_source_disable_unref(w->io);
	w->ack_timer = sd_event_source_disable_unref(w->ack_timer);
	if (w->sock) {
		nl_socket_free(w->sock);
		w->sock = NULL;
	}
	if (!w->defer && sd_event_add_defer(w->event, &w->defer, on_report_unavailable, w) < 0)
		w->ops->unavailable(w->userdata, w->why);
}

static int send_listen(struct nl_sock *sock, uint32_t events, uint32_t ack) {
	struct {
		struct cn_msg cn;
		struct watcher_listen_filter filter;
	} __attribute__((packed)) req = {
		.cn = { .id = { .idx = CN_IDX_PROC, .val = CN_VAL_PROC }, .ack = ack },
		.filter = { .mcast_op = PROC_CN_MCAST_LISTEN, .event_type = events },
	};
	/* Without a filter the request is the bare operation, as kernels before
	 * 6.6 require (they ignore anything longer). */
	size_t len = events == WATCHER_ALL ? sizeof(enum proc_cn_mcast_op) : sizeof(req.filter);
	struct nl_msg *msg = nlmsg_alloc_simple(NLMSG_DONE, 0);
	int r;

	if (!msg)
		return -NLE_NOMEM;
	req.cn.len = (uint16_t)len;
	r = nlmsg_append(msg, &req, sizeof(req.cn) + len, NLMSG_ALIGNTO);
	if (r >= 0)
		r = nl_send_auto(sock, msg);
	nlmsg_free(msg);
	return r < 0 ? r : 0;
}

void watcher_subscribe(struct watcher *w, uint32_t events) {
	int r;

	w->subscribed = events;
	if (w->state != WATCHER_ACTIVE || !w->sock)
		return;
	r = send_listen(w->sock, events, 0);
	if (r < 0)
		log_warning("Failed to set the proc connector's event filter: %s", nl_geterror(r));
}

static int connect_socket(struct watcher *w) {
	int r;

	w->sock = nl_socket_alloc();
	if (!w->sock)
		return -NLE_NOMEM;
	/* The kernel numbers its messages itself and never acks. */
	nl_socket_disable_seq_check(w->sock);
	nl_socket_disable_auto_ack(w->sock);
	/* Each event is one small message: one recvmsg(2) into a buffer of
	 * a page, instead of libnl's two (a peek at its size first). */
	nl_socket_disable_msg_peek(w->sock);
	r = nl_connect(w->sock, NETLINK_CONNECTOR);
	if (r < 0)
		return r;
	r = nl_socket_add_membership(w->sock, CN_IDX_PROC);
	if (r < 0)
		return r;
	/* Only after connect: connecting resets the buffer size. */
	r = nl_socket_set_buffer_size(w->sock, WATCHER_RCVBUF, 0);
	if (r < 0)
		log_warning("Failed to enlarge the proc connector's receive buffer: %s", nl_geterror(r));
	r = nl_socket_set_nonblocking(w->sock);
	if (r < 0)
		return r;
	/* Another daemon's LISTEN carries another number (most often 0). */
	if (getrandom(&w->listen_ack, sizeof(w->listen_ack), GRND_NONBLOCK) != sizeof(w->listen_ack))
		w->listen_ack = (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 16);
	return send_listen(w->sock, WATCHER_ALL, w->listen_ack);
}

int watcher_new(sd_event *e, const struct watcher_ops *ops, void *userdata, struct watcher **ret) {
	struct watcher *w = calloc(1, sizeof(*w));
	uint64_t now;
	int r;

	if (!w)
		return -ENOMEM;
	w->event = sd_event_ref(e);
	w->ops = ops;
	w->userdata = userdata;
	w->state = WATCHER_WAITING_ACK;
	w->subscribed = WATCHER_ALL;

	r = connect_socket(w);
	if (r < 0) {
		set_unavailable(w, "cannot subscribe to the proc connector: %s", nl_geterror(r));
		*ret = w;
		return 0;
	}
	r = sd_event_add_io(e, &w->io, nl_socket_get_fd(w->sock), EPOLLIN, on_readable, w);
	if (r < 0)
		goto fail;
	/* Process events take turns with the other sources, at the same
	 * priority: any user can cause them at any rate (forks, exits), and they
	 * must never hold up a client or the sampler. A pin at exec does not
	 * wait for them where the exec programs run (execs.h). */
	r = sd_event_now(e, CLOCK_MONOTONIC, &now);
	if (r < 0)
		goto fail;
	r = sd_event_add_time(e, &w->ack_timer, CLOCK_MONOTONIC, now + WATCHER_ACK_TIMEOUT_USEC,
			      10 * 1000, on_ack_timeout, w);
	if (r < 0)
		goto fail;
	*ret = w;
	return 0;
fail:
	watcher_free(w);
	return r;
}

void watcher_free(struct watcher *w) {
	if (!w)
		return;
	sd_event_source_disable_unref(w->io);
	sd_event_source_disable_unref(w->ack_timer);
	sd_event_source_disable_unref(w->defer);
	if (w->sock)
		nl_socket_free(w->sock);
	sd_event_unref(w->event);
	free(w);
}

bool watcher_active(const struct watcher *w) {
	return w->state == WATCHER_ACTIVE;
}

struct watcher_stats watcher_stats(const struct watcher *w) {
	return w->stats;
}
