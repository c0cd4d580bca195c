/* A whole run: the plan measured step by step, with progress and a way to
 * stop, into probe_results. */
#include "probe.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec.h"
#include "cpulist.h"
#include "probe-internal.h"

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
