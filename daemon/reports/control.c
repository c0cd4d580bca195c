#include "control.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "protocol.h"
#include "shares.h"
#include "util.h"

/* Beyond this many clients, new ones are turned away at once. */
#define CONTROL_CONNECTIONS_MAX 128
/* A client whose unread replies pile up past this is dropped. */
#define CONTROL_OUTPUT_MAX (CCXD_REPLY_MAX + CCXD_REQUEST_MAX)
/* A message must arrive whole, and replies must be taken, within this long:
 * a client that starts a message and stops, or stops reading, holds a slot
 * that others may need. Local clients take microseconds. */
#define CONTROL_STALL_USEC (5 * UINT64_C(1000000))
/* A connection with nothing under way is closed after this long. */
#define CONTROL_IDLE_USEC (60 * UINT64_C(1000000))
/* Progress ("continues") is dropped while this much output waits unread: a
 * slow reader gets the result late, not a backlog of stale progress. */
#define CONTROL_PROGRESS_BACKLOG (64 * 1024)
/* What one client may take from the loop, which the sampler, the pins at
 * exec and every other client share. A turn (one wake-up of its
 * connection) handles at most this many calls; the rest of what it sent
 * waits for the next turn, after whatever else was due. */
#define CONTROL_CALLS_PER_TURN 4
/* The calls of one user (all its connections) may keep the loop busy for
 * this share of the time, after a first burst: a flood of one-way calls
 * gets its answers slower, and costs ccxd no more than this. */
#define CONTROL_USER_SHARE_PERCENT 10
#define CONTROL_USER_BURST_USEC (100 * UINT64_C(1000))

static const struct shares_limits user_share = { CONTROL_USER_SHARE_PERCENT, CONTROL_USER_BURST_USEC };

struct control_deferred {
	struct connection *conn;
	bool more, oneway;
	control_gone_fn gone;
	void *userdata;
};

struct connection {
	struct control *control;
	int fd;
	sd_event_source *io;
	sd_event_source *timer;      /* drops the connection when it stalls or idles */
	struct ucred cred;
	struct share *share;         /* its user's, shared by all of that user's connections */
	uint64_t throttled_until;    /* 0, or when the user's share allows a call again */
	uint64_t last_active;        /* CLOCK_MONOTONIC usec of the last message or reply taken */
	uint64_t in_since;           /* when the incomplete message in in[] began */
	uint64_t out_since;          /* when the output now unsent began to wait */
	char in[CCXD_REQUEST_MAX];
	size_t in_len;
	char *out;
	size_t out_len, out_sent, out_allocated;
	bool close_after_flush;
	struct control_deferred *pending;  /* a call answered later; input waits meanwhile */
	sd_event_source *resume;           /* picks up after a deferred reply, from the loop */
	int dead;                          /* -errno: drop at the next resume */
	struct connection *next, *prev;
};

struct control {
	sd_event *event;
	int listen_fd;
	sd_event_source *listen_io;
	const struct control_method *methods;
	size_t n_methods;
	void *userdata;
	struct connection *connections;
	size_t n_connections;
	struct share shares[CONTROL_CONNECTIONS_MAX];   /* at most one user per connection */
};

void control_call_fail(struct control_call *call, const char *name, const char *fmt, ...) {
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	call->error = name;
	json_object_put(call->error_parameters);
	call->error_parameters = json_object_new_object();
	json_object_object_add(call->error_parameters, "message", json_object_new_string(msg));
}

static void connection_free(struct connection *conn) {
	struct control *c = conn->control;

	if (conn->prev)
		conn->prev->next = conn->next;
	else
		c->connections = conn->next;
	if (conn->next)
		conn->next->prev = conn->prev;
	c->n_connections--;
	if (conn->share)
		conn->share->connections--;
	if (conn->pending) {
		struct control_deferred *d = conn->pending;
		conn->pending = NULL;
		if (d->gone)
			d->gone(d->userdata);
		free(d);
	}
	sd_event_source_disable_unref(conn->resume);
	sd_event_source_disable_unref(conn->io);
	sd_event_source_disable_unref(conn->timer);
	close(conn->fd);
	free(conn->out);
	free(conn);
}

