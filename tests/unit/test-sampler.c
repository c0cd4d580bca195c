/* The sampler against real processes talking through a real pipe, a
 * socketpair and a loopback TCP connection. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "sampler.h"
#include "taskiter.h"
#include "test.h"


/* Each test runs with active processes read through the BPF batch
 * iterator, then through iterators of each process's own, then from /proc:
 * each pass where this machine allows it (main()). */
static enum sampler_reading reading;

static int new_sampler(struct sampler **s) {
	return sampler_new("", reading, SAMPLER_COUNT_AUTO, s);
}

/* The sampler of this run's reading; where the machine cannot build it,
 * the test is skipped, saying why, rather than passed unchecked. */
static struct sampler *sampler_or_skip(void) {
	struct sampler *s;
	int r = new_sampler(&s);
	char why[160];

	if (r >= 0)
		return s;
	snprintf(why, sizeof(why), "no sampler reading %s here (%s)", sampler_reading_to_string(reading), strerror(-r));
	SKIP_TEST(why);
}

static uint64_t now_usec(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Children that pump bytes until killed; each closes the other end, as a
 * shell does for a pipeline. They die with the test, whatever ends it.
 * With moved, a counter in memory shared with the test, the writer adds
 * every byte it wrote there. */
static pid_t spawn_counted_writer(int fd, int other_end, size_t size, useconds_t pause, uint64_t *moved) {
	pid_t pid = fork();

	if (pid == 0) {
		static char buf[65536];
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(other_end);
		for (;;) {
			ssize_t n = write(fd, buf, size);
			if (n < 0 && errno != EINTR)
				_exit(0);
			if (n > 0 && moved)
				__atomic_add_fetch(moved, (uint64_t)n, __ATOMIC_RELAXED);
			if (pause)
				usleep(pause);
		}
	}
	return pid;
}

static pid_t spawn_writer_of(int fd, int other_end, size_t size, useconds_t pause) {
	return spawn_counted_writer(fd, other_end, size, pause, NULL);
}

static pid_t spawn_writer(int fd, int other_end) {
	return spawn_writer_of(fd, other_end, 65536, 0);
}

static pid_t spawn_reader(int fd, int other_end) {
	pid_t pid = fork();

	if (pid == 0) {
		static char buf[65536];
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(other_end);
		for (;;)
			if (read(fd, buf, sizeof(buf)) <= 0)
				_exit(0);
	}
	return pid;
}

static const struct sampler_channel *find(const struct sampler_result *r, enum channel_kind kind, pid_t a,
					  pid_t b) {
	for (size_t i = 0; i < r->n_channels; i++) {
		const struct sampler_channel *c = &r->channels[i];
		if (c->kind == kind && ((c->from == a && c->to == b) || (c->from == b && c->to == a)))
			return c;
	}
	return NULL;
}

/* Three samples 300 ms apart: baseline, activity, rates. */
static struct sampler_result *sample_thrice(void) {
	struct sampler *s = sampler_or_skip();
	struct sampler_result *r = NULL;

	for (int i = 0; i < 3; i++) {
		sampler_result_free(r);
		r = NULL;
		if (sampler_sample(s, now_usec(), &r) < 0)
			break;
		if (i < 2)
			usleep(300 * 1000);
	}
	sampler_free(s);
	return r;
}

static void finds_a_pipe_and_its_rate(void) {
	int p[2];
	pid_t w, rd, other;
	struct sampler_result *r;
	const struct sampler_channel *c;

	CHECK(pipe(p) == 0);
	w = spawn_writer(p[1], p[0]);
	rd = spawn_reader(p[0], p[1]);
	/* A second writer of the same pipe, idle: holding the same end as the
	 * busy writer must not make it a partner of anyone. */
	other = fork();
	if (other == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		pause();
		_exit(0);
	}
	close(p[0]);
	close(p[1]);
	r = sample_thrice();
	CHECK(r != NULL);
	c = r ? find(r, CHANNEL_PIPE, w, rd) : NULL;
	CHECK(c != NULL);
	if (c) {
		CHECK_INT(c->from, w);
		CHECK_INT(c->to, rd);
		printf("# pipe %.1f MiB/s\n", c->bytes_per_s / 1048576);
		CHECK(c->bytes_per_s > 10 * 1048576.0);
	}
	CHECK(r && !find(r, CHANNEL_PIPE, w, other) && !find(r, CHANNEL_PIPE, other, rd));
	kill(w, SIGKILL);
	kill(rd, SIGKILL);
	kill(other, SIGKILL);
	sampler_result_free(r);
}

/* A writer and a reader streaming through one channel: found, with a rate
 * that shows, after three samples. Ends both. */
static void expect_stream(enum channel_kind kind, pid_t w, pid_t rd) {
	struct sampler_result *r = sample_thrice();
	const struct sampler_channel *c = r ? find(r, kind, w, rd) : NULL;

	CHECK(c != NULL);
	if (c) {
		printf("# %s %.1f MiB/s\n", channel_kind_to_string(kind), c->bytes_per_s / 1048576);
		CHECK(c->bytes_per_s > 10 * 1048576.0);
	}
	kill(w, SIGKILL);
	kill(rd, SIGKILL);
	sampler_result_free(r);
}

static void finds_a_socketpair(void) {
	int sv[2];
	pid_t w, rd;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	w = spawn_writer(sv[0], sv[1]);
	rd = spawn_reader(sv[1], sv[0]);
	close(sv[0]);
	close(sv[1]);
	expect_stream(CHANNEL_UNIX, w, rd);
}

/* A sender of 1000-byte messages through send(2), which /proc/PID/io does
 * not count, about 8 MB/s; its receiver through recv(2). */
static pid_t spawn_sender(int fd, int other_end) {
	pid_t pid = fork();

	if (pid == 0) {
		static char buf[1000];
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(other_end);
		for (;;) {
			for (int i = 0; i < 8; i++)
				if (send(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
					_exit(0);
			usleep(1000);
		}
	}
	return pid;
}

static pid_t spawn_receiver(int fd, int other_end) {
	pid_t pid = fork();

	if (pid == 0) {
		static char buf[65536];
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(other_end);
		for (;;)
			if (recv(fd, buf, sizeof(buf), 0) <= 0)
				_exit(0);
	}
	return pid;
}

/* Where the kernel counts sockets: a pair that talks through send(2) and
 * recv(2) has its bytes and its messages, one way. */
static void a_socketpair_that_sends_is_counted(void) {
	struct sampler *s;
	struct sampler_result *r = NULL;
	const struct sampler_channel *c;
	int sv[2];
	pid_t w, rd;

	s = sampler_or_skip();
	if (!strstr(sampler_counted(s), "sockets")) {
		printf("# SKIP the kernel counts no sockets here: %s\n",
		       sampler_counted_note(s) ? sampler_counted_note(s) : "BPF is not used");
		sampler_free(s);
		test_exit(77);
	}
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	w = spawn_sender(sv[0], sv[1]);
	rd = spawn_receiver(sv[1], sv[0]);
	close(sv[0]);
	close(sv[1]);
	/* Both ends must be active in the sample: light ones, on a busy
	 * machine, may not be in every one. */
	c = NULL;
	for (int i = 0; i < 8 && !c; i++) {
		sampler_result_free(r);
		r = NULL;
		usleep(300 * 1000);
		CHECK_INT(sampler_sample(s, now_usec(), &r), 0);
		c = r && i > 0 ? find(r, CHANNEL_UNIX, w, rd) : NULL;
	}
	CHECK(c != NULL);
	if (c) {
		double per_message = c->messages_per_s > 0 ? c->bytes_per_s / c->messages_per_s : 0;
		printf("# unix %.1f MiB/s in %.0f messages/s (%s is from)\n", c->bytes_per_s / 1048576, c->messages_per_s,
		       c->from == w ? "the sender" : "the receiver");
		CHECK(c->exact);
		CHECK(c->from == w && !c->both);
		CHECK(c->bytes_per_s > 1048576.0);
		/* The receiver's calls: each takes one message of 1000 bytes
		 * or more, and no more than a burst of 8. */
		CHECK(per_message > 999.9 && per_message < 8000.1);
	}
	kill(w, SIGKILL);
	kill(rd, SIGKILL);
	sampler_result_free(r);
	sampler_free(s);
}

/* One byte back and forth: every byte is a sleep and a wake-up on each side.
 * It closes the ends that are the other side's (the pipes connect the two
 * only then, and only processes on a channel have their switches read). */
static pid_t spawn_pingpong(int in, int out, int other_in, int other_out, bool first) {
	pid_t pid = fork();

	if (pid == 0) {
		char c = 0;
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(other_in);
		close(other_out);
		if (first && write(out, &c, 1) != 1)
			_exit(1);
		for (;;)
			if (read(in, &c, 1) != 1 || write(out, &c, 1) != 1)
				_exit(0);
	}
	return pid;
}

/* One byte back and forth over two pipes whose four ends both keep, as
 * perf bench sched pipe does: neither is a writer or a reader of its own. */
static pid_t spawn_pingpong_whole(int in, int out, bool first) {
	pid_t pid = fork();

	if (pid == 0) {
		char c = 0;
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (first && write(out, &c, 1) != 1)
			_exit(1);
		for (;;)
			if (read(in, &c, 1) != 1 || write(out, &c, 1) != 1)
				_exit(0);
	}
	return pid;
}

/* A light stream: 4 KiB every 5 ms, about 0.8 MB/s. Its CPU time is a few
 * ms a second on any machine, less than a clock tick on a fast one; its
 * 200 wake-ups a second are the same everywhere. */
static pid_t spawn_light_writer(int fd, int other_end) {
	return spawn_writer_of(fd, other_end, 4096, 5000);
}

/* Sleeps and wakes thousands of times a second, talking to nobody. */
static pid_t spawn_loner(void) {
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;) {
			struct timespec t0, t;
			usleep(100);
			clock_gettime(CLOCK_MONOTONIC, &t0);
			do
				clock_gettime(CLOCK_MONOTONIC, &t);
			while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 50000);
		}
	}
	return pid;
}

