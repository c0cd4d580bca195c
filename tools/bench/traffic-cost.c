/* traffic-cost [SECONDS [PAIRS [no-syscalls]]]: what the kernel's traffic
 * counters (daemon/sample/traffic.h) cost the processes they count. Five
 * workloads, each run PAIRS times (default 15) without the counters, with
 * them, and with them thinned for the workload's processes
 * (traffic_thin(): as ccxd counts a kept group), SECONDS each (default
 * 0.5), the order turned from one round to the next so that a machine
 * whose other work comes and goes weighs on all three alike:
 *
 *   stream          a writer and a reader, 64 KiB calls through a pipe (MB/s)
 *   pingpong_pipe   two processes passing a byte back and forth through two
 *                   pipes (round trips/s)
 *   pingpong_unix   the same through a Unix socketpair
 *   pingpong_tcp    the same through a loopback TCP connection (TCP_NODELAY)
 *   getppid         a system call that moves nothing (calls/s): what every
 *                   system call pays where pipes are counted at system
 *                   calls' exit
 *
 * For each: the medians of the rate and of the CPU time its processes took
 * per unit (ns per MB, per round trip, per call), without, with and
 * thinned, and the medians of the rounds' ratios to without. On a machine where other
 * work runs the rate mostly tells how long the CPUs were given to others;
 * the CPU time per unit, less so. Then the wall time of the reads of the
 * counts (one after each run with them), and of 100 reads 10 ms apart
 * while every CPU is busy (a spinner each, at ccxd's priority) and a
 * ping-pong through a Unix socketpair keeps the counters at work. All run on one CPU (the last this
 * process may use): as ccxd would seat such a pair, and so that a
 * ping-pong does not go from wakeups on one CPU to wakeups across two (at
 * another speed) from one run to the next. no-syscalls: pipes not counted
 * where the kernel refuses fexit programs, rather than at every system
 * call's exit. Built and run by tools/bench/traffic-cost.sh. */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "traffic.h"

#define MAX_PAIRS 101

/* Where the workload's processes are thinned: those counters, or NULL. */
static struct traffic *thinning;

/* A process of the workload, forked: thinned where they are. */
static pid_t fork_thinned(void) {
	pid_t pid = fork();

	if (pid > 0 && thinning)
		traffic_thin(thinning, pid, true);
	return pid;
}

struct result {
	double rate, cpu_ns;       /* per second; CPU ns per unit */
};

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

static struct result stream(double seconds) {
	static char buf[65536];
	double start, bytes = 0, used = cpu(), took;
	int p[2];
	pid_t writer;

	if (pipe(p) < 0)
		exit(1);
	writer = fork_thinned();
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
	return (struct result){ bytes / took / 1e6, (cpu() - used) * 1e9 / (bytes / 1e6) };
}

enum channel { PIPE, UNIX_SOCKET, TCP };

