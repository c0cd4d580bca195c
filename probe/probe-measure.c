/* The probe's measurements: pipe throughput and cache-line ping-pong
 * between two pinned threads, and the statistics over their repeats. */
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe-internal.h"

static int probe_compare_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void probe_stat_of(double *samples, unsigned n, struct probe_stat *ret) {
	*ret = (struct probe_stat){ .n = n };
	if (n == 0)
		return;
	qsort(samples, n, sizeof(double), probe_compare_double);
	ret->min = samples[0];
	ret->max = samples[n - 1];
	ret->median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

double probe_now(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- pinned threads ---------------------------------------------------- */

/* Starts fn on cpu. The affinity is set before the thread runs, so not one
 * instruction of it runs elsewhere. -EINVAL: this process may not use cpu. */
static int probe_thread_start(pthread_t *thread, unsigned cpu, void *(*fn)(void *), void *arg) {
	pthread_attr_t attr;
	cpu_set_t set;
	int r;

	if (cpu >= CPU_SETSIZE)
		return -EINVAL;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(&attr);
	r = -pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (r == 0)
		r = -pthread_create(thread, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return r;
}

/* ---- pipe throughput --------------------------------------------------- */

#define PROBE_PIPE_READ (128 * 1024)

struct probe_pipe_run {
	int fd[2];
	size_t chunk, bytes;
	pthread_barrier_t start;
	double t0, t1;
	int writer_error, reader_error;
};

static void *probe_pipe_writer(void *arg) {
	struct probe_pipe_run *p = arg;
	char *buf = malloc(p->chunk);
	size_t left = p->bytes;

	if (buf)
		for (size_t i = 0; i < p->chunk; i++)
			buf[i] = i % 2 ? '\n' : 'y';   /* what `yes` writes */
	pthread_barrier_wait(&p->start);
	while (buf && left > 0) {
		ssize_t n = write(p->fd[1], buf, left < p->chunk ? left : p->chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			p->writer_error = n < 0 ? -errno : -EIO;
			break;
		}
		left -= (size_t)n;
	}
	if (!buf)
		p->writer_error = -ENOMEM;
	/* the reader sees end of file instead of waiting for bytes that never come */
	close(p->fd[1]);
	p->fd[1] = -1;
	free(buf);
	return NULL;
}

static void *probe_pipe_reader(void *arg) {
	struct probe_pipe_run *p = arg;
	char *buf = malloc(PROBE_PIPE_READ);
	size_t got = 0;

	pthread_barrier_wait(&p->start);
	p->t0 = probe_now();
	while (buf && got < p->bytes) {
		ssize_t n = read(p->fd[0], buf, PROBE_PIPE_READ);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			p->reader_error = n < 0 ? -errno : -EPIPE;
			break;
		}
		got += (size_t)n;
	}
	p->t1 = probe_now();
	if (!buf)
		p->reader_error = -ENOMEM;
	free(buf);
	return NULL;
}

int probe_pipe(unsigned writer_cpu, unsigned reader_cpu, size_t chunk, size_t bytes, double *gib_s) {
	struct probe_pipe_run p = { .chunk = chunk, .bytes = bytes };
	pthread_t writer, reader;
	int r;

	if (chunk == 0 || bytes == 0 || !gib_s)
		return -EINVAL;
	if (pipe2(p.fd, O_CLOEXEC) < 0)
		return -errno;
	pthread_barrier_init(&p.start, NULL, 2);
	r = probe_thread_start(&reader, reader_cpu, probe_pipe_reader, &p);
	if (r < 0)
		goto out;
	r = probe_thread_start(&writer, writer_cpu, probe_pipe_writer, &p);
	if (r < 0) {
		/* the reader waits at the barrier: stand in for the writer, then
		 * end its read with end of file */
		pthread_barrier_wait(&p.start);
		close(p.fd[1]);
		p.fd[1] = -1;
		pthread_join(reader, NULL);
		goto out;
	}
	pthread_join(writer, NULL);
	pthread_join(reader, NULL);
	r = p.writer_error ? p.writer_error : p.reader_error;
	if (r == 0)
		*gib_s = (double)bytes / (p.t1 - p.t0) / (1024.0 * 1024 * 1024);
out:
	pthread_barrier_destroy(&p.start);
	close(p.fd[0]);
	if (p.fd[1] >= 0)
		close(p.fd[1]);
	return r;
}

/* ---- cache-line ping-pong ---------------------------------------------- */

static inline void probe_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Polls before a thread on another CPU gives up its time slice: far longer
 * than any cache-line transfer, short enough that a partner descheduled by
 * somebody else's work does not cost a whole time slice. */
#define PROBE_SPINS_BEFORE_YIELD (1u << 16)

struct probe_pingpong_run {
	/* The line that bounces, alone in its 128 bytes (adjacent-line
	 * prefetchers pair 64-byte lines). */
	_Alignas(128) atomic_uint flag;
	_Alignas(128) atomic_int go;          /* 0: wait, 1: run, -1: give up */
	unsigned rounds, repeats, warmup;
	bool same_cpu;
	double *stamps;           /* repeats + 1 times, taken by the initiator */
};

static inline void probe_wait_for(struct probe_pingpong_run *p, unsigned want) {
	unsigned spins = 0;

	while (atomic_load_explicit(&p->flag, memory_order_acquire) != want) {
		if (p->same_cpu) {
			/* the partner cannot run until this thread steps aside */
			sched_yield();
			continue;
		}
		probe_cpu_relax();
		if (++spins == PROBE_SPINS_BEFORE_YIELD) {
			sched_yield();
			spins = 0;
		}
	}
}

/* Both threads start together, or not at all when the second could not be
 * created. */
static bool probe_wait_go(struct probe_pingpong_run *p) {
	int go;

	while ((go = atomic_load_explicit(&p->go, memory_order_acquire)) == 0)
		sched_yield();
	return go > 0;
}

static void *probe_pingpong_initiator(void *arg) {
	struct probe_pingpong_run *p = arg;
	unsigned total = p->warmup + p->rounds * p->repeats;

	if (!probe_wait_go(p))
		return NULL;
	for (unsigned i = 0; i < total; i++) {
		if (i >= p->warmup && (i - p->warmup) % p->rounds == 0)
			p->stamps[(i - p->warmup) / p->rounds] = probe_now();
		atomic_store_explicit(&p->flag, 2 * i + 1, memory_order_release);
		probe_wait_for(p, 2 * i + 2);
	}
	p->stamps[p->repeats] = probe_now();
	return NULL;
}

static void *probe_pingpong_responder(void *arg) {
	struct probe_pingpong_run *p = arg;
	unsigned total = p->warmup + p->rounds * p->repeats;

	if (!probe_wait_go(p))
		return NULL;
	for (unsigned i = 0; i < total; i++) {
		probe_wait_for(p, 2 * i + 1);
		atomic_store_explicit(&p->flag, 2 * i + 2, memory_order_release);
	}
	return NULL;
}

int probe_pingpong(unsigned cpu_a, unsigned cpu_b, unsigned rounds, unsigned repeats, double *samples) {
	struct probe_pingpong_run *p;
	pthread_t a, b;
	int r;

	if (rounds == 0 || repeats == 0 || !samples || (uint64_t)rounds * repeats > UINT32_MAX / 4)
		return -EINVAL;
	p = aligned_alloc(128, sizeof(*p));
	if (!p)
		return -ENOMEM;
	memset(p, 0, sizeof(*p));
	atomic_init(&p->flag, 0);
	atomic_init(&p->go, 0);
	p->rounds = rounds;
	p->repeats = repeats;
	/* the first round trips pay for cold caches and wake-ups */
	p->warmup = rounds / 8 + 16;
	p->same_cpu = cpu_a == cpu_b;
	p->stamps = calloc(repeats + 1, sizeof(double));
	if (!p->stamps) {
		free(p);
		return -ENOMEM;
	}
	r = probe_thread_start(&b, cpu_b, probe_pingpong_responder, p);
	if (r == 0) {
		r = probe_thread_start(&a, cpu_a, probe_pingpong_initiator, p);
		atomic_store_explicit(&p->go, r == 0 ? 1 : -1, memory_order_release);
		if (r == 0)
			pthread_join(a, NULL);
		pthread_join(b, NULL);
	}
	if (r == 0)
		for (unsigned i = 0; i < repeats; i++)
			samples[i] = (p->stamps[i + 1] - p->stamps[i]) * 1e9 / (2.0 * rounds);
	free(p->stamps);
	free(p);
	return r;
}
