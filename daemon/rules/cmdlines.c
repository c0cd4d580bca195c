#include "cmdlines.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "log.h"
#include "procfs.h"
#include "util.h"

/* A read's life: the thread marks it done, or the loop abandons it (at
 * free) while it is under way; whichever comes second frees it. */
enum job_state { JOB_RUNNING, JOB_DONE, JOB_ABANDONED };

struct job {
	pid_t pid;
	uint64_t start_time;
	uid_t uid;
	int tag;
	uint64_t began_usec;
	const char *root;
	int efd;                   /* a copy of the loop's eventfd: the thread's to close */
	char *text;                /* the thread's answer */
	int r;
	_Atomic int state;
};

struct request {
	pid_t pid;
	uint64_t start_time;
	uid_t uid;
	int tag;
};

struct cmdlines {
	const char *root;
	cmdlines_ready ready;
	void *userdata;
	int efd;
	sd_event_source *io, *check;
	struct job *running[CMDLINES_THREADS];
	struct request queue[CMDLINES_QUEUE_MAX];
	size_t n_queued;
	/* The answer being handed over in the ready callback. */
	struct job *handing;
	struct cmdlines_stats stats;
};

static void job_free(struct job *j) {
	if (!j)
		return;
	if (j->efd >= 0)
		close(j->efd);
	free(j->text);
	free(j);
}

static void *read_one(void *arg) {
	struct job *j = arg;
	int expected = JOB_RUNNING;
	uint64_t one = 1;

	j->r = procfs_read_cmdline(j->root, j->pid, CMDLINES_MAX, &j->text);
	if (!atomic_compare_exchange_strong(&j->state, &expected, JOB_DONE)) {
		job_free(j);   /* abandoned: nobody waits for it */
		return NULL;
	}
	/* The loop reads the slots once woken; a full counter wakes it too. */
	if (write(j->efd, &one, sizeof(one)) < 0) {
		/* EAGAIN only: the loop has a wake-up pending already. */
	}
	return NULL;
}

/* The user's read under way, if any. */
static struct job *running_of(const struct cmdlines *c, uid_t uid) {
	for (size_t i = 0; i < CMDLINES_THREADS; i++)
		if (c->running[i] && c->running[i]->uid == uid)
			return c->running[i];
	return NULL;
}

static bool blocks(const struct job *j, uint64_t now) {
	return j && now - j->began_usec >= CMDLINES_SLOW_USEC;
}

/* A thread for rq, in a free slot. */
static int start(struct cmdlines *c, const struct request *rq) {
	pthread_attr_t attr;
	pthread_t thread;
	struct job *j;
	size_t slot;
	sigset_t all, old;
	int r;

	for (slot = 0; slot < CMDLINES_THREADS && c->running[slot]; slot++)
		;
	if (slot == CMDLINES_THREADS)
		return -EAGAIN;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	*j = (struct job){ .pid = rq->pid, .start_time = rq->start_time, .uid = rq->uid, .tag = rq->tag,
			   .began_usec = util_usec(CLOCK_MONOTONIC), .root = c->root };
	atomic_init(&j->state, JOB_RUNNING);
	j->efd = fcntl(c->efd, F_DUPFD_CLOEXEC, 3);
	if (j->efd < 0) {
		r = -errno;
		free(j);
		return r;
	}
	/* Small, detached, and deaf to every signal: the loop takes them. */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&thread, &attr, read_one, j);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r < 0) {
		job_free(j);
		return r;
	}
	c->running[slot] = j;
	return 0;
}

/* Hands what one read found to the ready callback, then lets it go. */
static void hand_over(struct cmdlines *c, struct job *j) {
	c->handing = j;
	c->ready(c->userdata, j->pid, j->tag);
	c->handing = NULL;
	job_free(j);
}

/* The queued reads whose users' reads block now are not made: each is
 * answered at once, as unreadable, once the queue is sorted out (an answer
 * may ask for more). */
static void refuse_blocked(struct cmdlines *c, uint64_t now) {
	struct request refused[CMDLINES_QUEUE_MAX];
	size_t kept = 0, n_refused = 0;

	for (size_t i = 0; i < c->n_queued; i++) {
		if (blocks(running_of(c, c->queue[i].uid), now))
			refused[n_refused++] = c->queue[i];
		else
			c->queue[kept++] = c->queue[i];
	}
	c->n_queued = kept;
	for (size_t i = 0; i < n_refused; i++) {
		struct job *j = calloc(1, sizeof(*j));

		c->stats.refused++;
		if (!j)
			continue;
		*j = (struct job){ .pid = refused[i].pid, .start_time = refused[i].start_time, .uid = refused[i].uid,
				   .tag = refused[i].tag, .efd = -1, .r = -EBUSY };
		hand_over(c, j);
	}
}

