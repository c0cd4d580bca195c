/* The plan and the results as JSON, and the results read back: a cached
 * result, or the probe worker's answer. */
#include "probe.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "probe-internal.h"

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
			r->plan.pairs[k] = (struct probe_pair){ .absent = probe_reason_of(reason) };
		else
			r->plan.masks[k] = (struct probe_mask){ .absent = probe_reason_of(reason) };
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
		r->plan.pairs[k].absent = probe_reason_of("absent");
	for (int k = 0; k < PROBE_PATTERN_MAX; k++)
		r->plan.masks[k].absent = probe_reason_of("absent");
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
