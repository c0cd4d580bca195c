#include "protocol.h"

#include "cpulist.h"

#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int connect_unix(const char *path) {
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

static long long now_ms(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int wait_fd(int fd, short events, long long deadline) {
	struct pollfd p = { .fd = fd, .events = events };
	long long left = deadline - now_ms();
	int r;

	if (left <= 0)
		return -ETIMEDOUT;
	r = poll(&p, 1, (int)left);
	if (r < 0)
		return -errno;
	return r == 0 ? -ETIMEDOUT : 0;
}

static int send_all(int fd, const char *buf, size_t len, long long deadline) {
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			int r;
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			r = wait_fd(fd, POLLOUT, deadline);
			if (r < 0)
				return r;
			continue;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}


/* Several messages in a row from one stream: what was read past one
 * message's NUL is the start of the next. */
struct protocol_reader {
	char *buf;
	size_t len, allocated;
	size_t consumed;          /* bytes of buf that the last message took */
};

static int reader_next(int fd, struct protocol_reader *rd, long long deadline, const char **ret) {
	size_t scanned = 0;
	char *nul;

	if (rd->consumed) {
		memmove(rd->buf, rd->buf + rd->consumed, rd->len - rd->consumed);
		rd->len -= rd->consumed;
		rd->consumed = 0;
	}
	while (!(nul = rd->len ? memchr(rd->buf + scanned, '\0', rd->len - scanned) : NULL)) {
		ssize_t n;
		int r;

		scanned = rd->len;
		if (rd->allocated - rd->len < 4096) {
			size_t na = rd->allocated ? rd->allocated * 2 : 16384;
			char *nb;
			if (na > CCXD_REPLY_MAX + 1)
				return -EMSGSIZE;
			nb = realloc(rd->buf, na);
			if (!nb)
				return -ENOMEM;
			rd->buf = nb;
			rd->allocated = na;
		}
		r = wait_fd(fd, POLLIN, deadline);
		if (r < 0)
			return r;
		n = recv(fd, rd->buf + rd->len, rd->allocated - rd->len, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;
		rd->len += (size_t)n;
	}
	rd->consumed = (size_t)(nul - rd->buf) + 1;
	*ret = rd->buf;
	return 0;
}

/* A reply's parameters (never NULL), its error name (malloc'd) and whether more follow. */
static int decode_reply(const char *text, json_object **params, char **error_name, bool *continues) {
	json_object *reply = json_tokener_parse(text), *v;

	*params = NULL;
	*error_name = NULL;
	if (!reply || !json_object_is_type(reply, json_type_object)) {
		json_object_put(reply);
		return -EBADMSG;
	}
	if (json_object_object_get_ex(reply, "error", &v)) {
		*error_name = strdup(json_object_get_string(v));
		if (!*error_name) {
			json_object_put(reply);
			return -ENOMEM;
		}
	}
	*continues = json_object_object_get_ex(reply, "continues", &v) && json_object_get_boolean(v);
	if (json_object_object_get_ex(reply, "parameters", &v) && json_object_is_type(v, json_type_object))
		*params = json_object_get(v);
	else
		*params = json_object_new_object();
	json_object_put(reply);
	return 0;
}

/* Sends one call, asking for "more" replies when more is set. */
static int send_call(int fd, const char *method, json_object *parameters, bool more, long long deadline) {
	json_object *call = json_object_new_object();
	const char *text;
	int r;

	json_object_object_add(call, "method", json_object_new_string(method));
	if (parameters)
		json_object_object_add(call, "parameters", json_object_get(parameters));
	if (more)
		json_object_object_add(call, "more", json_object_new_boolean(true));
	text = json_object_to_json_string_ext(call, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	/* The NUL that ends the string is the message terminator. */
	r = send_all(fd, text, strlen(text) + 1, deadline);
	json_object_put(call);
	return r;
}

int protocol_call(const char *socket_path, const char *method, json_object *parameters,
		  int timeout_ms, json_object **reply_params, char **error_name) {
	long long deadline = now_ms() + timeout_ms;
	struct protocol_reader rd = { 0 };
	const char *msg = NULL;
	bool continues;
	int fd, r;

	*reply_params = NULL;
	*error_name = NULL;
	fd = connect_unix(socket_path);
	if (fd < 0)
		return fd;
	r = send_call(fd, method, parameters, false, deadline);
	if (r >= 0)
		r = reader_next(fd, &rd, deadline, &msg);
	close(fd);
	if (r >= 0)
		r = decode_reply(msg, reply_params, error_name, &continues);
	free(rd.buf);
	return r;
}


int protocol_call_more(const char *socket_path, const char *method, json_object *parameters, int timeout_ms,
		       protocol_more_fn on_more, void *userdata, json_object **reply_params, char **error_name) {
	struct protocol_reader rd = { 0 };
	json_object *params = NULL;
	char *error = NULL;
	bool continues = true;
	int fd, r;

	*reply_params = NULL;
	*error_name = NULL;
	fd = connect_unix(socket_path);
	if (fd < 0)
		return fd;
	r = send_call(fd, method, parameters, true, now_ms() + timeout_ms);

	while (r >= 0 && continues) {
		const char *msg = NULL;
		r = reader_next(fd, &rd, now_ms() + timeout_ms, &msg);
		if (r >= 0)
			r = decode_reply(msg, &params, &error, &continues);
		if (r < 0)
			break;
		if (continues && !error) {
			r = on_more ? on_more(params, userdata) : 0;
			json_object_put(params);
			params = NULL;
			continue;
		}
		/* An error ends the call, whatever it says of continuing. */
		continues = false;
	}
	close(fd);
	free(rd.buf);
	if (r < 0) {
		json_object_put(params);
		free(error);
		return r;
	}
	*reply_params = params;
	*error_name = error;
	return 0;
}

int protocol_parse_call(const char *text, size_t len, struct protocol_call *ret) {
	struct json_tokener *tok;
	json_object *msg, *method, *params = NULL, *oneway;

	*ret = (struct protocol_call) { 0 };
	/* json-c takes an int length; anything near that is far past CCXD_REQUEST_MAX. */
	if (len > CCXD_REQUEST_MAX)
		return -EBADMSG;
	tok = json_tokener_new_ex(CCXD_JSON_DEPTH_MAX);
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	msg = json_tokener_parse_ex(tok, text, (int)len);
	/* Trailing bytes (or a second value) before the NUL make it invalid too. */
	if (!msg || json_tokener_get_error(tok) != json_tokener_success ||
	    (size_t)json_tokener_get_parse_end(tok) != len) {
		json_tokener_free(tok);
		json_object_put(msg);
		return -EBADMSG;
	}
	json_tokener_free(tok);

	if (!json_object_is_type(msg, json_type_object) ||
	    !json_object_object_get_ex(msg, "method", &method) ||
	    !json_object_is_type(method, json_type_string) ||
	    (json_object_object_get_ex(msg, "parameters", &params) &&
	     !json_object_is_type(params, json_type_object))) {
		json_object_put(msg);
		return -EINVAL;
	}
	if (json_object_object_get_ex(msg, "oneway", &oneway))
		ret->oneway = json_object_get_boolean(oneway);
	ret->message = msg;
	ret->method = json_object_get_string(method);
	ret->parameters = params;
	return 0;
}

void protocol_call_done(struct protocol_call *call) {
	json_object_put(call->message);
	*call = (struct protocol_call) { 0 };
}

static json_object *cpus_json(const cpu_set_t *cpus) {
	char list[CPULIST_MAX];

	return json_object_new_string(cpulist_format(cpus, list, sizeof(list)));
}

static json_object *ccx_json(const struct topology_ccx *c) {
	json_object *x = json_object_new_object();

	json_object_object_add(x, "index", json_object_new_int((int)c->index));
	json_object_object_add(x, "cpus", cpus_json(&c->cpus));
	json_object_object_add(x, "cores", json_object_new_int((int)c->n_cores));
	json_object_object_add(x, "pus", json_object_new_int((int)c->n_pus));
	json_object_object_add(x, "cache_level", json_object_new_int((int)c->cache_level));
	json_object_object_add(x, "cache_size", json_object_new_int64((int64_t)c->cache_size));
	json_object_object_add(x, "numa_node", c->numa_node >= 0 ? json_object_new_int(c->numa_node) : NULL);
	json_object_object_add(x, "numa_nodes", json_object_new_int((int)c->n_numa_nodes));
	json_object_object_add(x, "package", c->package >= 0 ? json_object_new_int(c->package) : NULL);
	json_object_object_add(x, "usable", json_object_new_boolean(c->usable));
	json_object_object_add(x, "local_memory", json_object_new_boolean(!c->no_local_memory));
	json_object_object_add(x, "efficiency_cores", json_object_new_boolean(c->efficiency_cores));
	json_object_object_add(x, "clock", c->clock ? json_object_new_int64((int64_t)c->clock) : NULL);
	return x;
}

json_object *protocol_topology_json(const struct topology *t) {
	json_object *o = json_object_new_object(), *ccxs = json_object_new_array();

	json_object_object_add(o, "source", json_object_new_string(t->source));
	json_object_object_add(o, "online", cpus_json(&t->online));
	json_object_object_add(o, "packages", json_object_new_int((int)t->n_packages));
	json_object_object_add(o, "numa_nodes", json_object_new_int((int)t->n_numa));
	json_object_object_add(o, "cores", json_object_new_int((int)t->n_cores));
	json_object_object_add(o, "pus", json_object_new_int((int)t->n_pus));
	/* The unit of each CCX's clock: kHz for cpufreq and cpukinds. */
	json_object_object_add(o, "clock_source", json_object_new_string(topology_clock_to_string(t->clock_source)));
	json_object_object_add(o, "x3d_mode", t->x3d_mode[0] ? json_object_new_string(t->x3d_mode) : NULL);
	json_object_object_add(o, "llc_balancing",
			       t->llc_balancing >= 0 ? json_object_new_boolean(t->llc_balancing) : NULL);
	for (unsigned i = 0; i < t->n_ccx; i++)
		json_object_array_add(ccxs, ccx_json(&t->ccx[i]));
	json_object_object_add(o, "ccxs", ccxs);
	return o;
}
