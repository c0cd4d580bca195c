/* The control socket's transport: accepts Varlink clients, frames and
 * validates their messages, checks privilege in one place, and hands each call
 * to the method table it was given. It never blocks: a client that does not
 * read its replies stops being read from, and one that sends too much is
 * dropped. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <json-c/json.h>
#include <systemd/sd-event.h>

struct control_call {
	uid_t uid;                   /* the peer's credentials, from SO_PEERCRED */
	pid_t pid;
	const char *method;
	json_object *parameters;     /* never NULL: {} when the call had none */
	bool more;                   /* the client takes several replies ("more": true) */
	bool oneway;                 /* the client wants no reply */
	/* Set by the handler: reply parameters, or an error (name and parameters). */
	json_object *reply;
	const char *error;
	json_object *error_parameters;
	bool deferred;               /* set by control_call_defer(): the reply comes later */
	void *connection;            /* control.c's own: the connection the call came on */
};

struct control_method {
	const char *name;
	bool privileged;             /* changes something: root only */
	void (*handler)(void *userdata, struct control_call *call);
};

/* Sets call->error to name with parameters {"message": ...}. */
void control_call_fail(struct control_call *call, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A call answered later, from the event loop: a method that waits for a
 * worker process, or streams progress ("more": true, several replies with
 * "continues": true, then a last one without). Varlink answers a
 * connection's calls in order, so further calls from the same client wait
 * until the deferred one has its last reply. */
struct control_deferred;

/* Called when the client of a deferred call goes away (or the server shuts
 * down) before its last reply: stop the work. The handle is freed right
 * after it returns. */
typedef void (*control_gone_fn)(void *userdata);

/* Keeps call open after its handler returns; the handler sets no reply.
 * Returns the handle, or NULL when out of memory (the handler then fails the
 * call as usual). */
struct control_deferred *control_call_defer(struct control_call *call, control_gone_fn gone, void *userdata);

/* Whether the client asked for several replies. */
bool control_deferred_more(const struct control_deferred *d);

/* Sends parameters (a reference is taken; NULL: {}). continues: more
 * replies follow; only for a client that asked for more, and dropped while
 * earlier ones still wait to be read (a slow reader misses progress, never
 * the result). Without continues the call is over and d is freed. Returns 0
 * or -errno; on an error the client is dropped from the event loop, and gone
 * is called then unless this was the last reply. */
int control_reply(struct control_deferred *d, json_object *parameters, bool continues);

/* The last reply as an error with {"message": ...}; frees d. */
int control_fail(struct control_deferred *d, const char *error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

struct control;

/* Takes the listening socket that systemd passed (socket activation) or binds
 * path itself with mode 0660, creating its directory. Returns the fd or -errno;
 * *activated tells which. */
int control_listen(const char *path, bool *activated);

/* Takes ownership of listen_fd. */
int control_new(sd_event *e, int listen_fd, const struct control_method *methods, size_t n_methods,
		void *userdata, struct control **ret);
void control_free(struct control *c);

size_t control_connections(const struct control *c);