/* Of the processes on a channel, that is: a loner's are not read. */
static void counts_wakeups_and_switches(void) {
	int ab[2], ba[2];
	pid_t a, b, loner;
	struct sampler_result *r;
	long k;

	CHECK(pipe(ab) == 0 && pipe(ba) == 0);
	a = spawn_pingpong(ba[0], ab[1], ab[0], ba[1], true);
	b = spawn_pingpong(ab[0], ba[1], ba[0], ab[1], false);
	for (int i = 0; i < 2; i++) {
		close(ab[i]);
		close(ba[i]);
	}
	loner = spawn_loner();
	r = sample_thrice();
	CHECK(r != NULL);
	k = r ? sampler_result_index(r, loner) : -1;
	CHECK(k >= 0);
	CHECK(k < 0 || (r->procs[k].wakeups_per_s == 0 && r->procs[k].switches_per_s == 0));
	kill(loner, SIGKILL);
	for (int i = 0; r && i < 2; i++) {
		k = sampler_result_index(r, i ? b : a);
		CHECK(k >= 0);
		if (k < 0)
			continue;
		printf("# %d: %.0f wake-ups/s, %.0f switches/s\n", (int)r->procs[k].pid, r->procs[k].wakeups_per_s,
		       r->procs[k].switches_per_s);
		/* Thousands a second on any machine; an idle process has ~0. */
		CHECK(r->procs[k].wakeups_per_s > 500);
		CHECK(r->procs[k].switches_per_s >= r->procs[k].wakeups_per_s);
	}
	kill(a, SIGKILL);
	kill(b, SIGKILL);
	sampler_result_free(r);
}

