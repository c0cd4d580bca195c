/* traffic-cost: what the kernel's traffic counters (daemon/traffic.h) cost
 * the processes they count. Built and run by tools/bench/traffic-cost.sh.
 *
 *   traffic-cost hold [MS]            load the counters and read them every
 *                                     MS (default 1000) until SIGTERM; then
 *                                     print the reads' wall time
 *   traffic-cost stream SECONDS       a writer and a reader, 64 KiB calls
 *                                     through a pipe: MB/s
 *   traffic-cost pingpong SECONDS KIND    two processes passing a byte back
 *                                     and forth through two pipes (KIND
 *                                     pipe) or a Unix socketpair (unix):
 *                                     round trips/s
 *   traffic-cost syscalls SECONDS     getppid(2) calls/s: what every system
 *                                     call pays, channel or not
 *
 * Each workload prints its rate, then the CPU time its processes took per
 * unit (ns per MB, per round trip, per call): on a machine where other
 * work runs, the rate tells how long the CPUs were given to others, the
 * CPU time less so. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "traffic.h"

static double now(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The CPU time of this process, and of its children waited for. */
static double cpu(void) {
	struct rusage self, children;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &children);
	return (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + children.ru_utime.tv_sec +
			children.ru_stime.tv_sec) +
	       (double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec + children.ru_utime.tv_usec +
			children.ru_stime.tv_usec) / 1e6;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
	(void)sig;
	stop = 1;
}

static int hold(long ms) {
	struct traffic *t;
	double total = 0, longest = 0;
	long reads = 0;
	int r = traffic_new(true, &t);

	if (r < 0) {
		fprintf(stderr, "traffic_new: %s\n", strerror(-r));
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("loaded: pipes %d, sockets %d; %s\n", traffic_counts_pipes(t), traffic_counts_sockets(t),
	       traffic_note(t) ? traffic_note(t) : "all counted");
	fflush(stdout);
	while (!stop) {
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
		struct traffic_entry *e;
		double start;
		size_t n;
		nanosleep(&ts, NULL);
		start = now();
		if (traffic_read(t, &e, &n) < 0)
			break;
		start = now() - start;
		total += start;
		longest = start > longest ? start : longest;
		reads++;
		free(e);
	}
	printf("reads %ld mean_ms %.3f max_ms %.3f lost %llu\n", reads, reads ? total / (double)reads * 1e3 : 0,
	       longest * 1e3, (unsigned long long)traffic_lost(t));
	traffic_free(t);
	return 0;
}

static int stream(double seconds) {
	static char buf[65536];
	double start, bytes = 0, used = cpu(), took;
	int p[2];
	pid_t writer;

	if (pipe(p) < 0)
		return 1;
	writer = fork();
	if (writer == 0) {
		close(p[0]);
		while (write(p[1], buf, sizeof(buf)) > 0)
			;
		_exit(0);
	}
	close(p[1]);
	start = now();
	while (now() - start < seconds) {
		ssize_t n = read(p[0], buf, sizeof(buf));
		if (n <= 0)
			break;
		bytes += (double)n;
	}
	took = now() - start;
	close(p[0]);
	kill(writer, SIGKILL);
	waitpid(writer, NULL, 0);
	printf("%.1f %.0f\n", bytes / took / 1e6, (cpu() - used) * 1e9 / (bytes / 1e6));
	return 0;
}

static int pingpong(double seconds, const char *kind) {
	int there[2], back[2];   /* [0] read by the other, [1] written */
	double start, used = cpu(), took;
	long trips = 0;
	char c = 'x';
	pid_t echo;

	if (strcmp(kind, "unix") == 0) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
			return 1;
		there[0] = back[1] = sv[1];   /* the echo's end */
		there[1] = back[0] = sv[0];
	} else if (pipe(there) < 0 || pipe(back) < 0) {
		return 1;
	}
	echo = fork();
	if (echo == 0) {
		while (read(there[0], &c, 1) == 1 && write(back[1], &c, 1) == 1)
			;
		_exit(0);
	}
	start = now();
	while (now() - start < seconds && write(there[1], &c, 1) == 1 && read(back[0], &c, 1) == 1)
		trips++;
	took = now() - start;
	kill(echo, SIGKILL);
	waitpid(echo, NULL, 0);
	printf("%.0f %.0f\n", (double)trips / took, (cpu() - used) * 1e9 / (double)trips);
	return 0;
}

static int syscalls(double seconds) {
	double start = now(), used = cpu();
	long calls = 0;

	while ((calls & 1023) || now() - start < seconds) {
		getppid();
		calls++;
	}
	printf("%.0f %.1f\n", (double)calls / (now() - start), (cpu() - used) * 1e9 / (double)calls);
	return 0;
}

int main(int argc, char **argv) {
	if (argc >= 2 && strcmp(argv[1], "hold") == 0)
		return hold(argc >= 3 ? atol(argv[2]) : 1000);
	if (argc >= 3 && strcmp(argv[1], "stream") == 0)
		return stream(atof(argv[2]));
	if (argc >= 4 && strcmp(argv[1], "pingpong") == 0)
		return pingpong(atof(argv[2]), argv[3]);
	if (argc >= 3 && strcmp(argv[1], "syscalls") == 0)
		return syscalls(atof(argv[2]));
	fprintf(stderr, "usage: traffic-cost hold [MS] | stream SECONDS | pingpong SECONDS pipe|unix | syscalls SECONDS\n");
	return 2;
}
