#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec.h"
#include "cpulist.h"

/* ---- names ------------------------------------------------------------- */

static const char *const probe_relation_names[PROBE_RELATION_MAX][2] = {
	[PROBE_SAME_CPU]      = { "same-cpu", "same CPU" },
	[PROBE_SMT]           = { "smt-siblings", "SMT siblings" },
	[PROBE_SAME_CCX]      = { "same-ccx", "same CCX" },
	[PROBE_CROSS_CCX]     = { "cross-ccx", "different CCX" },
	[PROBE_CROSS_NUMA]    = { "cross-numa", "different NUMA node" },
	[PROBE_CROSS_PACKAGE] = { "cross-package", "different package" },
};

static const char *const probe_pattern_names[PROBE_PATTERN_MAX][2] = {
	[PROBE_CCX_SMT_PACKED]         = { "ccx-smt-packed", "cores x 2 SMT, one CCX" },
	[PROBE_CCX_ONE_PER_CORE]       = { "ccx-one-per-core", "one thread per core, one CCX" },
	[PROBE_CCX_ALL]                = { "ccx-all", "every PU of one CCX, OS chooses" },
	[PROBE_CROSS_CCX_SMT_PACKED]   = { "cross-ccx-smt-packed", "cores x 2 SMT in each of two CCXs" },
	[PROBE_CROSS_CCX_ONE_PER_CORE] = { "cross-ccx-one-per-core", "one thread per core in each of two CCXs" },
	[PROBE_MACHINE]                = { "machine", "every CPU, OS default" },
};

const char *probe_relation_name(enum probe_relation r) {
	return (unsigned)r < PROBE_RELATION_MAX ? probe_relation_names[r][0] : NULL;
}

const char *probe_relation_label(enum probe_relation r) {
	return (unsigned)r < PROBE_RELATION_MAX ? probe_relation_names[r][1] : NULL;
}

int probe_relation_from_name(const char *name) {
	for (int i = 0; name && i < PROBE_RELATION_MAX; i++)
		if (strcmp(name, probe_relation_names[i][0]) == 0)
			return i;
	return -EINVAL;
}

const char *probe_pattern_name(enum probe_pattern p) {
	return (unsigned)p < PROBE_PATTERN_MAX ? probe_pattern_names[p][0] : NULL;
}

const char *probe_pattern_label(enum probe_pattern p) {
	return (unsigned)p < PROBE_PATTERN_MAX ? probe_pattern_names[p][1] : NULL;
}

int probe_pattern_from_name(const char *name) {
	for (int i = 0; name && i < PROBE_PATTERN_MAX; i++)
		if (strcmp(name, probe_pattern_names[i][0]) == 0)
			return i;
	return -EINVAL;
}

/* Why a relation or a shape is absent. A fixed set of texts, so that plans
 * stay plain data, and so that one read back from JSON points at the same
 * static strings. */
static const char *const probe_reasons[] = {
	"no usable CPU",
	"no SMT: no core has two usable PUs",
	"no CCX with two usable cores",
	"one CCX",
	"no two CCXs share a NUMA node and a package",
	"one NUMA node",
	"no two NUMA nodes share a package",
	"one package",
	"needs an even number of threads",
	"needs a multiple of 4 threads",
	"no CCX has that many cores with two PUs",
	"no CCX has that many cores",
	"no CCX has that many PUs",
	"no two CCXs have that many cores with two PUs each",
	"no two CCXs have that many cores each",
	"absent",
};

enum {
	REASON_NO_CPU, REASON_NO_SMT, REASON_NO_TWO_CORES, REASON_ONE_CCX, REASON_NO_CCX_PAIR,
	REASON_ONE_NUMA, REASON_NO_NUMA_PAIR, REASON_ONE_PACKAGE, REASON_EVEN, REASON_FOUR,
	REASON_SMT_CORES, REASON_CORES, REASON_PUS, REASON_TWO_SMT_CCX, REASON_TWO_CCX, REASON_ABSENT,
};

static const char *probe_reason_static(const char *s) {
	for (size_t i = 0; s && i < sizeof(probe_reasons) / sizeof(probe_reasons[0]); i++)
		if (strcmp(s, probe_reasons[i]) == 0)
			return probe_reasons[i];
	return probe_reasons[REASON_ABSENT];
}

/* ---- relations between CPUs -------------------------------------------- */

static int probe_core_of(const struct topology_ccx *c, unsigned cpu) {
	for (unsigned i = 0; i < c->n_cores; i++)
		if (CPU_ISSET(cpu, &c->cores[i].pus))
			return (int)i;
	return -1;
}

/* Per-CPU CCX and core, looked up once: pair picking classifies O(n^2) pairs. */
struct probe_cpu_map {
	short ccx[CPU_SETSIZE];
	short core[CPU_SETSIZE];
};

static void probe_cpu_map_fill(const struct topology *t, struct probe_cpu_map *m) {
	for (unsigned cpu = 0; cpu < CPU_SETSIZE; cpu++)
		m->ccx[cpu] = m->core[cpu] = -1;
	for (unsigned i = 0; i < t->n_ccx; i++)
		for (unsigned k = 0; k < t->ccx[i].n_cores; k++)
			for (unsigned cpu = 0; cpu < CPU_SETSIZE; cpu++)
				if (CPU_ISSET(cpu, &t->ccx[i].cores[k].pus)) {
					m->ccx[cpu] = (short)i;
					m->core[cpu] = (short)k;
				}
}

static enum probe_relation probe_classify(const struct topology *t, int ccx_a, int core_a, int ccx_b, int core_b,
					  bool same_cpu) {
	const struct topology_ccx *x = &t->ccx[ccx_a], *y = &t->ccx[ccx_b];

	if (same_cpu)
		return PROBE_SAME_CPU;
	if (ccx_a == ccx_b)
		return core_a == core_b ? PROBE_SMT : PROBE_SAME_CCX;
	/* -1 is unknown, which cannot show a difference */
	if (x->package >= 0 && y->package >= 0 && x->package != y->package)
		return PROBE_CROSS_PACKAGE;
	if (x->numa_node >= 0 && y->numa_node >= 0 && x->numa_node != y->numa_node)
		return PROBE_CROSS_NUMA;
	return PROBE_CROSS_CCX;
}

