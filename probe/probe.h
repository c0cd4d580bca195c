/* The probe: what placement costs on this machine, measured.
 *
 * - Relations: for one CPU pair of each relation the topology has (one shared
 *   CPU, SMT siblings, same CCX, another CCX, another NUMA node, another
 *   package): pipe throughput between a writer and a reader pinned to the
 *   pair (large writes as `yes | pv` makes them, and small ones) and
 *   cache-line ping-pong latency.
 * - Matrix: ping-pong latency between every two CPUs.
 * - Codec: the multi-threaded lossless codec (codec.h) under CPU masks
 *   derived from the topology, the shapes of the codec table in
 *   docs/reference-figures.md.
 *
 * Which pairs and masks are measured is decided by pure functions of the
 * topology (probe_plan), so that the choice is tested on real machines'
 * topologies. probe_run() blocks for seconds: the daemon runs it in a worker
 * process, streams what the progress callback reports, and ships the result
 * back as probe_results_json(), which probe_results_from_json() reads. */
#pragma once

#include <json-c/json.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#include "topology.h"

#define PROBE_JSON_VERSION 1

enum probe_relation {
	PROBE_SAME_CPU,           /* writer and reader take turns on one CPU */
	PROBE_SMT,                /* SMT siblings: one core */
	PROBE_SAME_CCX,           /* two cores of one CCX */
	PROBE_CROSS_CCX,          /* two CCXs of one NUMA node and package */
	PROBE_CROSS_NUMA,         /* two NUMA nodes of one package */
	PROBE_CROSS_PACKAGE,      /* two packages */
	PROBE_RELATION_MAX,
};

enum probe_pattern {
	PROBE_CCX_SMT_PACKED,           /* threads/2 cores x 2 SMT, one CCX */
	PROBE_CCX_ONE_PER_CORE,         /* threads cores x 1 PU, one CCX */
	PROBE_CCX_ALL,                  /* every PU of one CCX (at least threads of them) */
	PROBE_CROSS_CCX_SMT_PACKED,     /* threads/4 cores x 2 SMT in each of two CCXs */
	PROBE_CROSS_CCX_ONE_PER_CORE,   /* threads/2 cores x 1 PU in each of two CCXs */
	PROBE_MACHINE,                  /* every CPU: the scheduler chooses */
	PROBE_PATTERN_MAX,
};

/* "same-cpu", "smt-siblings", ... and "same CPU", "SMT siblings", ...;
 * NULL out of range. */
const char *probe_relation_name(enum probe_relation r);
const char *probe_relation_label(enum probe_relation r);
int probe_relation_from_name(const char *name);        /* the enum, or -EINVAL */
/* "ccx-smt-packed", ... and what the shape is, for people. */
const char *probe_pattern_name(enum probe_pattern p);
const char *probe_pattern_label(enum probe_pattern p);
int probe_pattern_from_name(const char *name);

/* ---- the plan: pure functions of the topology ----------------------------- */

struct probe_pair {
	bool present;
	unsigned cpu[2];          /* writer, reader; equal for PROBE_SAME_CPU */
	const char *absent;       /* why not, when !present (static text) */
};

struct probe_mask {
	bool present;
	cpu_set_t cpus;
	const char *absent;
};

struct probe_plan {
	unsigned threads;
	struct probe_pair pairs[PROBE_RELATION_MAX];
	struct probe_mask masks[PROBE_PATTERN_MAX];
};

/* The relation between two online CPUs of t: the largest distance that the
 * topology knows of (a CCX with no known NUMA node counts as the same node).
 * -EINVAL when a CPU is not in t. */
int probe_relation_of(const struct topology *t, unsigned a, unsigned b);

/* For each relation, the lowest pair (a, b), a <= b, of CPUs in usable (NULL:
 * every online CPU of t) that has it. */
void probe_pick_pairs(const struct topology *t, const cpu_set_t *usable, struct probe_pair pairs[PROBE_RELATION_MAX]);

/* The codec masks for this many threads (1..CPU_SETSIZE). Lowest-numbered
 * CCXs and cores first; the two CCXs of a cross-CCX shape share a NUMA node
 * and package where the topology has such a pair, so that they differ in the
 * L3 only. A shape whose numbers do not divide (cross-CCX SMT-packed for 6
 * threads) or that the topology cannot hold is absent, with the reason.
 * Returns 0 or -EINVAL. */
int probe_codec_masks(const struct topology *t, unsigned threads, struct probe_mask masks[PROBE_PATTERN_MAX]);

/* Both of the above; usable as for probe_pick_pairs (codec masks are not
 * restricted by it: a mask with a CPU outside it fails when run). */
int probe_plan(const struct topology *t, unsigned threads, const cpu_set_t *usable, struct probe_plan *ret);

json_object *probe_plan_json(const struct topology *t, const struct probe_plan *p);

/* ---- measurements ------------------------------------------------------ */

/* A median over repeats, with the spread. */
struct probe_stat {
	double median, min, max;
	unsigned n;               /* 0: not measured */
};

/* Median, min and max of n samples (reordered in place). */
void probe_stat_of(double *samples, unsigned n, struct probe_stat *ret);

/* Moves bytes through a fresh pipe in writes of chunk bytes from a thread on
 * writer_cpu to one on reader_cpu reading up to 128 KiB at a time; GiB/s.
 * The reader copies the data out, as a consumer that looks at it does (pv
 * splices it away untouched): moving the data between caches is the cost
 * that placement changes.
 * Returns 0, -EINVAL for a CPU this process may not use, other -errno. */
