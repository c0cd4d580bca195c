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
	/* Set by the handler: reply parameters, or an error (name and parameters). */
	json_object *reply;
	const char *error;
	json_object *error_parameters;
};

struct control_method {
	const char *name;
	bool privileged;             /* changes something: root only */
	void (*handler)(void *userdata, struct control_call *call);
};

/* Sets call->error to name with parameters {"message": ...}. */
void control_call_fail(struct control_call *call, const char *name, const char *fmt, ...)
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
