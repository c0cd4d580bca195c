/* ccxt-threads N SECONDS: a process of N threads (the main one included) that
 * sleep, for tests of per-thread placement. With a third argument D, the
 * main thread starts one more thread every D milliseconds after the first. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static unsigned seconds;

static void *sleeper(void *arg) {
	(void)arg;
	sleep(seconds);
	return NULL;
}

static void start_thread(void) {
	pthread_t t;

	if (pthread_create(&t, NULL, sleeper, NULL) != 0) {
		perror("pthread_create");
		exit(1);
	}
	pthread_detach(t);
}

int main(int argc, char **argv) {
	int n;

	if (argc < 3) {
		fprintf(stderr, "Usage: ccxt-threads N SECONDS [DELAY_MS]\n");
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
	sleep(seconds);
	return 0;
}
