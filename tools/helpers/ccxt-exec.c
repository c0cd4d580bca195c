/* ccxt-exec: exec storms and exec-to-pin latency, for benchmarks.
 *
 *   ccxt-exec latency N PROGRAM CPULIST [hold|spin|threads [TRACE_PIPE]]
 *       Without TRACE_PIPE, a SCHED_IDLE poller watches the child's
 *       affinity until it equals CPULIST (at most a second), and prints how
 *       long after the execve it saw it: enough to tell whether a daemon
 *       pins. With TRACE_PIPE, a measure that leaves the daemon alone:
 *       N times: fork; the child notes the time and execs PROGRAM (a copy
 *       of ccxt-exec under a name some rule matches), which then sleeps
 *       (hold), computes (spin) or makes 8 threads that compute (threads)
 *       until it is killed, 40 ms later. Prints the time from the execve to
 *       the first sched_setaffinity() call on the child, in microseconds,
 *       one line per exec, or "timeout" when its affinity was not CPULIST
 *       by then ("untraced" when it was, but the trace has no call on it). The call is read from the kernel's trace (TRACE_PIPE, with
 *       trace_clock = mono and the event syscalls/sys_enter_sched_setaffinity
 *       enabled): this process sleeps meanwhile, and so neither takes a CPU
 *       from the daemon nor enters the kernel on the child's CPU, which
 *       would hide a wake-up that waits for a timer tick.
 *   ccxt-exec events N PROGRAM [hold|spin|threads]
 *       The floor under any daemon driven by the proc connector: N times,
 *       the time from the execve until its exec event reaches a listener
 *       of our own (root only).
 *   ccxt-exec storm N PROGRAM
 *       N times fork, exec PROGRAM (which exits at once) and wait.
 *   ccxt-exec perf-pinner COMM CPULIST
 *       The least a daemon driven by perf's exec records can do: set the
 *       affinity of every process that executes a program named COMM to
 *       CPULIST as soon as the record arrives (a PERF_RECORD_COMM with
 *       PERF_RECORD_MISC_COMM_EXEC from a dummy event on each CPU, which
 *       carries the new comm and leaves the kernel before the proc
 *       connector's exec event), until killed (root, or CAP_PERFMON).
 *
 * Run under a name that does not start with "ccxt-exec", it is the exec'd
 * program: "hold", "spin" and "threads" as above, or "forking", which
 * computes and forks a child that sleeps at each SIGUSR1; anything else exits at
 * once. ccxt-exec is linked statically and ccxt-exec-dynamic dynamically:
 * a dynamic program spends its first few hundred microseconds in ld.so,
 * where a static one runs its own code at once. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>

#include "cpulist.h"

#define WINDOW_NS 40000000L             /* how long a daemon has to pin, traced */
#define POLL_TIMEOUT_NS 1000000000LL    /* and polled */
#define TARGET_THREADS 8