static uint64_t now_usec(const struct control *c) {
	uint64_t t = 0;

	/* The loop's time of this iteration: cheap, and all a timeout needs. */
	(void)sd_event_now(c->event, CLOCK_MONOTONIC, &t);
	return t;
}

static int queue_output(struct connection *conn, const char *text) {
	size_t len = strlen(text) + 1;   /* with the terminating NUL */

	if (conn->out_len + len > CONTROL_OUTPUT_MAX)
		return -ENOBUFS;
	/* The client's time to take replies runs from when it was given some. */
	if (conn->out_len == conn->out_sent)
		conn->out_since = now_usec(conn->control);
	if (conn->out_len + len > conn->out_allocated) {
		size_t n = conn->out_allocated ? conn->out_allocated : 4096;
		char *p;
		while (n < conn->out_len + len)
			n *= 2;
		p = realloc(conn->out, n);
		if (!p)
			return -ENOMEM;
		conn->out = p;
		conn->out_allocated = n;
	}
	memcpy(conn->out + conn->out_len, text, len);
	conn->out_len += len;
	return 0;
}

static int queue_message(struct connection *conn, const char *error, json_object *parameters, bool continues) {
	json_object *msg = json_object_new_object();
	int r;

	if (!msg)
		return -ENOMEM;
	if (error)
		json_object_object_add(msg, "error", json_object_new_string(error));
	json_object_object_add(msg, "parameters", parameters ? json_object_get(parameters) : json_object_new_object());
	if (continues)
		json_object_object_add(msg, "continues", json_object_new_boolean(true));
	r = queue_output(conn, json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(msg);
	return r;
}

static int queue_reply(struct connection *conn, const char *error, json_object *parameters) {
	return queue_message(conn, error, parameters, false);
}

static int queue_error(struct connection *conn, const char *error, const char *message) {
	json_object *p = json_object_new_object();
	int r;

	json_object_object_add(p, "message", json_object_new_string(message));
	r = queue_reply(conn, error, p);
	json_object_put(p);
	return r;
}

static const struct control_method *find_method(const struct control *c, const char *name) {
	for (size_t i = 0; i < c->n_methods; i++)
		if (strcmp(c->methods[i].name, name) == 0)
			return &c->methods[i];
	return NULL;
}

static bool interface_known(const struct control *c, const char *method) {
	const char *dot = strrchr(method, '.');
	size_t len = dot ? (size_t)(dot - method) : 0;

	for (size_t i = 0; i < c->n_methods; i++)
		if (strncmp(c->methods[i].name, method, len) == 0 && c->methods[i].name[len] == '.')
			return true;
	return false;
}

/* One complete message: validate, check privilege, call, queue the reply. */
static int handle_message(struct connection *conn, const char *text, size_t len) {
	struct control *c = conn->control;
	struct control_call call = { .uid = conn->cred.uid, .pid = conn->cred.pid };
	const struct control_method *m;
	struct protocol_call pc;
	json_object *more;
	bool no_reply;
	int r;

	r = protocol_parse_call(text, len, &pc);
	if (r == -EBADMSG) {
		/* A stream that does not parse cannot be resynchronised: answer and hang up. */
		conn->close_after_flush = true;
		return queue_error(conn, VARLINK_ERROR_INVALID_PARAMETER, "message is not valid JSON");
	}
	if (r == -EINVAL)
		return queue_error(conn, VARLINK_ERROR_INVALID_PARAMETER,
				   "a call is an object with a string \"method\" and an object \"parameters\"");
	if (r < 0)
		return r;
	no_reply = pc.oneway;

	call.oneway = pc.oneway;
	call.more = json_object_object_get_ex(pc.message, "more", &more) && json_object_get_boolean(more);
	call.connection = conn;
	call.method = pc.method;
	call.parameters = pc.parameters ? json_object_get(pc.parameters) : json_object_new_object();
	m = find_method(c, call.method);
	if (!m)
		control_call_fail(&call, interface_known(c, call.method) ? VARLINK_ERROR_METHOD_NOT_FOUND
									  : VARLINK_ERROR_INTERFACE_NOT_FOUND,
				  "unknown method %s", call.method);
	else if (m->privileged && call.uid != 0)
		control_call_fail(&call, CCXD_ERROR_PERMISSION_DENIED, "%s needs root", call.method);
	else
		m->handler(c->userdata, &call);

	if (call.error)
		log_debug("%s from uid %u: %s", call.method, (unsigned)call.uid, call.error);
	/* A deferred call answers through its handle. */
	r = no_reply || call.deferred ? 0 : call.error ? queue_reply(conn, call.error, call.error_parameters)
				      : queue_reply(conn, NULL, call.reply);
	json_object_put(call.parameters);
	json_object_put(call.reply);
	json_object_put(call.error_parameters);
	protocol_call_done(&pc);
	return r;
}

static int update_events(struct connection *conn) {
	/* While replies wait, stop reading: a client that never reads cannot make
	 * us queue without bound. */
	bool out_pending = conn->out_len > conn->out_sent;
	bool waiting = conn->pending || conn->resume || conn->throttled_until;
	uint32_t events = out_pending ? EPOLLOUT : waiting ? 0 : EPOLLIN;
	uint64_t deadline = out_pending ? conn->out_since + CONTROL_STALL_USEC
			  : conn->throttled_until ? conn->throttled_until
			  : conn->in_len > 0 ? conn->in_since + CONTROL_STALL_USEC
			  : conn->last_active + CONTROL_IDLE_USEC;
	int r;

	r = sd_event_source_set_io_events(conn->io, events);
	if (r < 0)
		return r;
	/* A call under way is not idleness: the only deadline left is for
	 * taking its replies. */
	if (conn->pending && !out_pending)
		return sd_event_source_set_enabled(conn->timer, SD_EVENT_OFF);
	r = sd_event_source_set_time(conn->timer, deadline);
	if (r < 0)
		return r;
	return sd_event_source_set_enabled(conn->timer, SD_EVENT_ONESHOT);
}

static int flush_output(struct connection *conn) {
	while (conn->out_sent < conn->out_len) {
		ssize_t n = send(conn->fd, conn->out + conn->out_sent, conn->out_len - conn->out_sent,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return -errno;
		}
		/* Not a new start of the client's time to take them: a reader of
		 * one byte at a time would otherwise hold its slot for ever. */
		conn->out_sent += (size_t)n;
	}
	conn->out_len = conn->out_sent = 0;
	return 0;
}

static int schedule_resume(struct connection *conn);

/* Whether the connection's user may have a call handled now; if not, when
 * it may (conn->throttled_until). */
static bool share_allows(struct connection *conn, uint64_t now) {
	uint64_t until = shares_wait_until(conn->share, &user_share, now);

	if (until)
		conn->throttled_until = until;
	return until == 0;
}

/* The complete messages read so far, in order, until one is deferred (the
 * rest wait for its last reply), the turn's calls are done (the rest wait
 * for the next turn), or the user's share is spent (they wait for it). */
static int process_input(struct connection *conn, bool had_partial) {
	size_t start = 0;
	unsigned calls = 0;
	bool more = false;
	char *nul;

	while (!conn->close_after_flush && !conn->pending &&
	       (nul = memchr(conn->in + start, '\0', conn->in_len - start))) {
		size_t len = (size_t)(nul - (conn->in + start));
		uint64_t t = util_usec(CLOCK_MONOTONIC);
		int r;

		if (calls == CONTROL_CALLS_PER_TURN || !share_allows(conn, t)) {
			more = true;
			break;
		}
		r = handle_message(conn, conn->in + start, len);
		shares_take(conn->share, util_usec(CLOCK_MONOTONIC) - t);
		if (r < 0)
			return r;
		start += len + 1;
		calls++;
	}
	/* Throttled, its timer resumes it; else the next turn comes from the
	 * loop, after the events already due. */
	if (more && !conn->throttled_until && schedule_resume(conn) < 0)
		return -ENOMEM;
	memmove(conn->in, conn->in + start, conn->in_len - start);
	conn->in_len -= start;
	if (start > 0)
		conn->last_active = now_usec(conn->control);
	/* A message has until CONTROL_STALL_USEC after its first byte, however
	 * slowly the rest trickles in. */
	if (conn->in_len > 0 && (!had_partial || start > 0))
		conn->in_since = now_usec(conn->control);
	if (conn->in_len == sizeof(conn->in) && !more && !conn->close_after_flush && !conn->pending) {
		conn->close_after_flush = true;
		return queue_error(conn, VARLINK_ERROR_INVALID_PARAMETER, "message too large");
	}
	return 0;
}

static int read_input(struct connection *conn) {
	bool had_partial = conn->in_len > 0;
	ssize_t n;

	n = recv(conn->fd, conn->in + conn->in_len, sizeof(conn->in) - conn->in_len, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -ECONNRESET;
	conn->in_len += (size_t)n;
	return process_input(conn, had_partial);
}

/* resumed: called from the loop after a deferred call's reply, to send it
 * and to handle the calls that waited behind it. */
static void connection_process(struct connection *conn, uint32_t revents, bool resumed) {
	int r = conn->dead;

	/* Not reading while a call is deferred, a hang-up is all there is to
	 * know: nobody is left to answer. */
	if (r >= 0 && conn->pending && (revents & (EPOLLHUP | EPOLLERR)))
		r = -ECONNRESET;
	else if (r >= 0 && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		r = conn->close_after_flush ? 0 : read_input(conn);
	else if (r >= 0 && resumed)
		r = process_input(conn, true);
	if (r >= 0)
		r = flush_output(conn);
	if (r >= 0 && conn->close_after_flush && conn->out_len == 0)
		r = -ECONNRESET;
	if (r >= 0)
		r = update_events(conn);
	if (r < 0) {
		if (r != -ECONNRESET && r != -EPIPE)
			log_debug_errno(r, "Dropping control client pid %d: %m", (int)conn->cred.pid);
		connection_free(conn);
	}
}

static int on_connection_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
	(void)s;
	(void)fd;
	connection_process(userdata, revents, false);
	return 0;
}

static int on_resume(sd_event_source *s, void *userdata) {
	struct connection *conn = userdata;

	(void)s;
	conn->resume = sd_event_source_disable_unref(conn->resume);
	connection_process(conn, 0, true);
	return 0;
}

/* Replies of deferred calls are sent, and the calls that waited are
 * handled, from the loop: never inside the replier's stack, which may be in
 * the middle of its own bookkeeping. */
static int schedule_resume(struct connection *conn) {
	if (conn->resume)
		return 0;
	return sd_event_add_defer(conn->control->event, &conn->resume, on_resume, conn);
}

struct control_deferred *control_call_defer(struct control_call *call, control_gone_fn gone, void *userdata) {
	struct connection *conn = call->connection;
	struct control_deferred *d;

	if (!conn || conn->pending)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	*d = (struct control_deferred){ .conn = conn, .more = call->more, .oneway = call->oneway,
					.gone = gone, .userdata = userdata };
	conn->pending = d;
	call->deferred = true;
	return d;
}

bool control_deferred_more(const struct control_deferred *d) {
	return d->more;
}

static int deferred_send(struct control_deferred *d, const char *error, json_object *parameters, bool continues) {
	struct connection *conn = d->conn;
	bool oneway = d->oneway;
	int r = 0;

	if (continues && (!d->more || conn->out_len - conn->out_sent > CONTROL_PROGRESS_BACKLOG))
		return 0;
	if (!continues) {
		conn->pending = NULL;
		free(d);
	}
	if (conn->dead < 0)
		return conn->dead;
	if (!oneway)
		r = queue_message(conn, error, parameters, continues);
	if (r >= 0 && schedule_resume(conn) < 0)
		/* The reply would sit until the client writes again: hang up instead. */
		r = -ENOMEM;
	/* Dropped from the loop at the next resume or event, never here: gone
	 * must not run inside its owner's own call. */
	if (r < 0)
		conn->dead = r;
	return r;
}

int control_reply(struct control_deferred *d, json_object *parameters, bool continues) {
	return deferred_send(d, NULL, parameters, continues);
}

int control_fail(struct control_deferred *d, const char *error, const char *fmt, ...) {
	json_object *p = json_object_new_object();
	char msg[1024];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p)
		json_object_object_add(p, "message", json_object_new_string(msg));
	r = deferred_send(d, error, p, false);
	json_object_put(p);
	return r;
}

static int on_connection_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
	struct connection *conn = userdata;

	(void)s;
	(void)usec;
	/* The end of a wait for its user's share: its calls go on. */
	if (conn->throttled_until && conn->out_len == conn->out_sent) {
		conn->throttled_until = 0;
		connection_process(conn, 0, true);
		return 0;
	}
	log_debug("Dropping control client pid %d: %s", (int)conn->cred.pid,
		  conn->out_len > conn->out_sent ? "it does not read its replies" :
		  conn->in_len > 0 ? "its message never ended" : "idle");
	connection_free(conn);
	return 0;
}