int probe_relation_of(const struct topology *t, unsigned a, unsigned b) {
	int ccx_a = topology_ccx_of_cpu(t, a), ccx_b = topology_ccx_of_cpu(t, b);

	if (ccx_a < 0 || ccx_b < 0)
		return -EINVAL;
	return (int)probe_classify(t, ccx_a, probe_core_of(&t->ccx[ccx_a], a), ccx_b,
				   probe_core_of(&t->ccx[ccx_b], b), a == b);
}

static const char *probe_pair_absent_reason(const struct topology *t, enum probe_relation r) {
	switch (r) {
	case PROBE_SAME_CPU:
		return probe_reasons[REASON_NO_CPU];
	case PROBE_SMT:
		return probe_reasons[REASON_NO_SMT];
	case PROBE_SAME_CCX:
		return probe_reasons[REASON_NO_TWO_CORES];
	case PROBE_CROSS_CCX:
		return probe_reasons[t->n_ccx < 2 ? REASON_ONE_CCX : REASON_NO_CCX_PAIR];
	case PROBE_CROSS_NUMA:
		return probe_reasons[t->n_numa < 2 ? REASON_ONE_NUMA : REASON_NO_NUMA_PAIR];
	case PROBE_CROSS_PACKAGE:
		return probe_reasons[REASON_ONE_PACKAGE];
	case PROBE_RELATION_MAX:
		break;
	}
	return probe_reasons[REASON_ABSENT];
}

void probe_pick_pairs(const struct topology *t, const cpu_set_t *usable, struct probe_pair pairs[PROBE_RELATION_MAX]) {
	struct probe_cpu_map map, *m = &map;
	unsigned cpus[CPU_SETSIZE], n = 0, found = 0;

	for (int r = 0; r < PROBE_RELATION_MAX; r++)
		pairs[r] = (struct probe_pair){ .present = false, .absent = probe_pair_absent_reason(t, r) };
	probe_cpu_map_fill(t, m);
	for (unsigned cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &t->online) && (!usable || CPU_ISSET(cpu, usable)) && m->ccx[cpu] >= 0)
			cpus[n++] = cpu;
	/* Lexicographic order, so that the first pair of each relation is the
	 * lowest-numbered one and the choice is easy to predict. */
	for (unsigned i = 0; i < n && found < PROBE_RELATION_MAX; i++)
		for (unsigned j = i; j < n && found < PROBE_RELATION_MAX; j++) {
			unsigned a = cpus[i], b = cpus[j];
			enum probe_relation r = probe_classify(t, m->ccx[a], m->core[a], m->ccx[b], m->core[b], a == b);
			if (pairs[r].present)
				continue;
			pairs[r] = (struct probe_pair){ .present = true, .cpu = { a, b } };
			found++;
		}
}

/* ---- codec masks --------------------------------------------------------- */

static int probe_first_cpu(const cpu_set_t *s) {
	for (unsigned c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, s))
			return (int)c;
	return -1;
}

/* Adds the first `per_core` PUs of the first `cores` cores of c that have at
 * least `per_core` PUs. Returns false (adding nothing) when c has too few. */
static bool probe_take_cores(const struct topology_ccx *c, unsigned cores, unsigned per_core, cpu_set_t *set) {
	cpu_set_t add;
	unsigned taken = 0;

	CPU_ZERO(&add);
	for (unsigned k = 0; k < c->n_cores && taken < cores; k++) {
		unsigned got = 0;
		if ((unsigned)CPU_COUNT(&c->cores[k].pus) < per_core)
			continue;
		for (unsigned cpu = 0; cpu < CPU_SETSIZE && got < per_core; cpu++)
			if (CPU_ISSET(cpu, &c->cores[k].pus)) {
				CPU_SET(cpu, &add);
				got++;
			}
		taken++;
	}
	if (taken < cores)
		return false;
	CPU_OR(set, set, &add);
	return true;
}

static bool probe_ccx_fits(const struct topology_ccx *c, unsigned cores, unsigned per_core) {
	cpu_set_t scratch;

	CPU_ZERO(&scratch);
	return c->usable && probe_take_cores(c, cores, per_core, &scratch);
}

/* One CCX that holds `cores` cores of `per_core` PUs: the first. */
static bool probe_one_ccx(const struct topology *t, unsigned cores, unsigned per_core, cpu_set_t *set) {
	for (unsigned i = 0; i < t->n_ccx; i++)
		if (probe_ccx_fits(&t->ccx[i], cores, per_core))
			return probe_take_cores(&t->ccx[i], cores, per_core, set);
	return false;
}

/* Two CCXs that each hold them: the first pair in one NUMA node and package,
 * else in one package, else any, so that the shape measures the L3 boundary
 * and not a farther one where the machine allows. */
static bool probe_two_ccx(const struct topology *t, unsigned cores, unsigned per_core, cpu_set_t *set) {
	for (int tier = 0; tier < 3; tier++)
		for (unsigned i = 0; i < t->n_ccx; i++) {
			if (!probe_ccx_fits(&t->ccx[i], cores, per_core))
				continue;
			for (unsigned j = i + 1; j < t->n_ccx; j++) {
				const struct topology_ccx *x = &t->ccx[i], *y = &t->ccx[j];
				bool same_package = x->package == y->package;
				bool same_node = same_package && x->numa_node == y->numa_node;
				if (!probe_ccx_fits(y, cores, per_core) || (tier == 0 && !same_node) ||
				    (tier == 1 && !same_package))
					continue;
				probe_take_cores(x, cores, per_core, set);
				probe_take_cores(y, cores, per_core, set);
				return true;
			}
		}
	return false;
}

static void probe_mask_absent(struct probe_mask *m, int reason) {
	m->present = false;
	m->absent = probe_reasons[reason];
}

static bool probe_has_smt(const struct topology *t) {
	for (unsigned i = 0; i < t->n_ccx; i++)
		for (unsigned k = 0; k < t->ccx[i].n_cores; k++)
			if (CPU_COUNT(&t->ccx[i].cores[k].pus) >= 2)
				return true;
	return false;
}