static long long now_ns(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Forks and execs program with args; the child stores the time of its
 * execve in *stamp when stamp is not NULL. */
static pid_t start(char *program, char **args, volatile long long *stamp) {
	pid_t pid = fork();

	if (pid == 0) {
		if (stamp)
			*stamp = now_ns();
		execv(program, args);
		_exit(127);
	}
	return pid;
}

/* When the first sched_setaffinity() on pid was made, from the kernel's
 * trace (CLOCK_MONOTONIC ns), read from trace_pipe; 0 when none is there. */
static long long traced_pin(int trace, pid_t pid) {
	static char buf[1 << 16];
	static size_t have;
	char want[32];
	long long at = 0;
	ssize_t n;

	snprintf(want, sizeof(want), "(pid: 0x%x,", (unsigned)pid);
	while ((n = read(trace, buf + have, sizeof(buf) - 1 - have)) > 0 || have > 0) {
		char *line = buf, *nl;

		have += n > 0 ? (size_t)n : 0;
		buf[have] = '\0';
		while ((nl = strchr(line, '\n'))) {
			char *colon = strstr(line, ": sys_sched_setaffinity");
			double sec;

			*nl = '\0';
			/* "comm-pid [cpu] flags seconds.micros: sys_sched_setaffinity(pid: 0x..., ..." */
			if (!at && colon && strstr(colon, want)) {
				char *t = colon;
				while (t > line && t[-1] != ' ')
					t--;
				if (sscanf(t, "%lf", &sec) == 1)
					at = (long long)(sec * 1e9);
			}
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (n <= 0 || have == sizeof(buf) - 1)
			break;
	}
	return at;
}

/* Watches the child's affinity from outside, napping between looks. */
static long long polled_pin(pid_t pid, const cpu_set_t *want, volatile long long *stamp) {
	cpu_set_t have;

	for (;;) {
		long long t = now_ns();

		if (*stamp && sched_getaffinity(pid, sizeof(have), &have) == 0 && CPU_EQUAL(&have, want))
			return t;
		if (*stamp && t - *stamp > POLL_TIMEOUT_NS)
			return 0;
		/* A nap rather than a spin: on a small machine spinning would
		 * take the CPU the daemon needs. */
		nanosleep(&(struct timespec){ .tv_nsec = 5000 }, NULL);
	}
}

static int measure_one(char *program, char *mode, const cpu_set_t *want, volatile long long *stamp, int trace) {
	char *args[] = { program, mode, NULL };
	cpu_set_t have;
	long long at = 0;
	pid_t pid;

	*stamp = 0;
	pid = start(program, args, stamp);
	if (pid < 0)
		return -errno;
	if (trace < 0)
		at = polled_pin(pid, want, stamp);
	/* Asleep the whole window: nothing of ours runs, or enters the kernel,
	 * while the daemon is on its way. */
	else if (nanosleep(&(struct timespec){ .tv_nsec = WINDOW_NS }, NULL) == 0 &&
		 sched_getaffinity(pid, sizeof(have), &have) == 0 && CPU_EQUAL(&have, want) &&
		 (at = traced_pin(trace, pid)) == 0)
		at = -1;
	if (at > 0 && *stamp)
		printf("%.1f\n", (double)(at - *stamp) / 1000.0);
	else
		printf("%s\n", at < 0 ? "untraced" : "timeout");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 0;
}

static int listen_events(void) {
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
	struct __attribute__((packed)) {
		struct nlmsghdr h;
		struct cn_msg cn;
		enum proc_cn_mcast_op op;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = NLMSG_DONE },
		.cn = { .id = { .idx = CN_IDX_PROC, .val = CN_VAL_PROC }, .len = sizeof(enum proc_cn_mcast_op) },
		.op = PROC_CN_MCAST_LISTEN,
	};
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || send(fd, &req, sizeof(req), 0) < 0)
		return -errno;
	return fd;
}

static int event_one(int fd, char *program, char *mode, volatile long long *stamp) {
	char *args[] = { program, mode, NULL };
	char buf[4096];
	pid_t pid = start(program, args, stamp);

	if (pid < 0)
		return -errno;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		long long t = now_ns();
		const struct nlmsghdr *h = (const void *)buf;
		const struct proc_event *ev;

		if (n < (ssize_t)(NLMSG_HDRLEN + sizeof(struct cn_msg) + sizeof(struct proc_event)))
			continue;
		ev = (const void *)((const struct cn_msg *)NLMSG_DATA(h))->data;
		if (ev->what == PROC_EVENT_EXEC && ev->event_data.exec.process_pid == pid) {
			printf("%.1f\n", (double)(t - *stamp) / 1000.0);
			break;
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 0;
}

/* One dummy software event on each online CPU, recording comm changes,
 * exec's included, into a ring of 8 pages, each record waking the reader. */
#define PERF_RING_PAGES 8

static int perf_pinner(const char *comm, const cpu_set_t *cpus) {
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = page * PERF_RING_PAGES;
	long n_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct perf_event_mmap_page **rings = calloc((size_t)n_cpus, sizeof(*rings));
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (!rings || ep < 0)
		return -ENOMEM;
	for (long cpu = 0; cpu < n_cpus; cpu++) {
		struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a), .config = PERF_COUNT_SW_DUMMY,
					     .comm = 1, .comm_exec = 1, .watermark = 1, .wakeup_watermark = 1 };
		int fd = (int)syscall(SYS_perf_event_open, &a, -1, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)cpu };

		if (fd < 0)
			return -errno;
		rings[cpu] = mmap(NULL, page + size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (rings[cpu] == MAP_FAILED || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
			return -errno;
	}
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, -1);

		if (n < 0 && errno != EINTR)
			return -errno;
		for (int i = 0; i < n; i++) {
			struct perf_event_mmap_page *m = rings[evs[i].data.u64];
			const char *data = (const char *)m + page;
			uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE), tail = m->data_tail;

			while (tail < head) {
				struct perf_event_header h;
				struct { uint32_t pid, tid; char comm[16]; } r;

				memcpy(&h, data + tail % size, sizeof(h));
				if (h.size == 0)
					break;
				if (h.type == PERF_RECORD_COMM && (h.misc & PERF_RECORD_MISC_COMM_EXEC) &&
				    (tail + sizeof(h)) % size + sizeof(r) <= size) {
					memcpy(&r, data + (tail + sizeof(h)) % size, sizeof(r));
					r.comm[sizeof(r.comm) - 1] = '\0';
					if (strcmp(r.comm, comm) == 0)
						sched_setaffinity((pid_t)r.pid, sizeof(*cpus), cpus);
				}
				tail += h.size;
			}
			__atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
		}
	}
}

