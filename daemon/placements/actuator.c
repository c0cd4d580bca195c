#include "actuator.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "procfs.h"

/* A process that makes threads faster than we can list them cannot keep us
 * busy for longer than this; what we pinned stays pinned, and the rounds
 * end much sooner: see actuator_apply_each. */
#define APPLY_ROUNDS_MAX 16

int actuator_open(const char *root, pid_t pid, uint64_t start_time) {
	struct procfs_stat st;
	int fd, r;

	fd = pidfd_open(pid, 0);
	if (fd < 0)
		return -errno;
	/* The pidfd names whatever process had pid when it was opened; the start
	 * time read after that tells whether that is still the one we saw. */
	r = procfs_read_stat(root, pid, &st);
	if (r < 0 || st.start_time != start_time) {
		close(fd);
		return r < 0 ? r : -ESRCH;
	}
	return fd;
}

/* EPERM answers for a live process that we may not signal: ccxd as a
 * service is not root and has no CAP_KILL. Only ESRCH means it is gone. */
bool actuator_alive(int pidfd) {
	return pidfd_send_signal(pidfd, 0, NULL, 0) == 0 || errno == EPERM;
}

static bool contains(const pid_t *set, size_t n, pid_t tid) {
	for (size_t i = 0; i < n; i++)
		if (set[i] == tid)
			return true;
	return false;
}

int actuator_apply(const char *root, pid_t pid, int pidfd, const cpu_set_t *mask) {
	unsigned next = 0;

	return actuator_apply_each(root, pid, pidfd, mask, 1, &next, NULL, NULL);
}

/* Gives one thread the next mask of the rotation. A thread that exited in
 * the meantime is no failure. Returns 1 when the thread had another mask
 * (or may have: only with one mask for all is that asked), 0 when it was
 * born with the target already. */
static int place_thread(pid_t tid, const cpu_set_t *masks, size_t n_masks, unsigned *next, bool ask) {
	cpu_set_t current;

	if (ask && n_masks == 1 && sched_getaffinity(tid, sizeof(current), &current) == 0 &&
	    CPU_EQUAL(&current, &masks[0]))
		return 0;
	if (sched_setaffinity(tid, sizeof(*masks), &masks[*next % n_masks]) < 0 && errno != ESRCH)
		return -errno;
	(*next)++;
	return 1;
}

int actuator_apply_each(const char *root, pid_t pid, int pidfd, const cpu_set_t *masks, size_t n_masks,
			unsigned *next, pid_t **placed, size_t *n_placed) {
	pid_t *done, *tasks = NULL;
	size_t n_done = 0, n_tasks = 0;
	int r;

	if (placed) {
		*placed = NULL;
		*n_placed = 0;
	}
	if (n_masks == 0)
		return -EINVAL;
	if (!actuator_alive(pidfd))
		return -ESRCH;

	/* The main thread first, without listing: a program caught at exec has
	 * no other thread yet, so one listing afterwards usually settles it. */
	done = malloc(sizeof(*done));
	if (!done)
		return -ENOMEM;
	r = place_thread(pid, masks, n_masks, next, false);
	done[n_done++] = pid;

	/* Threads made while we work: each round places those the last listing
	 * did not show. With one mask for all, the list is settled once a
	 * round finds none that lacked it: every thread listed before has it,
	 * so whatever they make is born with it, and so on down. (A process
	 * that keeps making short threads would otherwise never look settled.) */
	for (int round = 0; r >= 0 && round < APPLY_ROUNDS_MAX; round++) {
		size_t fresh = 0;
		pid_t *grown;

		r = procfs_list_tasks(root, pid, &tasks, &n_tasks);
		if (r < 0)
			break;
		grown = realloc(done, (n_done + n_tasks) * sizeof(*done));
		if (!grown) {
			free(tasks);
			r = -ENOMEM;
			break;
		}
		done = grown;
		for (size_t i = 0; i < n_tasks && r >= 0; i++) {
			if (contains(done, n_done, tasks[i]))
				continue;
			r = place_thread(tasks[i], masks, n_masks, next, true);
			done[n_done++] = tasks[i];
			if (r > 0)
				fresh++;
		}
		free(tasks);
		if (fresh == 0)
			break;
	}
	if (placed) {
		*placed = done;
		*n_placed = n_done;
	} else
		free(done);
	if (r >= 0 && !actuator_alive(pidfd))
		r = -ESRCH;
	return r < 0 ? r : 0;
}

int actuator_apply_main(pid_t pid, const cpu_set_t *mask) {
	return sched_setaffinity(pid, sizeof(*mask), mask) < 0 ? -errno : 0;
}

int actuator_apply_thread(int pidfd, pid_t tid, const cpu_set_t *mask) {
	if (!actuator_alive(pidfd))
		return -ESRCH;
	if (sched_setaffinity(tid, sizeof(*mask), mask) < 0)
		return -errno;
	return actuator_alive(pidfd) ? 0 : -ESRCH;
}

int actuator_get(pid_t pid, cpu_set_t *ret) {
	CPU_ZERO(ret);
	if (sched_getaffinity(pid, sizeof(*ret), ret) < 0)
		return -errno;
	return 0;
}