int probe_codec_masks(const struct topology *t, unsigned threads, struct probe_mask masks[PROBE_PATTERN_MAX]) {
	bool smt = probe_has_smt(t);

	if (!t || threads < 1 || threads > CPU_SETSIZE)
		return -EINVAL;
	for (int p = 0; p < PROBE_PATTERN_MAX; p++) {
		masks[p] = (struct probe_mask){ .present = true };
		CPU_ZERO(&masks[p].cpus);
	}

	if (threads % 2)
		probe_mask_absent(&masks[PROBE_CCX_SMT_PACKED], REASON_EVEN);
	else if (!smt)
		probe_mask_absent(&masks[PROBE_CCX_SMT_PACKED], REASON_NO_SMT);
	else if (!probe_one_ccx(t, threads / 2, 2, &masks[PROBE_CCX_SMT_PACKED].cpus))
		probe_mask_absent(&masks[PROBE_CCX_SMT_PACKED], REASON_SMT_CORES);

	if (!probe_one_ccx(t, threads, 1, &masks[PROBE_CCX_ONE_PER_CORE].cpus))
		probe_mask_absent(&masks[PROBE_CCX_ONE_PER_CORE], REASON_CORES);

	masks[PROBE_CCX_ALL].present = false;
	masks[PROBE_CCX_ALL].absent = probe_reasons[REASON_PUS];
	for (unsigned i = 0; i < t->n_ccx; i++)
		if (t->ccx[i].usable && t->ccx[i].n_pus >= threads) {
			masks[PROBE_CCX_ALL] = (struct probe_mask){ .present = true, .cpus = t->ccx[i].cpus };
			break;
		}

	if (threads % 4)
		probe_mask_absent(&masks[PROBE_CROSS_CCX_SMT_PACKED], REASON_FOUR);
	else if (t->n_ccx < 2)
		probe_mask_absent(&masks[PROBE_CROSS_CCX_SMT_PACKED], REASON_ONE_CCX);
	else if (!smt)
		probe_mask_absent(&masks[PROBE_CROSS_CCX_SMT_PACKED], REASON_NO_SMT);
	else if (!probe_two_ccx(t, threads / 4, 2, &masks[PROBE_CROSS_CCX_SMT_PACKED].cpus))
		probe_mask_absent(&masks[PROBE_CROSS_CCX_SMT_PACKED], REASON_TWO_SMT_CCX);

	if (threads % 2)
		probe_mask_absent(&masks[PROBE_CROSS_CCX_ONE_PER_CORE], REASON_EVEN);
	else if (t->n_ccx < 2)
		probe_mask_absent(&masks[PROBE_CROSS_CCX_ONE_PER_CORE], REASON_ONE_CCX);
	else if (!probe_two_ccx(t, threads / 2, 1, &masks[PROBE_CROSS_CCX_ONE_PER_CORE].cpus))
		probe_mask_absent(&masks[PROBE_CROSS_CCX_ONE_PER_CORE], REASON_TWO_CCX);

	masks[PROBE_MACHINE].cpus = t->online;
	if (probe_first_cpu(&t->online) < 0)
		probe_mask_absent(&masks[PROBE_MACHINE], REASON_NO_CPU);
	return 0;
}

int probe_plan(const struct topology *t, unsigned threads, const cpu_set_t *usable, struct probe_plan *ret) {
	int r;

	if (!t || !ret)
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	ret->threads = threads;
	r = probe_codec_masks(t, threads, ret->masks);
	if (r < 0)
		return r;
	probe_pick_pairs(t, usable, ret->pairs);
	return 0;
}

/* "0x0303": as wide as the mask of CPUs 0..last, so that masks line up. */
static char *probe_mask_hex(int last, const cpu_set_t *cpus, char *buf, size_t size) {
	char hex[CPU_SETSIZE / 4 + 1];
	size_t len = strlen(cpulist_format_hex(cpus, hex, sizeof(hex)));
	size_t width = last >= 0 ? (size_t)last / 4 + 1 : 1, n = 0;

	if (size < 3)
		return buf;
	buf[n++] = '0';
	buf[n++] = 'x';
	for (size_t pad = width > len ? width - len : 0; pad > 0 && n + 1 < size; pad--)
		buf[n++] = '0';
	snprintf(buf + n, size - n, "%s", hex);
	return buf;
}

static json_object *probe_cpus_json(const cpu_set_t *cpus) {
	char list[CPULIST_MAX];

	return json_object_new_string(cpulist_format(cpus, list, sizeof(list)));
}

static json_object *probe_pair_cpus_json(const unsigned cpu[2]) {
	json_object *a = json_object_new_array();

	json_object_array_add(a, json_object_new_int((int)cpu[0]));
	json_object_array_add(a, json_object_new_int((int)cpu[1]));
	return a;
}

json_object *probe_plan_json(const struct topology *t, const struct probe_plan *p) {
	json_object *o = json_object_new_object(), *rel = json_object_new_array(), *codec = json_object_new_array();
	char hex[CPU_SETSIZE / 4 + 8];

	json_object_object_add(o, "topology", json_object_new_string(t->source));
	json_object_object_add(o, "threads", json_object_new_int((int)p->threads));
	for (int r = 0; r < PROBE_RELATION_MAX; r++) {
		json_object *x = json_object_new_object();
		json_object_object_add(x, "relation", json_object_new_string(probe_relation_name(r)));
		json_object_object_add(x, "label", json_object_new_string(probe_relation_label(r)));
		if (p->pairs[r].present)
			json_object_object_add(x, "cpus", probe_pair_cpus_json(p->pairs[r].cpu));
		else
			json_object_object_add(x, "absent", json_object_new_string(p->pairs[r].absent));
		json_object_array_add(rel, x);
	}
	for (int k = 0; k < PROBE_PATTERN_MAX; k++) {
		json_object *x = json_object_new_object();
		json_object_object_add(x, "pattern", json_object_new_string(probe_pattern_name(k)));
		json_object_object_add(x, "label", json_object_new_string(probe_pattern_label(k)));
		if (p->masks[k].present) {
			json_object_object_add(x, "cpus", probe_cpus_json(&p->masks[k].cpus));
			json_object_object_add(x, "mask", json_object_new_string(probe_mask_hex(
				cpulist_last(&p->masks[PROBE_MACHINE].cpus), &p->masks[k].cpus, hex, sizeof(hex))));
		} else {
			json_object_object_add(x, "absent", json_object_new_string(p->masks[k].absent));
		}
		json_object_array_add(codec, x);
	}
	json_object_object_add(o, "relations", rel);
	json_object_object_add(o, "codec", codec);
	return o;
}