/* A connected loopback TCP pair, into sv as socketpair() gives one. */
static int tcp_pair(int sv[2]) {
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &len) < 0 || (sv[0] = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    connect(sv[0], (struct sockaddr *)&a, sizeof(a)) < 0 || (sv[1] = accept(l, NULL, NULL)) < 0)
		return -1;
	close(l);
	setsockopt(sv[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(sv[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

static struct result pingpong(double seconds, enum channel channel) {
	int there[2], back[2];   /* [0] read by the other, [1] written */
	double start, used = cpu(), took;
	long trips = 0;
	char c = 'x';
	pid_t echo;

	if (channel != PIPE) {
		int sv[2];
		if ((channel == TCP ? tcp_pair(sv) : socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) < 0)
			exit(1);
		there[0] = back[1] = sv[1];   /* the echo's end */
		there[1] = back[0] = sv[0];
	} else if (pipe(there) < 0 || pipe(back) < 0) {
		exit(1);
	}
	echo = fork_thinned();
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
	close(there[0]);
	close(there[1]);
	if (channel == PIPE) {
		close(back[0]);
		close(back[1]);
	}
	return (struct result){ (double)trips / took, (cpu() - used) * 1e9 / (double)trips };
}

static struct result syscalls(double seconds) {
	double start = now(), used = cpu();
	long calls = 0;

	while ((calls & 1023) || now() - start < seconds) {
		getppid();
		calls++;
	}
	return (struct result){ (double)calls / (now() - start), (cpu() - used) * 1e9 / (double)calls };
}

static struct result run(int workload, double seconds) {
	switch (workload) {
	case 0:
		return stream(seconds);
	case 1:
		return pingpong(seconds, PIPE);
	case 2:
		return pingpong(seconds, UNIX_SOCKET);
	case 3:
		return pingpong(seconds, TCP);
	default:
		return syscalls(seconds);
	}
}

static int compare_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n) {
	qsort(v, (size_t)n, sizeof(*v), compare_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A process that spins until killed, on any CPU. */
static pid_t spinner(void) {
	pid_t pid = fork();

	if (pid == 0) {
		cpu_set_t all;
		CPU_ZERO(&all);
		for (int c = 0; c < CPU_SETSIZE; c++)
			CPU_SET(c, &all);
		sched_setaffinity(0, sizeof(all), &all);
		for (;;)
			;
	}
	return pid;
}

/* The wall time of reads of the counts (ms, into reads) while the CPUs are
 * busy and a ping-pong is counted; how many. */
static int reads_under_load(bool with_syscalls, double *reads, int max) {
	long n_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pid_t load[65], pp;
	struct traffic *t;
	int n = 0, n_load = 0;

	if (traffic_new(with_syscalls, &t) < 0)
		return 0;
	pp = fork();
	if (pp == 0) {   /* a group of its own: its echo goes with it */
		setpgid(0, 0);
		_exit(pingpong(60, true).rate > 0 ? 0 : 1);
	}
	if (pp > 0)
		setpgid(pp, pp);   /* before any kill, whichever runs first */
	for (long c = 0; c < n_cpus && n_load < 65; c++)
		load[n_load++] = spinner();
	for (; n < max; n++) {
		struct traffic_entry *e;
		size_t count;
		double start;
		usleep(10000);
		start = now();
		if (traffic_read(t, &e, &count) == 0)
			free(e);
		reads[n] = (now() - start) * 1e3;
	}
	for (int i = 0; i < n_load; i++)
		if (load[i] > 0)
			kill(load[i], SIGKILL);
	if (pp > 0)
		kill(-pp, SIGKILL);
	while (wait(NULL) > 0)
		;
	traffic_free(t);
	return n;
}

/* Every pair on one CPU, the last this may use. */
static void on_the_last_cpu(void) {
	cpu_set_t cpus;
	int last = CPU_SETSIZE - 1;

	if (sched_getaffinity(0, sizeof(cpus), &cpus) < 0)
		return;
	while (last > 0 && !CPU_ISSET(last, &cpus))
		last--;
	CPU_ZERO(&cpus);
	CPU_SET(last, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus) == 0)
		printf("on CPU %d\n", last);
}

int main(int argc, char **argv) {
	static const char *const names[] = { "stream", "pingpong_pipe", "pingpong_unix", "pingpong_tcp", "getppid" };
	double seconds = argc > 1 ? atof(argv[1]) : 0.5, reads[10 * MAX_PAIRS];
	int pairs = argc > 2 ? atoi(argv[2]) : 15, n_reads = 0;
	bool with_syscalls = !(argc > 3 && strcmp(argv[3], "no-syscalls") == 0);
	struct traffic *t;

	if (pairs < 1 || pairs > MAX_PAIRS || seconds <= 0) {
		fprintf(stderr, "usage: traffic-cost [SECONDS [PAIRS (1 to %d) [no-syscalls]]]\n", MAX_PAIRS);
		return 2;
	}
	on_the_last_cpu();
	if (traffic_new(with_syscalls, &t) < 0) {
		fprintf(stderr, "traffic-cost: the counters cannot be loaded here\n");
		return 1;
	}
	printf("pipes %s, sockets %s; %s\n", traffic_counts_pipes(t) ? "counted" : "not counted",
	       traffic_counts_sockets(t) ? "counted" : "not counted", traffic_note(t) ? traffic_note(t) : "all counted");
	traffic_free(t);
	printf("| workload | rate without | with | thinned | with / without | thinned / without "
	       "| CPU ns per unit without | with | thinned | with / without | thinned / without |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int w = 0; w < 5; w++) {
		/* [0] without, [1] with, [2] thinned */
		double rate[3][MAX_PAIRS], ns[3][MAX_PAIRS], rate_ratio[3][MAX_PAIRS], ns_ratio[3][MAX_PAIRS];
		for (int i = 0; i < pairs; i++) {
			for (int k = 0; k < 3; k++) {
				int how = (i + k) % 3;
				struct traffic_entry *e;
				struct result r;
				size_t n;
				double start;
				if (how && traffic_new(with_syscalls, &t) < 0)
					return 1;
				if (how == 2) {
					thinning = t;
					traffic_thin(t, getpid(), true);
				}
				r = run(w, seconds);
				thinning = NULL;
				rate[how][i] = r.rate;
				ns[how][i] = r.cpu_ns;
				if (!how)
					continue;
				start = now();
				if (traffic_read(t, &e, &n) == 0)
					free(e);
				reads[n_reads++] = (now() - start) * 1e3;
				traffic_free(t);
			}
			for (int how = 1; how < 3; how++) {
				rate_ratio[how][i] = rate[how][i] / rate[0][i];
				ns_ratio[how][i] = ns[how][i] / ns[0][i];
			}
		}
		printf("| %s | %.0f | %.0f | %.0f | %.3f | %.3f | %.0f | %.0f | %.0f | %.3f | %.3f |\n", names[w],
		       median(rate[0], pairs), median(rate[1], pairs), median(rate[2], pairs),
		       median(rate_ratio[1], pairs), median(rate_ratio[2], pairs), median(ns[0], pairs),
		       median(ns[1], pairs), median(ns[2], pairs), median(ns_ratio[1], pairs),
		       median(ns_ratio[2], pairs));
		fflush(stdout);
	}
	seconds = median(reads, n_reads);   /* sorts them */
	printf("reads of the counts: median %.3f ms, longest %.3f ms, of %d\n", seconds, reads[n_reads - 1], n_reads);
	n_reads = reads_under_load(with_syscalls, reads, 100);
	if (n_reads > 0) {
		seconds = median(reads, n_reads);
		printf("reads of the counts with every CPU busy: median %.3f ms, longest %.3f ms, of %d\n", seconds,
		       reads[n_reads - 1], n_reads);
	}
	return 0;
}
