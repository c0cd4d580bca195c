/* ccxt-talk pipe|unix|tcp MIB_PER_S SECONDS: two processes, a writer and a
 * reader, streaming at a known rate through a pipe, a Unix socketpair or a
 * loopback TCP connection. Prints "WRITER_PID READER_PID" and runs for
 * SECONDS. For tests of what ccxd finds and how much it says flows. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 65536

static double now_s(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int connect_pair(const char *kind, int fds[2]) {
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int l;

	if (strcmp(kind, "pipe") == 0) {
		int p[2];
		if (pipe(p) < 0)
			return -1;
		fds[0] = p[1];   /* writer's end */
		fds[1] = p[0];
		return 0;
	}
	if (strcmp(kind, "unix") == 0)
		return socketpair(AF_UNIX, SOCK_STREAM, 0, fds);
	if (strcmp(kind, "tcp") != 0)
		return -1;
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&sa, &len) < 0)
		return -1;
	fds[0] = socket(AF_INET, SOCK_STREAM, 0);
	if (fds[0] < 0 || connect(fds[0], (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	fds[1] = accept(l, NULL, NULL);
	close(l);
	return fds[1] < 0 ? -1 : 0;
}

int main(int argc, char **argv) {
	static char buf[CHUNK];
	double rate, seconds, start, sent = 0;
	pid_t reader;
	int fds[2];

	if (argc != 4 || connect_pair(argv[1], fds) < 0) {
		fprintf(stderr, "Usage: ccxt-talk pipe|unix|tcp MIB_PER_S SECONDS\n");
		return 2;
	}
	rate = atof(argv[2]) * 1024 * 1024;
	seconds = atof(argv[3]);
	reader = fork();
	if (reader == 0) {
		close(fds[0]);
		while (read(fds[1], buf, sizeof(buf)) > 0)
			;
		_exit(0);
	}
	close(fds[1]);
	printf("%d %d\n", (int)getpid(), (int)reader);
	fflush(stdout);
	start = now_s();
	while (now_s() - start < seconds) {
		/* Ahead of the rate: wait until the schedule catches up. */
		double ahead = sent / rate - (now_s() - start);
		if (ahead > 0)
			usleep((useconds_t)(ahead * 1e6));
		if (write(fds[0], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			break;
		sent += sizeof(buf);
	}
	close(fds[0]);
	waitpid(reader, NULL, 0);
	return 0;
}