/* ---- statistics -------------------------------------------------------- */

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

static double probe_now(void) {
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

/* ---- a whole run ------------------------------------------------------- */

void probe_options_init(struct probe_options *o, enum probe_mode mode) {
	bool full = mode == PROBE_FULL;

	*o = (struct probe_options){
		.mode = mode,
		.threads = 4,
		.repeats = full ? 5 : 3,
		.codec_repeats = 3,
		/* Volumes: long enough for a steady state at several GiB/s,
		 * short enough that the quick calibration stays under a second
		 * or two on a small machine. */
		.pipe_bytes = (size_t)(full ? 256 : 32) << 20,
		.pipe_chunk = 8192,           /* what `yes` writes at a time */
		.pipe_small_bytes = (size_t)(full ? 8 : 2) << 20,
		.pipe_small_chunk = 64,
		.pingpong_rounds = full ? 20000 : 2000,
		.matrix_rounds = 1000,
		.matrix_repeats = 3,
		.codec_frames = 120,
	};
}

struct probe_ticker {
	const struct probe_options *o;
	unsigned done, total;
};

/* Reports the step about to start; a negative return stops the run. */
__attribute__((format(printf, 3, 4)))
static int probe_tick(struct probe_ticker *k, const char *phase, const char *fmt, ...) {
	struct probe_progress p = { .phase = phase, .done = k->done, .total = k->total };
	char step[256];
	va_list ap;

	k->done++;
	if (!k->o->progress)
		return 0;
	va_start(ap, fmt);
	vsnprintf(step, sizeof(step), fmt, ap);
	va_end(ap);
	p.step = step;
	return k->o->progress(&p, k->o->userdata);
}

static int probe_measure_relation(const struct probe_options *o, struct probe_ticker *k,
				  struct probe_relation_result *x, double *samples) {
	const char *name = probe_relation_label(x->relation);
	unsigned a = x->cpu[0], b = x->cpu[1];
	int r;

	r = probe_tick(k, "relations", "pipe, %s (CPUs %u,%u)", name, a, b);
	for (unsigned i = 0; r >= 0 && i < o->repeats; i++)
		r = probe_pipe(a, b, o->pipe_chunk, o->pipe_bytes, &samples[i]);
	if (r < 0)
		return r;
	probe_stat_of(samples, o->repeats, &x->pipe_gib_s);

	r = probe_tick(k, "relations", "pipe with small writes, %s (CPUs %u,%u)", name, a, b);
	for (unsigned i = 0; r >= 0 && i < o->repeats; i++) {
		r = probe_pipe(a, b, o->pipe_small_chunk, o->pipe_small_bytes, &samples[i]);
		samples[i] *= 1024;
	}
	if (r < 0)
		return r;
	probe_stat_of(samples, o->repeats, &x->pipe_small_mib_s);

	r = probe_tick(k, "relations", "ping-pong latency, %s (CPUs %u,%u)", name, a, b);
	if (r >= 0)
		r = probe_pingpong(a, b, o->pingpong_rounds, o->repeats, samples);
	if (r < 0)
		return r;
	probe_stat_of(samples, o->repeats, &x->latency_ns);
	return 0;
}

/* The usable CPUs ordered CCX by CCX, so that each CCX is one block of the
 * matrix. */
static int probe_matrix_init(const struct topology *t, const cpu_set_t *usable, struct probe_matrix *m) {
	unsigned n = 0;

	m->n = (unsigned)CPU_COUNT(usable);
	m->cpus = calloc(m->n ? m->n : 1, sizeof(*m->cpus));
	m->ccx = calloc(m->n ? m->n : 1, sizeof(*m->ccx));
	m->latency_ns = calloc((size_t)m->n * m->n + 1, sizeof(double));
	if (!m->cpus || !m->ccx || !m->latency_ns)
		return -ENOMEM;
	for (unsigned i = 0; i < t->n_ccx; i++)
		for (unsigned cpu = 0; cpu < CPU_SETSIZE && n < m->n; cpu++)
			if (CPU_ISSET(cpu, &t->ccx[i].cpus) && CPU_ISSET(cpu, usable)) {
				m->cpus[n] = cpu;
				m->ccx[n++] = (int)i;
			}
	m->n = n;
	for (size_t i = 0; i < (size_t)n * n; i++)
		m->latency_ns[i] = NAN;
	return 0;
}

static int probe_measure_matrix(const struct topology *t, const cpu_set_t *usable, const struct probe_options *o,
				struct probe_ticker *k, struct probe_matrix *m, double *samples) {
	int r = probe_matrix_init(t, usable, m);

	for (unsigned i = 0; r >= 0 && i < m->n; i++)
		for (unsigned j = i + 1; r >= 0 && j < m->n; j++) {
			struct probe_stat s;
			r = probe_tick(k, "matrix", "ping-pong latency, CPUs %u,%u", m->cpus[i], m->cpus[j]);
			if (r >= 0)
				r = probe_pingpong(m->cpus[i], m->cpus[j], o->matrix_rounds, o->matrix_repeats, samples);
			if (r < 0)
				break;
			probe_stat_of(samples, o->matrix_repeats, &s);
			m->latency_ns[(size_t)i * m->n + j] = m->latency_ns[(size_t)j * m->n + i] = s.median;
		}
	return r;
}

static int probe_measure_codec(const struct probe_options *o, const cpu_set_t *usable, struct probe_ticker *k,
			       struct probe_results *res) {
	struct codec_bench_config c;
	struct codec_bench *b = NULL;
	double *enc = NULL, *dec = NULL;
	unsigned reps = o->codec_repeats;
	int r;

	codec_bench_config_init(&c);
	c.threads = o->threads;
	c.frames = o->codec_frames;
	for (int p = 0; p < PROBE_PATTERN_MAX; p++) {
		struct probe_codec_result *x;
		if (!res->plan.masks[p].present)
			continue;
		x = &res->codec[res->n_codec++];
		*x = (struct probe_codec_result){ .pattern = p, .cpus = res->plan.masks[p].cpus };
		/* the OS default is whatever this process may use */
		if (p == PROBE_MACHINE)
			x->cpus = *usable;
		else if (!cpulist_is_subset(&x->cpus, usable))
			x->error = -EPERM;
	}
	r = probe_tick(k, "codec", "generating and encoding the test frames");
	if (r >= 0)
		r = codec_bench_new(&c, &b);
	enc = calloc((size_t)PROBE_PATTERN_MAX * reps, sizeof(double));
	dec = calloc((size_t)PROBE_PATTERN_MAX * reps, sizeof(double));
	if (r >= 0 && (!enc || !dec))
		r = -ENOMEM;
	if (r >= 0)
		res->codec_compression = codec_bench_compression(b);
	/* Repeats go round all patterns, so that a burst of other load on the
	 * machine spoils one sample of several patterns, not all of one. */
	for (unsigned rep = 0; r >= 0 && rep < reps; rep++)
		for (size_t i = 0; r >= 0 && i < res->n_codec; i++) {
			struct probe_codec_result *x = &res->codec[i];
			const char *name = probe_pattern_name(x->pattern);
			if (x->error)
				continue;
			r = probe_tick(k, "codec", "encode, %s (%u/%u)", name, rep + 1, reps);
			if (r >= 0)
				r = codec_bench_encode(b, &x->cpus, &enc[i * reps + rep]);
			if (r >= 0)
				r = probe_tick(k, "codec", "decode, %s (%u/%u)", name, rep + 1, reps);
			if (r >= 0)
				r = codec_bench_decode(b, &x->cpus, &dec[i * reps + rep]);
			/* A mask that cannot run is that pattern's problem; a codec
			 * that decodes wrong (-EBADMSG) or a cancel is everybody's. */
			if (r == -EINVAL || r == -EPERM) {
				x->error = r;
				r = 0;
			}
		}
	for (size_t i = 0; r >= 0 && i < res->n_codec; i++)
		if (!res->codec[i].error) {
			probe_stat_of(&enc[i * reps], reps, &res->codec[i].encode_fps);
			probe_stat_of(&dec[i * reps], reps, &res->codec[i].decode_fps);
		}
	free(enc);
	free(dec);
	codec_bench_free(b);
	return r;
}

static char *probe_date_now(void) {
	char buf[64];
	time_t now = time(NULL);
	struct tm tm;

	if (!gmtime_r(&now, &tm) || strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return strdup("unknown");
	return strdup(buf);
}

static unsigned probe_count_steps(const struct probe_results *res, const struct probe_options *o,
				  const cpu_set_t *usable) {
	unsigned steps = 0, n = (unsigned)CPU_COUNT(usable);

	for (int r = 0; r < PROBE_RELATION_MAX; r++)
		steps += res->plan.pairs[r].present ? 3 : 0;
	if (o->matrix)
		steps += n * (n - 1) / 2;
	if (o->mode == PROBE_FULL) {
		steps++;
		for (int p = 0; p < PROBE_PATTERN_MAX; p++)
			steps += res->plan.masks[p].present ? 2 * o->codec_repeats : 0;
	}
	return steps;
}

static bool probe_options_valid(const struct probe_options *o) {
	return o->threads >= 1 && o->threads <= CPU_SETSIZE && o->repeats >= 1 && o->codec_repeats >= 1 &&
	       o->pipe_bytes > 0 && o->pipe_chunk > 0 && o->pipe_small_bytes > 0 && o->pipe_small_chunk > 0 &&
	       o->pingpong_rounds > 0 && o->matrix_rounds > 0 && o->matrix_repeats > 0 && o->codec_frames > 0 &&
	       o->repeats <= 1000 && o->codec_repeats <= 1000 && o->matrix_repeats <= 1000;
}

int probe_run(const struct topology *t, const struct probe_options *o, struct probe_results **ret) {
	struct probe_ticker k = { .o = o };
	struct probe_results *res;
	cpu_set_t allowed, usable;
	unsigned most = 1;
	double *samples, t0 = probe_now();
	int r;

	if (!t || !o || !ret || !probe_options_valid(o))
		return -EINVAL;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
		return -errno;
	CPU_AND(&usable, &t->online, &allowed);
	if (CPU_COUNT(&usable) == 0)
		return -ENXIO;
	most = o->repeats > most ? o->repeats : most;
	most = o->matrix_repeats > most ? o->matrix_repeats : most;
	samples = calloc(most, sizeof(double));
	res = calloc(1, sizeof(*res));
	if (!samples || !res) {
		free(samples);
		free(res);
		return -ENOMEM;
	}
	res->topology = strdup(t->source);
	res->date = probe_date_now();
	res->mode = o->mode;
	res->threads = o->threads;
	r = !res->topology || !res->date ? -ENOMEM : probe_plan(t, o->threads, &usable, &res->plan);
	k.total = r >= 0 ? probe_count_steps(res, o, &usable) : 0;

	for (int rel = 0; r >= 0 && rel < PROBE_RELATION_MAX; rel++) {
		struct probe_relation_result *x;
		if (!res->plan.pairs[rel].present)
			continue;
		x = &res->relations[res->n_relations++];
		*x = (struct probe_relation_result){ .relation = rel };
		memcpy(x->cpu, res->plan.pairs[rel].cpu, sizeof(x->cpu));
		r = probe_measure_relation(o, &k, x, samples);
	}
	if (r >= 0 && o->matrix)
		r = probe_measure_matrix(t, &usable, o, &k, &res->matrix, samples);
	if (r >= 0 && o->mode == PROBE_FULL)
		r = probe_measure_codec(o, &usable, &k, res);
	free(samples);
	if (r >= 0 && o->progress) {
		struct probe_progress p = { .phase = "done", .step = "done", .done = k.total, .total = k.total };
		r = o->progress(&p, o->userdata);
	}
	if (r < 0) {
		probe_results_free(res);
		return r;
	}
	res->duration_s = probe_now() - t0;
	*ret = res;
	return 0;
}

void probe_results_free(struct probe_results *r) {
	if (!r)
		return;
	free(r->topology);
	free(r->date);
	free(r->matrix.cpus);
	free(r->matrix.ccx);
	free(r->matrix.latency_ns);
	free(r);
}

/* ---- ratios ------------------------------------------------------------ */

static double probe_ratio(double v, double best) {
	return best > 0 && v > 0 ? v / best : 0;
}

/* The best of a column: the highest throughput, the lowest latency. */
static double probe_best_pipe(const struct probe_results *r) {
	double best = 0;

	for (size_t j = 0; j < r->n_relations; j++)
		if (r->relations[j].pipe_gib_s.median > best)
			best = r->relations[j].pipe_gib_s.median;
	return best;
}

static double probe_best_latency(const struct probe_results *r) {
	double best = 0;

	for (size_t j = 0; j < r->n_relations; j++)
		if (r->relations[j].latency_ns.n && (best == 0 || r->relations[j].latency_ns.median < best))
			best = r->relations[j].latency_ns.median;
	return best;
}

static double probe_codec_fps(const struct probe_codec_result *x, bool decode) {
	return x->error ? 0 : decode ? x->decode_fps.median : x->encode_fps.median;
}

static double probe_best_codec(const struct probe_results *r, bool decode) {
	double best = 0;

	for (size_t j = 0; j < r->n_codec; j++)
		if (probe_codec_fps(&r->codec[j], decode) > best)
			best = probe_codec_fps(&r->codec[j], decode);
	return best;
}

double probe_pipe_ratio(const struct probe_results *r, size_t i) {
	return i < r->n_relations ? probe_ratio(r->relations[i].pipe_gib_s.median, probe_best_pipe(r)) : 0;
}

double probe_latency_ratio(const struct probe_results *r, size_t i) {
	return i < r->n_relations ? probe_ratio(r->relations[i].latency_ns.median, probe_best_latency(r)) : 0;
}

double probe_encode_ratio(const struct probe_results *r, size_t i) {
	return i < r->n_codec ? probe_ratio(probe_codec_fps(&r->codec[i], false), probe_best_codec(r, false)) : 0;
}

double probe_decode_ratio(const struct probe_results *r, size_t i) {
	return i < r->n_codec ? probe_ratio(probe_codec_fps(&r->codec[i], true), probe_best_codec(r, true)) : 0;
}

/* ---- JSON -------------------------------------------------------------- */

/* A number with as many decimals as it deserves: json-c would otherwise
 * print every double with 17 significant digits. */
static json_object *probe_json_double(double v, int decimals) {
	char buf[64];

	if (!isfinite(v))
		return NULL;
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return json_object_new_double_s(strtod(buf, NULL), buf);
}

static double probe_round(double v, int decimals) {
	char buf[64];

	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return strtod(buf, NULL);
}

/* A ratio of two figures as the JSON prints them, so that whoever reads the
 * JSON and divides gets the same ratio, and a result read back from JSON
 * writes the same JSON again. */
static json_object *probe_json_ratio(double v, double best, int decimals) {
	return probe_json_double(probe_ratio(probe_round(v, decimals), probe_round(best, decimals)), 3);
}

static void probe_json_add_stat(json_object *o, const char *key, const struct probe_stat *s, int decimals) {
	char k[64];

	json_object_object_add(o, key, s->n ? probe_json_double(s->median, decimals) : NULL);
	snprintf(k, sizeof(k), "%s_min", key);
	json_object_object_add(o, k, s->n ? probe_json_double(s->min, decimals) : NULL);
	snprintf(k, sizeof(k), "%s_max", key);
	json_object_object_add(o, k, s->n ? probe_json_double(s->max, decimals) : NULL);
}

static json_object *probe_relation_json(const struct probe_results *r, size_t i) {
	const struct probe_relation_result *x = &r->relations[i];
	json_object *o = json_object_new_object();

	json_object_object_add(o, "relation", json_object_new_string(probe_relation_name(x->relation)));
	json_object_object_add(o, "label", json_object_new_string(probe_relation_label(x->relation)));
	json_object_object_add(o, "cpus", probe_pair_cpus_json(x->cpu));
	json_object_object_add(o, "repeats", json_object_new_int((int)x->pipe_gib_s.n));
	probe_json_add_stat(o, "pipe_gib_s", &x->pipe_gib_s, 3);
	probe_json_add_stat(o, "pipe_small_mib_s", &x->pipe_small_mib_s, 1);
	probe_json_add_stat(o, "latency_ns", &x->latency_ns, 1);
	json_object_object_add(o, "pipe_ratio", probe_json_ratio(x->pipe_gib_s.median, probe_best_pipe(r), 3));
	json_object_object_add(o, "latency_ratio", probe_json_ratio(x->latency_ns.median, probe_best_latency(r), 1));
	return o;
}

/* The highest CPU of any codec mask: how wide every mask is printed. */
static int probe_codec_last_cpu(const struct probe_results *r) {
	int last = -1;

	for (size_t i = 0; i < r->n_codec; i++)
		if (cpulist_last(&r->codec[i].cpus) > last)
			last = cpulist_last(&r->codec[i].cpus);
	return last;
}

static json_object *probe_codec_json(const struct probe_results *r, size_t i) {
	const struct probe_codec_result *x = &r->codec[i];
	json_object *o = json_object_new_object();
	char hex[CPU_SETSIZE / 4 + 8];

	json_object_object_add(o, "pattern", json_object_new_string(probe_pattern_name(x->pattern)));
	json_object_object_add(o, "label", json_object_new_string(probe_pattern_label(x->pattern)));
	json_object_object_add(o, "cpus", probe_cpus_json(&x->cpus));
	probe_mask_hex(probe_codec_last_cpu(r), &x->cpus, hex, sizeof(hex));
	json_object_object_add(o, "mask", json_object_new_string(hex));
	json_object_object_add(o, "threads", json_object_new_int((int)r->threads));
	probe_json_add_stat(o, "encode_fps", &x->encode_fps, 1);
	probe_json_add_stat(o, "decode_fps", &x->decode_fps, 1);
	json_object_object_add(o, "encode_ratio",
			       x->error ? NULL : probe_json_ratio(x->encode_fps.median, probe_best_codec(r, false), 1));
	json_object_object_add(o, "decode_ratio",
			       x->error ? NULL : probe_json_ratio(x->decode_fps.median, probe_best_codec(r, true), 1));
	json_object_object_add(o, "errno", x->error ? json_object_new_int(-x->error) : NULL);
	json_object_object_add(o, "error", x->error ? json_object_new_string(strerror(-x->error)) : NULL);
	return o;
}

static json_object *probe_matrix_json(const struct probe_matrix *m) {
	json_object *o = json_object_new_object(), *cpus = json_object_new_array(), *ccx = json_object_new_array();
	json_object *rows = json_object_new_array();

	for (unsigned i = 0; i < m->n; i++) {
		json_object *row = json_object_new_array();
		json_object_array_add(cpus, json_object_new_int((int)m->cpus[i]));
		json_object_array_add(ccx, json_object_new_int(m->ccx[i]));
		for (unsigned j = 0; j < m->n; j++)
			json_object_array_add(row, probe_json_double(m->latency_ns[(size_t)i * m->n + j], 1));
		json_object_array_add(rows, row);
	}
	json_object_object_add(o, "cpus", cpus);
	json_object_object_add(o, "ccx", ccx);
	json_object_object_add(o, "latency_ns", rows);
	return o;
}

json_object *probe_results_json(const struct probe_results *r) {
	json_object *o = json_object_new_object(), *rel = json_object_new_array(), *codec = json_object_new_array();
	json_object *rel_absent = json_object_new_array(), *codec_absent = json_object_new_array();

	json_object_object_add(o, "version", json_object_new_int(PROBE_JSON_VERSION));
	json_object_object_add(o, "topology", json_object_new_string(r->topology));
	json_object_object_add(o, "date", json_object_new_string(r->date));
	json_object_object_add(o, "mode", json_object_new_string(r->mode == PROBE_FULL ? "full" : "quick"));
	json_object_object_add(o, "threads", json_object_new_int((int)r->threads));
	json_object_object_add(o, "duration_s", probe_json_double(r->duration_s, 2));
	for (size_t i = 0; i < r->n_relations; i++)
		json_object_array_add(rel, probe_relation_json(r, i));
	for (int k = 0; k < PROBE_RELATION_MAX; k++) {
		json_object *x;
		if (r->plan.pairs[k].present)
			continue;
		x = json_object_new_object();
		json_object_object_add(x, "relation", json_object_new_string(probe_relation_name(k)));
		json_object_object_add(x, "reason", json_object_new_string(r->plan.pairs[k].absent));
		json_object_array_add(rel_absent, x);
	}
	for (size_t i = 0; i < r->n_codec; i++)
		json_object_array_add(codec, probe_codec_json(r, i));
	/* a quick run measures no codec: what its plan says of shapes is moot */
	for (int k = 0; k < PROBE_PATTERN_MAX && r->mode == PROBE_FULL; k++) {
		json_object *x;
		if (r->plan.masks[k].present)
			continue;
		x = json_object_new_object();
		json_object_object_add(x, "pattern", json_object_new_string(probe_pattern_name(k)));
		json_object_object_add(x, "reason", json_object_new_string(r->plan.masks[k].absent));
		json_object_array_add(codec_absent, x);
	}
	json_object_object_add(o, "relations", rel);
	json_object_object_add(o, "relations_absent", rel_absent);
	json_object_object_add(o, "codec", codec);
	json_object_object_add(o, "codec_absent", codec_absent);
	json_object_object_add(o, "codec_compression",
			       r->codec_compression > 0 ? probe_json_double(r->codec_compression, 3) : NULL);
	if (r->matrix.n)
		json_object_object_add(o, "matrix", probe_matrix_json(&r->matrix));
	return o;
}

json_object *probe_progress_json(const struct probe_progress *p) {
	json_object *o = json_object_new_object();

	json_object_object_add(o, "phase", json_object_new_string(p->phase ? p->phase : ""));
	json_object_object_add(o, "step", json_object_new_string(p->step ? p->step : ""));
	json_object_object_add(o, "done", json_object_new_int((int)p->done));
	json_object_object_add(o, "total", json_object_new_int((int)p->total));
	return o;
}

/* ---- reading JSON back ------------------------------------------------- */

static json_object *probe_get(json_object *o, const char *key, json_type type) {
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type))
		return NULL;
	return v;
}

