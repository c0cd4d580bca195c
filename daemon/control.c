#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "log.h"
#include "protocol.h"

/* Beyond this many clients, new ones are turned away at once. */
#define CONTROL_CONNECTIONS_MAX 128
/* A client whose unread replies pile up past this is dropped. */
#define CONTROL_OUTPUT_MAX (CCXD_REPLY_MAX + CCXD_REQUEST_MAX)

struct connection {
	struct control *control;
	int fd;
	sd_event_source *io;
	struct ucred cred;
	char in[CCXD_REQUEST_MAX];
	size_t in_len;
	char *out;
	size_t out_len, out_sent, out_allocated;
	bool close_after_flush;
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
	sd_event_source_disable_unref(conn->io);
	close(conn->fd);
	free(conn->out);
	free(conn);
}

static int queue_output(struct connection *conn, const char *text) {
	size_t len = strlen(text) + 1;   /* with the terminating NUL */

	if (conn->out_len + len > CONTROL_OUTPUT_MAX)
		return -ENOBUFS;
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

static int queue_reply(struct connection *conn, const char *error, json_object *parameters) {
	json_object *msg = json_object_new_object();
	int r;

	if (!msg)
		return -ENOMEM;
	if (error)
		json_object_object_add(msg, "error", json_object_new_string(error));
	json_object_object_add(msg, "parameters", parameters ? json_object_get(parameters) : json_object_new_object());
	r = queue_output(conn, json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(msg);
	return r;
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
	struct json_tokener *tok = json_tokener_new_ex(CCXD_JSON_DEPTH_MAX);
	struct control_call call = { .uid = conn->cred.uid, .pid = conn->cred.pid };
	const struct control_method *m;
	json_object *msg, *method, *params = NULL, *oneway;
	bool no_reply = false;
	int r;

	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	msg = json_tokener_parse_ex(tok, text, (int)len);
	if (!msg || json_tokener_get_error(tok) != json_tokener_success ||
	    (size_t)json_tokener_get_parse_end(tok) != len) {
		json_tokener_free(tok);
		json_object_put(msg);
		/* A stream that does not parse cannot be resynchronised: answer and hang up. */
		conn->close_after_flush = true;
		return queue_error(conn, VARLINK_ERROR_INVALID_PARAMETER, "message is not valid JSON");
	}
	json_tokener_free(tok);

	if (!json_object_is_type(msg, json_type_object) ||
	    !json_object_object_get_ex(msg, "method", &method) ||
	    !json_object_is_type(method, json_type_string) ||
	    (json_object_object_get_ex(msg, "parameters", &params) &&
	     !json_object_is_type(params, json_type_object))) {
		r = queue_error(conn, VARLINK_ERROR_INVALID_PARAMETER,
				"a call is an object with a string \"method\" and an object \"parameters\"");
		json_object_put(msg);
		return r;
	}
	if (json_object_object_get_ex(msg, "oneway", &oneway))
		no_reply = json_object_get_boolean(oneway);

	call.method = json_object_get_string(method);
	call.parameters = params ? json_object_get(params) : json_object_new_object();
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
	r = no_reply ? 0 : call.error ? queue_reply(conn, call.error, call.error_parameters)
				      : queue_reply(conn, NULL, call.reply);
	json_object_put(call.parameters);
	json_object_put(call.reply);
	json_object_put(call.error_parameters);
	json_object_put(msg);
	return r;
}

static int update_events(struct connection *conn) {
	/* While replies wait, stop reading: a client that never reads cannot make
	 * us queue without bound. */
	uint32_t events = conn->out_len > conn->out_sent ? EPOLLOUT : EPOLLIN;

	return sd_event_source_set_io_events(conn->io, events);
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
		conn->out_sent += (size_t)n;
	}
	conn->out_len = conn->out_sent = 0;
	return 0;
}

static int read_input(struct connection *conn) {
	ssize_t n;
	size_t start = 0;
	char *nul;

	n = recv(conn->fd, conn->in + conn->in_len, sizeof(conn->in) - conn->in_len, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -ECONNRESET;
	conn->in_len += (size_t)n;

	while (!conn->close_after_flush &&
	       (nul = memchr(conn->in + start, '\0', conn->in_len - start))) {
		size_t len = (size_t)(nul - (conn->in + start));
		int r = handle_message(conn, conn->in + start, len);
		if (r < 0)
			return r;
		start += len + 1;
	}
	memmove(conn->in, conn->in + start, conn->in_len - start);
	conn->in_len -= start;
	if (conn->in_len == sizeof(conn->in) && !conn->close_after_flush) {
		conn->close_after_flush = true;
		return queue_error(conn, VARLINK_ERROR_INVALID_PARAMETER, "message too large");
	}
	return 0;
}

static int on_connection_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
	struct connection *conn = userdata;
	int r = 0;

	(void)s;
	(void)fd;
	if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR))
		r = conn->close_after_flush ? 0 : read_input(conn);
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
	return 0;
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
		log_warning("Too many control clients (%d), turning one away", CONTROL_CONNECTIONS_MAX);
		close(cfd);
		return 0;
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
	r = sd_event_add_io(c->event, &conn->io, cfd, EPOLLIN, on_connection_io, conn);
	if (r < 0) {
		close(cfd);
		free(conn);
		return 0;
	}
	conn->next = c->connections;
	if (c->connections)
		c->connections->prev = conn;
	c->connections = conn;
	c->n_connections++;
	return 0;
}

static int mkdir_parents(const char *path) {
	char dir[PATH_MAX];

	if (strlen(path) >= sizeof(dir))
		return -ENAMETOOLONG;
	strcpy(dir, path);
	for (char *p = dir + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

/* A socket file nobody answers on is left over from a crash: remove it. One
 * that answers belongs to a running ccxd, which we must not steal from. */
static int clear_stale_socket(const struct sockaddr_un *sa) {
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
		r = -EADDRINUSE;
	else if (errno == ECONNREFUSED)
		r = unlink(sa->sun_path) < 0 ? -errno : 0;
	close(fd);
	return r;
}

int control_listen(const char *path, bool *activated) {
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, r;

	r = sd_listen_fds(1);
	if (r == 1 && sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_STREAM, 1, NULL, 0) > 0) {
		*activated = true;
		fd = SD_LISTEN_FDS_START;
		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
			return -errno;
		return fd;
	}
	if (r > 0)
		log_warning("Ignoring %d passed file descriptors that are not one listening Unix stream socket", r);
	*activated = false;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	r = mkdir_parents(path);
	if (r < 0)
		return r;
	r = clear_stale_socket(&sa);
	if (r < 0 && r != -ENOENT)
		return r;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* Bind with a restrictive umask so the socket is never briefly open to all. */
	mode_t old = umask(0117);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0 || chmod(path, 0660) < 0 || listen(fd, SOMAXCONN) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
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