/* A stream that costs its ends too little CPU for a clock tick each
 * window is read at every sample all the same, with its pipe: its ends run
 * hundreds of times a second (schedstat). */
static void a_light_stream_is_read_at_every_sample(void) {
	struct sampler *s;
	struct sampler_result *r = NULL;
	int p[2], seen = 0;
	pid_t w, rd;

	CHECK(pipe(p) == 0);
	w = spawn_light_writer(p[1], p[0]);
	rd = spawn_reader(p[0], p[1]);
	close(p[0]);
	close(p[1]);
	s = sampler_or_skip();
	/* The baseline, the first look at the pair, then eight windows. */
	for (int i = 0; i < 10; i++) {
		sampler_result_free(r);
		r = NULL;
		CHECK_INT(sampler_sample(s, now_usec(), &r), 0);
		if (i >= 2 && r && sampler_result_index(r, w) >= 0 && sampler_result_index(r, rd) >= 0 &&
		    find(r, CHANNEL_PIPE, w, rd))
			seen++;
		usleep(200 * 1000);
	}
	printf("# the light pipe in %d of 8 samples\n", seen);
	CHECK_INT(seen, 8);
	kill(w, SIGKILL);
	kill(rd, SIGKILL);
	sampler_result_free(r);
	sampler_free(s);
}