/* A number: an int or a double in the text. */
static bool probe_get_number(json_object *o, const char *key, double *ret) {
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return false;
	*ret = json_object_get_double(v);
	return true;
}

static bool probe_get_uint(json_object *o, const char *key, unsigned max, unsigned *ret) {
	json_object *v = probe_get(o, key, json_type_int);
	int64_t n = v ? json_object_get_int64(v) : -1;

	if (n < 0 || n > max)
		return false;
	*ret = (unsigned)n;
	return true;
}

/* A stat written by probe_json_add_stat; null means not measured. */
static bool probe_get_stat(json_object *o, const char *key, unsigned n, struct probe_stat *s) {
	char k[64];
	json_object *v;

	*s = (struct probe_stat){ 0 };
	if (!json_object_object_get_ex(o, key, &v))
		return false;
	if (json_object_is_type(v, json_type_null))
		return true;
	s->n = n ? n : 1;
	snprintf(k, sizeof(k), "%s_min", key);
	if (!probe_get_number(o, key, &s->median) || !probe_get_number(o, k, &s->min))
		return false;
	snprintf(k, sizeof(k), "%s_max", key);
	return probe_get_number(o, k, &s->max);
}

static bool probe_get_cpus(json_object *o, const char *key, cpu_set_t *ret) {
	json_object *v = probe_get(o, key, json_type_string);

	return v && cpulist_parse(json_object_get_string(v), ret) == 0;
}