/* Queued reads into free slots, oldest first, one a user at a time. */
static void start_queued(struct cmdlines *c) {
	size_t kept = 0;

	for (size_t i = 0; i < c->n_queued; i++) {
		struct request rq = c->queue[i];
		if (running_of(c, rq.uid) || start(c, &rq) < 0)
			c->queue[kept++] = rq;
	}
	c->n_queued = kept;
}

/* Wakes the loop when the oldest read under way would start to block. */
static void arm_check(struct cmdlines *c) {
	uint64_t oldest = UINT64_MAX;

	for (size_t i = 0; i < CMDLINES_THREADS; i++)
		if (c->running[i] && c->running[i]->began_usec < oldest)
			oldest = c->running[i]->began_usec;
	if (oldest == UINT64_MAX || c->n_queued == 0) {
		sd_event_source_set_enabled(c->check, SD_EVENT_OFF);
		return;
	}
	sd_event_source_set_time(c->check, oldest + CMDLINES_SLOW_USEC);
	sd_event_source_set_enabled(c->check, SD_EVENT_ONESHOT);
}

static int on_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
	struct cmdlines *c = userdata;
	uint64_t n;

	(void)s;
	(void)revents;
	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_warning_errno(-errno, "Failed to read the command-line readers' wake-up: %m");
	for (size_t i = 0; i < CMDLINES_THREADS; i++) {
		struct job *j = c->running[i];
		if (!j || atomic_load(&j->state) != JOB_DONE)
			continue;
		c->running[i] = NULL;
		c->stats.read++;
		hand_over(c, j);
	}
	refuse_blocked(c, util_usec(CLOCK_MONOTONIC));
	start_queued(c);
	arm_check(c);
	return 0;
}

static int on_check(sd_event_source *s, uint64_t usec, void *userdata) {
	struct cmdlines *c = userdata;

	(void)s;
	refuse_blocked(c, usec);
	start_queued(c);
	arm_check(c);
	return 0;
}

int cmdlines_new(sd_event *e, const char *root, cmdlines_ready ready, void *userdata, struct cmdlines **ret) {
	struct cmdlines *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	c->root = root;
	c->ready = ready;
	c->userdata = userdata;
	c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->efd < 0) {
		r = -errno;
		free(c);
		return r;
	}
	r = sd_event_add_io(e, &c->io, c->efd, EPOLLIN, on_done, c);
	if (r >= 0)
		r = sd_event_add_time(e, &c->check, CLOCK_MONOTONIC, 0, 10000, on_check, c);
	if (r >= 0)
		r = sd_event_source_set_enabled(c->check, SD_EVENT_OFF);
	if (r < 0) {
		cmdlines_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

void cmdlines_free(struct cmdlines *c) {
	if (!c)
		return;
	for (size_t i = 0; i < CMDLINES_THREADS; i++) {
		struct job *j = c->running[i];
		int expected = JOB_RUNNING;
		if (j && !atomic_compare_exchange_strong(&j->state, &expected, JOB_ABANDONED))
			job_free(j);   /* done already */
	}
	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->check);
	if (c->efd >= 0)
		close(c->efd);
	free(c);
}

static bool asked(const struct cmdlines *c, pid_t pid, uint64_t start_time) {
	for (size_t i = 0; i < CMDLINES_THREADS; i++)
		if (c->running[i] && c->running[i]->pid == pid && c->running[i]->start_time == start_time)
			return true;
	for (size_t i = 0; i < c->n_queued; i++)
		if (c->queue[i].pid == pid && c->queue[i].start_time == start_time)
			return true;
	return false;
}

int cmdlines_get(struct cmdlines *c, pid_t pid, uint64_t start_time, uid_t uid, int tag, char **ret) {
	const struct job *h = c->handing;
	struct request rq = { .pid = pid, .start_time = start_time, .uid = uid, .tag = tag };
	struct job *theirs;

	if (h && h->pid == pid && h->start_time == start_time) {
		if (h->r < 0)
			return h->r;
		*ret = strdup(h->text);
		return *ret ? 0 : -ENOMEM;
	}
	if (asked(c, pid, start_time))
		return -EINPROGRESS;
	theirs = running_of(c, uid);
	if (blocks(theirs, util_usec(CLOCK_MONOTONIC))) {
		c->stats.refused++;
		return -EBUSY;
	}
	if (!theirs && start(c, &rq) == 0) {
		arm_check(c);
		return -EINPROGRESS;
	}
	if (c->n_queued == CMDLINES_QUEUE_MAX) {
		c->stats.refused++;
		return -EAGAIN;
	}
	c->queue[c->n_queued++] = rq;
	arm_check(c);
	return -EINPROGRESS;
}

struct cmdlines_stats cmdlines_stats(const struct cmdlines *c) {
	struct cmdlines_stats st = c->stats;
	uint64_t now = util_usec(CLOCK_MONOTONIC);

	st.blocked = 0;
	for (size_t i = 0; i < CMDLINES_THREADS; i++)
		st.blocked += blocks(c->running[i], now);
	return st;
}