/* Two processes ping-ponging over two pipes that each holds whole talk to
 * each other: one channel, shared where /proc estimates it (its direction
 * unknown), exact where the kernel counts pipes. Two processes holding one
 * pipe whole, each busy on its own, do not. */
static void pipes_both_hold_whole_make_a_channel_when_two(void) {
	int ab[2], ba[2], one[2];
	pid_t a, b, x, y;
	struct sampler_result *r;
	const struct sampler_channel *c;

	CHECK(pipe(ab) == 0 && pipe(ba) == 0);
	a = spawn_pingpong_whole(ba[0], ab[1], true);
	b = spawn_pingpong_whole(ab[0], ba[1], false);
	for (int i = 0; i < 2; i++) {
		close(ab[i]);
		close(ba[i]);
	}
	CHECK(pipe(one) == 0);
	x = spawn_loner();
	y = spawn_loner();
	close(one[0]);
	close(one[1]);
	r = sample_thrice();
	CHECK(r != NULL);
	c = r ? find(r, CHANNEL_PIPE, a, b) : NULL;
	CHECK(c != NULL);
	if (c) {
		printf("# %s pipes: %.0f messages/s\n", c->exact ? "counted" : c->shared ? "shared" : "one-way",
		       c->messages_per_s);
		CHECK(c->exact || c->shared);
		CHECK(c->messages_per_s > 100);
	}
	CHECK(r && !find(r, CHANNEL_PIPE, x, y));
	kill(a, SIGKILL);
	kill(b, SIGKILL);
	kill(x, SIGKILL);
	kill(y, SIGKILL);
	sampler_result_free(r);
}

/* Anyone can fill the counters' maps with channels of their own, and then
 * some calls are counted and others not: a sample whose window lost calls
 * is estimated from /proc whole (no channel claims exactness) and says so,
 * and the next is counted again. Where the kernel counts pipes (at their
 * system calls' exit, if not otherwise). */
static void full_counters_fall_back_and_say_so(void) {
	struct sampler *s;
	struct sampler_result *r = NULL;
	const struct sampler_channel *c;
	int p[2];
	pid_t w, rd;
	char x = 'x';

	if (reading == SAMPLER_READ_PROC || sampler_new("", reading, SAMPLER_COUNT_SYSCALLS, &s) < 0)
		SKIP_TEST("no counters in this reading");
	if (!strstr(sampler_counted(s), "pipes")) {
		sampler_free(s);
		SKIP_TEST("pipes are not counted here");
	}
	CHECK(pipe(p) == 0);
	w = spawn_writer(p[1], p[0]);
	rd = spawn_reader(p[0], p[1]);
	close(p[0]);
	close(p[1]);
	for (int i = 0; i < 5; i++) {
		sampler_result_free(r);
		r = NULL;
		if (i == 3)   /* a write and a read on 8300 pipes: more than TRAFFIC_ENTRIES */
			for (int k = 0; k < 8300; k++) {
				int q[2];
				CHECK(pipe(q) == 0 && write(q[1], &x, 1) == 1 && read(q[0], &x, 1) == 1);
				close(q[0]);
				close(q[1]);
			}
		usleep(200 * 1000);
		CHECK_INT(sampler_sample(s, now_usec(), &r), 0);
		c = r && i > 0 ? find(r, CHANNEL_PIPE, w, rd) : NULL;
		printf("# sample %d: %llu calls lost, the pipe %s\n", i, (unsigned long long)sampler_counts_lost(s),
		       !c ? "not found" : c->exact ? "counted" : "estimated");
		if (i == 2 || i == 4) {
			CHECK(c && c->exact);
			CHECK_INT(sampler_counts_lost(s), 0);
		}
		if (i == 3) {
			CHECK(sampler_counts_lost(s) > 0);
			for (size_t k = 0; r && k < r->n_channels; k++)
				CHECK(!r->channels[k].exact);
		}
	}
	kill(w, SIGKILL);
	kill(rd, SIGKILL);
	sampler_result_free(r);
	sampler_free(s);
}