static bool probe_relation_from_json(json_object *o, struct probe_results *r) {
	json_object *cpus = probe_get(o, "cpus", json_type_array);
	int rel = probe_relation_from_name(json_object_get_string(probe_get(o, "relation", json_type_string)));
	struct probe_relation_result *x;
	unsigned repeats = 0;

	if (rel < 0 || !cpus || json_object_array_length(cpus) != 2 || r->n_relations >= PROBE_RELATION_MAX)
		return false;
	x = &r->relations[r->n_relations++];
	*x = (struct probe_relation_result){ .relation = rel };
	for (size_t i = 0; i < 2; i++) {
		json_object *c = json_object_array_get_idx(cpus, i);
		int64_t cpu = json_object_is_type(c, json_type_int) ? json_object_get_int64(c) : -1;
		if (cpu < 0 || cpu >= CPU_SETSIZE)
			return false;
		x->cpu[i] = (unsigned)cpu;
	}
	r->plan.pairs[rel] = (struct probe_pair){ .present = true, .cpu = { x->cpu[0], x->cpu[1] } };
	probe_get_uint(o, "repeats", 1000, &repeats);
	return probe_get_stat(o, "pipe_gib_s", repeats, &x->pipe_gib_s) &&
	       probe_get_stat(o, "pipe_small_mib_s", repeats, &x->pipe_small_mib_s) &&
	       probe_get_stat(o, "latency_ns", repeats, &x->latency_ns);
}