static int storm_one(char *program) {
	char *args[] = { program, "exit", NULL };
	pid_t pid = start(program, args, NULL);
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 127 ? -ENOEXEC : 0;
}

static void *spin(void *arg) {
	(void)arg;
	for (volatile unsigned long i = 0;; i++)
		;
	return NULL;
}

static volatile sig_atomic_t fork_asked;

static void ask_fork(int sig) {
	(void)sig;
	fork_asked = 1;
}

/* The exec'd program: what it does until it is killed. */
static int target(const char *mode) {
	if (strcmp(mode, "hold") == 0)
		pause();
	else if (strcmp(mode, "spin") == 0)
		spin(NULL);
	else if (strcmp(mode, "threads") == 0) {
		for (int i = 1; i < TARGET_THREADS; i++) {
			pthread_t t;
			if (pthread_create(&t, NULL, spin, NULL) != 0)
				return 1;
		}
		spin(NULL);
	} else if (strcmp(mode, "forking") == 0) {
		signal(SIGUSR1, ask_fork);
		for (;;) {
			if (!fork_asked)
				continue;
			fork_asked = 0;
			if (fork() == 0)
				for (;;)
					pause();
		}
	}
	return 0;
}

static bool known_mode(const char *mode) {
	return strcmp(mode, "hold") == 0 || strcmp(mode, "spin") == 0 || strcmp(mode, "threads") == 0;
}

int main(int argc, char **argv) {
	const char *self = strrchr(argv[0], '/');
	volatile long long *stamp;
	cpu_set_t want;
	char *mode = "hold";
	int events = -1, trace = -1, mode_arg;
	long n;

	self = self ? self + 1 : argv[0];
	if (strncmp(self, "ccxt-exec", strlen("ccxt-exec")) != 0)
		return target(argc > 1 ? argv[1] : "exit");
	if (argc == 4 && strcmp(argv[1], "perf-pinner") == 0) {
		int r = cpulist_parse(argv[3], &want) < 0 ? -EINVAL : perf_pinner(argv[2], &want);
		fprintf(stderr, "ccxt-exec: perf-pinner: %s\n", strerror(-r));
		return 1;
	}
	mode_arg = argc > 1 && strcmp(argv[1], "latency") == 0 ? 5 : 4;
	if (argc > mode_arg)
		mode = argv[mode_arg];
	if (argc < 4 || (strcmp(argv[1], "latency") == 0 && (argc < 5 || cpulist_parse(argv[4], &want) < 0)) ||
	    !known_mode(mode)) {
		fprintf(stderr, "Usage: ccxt-exec latency N PROGRAM CPULIST [hold|spin|threads [TRACE_PIPE]] | "
				"events N PROGRAM [hold|spin|threads] | storm N PROGRAM | perf-pinner COMM CPULIST\n");
		return 2;
	}
	if (strcmp(argv[1], "latency") == 0 && argc > 6 && (trace = open(argv[6], O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
		fprintf(stderr, "ccxt-exec: %s: %s\n", argv[6], strerror(errno));
		return 1;
	}
	/* The poller must never stand in the way of the daemon it measures:
	 * SCHED_IDLE yields to everything; children start normal. */
	if (strcmp(argv[1], "latency") == 0 && trace < 0 &&
	    sched_setscheduler(0, SCHED_IDLE | SCHED_RESET_ON_FORK, &(struct sched_param){ 0 }) < 0)
		perror("ccxt-exec: SCHED_IDLE");
	stamp = mmap(NULL, sizeof(*stamp), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (stamp == MAP_FAILED)
		return 1;
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	n = atol(argv[2]);
	if (strcmp(argv[1], "events") == 0 && (events = listen_events()) < 0) {
		fprintf(stderr, "ccxt-exec: cannot listen to process events: %s\n", strerror(-events));
		return 1;
	}
	for (long i = 0; i < n; i++) {
		int r;
		fflush(stdout);
		if (strcmp(argv[1], "latency") == 0)
			r = measure_one(argv[3], mode, &want, stamp, trace);
		else if (events >= 0)
			r = event_one(events, argv[3], mode, stamp);
		else
			r = storm_one(argv[3]);
		if (r < 0) {
			fprintf(stderr, "ccxt-exec: %s: %s\n", argv[3], strerror(-r));
			return 1;
		}
	}
	return 0;
}