/* The Unix sockets are dumped once and kept while they answer for every
 * socket of the active processes: a pair connected later makes a new dump. */
static void a_later_socketpair_is_found_too(void) {
	int first[2], second[2];
	pid_t w1, r1, w2 = -1, r2 = -1;
	struct sampler *s;
	struct sampler_result *r = NULL;
	bool found_first = false, found_second = false;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, first) == 0);
	w1 = spawn_writer(first[0], first[1]);
	r1 = spawn_reader(first[1], first[0]);
	close(first[0]);
	close(first[1]);
	CHECK_INT(new_sampler(&s), 0);
	for (int i = 0; i < 8; i++) {
		if (i == 4) {
			CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, second) == 0);
			w2 = spawn_writer(second[0], second[1]);
			r2 = spawn_reader(second[1], second[0]);
			close(second[0]);
			close(second[1]);
		}
		sampler_result_free(r);
		r = NULL;
		CHECK_INT(sampler_sample(s, now_usec(), &r), 0);
		if (r && find(r, CHANNEL_UNIX, w1, r1))
			found_first = true;
		if (r && i > 4 && find(r, CHANNEL_UNIX, w2, r2))
			found_second = true;
		usleep(200 * 1000);
	}
	CHECK(found_first);
	CHECK(found_second);
	kill(w1, SIGKILL);
	kill(r1, SIGKILL);
	kill(w2, SIGKILL);
	kill(r2, SIGKILL);
	sampler_result_free(r);
	sampler_free(s);
}

/* A loopback TCP pair, its two ends in two processes; the writer counts
 * its bytes into moved, unless NULL. */