static bool probe_codec_from_json(json_object *o, struct probe_results *r) {
	int p = probe_pattern_from_name(json_object_get_string(probe_get(o, "pattern", json_type_string)));
	struct probe_codec_result *x;
	unsigned err = 0;

	if (p < 0 || r->n_codec >= PROBE_PATTERN_MAX)
		return false;
	x = &r->codec[r->n_codec++];
	*x = (struct probe_codec_result){ .pattern = p };
	if (!probe_get_cpus(o, "cpus", &x->cpus))
		return false;
	r->plan.masks[p] = (struct probe_mask){ .present = true, .cpus = x->cpus };
	if (probe_get_uint(o, "errno", 4095, &err))
		x->error = -(int)err;
	return probe_get_stat(o, "encode_fps", 0, &x->encode_fps) && probe_get_stat(o, "decode_fps", 0, &x->decode_fps);
}

static bool probe_absent_from_json(json_object *list, bool relations, struct probe_results *r) {
	for (size_t i = 0; list && i < json_object_array_length(list); i++) {
		json_object *x = json_object_array_get_idx(list, i);
		const char *reason = json_object_get_string(probe_get(x, "reason", json_type_string));
		int k = relations ? probe_relation_from_name(json_object_get_string(probe_get(x, "relation", json_type_string)))
				  : probe_pattern_from_name(json_object_get_string(probe_get(x, "pattern", json_type_string)));
		if (k < 0)
			return false;
		if (relations)
			r->plan.pairs[k] = (struct probe_pair){ .absent = probe_reason_static(reason) };
		else
			r->plan.masks[k] = (struct probe_mask){ .absent = probe_reason_static(reason) };
	}
	return true;
}

