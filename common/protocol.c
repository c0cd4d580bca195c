#include "protocol.h"

#include "cpulist.h"

#include <errno.h>
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

/* Reads until the terminating NUL of one message; returns it malloc'd. */
static int recv_message(int fd, long long deadline, char **ret) {
	size_t len = 0, allocated = 0;
	char *buf = NULL;

	for (;;) {
		ssize_t n;
		char *nul;
		int r;

		if (allocated - len < 4096) {
			size_t na = allocated ? allocated * 2 : 16384;
			char *nb;
			if (na > CCXD_REPLY_MAX + 1) {
				free(buf);
				return -EMSGSIZE;
			}
			nb = realloc(buf, na);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			allocated = na;
		}
		r = wait_fd(fd, POLLIN, deadline);
		if (r < 0) {
			free(buf);
			return r;
		}
		n = recv(fd, buf + len, allocated - len, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			r = -errno;
			free(buf);
			return r;
		}
		if (n == 0) {
			free(buf);
			return -ECONNRESET;
		}
		nul = memchr(buf + len, '\0', (size_t)n);
		len += (size_t)n;
		if (nul) {
			*ret = buf;
			return 0;
		}
	}
}

int protocol_call(const char *socket_path, const char *method, json_object *parameters,
		  int timeout_ms, json_object **reply_params, char **error_name) {
	long long deadline = now_ms() + timeout_ms;
	json_object *call, *reply, *v;
	const char *text;
	char *buf = NULL;
	int fd, r;

	*reply_params = NULL;
	*error_name = NULL;
	fd = connect_unix(socket_path);
	if (fd < 0)
		return fd;

	call = json_object_new_object();
	json_object_object_add(call, "method", json_object_new_string(method));
	if (parameters)
		json_object_object_add(call, "parameters", json_object_get(parameters));
	text = json_object_to_json_string_ext(call, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	/* The NUL that ends the string is the message terminator. */
	r = send_all(fd, text, strlen(text) + 1, deadline);
	json_object_put(call);
	if (r >= 0)
		r = recv_message(fd, deadline, &buf);
	close(fd);
	if (r < 0)
		return r;

	reply = json_tokener_parse(buf);
	free(buf);
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
	if (json_object_object_get_ex(reply, "parameters", &v) && json_object_is_type(v, json_type_object))
		*reply_params = json_object_get(v);
	else
		*reply_params = json_object_new_object();
	json_object_put(reply);
	return 0;
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
	for (unsigned i = 0; i < t->n_ccx; i++)
		json_object_array_add(ccxs, ccx_json(&t->ccx[i]));
	json_object_object_add(o, "ccxs", ccxs);
	return o;
}