int probe_pipe(unsigned writer_cpu, unsigned reader_cpu, size_t chunk, size_t bytes, double *gib_s);

/* Two threads on cpu_a and cpu_b bounce one cache line rounds times, repeats
 * times over; samples[i] gets the one-way latency (half a round trip) in ns
 * of repeat i. On one CPU the threads yield to each other, so it measures a
 * hand-over through the scheduler. */
int probe_pingpong(unsigned cpu_a, unsigned cpu_b, unsigned rounds, unsigned repeats, double *samples);

/* ---- a whole run ------------------------------------------------------- */

enum probe_mode {
	PROBE_QUICK,              /* relations only, few repeats: a calibration */
	PROBE_FULL,               /* relations, then the codec */
};

struct probe_progress {
	const char *phase;        /* "relations", "matrix", "codec" */
	const char *step;         /* what is being measured, for people */
	unsigned done, total;     /* steps; done == total at the end */
};

/* Called before every step and once at the end. Returning a negative errno
 * stops the run, which then returns it: a daemon cancels a probe whose
 * client went away this way. */
typedef int (*probe_progress_fn)(const struct probe_progress *p, void *userdata);

struct probe_options {
	enum probe_mode mode;
	bool matrix;              /* also every CPU pair's latency */
	unsigned threads;         /* codec workers */
	unsigned repeats;         /* per relation measurement */
	unsigned codec_repeats;
	size_t pipe_bytes;        /* per large-write pipe run */
	size_t pipe_chunk;
	size_t pipe_small_bytes;
	size_t pipe_small_chunk;
	unsigned pingpong_rounds;
	unsigned matrix_rounds;
	unsigned matrix_repeats;
	unsigned codec_frames;    /* per timed codec run */
	probe_progress_fn progress;
	void *userdata;
};

/* Defaults for mode. */
void probe_options_init(struct probe_options *o, enum probe_mode mode);

struct probe_relation_result {
	enum probe_relation relation;
	unsigned cpu[2];
	struct probe_stat pipe_gib_s;         /* large writes */
	struct probe_stat pipe_small_mib_s;   /* small writes */
	struct probe_stat latency_ns;
};

struct probe_codec_result {
	enum probe_pattern pattern;
	cpu_set_t cpus;
	struct probe_stat encode_fps, decode_fps;
	int error;                /* 0, or why it could not run (-EBADMSG: decode mismatch) */
};

struct probe_matrix {
	unsigned n;
	unsigned *cpus;           /* in CCX order, so that a CCX is one block */
	int *ccx;                 /* of each CPU */
	double *latency_ns;       /* n x n, symmetric, NaN on the diagonal */
};

struct probe_results {
	char *topology;           /* the spec it was planned on */
	char *date;               /* ISO 8601, UTC, of the start */
	enum probe_mode mode;
	unsigned threads;
	double duration_s;
	double codec_compression; /* compressed / raw; 0 when not run */
	struct probe_plan plan;
	size_t n_relations;
	struct probe_relation_result relations[PROBE_RELATION_MAX];
	size_t n_codec;
	struct probe_codec_result codec[PROBE_PATTERN_MAX];
	struct probe_matrix matrix;           /* n == 0 unless asked for */
};

/* Runs the probe on the CPUs of t that this process may use (t must describe
 * this machine, or a part of it as a synthetic topology can). Returns 0 with
 * *ret set; -ENXIO when t has CPUs that this machine does not, the progress
 * callback's error when it stopped the run, other -errno. A codec pattern
 * that fails is recorded with its error and does not stop the run, except
 * -EBADMSG (the codec decoded something else than its input), which fails
 * the probe: its figures could not be trusted. */
int probe_run(const struct topology *t, const struct probe_options *o, struct probe_results **ret);

void probe_results_free(struct probe_results *r);

/* Ratio of a figure to the best of its column (the highest throughput, the
 * lowest latency); 0 when there is none. */
double probe_pipe_ratio(const struct probe_results *r, size_t i);
double probe_latency_ratio(const struct probe_results *r, size_t i);
double probe_encode_ratio(const struct probe_results *r, size_t i);
double probe_decode_ratio(const struct probe_results *r, size_t i);

/* {version, topology, date, mode, threads, duration_s,
 *  relations: [{relation, label, cpus: [a, b], pipe_gib_s, pipe_gib_s_min, ...,
 *               pipe_small_mib_s..., latency_ns..., pipe_ratio, latency_ratio}],
 *  relations_absent: [{relation, reason}],
 *  codec: [{pattern, label, cpus, mask, threads, encode_fps..., decode_fps...,
 *           encode_ratio, decode_ratio, error}],
 *  codec_absent: [{pattern, reason}], codec_compression,
 *  matrix: {cpus, ccx, latency_ns: [[...]]} (when measured)} */
json_object *probe_results_json(const struct probe_results *r);

/* Reads what probe_results_json wrote (a cached result, a worker's answer).
 * Returns 0, -EBADMSG when a field is missing or malformed, -ENOMEM. */
int probe_results_from_json(json_object *o, struct probe_results **ret);

/* {phase, step, done, total}: one progress message of a streaming reply */
json_object *probe_progress_json(const struct probe_progress *p);