static int probe_matrix_from_json(json_object *o, struct probe_matrix *m) {
	json_object *cpus = probe_get(o, "cpus", json_type_array), *ccx = probe_get(o, "ccx", json_type_array);
	json_object *rows = probe_get(o, "latency_ns", json_type_array);
	size_t n = cpus ? json_object_array_length(cpus) : 0;

	if (!cpus || !ccx || !rows || n > CPU_SETSIZE || json_object_array_length(ccx) != n ||
	    json_object_array_length(rows) != n)
		return -EBADMSG;
	m->n = (unsigned)n;
	m->cpus = calloc(n + 1, sizeof(*m->cpus));
	m->ccx = calloc(n + 1, sizeof(*m->ccx));
	m->latency_ns = calloc(n * n + 1, sizeof(double));
	if (!m->cpus || !m->ccx || !m->latency_ns)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		int64_t cpu = json_object_get_int64(json_object_array_get_idx(cpus, i));
		if (cpu < 0 || cpu >= CPU_SETSIZE || !json_object_is_type(row, json_type_array) ||
		    json_object_array_length(row) != n)
			return -EBADMSG;
		m->cpus[i] = (unsigned)cpu;
		m->ccx[i] = json_object_get_int(json_object_array_get_idx(ccx, i));
		for (size_t j = 0; j < n; j++) {
			json_object *v = json_object_array_get_idx(row, j);
			m->latency_ns[i * n + j] = v && (json_object_is_type(v, json_type_double) ||
							  json_object_is_type(v, json_type_int))
				? json_object_get_double(v) : NAN;
		}
	}
	return 0;
}

int probe_results_from_json(json_object *o, struct probe_results **ret) {
	json_object *rel = probe_get(o, "relations", json_type_array), *codec = probe_get(o, "codec", json_type_array);
	json_object *mode = probe_get(o, "mode", json_type_string), *matrix;
	struct probe_results *r;
	unsigned version = 0;
	int e = 0;

	if (!probe_get_uint(o, "version", 1000, &version) || version != PROBE_JSON_VERSION || !rel || !codec ||
	    !mode || !probe_get(o, "topology", json_type_string) || !probe_get(o, "date", json_type_string))
		return -EBADMSG;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->topology = strdup(json_object_get_string(probe_get(o, "topology", json_type_string)));
	r->date = strdup(json_object_get_string(probe_get(o, "date", json_type_string)));
	if (!r->topology || !r->date)
		e = -ENOMEM;
	r->mode = strcmp(json_object_get_string(mode), "full") == 0 ? PROBE_FULL : PROBE_QUICK;
	if (!e && (!probe_get_uint(o, "threads", CPU_SETSIZE, &r->threads) ||
		   !probe_get_number(o, "duration_s", &r->duration_s)))
		e = -EBADMSG;
	r->plan.threads = r->threads;
	for (int k = 0; k < PROBE_RELATION_MAX; k++)
		r->plan.pairs[k].absent = probe_reasons[REASON_ABSENT];
	for (int k = 0; k < PROBE_PATTERN_MAX; k++)
		r->plan.masks[k].absent = probe_reasons[REASON_ABSENT];
	for (size_t i = 0; !e && i < json_object_array_length(rel); i++)
		if (!probe_relation_from_json(json_object_array_get_idx(rel, i), r))
			e = -EBADMSG;
	for (size_t i = 0; !e && i < json_object_array_length(codec); i++)
		if (!probe_codec_from_json(json_object_array_get_idx(codec, i), r))
			e = -EBADMSG;
	if (!e && (!probe_absent_from_json(probe_get(o, "relations_absent", json_type_array), true, r) ||
		   !probe_absent_from_json(probe_get(o, "codec_absent", json_type_array), false, r)))
		e = -EBADMSG;
	if (!probe_get_number(o, "codec_compression", &r->codec_compression))
		r->codec_compression = 0;
	if (!e && json_object_object_get_ex(o, "matrix", &matrix))
		e = probe_matrix_from_json(matrix, &r->matrix);
	if (e < 0) {
		probe_results_free(r);
		return e;
	}
	*ret = r;
	return 0;
}