/* The connection that did nothing for the longest: the one to give up when
 * all slots are taken, so that idle clients cannot lock everybody out. Not
 * one with a call in flight (a probe, whose worker would be cancelled), nor
 * root's: idle connections of any user must not take those away. NULL when
 * every one is such. */
static struct connection *least_recently_active(const struct control *c) {
	struct connection *lru = NULL;

	for (struct connection *conn = c->connections; conn; conn = conn->next)
		if (!conn->pending && conn->cred.uid != 0 && (!lru || conn->last_active < lru->last_active))
			lru = conn;
	return lru;
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
	struct control *c = userdata;
	struct connection *conn;
	socklen_t len;
	int cfd, r;

	(void)s;
	(void)revents;
	cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0) {
		if (errno != EAGAIN && errno != EINTR)
			log_warning_errno(-errno, "Failed to accept a control client: %m");
		return 0;
	}
	if (c->n_connections >= CONTROL_CONNECTIONS_MAX) {
		struct connection *lru = least_recently_active(c);

		/* Debug only: a flood of connections must not flood the log too. */
		if (!lru) {
			log_debug("Too many control clients (%d), each root's or awaiting an answer: refusing one",
				  CONTROL_CONNECTIONS_MAX);
			close(cfd);
			return 0;
		}
		log_debug("Too many control clients (%d): dropping pid %d, idle the longest",
			  CONTROL_CONNECTIONS_MAX, (int)lru->cred.pid);
		connection_free(lru);
	}
	conn = calloc(1, sizeof(*conn));
	if (!conn) {
		close(cfd);
		return 0;
	}
	conn->control = c;
	conn->fd = cfd;
	len = sizeof(conn->cred);
	/* Credentials are those of whoever connected: checked per call, never trusted from the message. */
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &conn->cred, &len) < 0) {
		log_warning_errno(-errno, "Failed to read a control client's credentials: %m");
		close(cfd);
		free(conn);
		return 0;
	}
	conn->last_active = now_usec(c);
	r = sd_event_add_io(c->event, &conn->io, cfd, EPOLLIN, on_connection_io, conn);
	if (r >= 0)
		/* 100 ms of slack lets the loop batch wake-ups of many connections. */
		r = sd_event_add_time(c->event, &conn->timer, CLOCK_MONOTONIC,
				      conn->last_active + CONTROL_IDLE_USEC, 100 * 1000,
				      on_connection_timeout, conn);
	if (r < 0) {
		log_warning_errno(r, "Failed to watch a control client: %m");
		sd_event_source_disable_unref(conn->io);
		close(cfd);
		free(conn);
		return 0;
	}
	/* There is a slot for every connection, so one always has none. */
	conn->share = shares_of(c->shares, CONTROL_CONNECTIONS_MAX, conn->cred.uid, &user_share,
				util_usec(CLOCK_MONOTONIC));
	conn->share->connections++;
	conn->next = c->connections;
	if (c->connections)
		c->connections->prev = conn;
	c->connections = conn;
	c->n_connections++;
	return 0;
}

int control_new(sd_event *e, int listen_fd, const struct control_method *methods, size_t n_methods,
		void *userdata, struct control **ret) {
	struct control *c = calloc(1, sizeof(*c));
	int r;

	if (!c) {
		close(listen_fd);
		return -ENOMEM;
	}
	c->event = sd_event_ref(e);
	c->listen_fd = listen_fd;
	c->methods = methods;
	c->n_methods = n_methods;
	c->userdata = userdata;
	r = sd_event_add_io(e, &c->listen_io, listen_fd, EPOLLIN, on_accept, c);
	if (r < 0) {
		control_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

void control_free(struct control *c) {
	if (!c)
		return;
	while (c->connections)
		connection_free(c->connections);
	sd_event_source_disable_unref(c->listen_io);
	if (c->listen_fd >= 0)
		close(c->listen_fd);
	sd_event_unref(c->event);
	free(c);
}

size_t control_connections(const struct control *c) {
	return c->n_connections;
}
