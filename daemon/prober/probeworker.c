#include "probeworker.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include "log.h"

/* A full probe with a matrix of a few hundred CPUs stays far below this;
 * anything larger is not a probe's answer. */
#define PROBEWORKER_LINE_MAX (32 * 1024 * 1024)

struct probeworker {
	pid_t pid;
	int pidfd;                /* -1 once reaped */
	int pipe;                 /* read end; -1 once closed */
	sd_event_source *pipe_io, *exit_io;
	char *buf;
	size_t len, allocated;
	json_object *results;     /* the last line's, when it had them */
	int error;                /* the last line's error, or ours */
	bool cancelled, finished;
	const struct probeworker_ops *ops;
	void *userdata;
};

/* ---- the child ------------------------------------------------------------ */

static int worker_write(int fd, json_object *o) {
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t len = strlen(text);

	/* Plain JSON has no raw newline: one line is one message. */
	while (len > 0) {
		ssize_t n = write(fd, text, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		text += n;
		len -= (size_t)n;
	}
	return write(fd, "\n", 1) == 1 ? 0 : -EPIPE;
}

static int worker_progress(const struct probe_progress *p, void *userdata) {
	json_object *o = json_object_new_object();
	int r;

	json_object_object_add(o, "progress", probe_progress_json(p));
	r = worker_write(*(int *)userdata, o);
	json_object_put(o);
	/* Nobody reads any more: the daemon went away, stop measuring. */
	return r < 0 ? -ECANCELED : 0;
}

/* The worker measures, and writes what it measured to a pipe: it needs
 * none of the daemon's privileges, and holds none, so that nothing it runs
 * (a codec, on data of its own making) can use them. Every capability
 * goes, from every set; no execve can bring any back. The bounding set
 * needs CAP_SETPCAP to shrink: without it (the service runs as its own
 * user) it stays, and no_new_privs keeps file capabilities out. */
static int drop_privileges(void) {
	struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3];

	memset(none, 0, sizeof(none));
	for (unsigned long cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EPERM)
			return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	if (syscall(SYS_capset, &header, none) < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

static void worker_main(int fd, pid_t parent, const struct topology *t, const struct probe_options *options) {
	struct probe_options o = *options;
	struct probe_results *res = NULL;
	sigset_t none;
	json_object *out;
	int r;

	/* Dies with the daemon, whatever kills it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(1);
	prctl(PR_SET_NAME, "ccxd-probe");
	/* The daemon's blocked signals are for its signalfds, not ours. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Only the pipe: the control socket and the daemon's other files are
	 * not the worker's to hold open. */
	if (fd != 3) {
		if (dup2(fd, 3) < 0)
			_exit(1);
		fd = 3;
	}
	close_range(4, ~0U, 0);

	o.progress = worker_progress;
	o.userdata = &fd;
	r = drop_privileges();
	if (r >= 0)
		r = probe_run(t, &o, &res);
	out = json_object_new_object();
	if (r < 0)
		json_object_object_add(out, "error", json_object_new_int(r));
	else
		json_object_object_add(out, "results", probe_results_json(res));
	r = worker_write(fd, out);
	_exit(r < 0 ? 1 : 0);
}

/* ---- the daemon's side ------------------------------------------------------ */

static void handle_line(struct probeworker *w, char *line) {
	json_object *o = json_tokener_parse(line), *v;

	if (!o || !json_object_is_type(o, json_type_object)) {
		log_warning("Probe worker %d sent something that is not JSON, ignoring it", (int)w->pid);
	} else if (json_object_object_get_ex(o, "progress", &v)) {
		if (w->ops->progress && !w->cancelled)
			w->ops->progress(w->userdata, v);
	} else if (json_object_object_get_ex(o, "results", &v)) {
		json_object_put(w->results);
		w->results = json_object_get(v);
	} else if (json_object_object_get_ex(o, "error", &v)) {
		int e = json_object_get_int(v);
		w->error = e < 0 ? e : -EPROTO;
	}
	json_object_put(o);
}

/* Reads what there is; 0 at the end of the pipe, -EAGAIN when it has no more for now. */
static int drain(struct probeworker *w) {
	for (;;) {
		ssize_t n;
		char *nl;
		size_t start = 0;

		if (w->allocated - w->len < 65536) {
			size_t na = w->allocated ? w->allocated * 2 : 65536 * 2;
			char *nb;
			if (na > PROBEWORKER_LINE_MAX)
				return -EMSGSIZE;
			nb = realloc(w->buf, na);
			if (!nb)
				return -ENOMEM;
			w->buf = nb;
			w->allocated = na;
		}
		n = read(w->pipe, w->buf + w->len, w->allocated - w->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		w->len += (size_t)n;
		while ((nl = memchr(w->buf + start, '\n', w->len - start))) {
			*nl = '\0';
			handle_line(w, w->buf + start);
			start = (size_t)(nl - w->buf) + 1;
		}
		memmove(w->buf, w->buf + start, w->len - start);
		w->len -= start;
	}
}

static void close_pipe(struct probeworker *w) {
	w->pipe_io = sd_event_source_disable_unref(w->pipe_io);
	if (w->pipe >= 0)
		close(w->pipe);
	w->pipe = -1;
}

static int on_pipe(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
	struct probeworker *w = userdata;
	int r = drain(w);

	(void)s;
	(void)fd;
	(void)revents;
	if (r == -EAGAIN)
		return 0;
	if (r < 0) {
		log_warning_errno(r, "Reading probe worker %d failed, stopping it: %m", (int)w->pid);
		w->error = r;
		kill(w->pid, SIGKILL);
	}
	/* The end of the pipe: what is left to learn comes with the exit. */
	close_pipe(w);
	return 0;
}

static int on_exit_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
	struct probeworker *w = userdata;
	int status = 0, r = 0;
	pid_t pid;

	(void)s;
	(void)fd;
	(void)revents;
	pid = waitpid(w->pid, &status, WNOHANG);
	if (pid == 0)
		return 0;   /* not a zombie yet */
	w->exit_io = sd_event_source_disable_unref(w->exit_io);
	close(w->pidfd);
	w->pidfd = -1;
	w->finished = true;
	/* Dead, so all it wrote is in the pipe. */
	if (w->pipe >= 0 && !w->cancelled && drain(w) < 0 && !w->results)
		r = -EPROTO;
	close_pipe(w);
	if (w->cancelled)
		r = -ECANCELED;
	else if (r >= 0 && w->results)
		r = 0;
	else if (r >= 0 && w->error < 0)
		r = w->error;
	else {
		if (WIFSIGNALED(status))
			log_warning("Probe worker %d was killed by signal %d", (int)w->pid, WTERMSIG(status));
		else
			log_warning("Probe worker %d exited with status %d and no answer", (int)w->pid,
				    WEXITSTATUS(status));
		r = -EPROTO;
	}
	w->ops->done(w->userdata, r, r == 0 ? w->results : NULL);
	return 0;
}

int probeworker_start(sd_event *e, const struct topology *t, const struct probe_options *o,
		      const struct probeworker_ops *ops, void *userdata, struct probeworker **ret) {
	struct probeworker *w = calloc(1, sizeof(*w));
	pid_t parent = getpid();
	int fds[2], r;

	if (!w)
		return -ENOMEM;
	*w = (struct probeworker){ .pidfd = -1, .pipe = -1, .ops = ops, .userdata = userdata };
	if (pipe2(fds, O_CLOEXEC) < 0) {
		free(w);
		return -errno;
	}
	w->pid = fork();
	if (w->pid < 0) {
		r = -errno;
		close(fds[0]);
		close(fds[1]);
		free(w);
		return r;
	}
	if (w->pid == 0) {
		close(fds[0]);
		worker_main(fds[1], parent, t, o);
	}
	close(fds[1]);
	w->pipe = fds[0];
	/* Our own unreaped child: its pid cannot be reused before we reap it. */
	w->pidfd = pidfd_open(w->pid, 0);
	r = w->pidfd < 0 ? -errno : 0;
	if (r >= 0 && fcntl(w->pipe, F_SETFL, O_NONBLOCK) < 0)
		r = -errno;
	if (r >= 0)
		r = sd_event_add_io(e, &w->pipe_io, w->pipe, EPOLLIN, on_pipe, w);
	if (r >= 0)
		r = sd_event_add_io(e, &w->exit_io, w->pidfd, EPOLLIN, on_exit_io, w);
	if (r < 0) {
		probeworker_free(w);
		return r;
	}
	log_debug("Probe worker %d started", (int)w->pid);
	*ret = w;
	return 0;
}

void probeworker_cancel(struct probeworker *w) {
	if (w->finished || w->cancelled)
		return;
	w->cancelled = true;
	log_debug("Cancelling probe worker %d", (int)w->pid);
	kill(w->pid, SIGKILL);
	/* Its progress is nobody's business now. */
	close_pipe(w);
}

pid_t probeworker_pid(const struct probeworker *w) {
	return w->pid;
}

void probeworker_free(struct probeworker *w) {
	if (!w)
		return;
	if (!w->finished && w->pid > 0) {
		kill(w->pid, SIGKILL);
		while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	w->exit_io = sd_event_source_disable_unref(w->exit_io);
	if (w->pidfd >= 0)
		close(w->pidfd);
	close_pipe(w);
	json_object_put(w->results);
	free(w->buf);
	free(w);
}