static void spawn_tcp_pair_counted(pid_t *w, pid_t *rd, uint64_t *moved) {
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM, 0), c1, c2;

	CHECK(l >= 0 && bind(l, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(l, 1) == 0);
	CHECK(getsockname(l, (struct sockaddr *)&sa, &len) == 0);
	c1 = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(connect(c1, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	c2 = accept(l, NULL, NULL);
	CHECK(c2 >= 0);
	close(l);
	*w = spawn_counted_writer(c1, c2, 65536, 0, moved);
	*rd = spawn_reader(c2, c1);
	close(c1);
	close(c2);
}

static void spawn_tcp_pair(pid_t *w, pid_t *rd) {
	spawn_tcp_pair_counted(w, rd, NULL);
}

/* After the first dump, the connection is read by lookups of its addresses
 * and ports: its rate stays true sample after sample, and once it is closed
 * it is gone from the sample. */
static void a_tcp_connection_is_followed_by_lookups(void) {
	pid_t w, rd;
	struct sampler *s;
	struct sampler_result *r = NULL;
	int with_rate = 0;

	spawn_tcp_pair(&w, &rd);
	CHECK_INT(new_sampler(&s), 0);
	for (int i = 0; i < 6; i++) {
		const struct sampler_channel *c;
		sampler_result_free(r);
		r = NULL;
		CHECK_INT(sampler_sample(s, now_usec(), &r), 0);
		c = r ? find(r, CHANNEL_TCP, w, rd) : NULL;
		if (i >= 2 && c && c->bytes_per_s > 10 * 1048576.0)
			with_rate++;
		usleep(200 * 1000);
	}
	CHECK_INT(with_rate, 4);
	kill(w, SIGKILL);
	kill(rd, SIGKILL);
	waitpid(w, NULL, 0);
	waitpid(rd, NULL, 0);
	sampler_result_free(r);
	r = NULL;
	CHECK_INT(sampler_sample(s, now_usec(), &r), 0);
	CHECK(r && find(r, CHANNEL_TCP, w, rd) == NULL);
	sampler_result_free(r);
	sampler_free(s);
}

/* The rate of the window is what the writer wrote in it, within 10 %
 * (what waits in the socket's buffers, and the microseconds between the
 * count and the sample, are the difference). */
static void finds_loopback_tcp_with_true_bytes(void) {
	uint64_t *moved = mmap(NULL, sizeof(*moved), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t at[3], bytes[3];
	struct sampler *s;
	struct sampler_result *r = NULL;
	const struct sampler_channel *c;
	double truth;
	pid_t w, rd;

	CHECK(moved != MAP_FAILED);
	if (moved == MAP_FAILED)
		return;
	s = sampler_or_skip();
	*moved = 0;
	spawn_tcp_pair_counted(&w, &rd, moved);
	for (int i = 0; i < 3; i++) {
		sampler_result_free(r);
		r = NULL;
		bytes[i] = __atomic_load_n(moved, __ATOMIC_RELAXED);
		at[i] = now_usec();
		CHECK_INT(sampler_sample(s, at[i], &r), 0);
		if (i < 2)
			usleep(300 * 1000);
	}
	truth = (double)(bytes[2] - bytes[1]) * 1e6 / (double)(at[2] - at[1]);
	c = r ? find(r, CHANNEL_TCP, w, rd) : NULL;
	CHECK(c != NULL);
	if (c) {
		printf("# tcp %.1f MiB/s, the writer wrote %.1f MiB/s\n", c->bytes_per_s / 1048576, truth / 1048576);
		CHECK(truth > 0);
		CHECK(c->bytes_per_s > truth * 0.9 && c->bytes_per_s < truth * 1.1);
	}
	kill(w, SIGKILL);
	kill(rd, SIGKILL);
	sampler_result_free(r);
	sampler_free(s);
	munmap(moved, sizeof(*moved));
}

static void idle_processes_are_not_active(void) {
	pid_t idle = fork();
	struct sampler_result *r;
	bool seen = false;

	if (idle == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pause();
		_exit(0);
	}
	r = sample_thrice();
	CHECK(r != NULL);
	for (size_t i = 0; r && i < r->n_procs; i++)
		seen |= r->procs[i].pid == idle;
	CHECK(!seen);
	CHECK(r && r->n_scanned > 1);
	kill(idle, SIGKILL);
	sampler_result_free(r);
}

/* A process that reaps children which each wrote 16 MiB to /dev/null, and
 * moves nothing itself: /proc/PID/io adds what a child moved to its parent
 * as the parent reaps it, but those bytes are not the parent's. */
static void reaped_childrens_bytes_are_not_the_parents(void) {
	pid_t reaper = fork();
	struct sampler_result *r;
	long k;

	if (reaper == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;) {
			pid_t child = fork();
			if (child == 0) {
				static char buf[65536];
				int null = open("/dev/null", O_WRONLY);
				for (int i = 0; i < 256; i++)
					if (write(null, buf, sizeof(buf)) < 0)
						break;
				_exit(0);
			}
			waitpid(child, NULL, 0);
		}
	}
	r = sample_thrice();
	CHECK(r != NULL);
	k = r ? sampler_result_index(r, reaper) : -1;
	CHECK(k >= 0);
	if (k >= 0) {
		printf("# the reaper: %.1f MiB/s written, %.1f MiB/s read\n", r->procs[k].write_bps / 1048576,
		       r->procs[k].read_bps / 1048576);
		CHECK(r->procs[k].write_bps < 1048576.0);
	}
	kill(reaper, SIGKILL);
	waitpid(reaper, NULL, 0);
	sampler_result_free(r);
}

/* Long-idle processes are read every 8th sample only, and one that wakes
 * after a long sleep is still noticed within 8 samples. */
static void long_idle_processes_are_read_less_often(void) {
	int go[2];
	pid_t sleeper;
	struct sampler *s;
	struct sampler_result *r = NULL;
	size_t all = 0, late = 0;
	int noticed = -1;

	CHECK(pipe(go) == 0);
	sleeper = fork();
	if (sleeper == 0) {
		char c;
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		if (read(go[0], &c, 1) == 1)
			for (;;)
				;   /* busy from now on */
		_exit(0);
	}
	close(go[0]);
	CHECK_INT(new_sampler(&s), 0);
	for (int i = 0; i < 14; i++) {
		sampler_result_free(r);
		r = NULL;
		CHECK_INT(sampler_sample(s, now_usec(), &r), 0);
		if (i == 1)
			all = r ? r->n_scanned : 0;   /* the first sample after the baseline reads every one */
		if (i == 13)
			late = r ? r->n_scanned : 0;
		usleep(20 * 1000);
	}
	printf("# read %zu processes at the start, %zu once most had slept 10 samples\n", all, late);
	CHECK(late * 2 < all);
	CHECK(write(go[1], "x", 1) == 1);
	for (int i = 0; i < 9 && noticed < 0; i++) {
		usleep(30 * 1000);
		sampler_result_free(r);
		r = NULL;
		CHECK_INT(sampler_sample(s, now_usec(), &r), 0);
		if (r && sampler_result_index(r, sleeper) >= 0)
			noticed = i + 1;
	}
	printf("# the sleeper, woken, was noticed at sample %d\n", noticed);
	CHECK(noticed >= 1 && noticed <= 9);
	kill(sleeper, SIGKILL);
	sampler_result_free(r);
	sampler_free(s);
}

static pid_t spawn_busy(void) {
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			;
	}
	usleep(100 * 1000);   /* some ticks of CPU time */
	return pid;
}

/* /proc is listed whole every 8th sample; a process born in between is
 * found at the first sample after its birth all the same, also when pid
 * numbers have wrapped around (as root, which may set the last pid given
 * out: the next is taken from there). */
static void a_process_born_between_listings_is_found_at_once(void) {
	struct sampler *s;
	struct sampler_result *r = NULL;
	pid_t busy, low;
	int last;

	CHECK_INT(new_sampler(&s), 0);
	for (int i = 0; i < 2; i++) {   /* the baseline, which lists whole, and one after */
		sampler_result_free(r);
		r = NULL;
		CHECK_INT(sampler_sample(s, now_usec(), &r), 0);
		usleep(20 * 1000);
	}
	busy = spawn_busy();
	sampler_result_free(r);
	r = NULL;
	CHECK_INT(sampler_sample(s, now_usec(), &r), 0);
	CHECK(r && sampler_result_index(r, busy) >= 0);

	last = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
	if (last >= 0 && busy > 1000 && dprintf(last, "%d", 400) > 0) {
		low = spawn_busy();
		printf("# after %d, pid %d\n", (int)busy, (int)low);
		CHECK(low < busy);
		sampler_result_free(r);
		r = NULL;
		CHECK_INT(sampler_sample(s, now_usec(), &r), 0);
		CHECK(r && sampler_result_index(r, low) >= 0);
		kill(low, SIGKILL);
		waitpid(low, NULL, 0);
	}
	if (last >= 0)
		close(last);
	kill(busy, SIGKILL);
	waitpid(busy, NULL, 0);
	sampler_result_free(r);
	sampler_free(s);
}

/* A thread that writes to /dev/null as fast as it can (busy, with wchar
 * as its progress), or one that sleeps. */
static void *write_null(void *arg) {
	static char buf[65536];
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	(void)arg;
	for (;;)
		if (write(fd, buf, sizeof(buf)) < 0)
			_exit(1);
	return NULL;
}

static void *sleep_forever(void *arg) {
	(void)arg;
	pause();
	return NULL;
}

/* A child of busy threads (the main one included) and one more that sleeps. */
static pid_t spawn_threads(unsigned busy) {
	pid_t pid = fork();

	if (pid == 0) {
		pthread_t t;
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pthread_create(&t, NULL, sleep_forever, NULL);
		for (unsigned i = 1; i < busy; i++)
			pthread_create(&t, NULL, write_null, NULL);
		write_null(NULL);
	}
	return pid;
}

static const struct sampler_process *proc_of(const struct sampler_result *r, pid_t pid) {
	long i = sampler_result_index(r, pid);

	return i >= 0 ? &r->procs[i] : NULL;
}

static void counts_busy_threads_and_their_progress(void) {
	pid_t two = spawn_threads(2);
	struct sampler_result *r = sample_thrice();
	const struct sampler_process *p = r ? proc_of(r, two) : NULL;
	const struct sampler_channel *c = r ? find(r, CHANNEL_THREADS, two, two) : NULL;

	CHECK(p != NULL);
	if (p) {
		printf("# %u busy threads, %.2f CPUs\n", p->busy_threads, p->cpu);
		CHECK_INT(p->busy_threads, 2);
	}
	CHECK(c != NULL);
	if (c) {
		printf("# threads %.1f MiB/s\n", c->bytes_per_s / 1048576);
		CHECK(c->bytes_per_s > 10 * 1048576.0);
	}
	kill(two, SIGKILL);
	sampler_result_free(r);
}

static void one_busy_thread_is_no_thread_group(void) {
	pid_t one = spawn_threads(1);
	struct sampler_result *r = sample_thrice();
	const struct sampler_process *p = r ? proc_of(r, one) : NULL;

	CHECK(p != NULL);
	CHECK(p && p->busy_threads <= 1);
	CHECK(r && !find(r, CHANNEL_THREADS, one, one));
	kill(one, SIGKILL);
	sampler_result_free(r);
}

static void how_busy_each_cpu_was(void) {
	struct sampler_result *r = sample_thrice();
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	CHECK(r != NULL);
	CHECK(r && r->n_cpu_load >= (size_t)n);
	for (size_t i = 0; r && i < r->n_cpu_load; i++) {
		printf("# CPU %zu %.0f %% busy\n", i, r->cpu_load[i] * 100);
		CHECK(r->cpu_load[i] >= 0.0 && r->cpu_load[i] <= 1.0);
	}
	sampler_result_free(r);
}

/* A sampler reads as it was asked, or further down with the reason. */
static void reads_as_asked_or_says_why(void) {
	for (enum sampler_reading want = SAMPLER_READ_BATCH; want <= SAMPLER_READ_PROC; want++) {
		struct sampler *s;
		CHECK_INT(sampler_new("", want, SAMPLER_COUNT_AUTO, &s), 0);
		printf("# asked for %s: %s%s%s\n", sampler_reading_to_string(want),
		       sampler_reading_to_string(sampler_reading(s)), sampler_note(s) ? ", " : "",
		       sampler_note(s) ? sampler_note(s) : "");
		CHECK(sampler_reading(s) >= want);
		CHECK((sampler_reading(s) == want) == (sampler_note(s) == NULL));
		CHECK_STR(sampler_source(s), sampler_reading(s) == SAMPLER_READ_PROC ? "proc" : "bpf");
		sampler_free(s);
	}
}

/* Every test in each way of reading this machine allows: through the BPF
 * batch iterator, through iterators of each process's own (both need root
 * and a kernel that loads them), and from /proc. A way it refuses is
 * skipped with the reason. */
int main(void) {
	static const struct test tests[] = { T(a_tcp_connection_is_followed_by_lookups), T(a_later_socketpair_is_found_too), T(counts_wakeups_and_switches), T(long_idle_processes_are_read_less_often), T(counts_busy_threads_and_their_progress), T(one_busy_thread_is_no_thread_group), T(how_busy_each_cpu_was),
	  T(finds_a_pipe_and_its_rate), T(finds_a_socketpair), T(finds_loopback_tcp_with_true_bytes),
	  T(idle_processes_are_not_active), T(reaped_childrens_bytes_are_not_the_parents),
	  T(a_process_born_between_listings_is_found_at_once),
	  T(reads_as_asked_or_says_why), T(a_socketpair_that_sends_is_counted),
	  T(a_light_stream_is_read_at_every_sample), T(pipes_both_hold_whole_make_a_channel_when_two),
	  T(full_counters_fall_back_and_say_so) };
	size_t n = sizeof(tests) / sizeof(tests[0]);
	int failed = 0;

	for (reading = SAMPLER_READ_BATCH; reading <= SAMPLER_READ_PROC; reading++) {
		struct sampler *s;
		bool allowed;

		if (sampler_new("", reading, SAMPLER_COUNT_AUTO, &s) < 0)
			return 1;
		allowed = sampler_reading(s) == reading;
		printf("# reading %s%s%s\n", sampler_reading_to_string(reading), allowed ? "" : ": ",
		       allowed ? "" : sampler_note(s));
		if (allowed)
			failed |= test_run_all(tests, n);
		else
			printf("ok - every test, reading %s # SKIP %s\n", sampler_reading_to_string(reading),
			       sampler_note(s));
		sampler_free(s);
	}
	return failed;
}
