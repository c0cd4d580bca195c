/* ccxt-threads [--io|--spin|--pipe] N SECONDS [DELAY_MS]: a process of N
 * threads (the main one included), for tests of per-thread placement and of
 * groups of threads. By default they sleep. With --io each writes 64 KiB
 * blocks to /dev/null as fast as it can: a busy thread whose progress shows
 * in the process's write bytes (/proc/PID/io wchar). With --spin each just
 * burns CPU: busy, with no progress anybody can measure. With --pipe each
 * copies standard input to standard output in 64 KiB blocks, burning 1 ms of
 * CPU on each, so that stages of a pipeline of them have busy threads, not
 * threads waiting on their pipes. The process ends after SECONDS. With
 * DELAY_MS, the main thread starts one more thread every DELAY_MS
 * milliseconds after the first. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum work { SLEEP, IO, SPIN, PIPE };

static unsigned seconds;
static enum work work = SLEEP;

static double now_s(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void burn(double seconds_of_cpu) {
	struct timespec ts;
	double start;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	start = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	while ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9 - start < seconds_of_cpu);
}

/* One block from standard input to standard output; each thread its own. */
static void copy_block(void) {
	char block[65536];
	ssize_t n = read(0, block, sizeof(block));

	if (n <= 0)
		exit(0);   /* the stage before ended */
	burn(0.001);
	if (write(1, block, (size_t)n) < 0)
		exit(0);   /* the stage after ended */
}

static void *run(void *arg) {
	static char block[65536];
	double end = now_s() + seconds;
	volatile unsigned long spins = 0;
	int fd = -1;

	(void)arg;
	if (work == SLEEP) {
		sleep(seconds);
		return NULL;
	}
	if (work == IO && (fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0) {
		perror("/dev/null");
		exit(1);
	}
	while (now_s() < end) {
		if (work == PIPE) {
			copy_block();
		} else if (work == IO) {
			if (write(fd, block, sizeof(block)) < 0) {
				perror("write");
				exit(1);
			}
		} else {
			for (int i = 0; i < 100000; i++)
				spins++;
		}
	}
	/* The first thread to finish ends the process: all started together. */
	exit(0);
}

static void start_thread(void) {
	pthread_t t;

	if (pthread_create(&t, NULL, run, NULL) != 0) {
		perror("pthread_create");
		exit(1);
	}
	pthread_detach(t);
}

int main(int argc, char **argv) {
	int n;

	if (argc > 1 && strcmp(argv[1], "--io") == 0)
		work = IO;
	else if (argc > 1 && strcmp(argv[1], "--spin") == 0)
		work = SPIN;
	else if (argc > 1 && strcmp(argv[1], "--pipe") == 0) {
		work = PIPE;
		/* Room for 16 blocks: a stage a moment behind does not stop the
		 * one before it. */
		fcntl(1, F_SETPIPE_SZ, 16 * 65536);
	}
	if (work != SLEEP) {
		argc--;
		argv++;
	}
	if (argc < 3) {
		fprintf(stderr, "Usage: ccxt-threads [--io|--spin|--pipe] N SECONDS [DELAY_MS]\n");
		return 2;
	}
	n = atoi(argv[1]);
	seconds = (unsigned)atoi(argv[2]);
	if (argc > 3) {
		usleep((useconds_t)atoi(argv[3]) * 1000);
	}
	for (int i = 1; i < n; i++) {
		start_thread();
		if (argc > 3)
			usleep((useconds_t)atoi(argv[3]) * 1000);
	}
	run(NULL);
	return 0;
}
