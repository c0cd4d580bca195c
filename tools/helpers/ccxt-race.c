/* ccxt-race: processes that race ccxd, for its race tests.
 *
 *   ccxt-race churn N SECONDS
 *       A process whose N worker threads each create a thread, let it live
 *       for up to 20 ms and join it, over and over, for SECONDS: threads
 *       appear and vanish while ccxd sets the affinity of every thread.
 *   ccxt-race at PID PROGRAM [ARG...]
 *       Runs PROGRAM as process PID exactly (clone3 with set_tid, root
 *       only): a pid reused on purpose. Waits for it and exits as it did;
 *       exits 75 when PID is taken.
 */
#include <errno.h>
#include <linux/sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int running = 1;

static void *brief(void *arg) {
	struct timespec ts = { 0, (long)(uintptr_t)arg };

	nanosleep(&ts, NULL);
	return NULL;
}

static void *worker(void *arg) {
	unsigned seed = (unsigned)(uintptr_t)arg;

	while (running) {
		pthread_t t;
		uintptr_t ns = (uintptr_t)(rand_r(&seed) % 20) * 1000000;
		if (pthread_create(&t, NULL, brief, (void *)ns) == 0)
			pthread_join(t, NULL);
	}
	return NULL;
}

static int churn(unsigned n, unsigned seconds) {
	pthread_t *workers = calloc(n, sizeof(*workers));

	if (!workers)
		return 1;
	for (unsigned i = 0; i < n; i++)
		if (pthread_create(&workers[i], NULL, worker, (void *)(uintptr_t)(i + 1)) != 0) {
			perror("pthread_create");
			return 1;
		}
	sleep(seconds);
	running = 0;
	for (unsigned i = 0; i < n; i++)
		pthread_join(workers[i], NULL);
	free(workers);
	return 0;
}

static int at(pid_t pid, char **argv) {
	pid_t tid = pid;
	struct clone_args args = {
		.exit_signal = SIGCHLD,
		.set_tid = (uint64_t)(uintptr_t)&tid,
		.set_tid_size = 1,
	};
	long child = syscall(SYS_clone3, &args, sizeof(args));
	int status;

	if (child < 0) {
		fprintf(stderr, "ccxt-race: clone3 as pid %d: %s\n", (int)pid, strerror(errno));
		return errno == EEXIST ? 75 : 1;
	}
	if (child == 0) {
		execvp(argv[0], argv);
		perror("ccxt-race: exec");
		_exit(127);
	}
	if (waitpid((pid_t)child, &status, 0) < 0)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv) {
	if (argc == 4 && strcmp(argv[1], "churn") == 0)
		return churn((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));
	if (argc >= 4 && strcmp(argv[1], "at") == 0)
		return at((pid_t)atoi(argv[2]), argv + 3);
	fprintf(stderr, "usage: ccxt-race churn N SECONDS | at PID PROGRAM [ARG...]\n");
	return 2;
}
