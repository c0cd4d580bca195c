/* ccxt-talk pipe|unix|tcp|pingpong|pingpong-unix|pingpong-tcp MIB_PER_S SECONDS [BURN_US]: two
 * processes, a writer and a reader, streaming at a known rate (0: as fast as
 * they can) through a pipe, a Unix socketpair or a loopback TCP connection.
 * With BURN_US, each side also burns that much CPU time per 64 KiB chunk: two
 * busy processes, which one shared CPU slows down by half. pingpong sends
 * 4 KiB back and forth through two pipes, as fast as it can: a pair bound by
 * wake-up latency, which one shared CPU speeds up; pingpong-unix sends 64
 * bytes back and forth through a Unix socketpair, as many messages as it
 * can; pingpong-tcp the same through a loopback TCP connection (Nagle off),
 * a request/response pair with one request in flight. Prints "WRITER_PID
 * READER_PID" and runs for SECONDS. On SIGUSR1 the writer forks a child
 * that holds none of the pair's fds and waits to be killed. On SIGUSR2 the
 * writer of a pingpong pair (two pipes) makes it two busy processes: it
 * streams its messages without waiting for replies, and both burn
 * BUSY_US of CPU time per message, which two CPUs run twice as fast as
 * one. For tests of what ccxd finds and does.
 *
 * Run as root, the two ends may be other users': CCXT_TALK_UID the
 * writer's (a pingpong pair's client, which asks), CCXT_TALK_PEER_UID the
 * reader's (the one that answers), each taken once the connection is made. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 65536
#define BUSY_US 50   /* CPU time per message, each side, once busy */

static volatile sig_atomic_t fork_asked;

static volatile sig_atomic_t busy_asked;

static void ask_busy(int sig) {
	(void)sig;
	busy_asked = 1;
}

static void ask_fork(int sig) {
	(void)sig;
	fork_asked = 1;
}

/* A child asked for with SIGUSR1: it talks to nobody. */
static void fork_if_asked(void) {
	if (!fork_asked)
		return;
	fork_asked = 0;
	if (fork() == 0) {
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		for (;;)
			pause();
	}
}

static double now_s(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void burn(long usec) {
	struct timespec start, now;

	if (usec <= 0)
		return;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	while ((now.tv_sec - start.tv_sec) * 1000000L + (now.tv_nsec - start.tv_nsec) / 1000 < usec);
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

/* Becomes the user the variable names, if any; exits if it cannot. */
static void become(const char *variable) {
	const char *v = getenv(variable);
	uid_t uid;

	if (!v || !*v)
		return;
	uid = (uid_t)atol(v);
	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0) {
		perror("ccxt-talk: cannot become that user");
		_exit(1);
	}
}

#define PING 4096
#define PING_UNIX 64

/* kind: "pingpong" (two pipes), "pingpong-unix" or "pingpong-tcp". */
static int pingpong(double seconds, const char *kind) {
	static char buf[PING];
	bool socket_pair = strcmp(kind, "pingpong") != 0;
	size_t size = socket_pair ? PING_UNIX : PING;
	int there[2], back[2];
	unsigned long trips = 0;
	double start;
	pid_t peer;

	if (socket_pair) {   /* each end both ways */
		int sv[2], one = 1;
		if (strcmp(kind, "pingpong-tcp") == 0) {
			if (connect_pair("tcp", sv) < 0 ||
			    setsockopt(sv[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0 ||
			    setsockopt(sv[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
				return 1;
		} else if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
			return 1;
		}
		if ((there[0] = dup(sv[1])) < 0 || (back[0] = dup(sv[0])) < 0)
			return 1;
		there[1] = sv[0];
		back[1] = sv[1];
	} else if (pipe(there) < 0 || pipe(back) < 0) {
		return 1;
	}
	peer = fork();
	if (peer == 0) {
		become("CCXT_TALK_PEER_UID");
		close(there[1]);
		close(back[0]);
		while (read(there[0], buf, size) > 0) {
			if (buf[0]) {   /* busy from now on: no more replies */
				while (read(there[0], buf, size) > 0)
					burn(BUSY_US);
				break;
			}
			if (write(back[1], buf, size) < 0)
				break;
		}
		_exit(0);
	}
	become("CCXT_TALK_UID");
	close(there[0]);
	close(back[1]);
	printf("%d %d\n", (int)getpid(), (int)peer);
	fflush(stdout);
	start = now_s();
	while (now_s() - start < seconds) {
		fork_if_asked();
		if (busy_asked && !socket_pair) {
			buf[0] = 1;
			while (now_s() - start < seconds && write(there[1], buf, size) > 0)
				burn(BUSY_US);
			break;
		}
		if (write(there[1], buf, size) < 0 || read(back[0], buf, size) <= 0)
			break;
		trips++;
	}
	/* What a benchmark compares placements by. */
	fprintf(stderr, "ccxt-talk: %.0f round trips a second\n", (double)trips / (now_s() - start));
	close(there[1]);
	close(back[0]);   /* a socket's other fd on the same end: the peer sees the end */
	waitpid(peer, NULL, 0);
	return 0;
}

int main(int argc, char **argv) {
	static char buf[CHUNK];
	double rate, seconds, start, sent = 0;
	long burn_us;
	pid_t reader;
	int fds[2];

	signal(SIGUSR1, ask_fork);
	signal(SIGUSR2, ask_busy);
	if (argc >= 4 && strncmp(argv[1], "pingpong", 8) == 0)
		return pingpong(atof(argv[3]), argv[1]);
	if ((argc != 4 && argc != 5) || connect_pair(argv[1], fds) < 0) {
		fprintf(stderr, "Usage: ccxt-talk pipe|unix|tcp MIB_PER_S SECONDS [BURN_US]\n");
		return 2;
	}
	rate = atof(argv[2]) * 1024 * 1024;
	seconds = atof(argv[3]);
	burn_us = argc == 5 ? atol(argv[4]) : 0;
	reader = fork();
	if (reader == 0) {
		size_t got = 0;
		ssize_t n;
		become("CCXT_TALK_PEER_UID");
		close(fds[0]);
		while ((n = read(fds[1], buf, sizeof(buf))) > 0) {
			got += (size_t)n;
			if (got >= CHUNK) {
				got -= CHUNK;
				burn(burn_us);
			}
		}
		_exit(0);
	}
	become("CCXT_TALK_UID");
	close(fds[1]);
	printf("%d %d\n", (int)getpid(), (int)reader);
	fflush(stdout);
	start = now_s();
	while (now_s() - start < seconds) {
		/* Ahead of the rate: wait until the schedule catches up. */
		double ahead = rate > 0 ? sent / rate - (now_s() - start) : 0;
		if (ahead > 0)
			usleep((useconds_t)(ahead * 1e6));
		burn(burn_us);
		fork_if_asked();
		if (write(fds[0], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			break;
		sent += sizeof(buf);
	}
	close(fds[0]);
	waitpid(reader, NULL, 0);
	return 0;
}
