#include <errno.h>
#include <math.h>
#include <sys/stat.h>

#include "cpulist.h"
#include "probe.h"
#include "test.h"
#include "topologies.h"
#include "topology.h"

#define SYNTHETIC_2CPU "synthetic:pack:1 l3:2 core:1 pu:1"

static const char *fmt(const cpu_set_t *set) {
	static char buf[4][CPULIST_MAX];
	static unsigned next;

	return cpulist_format(set, buf[next++ % 4], sizeof(buf[0]));
}

/* expected: a CPU list, or NULL for an absent shape */
static void check_masks(const struct topology *t, unsigned threads, const char *const expected[PROBE_PATTERN_MAX]) {
	struct probe_mask m[PROBE_PATTERN_MAX];

	CHECK_INT(probe_codec_masks(t, threads, m), 0);
	for (int p = 0; p < PROBE_PATTERN_MAX; p++) {
		if (!expected[p]) {
			if (m[p].present)
				printf("# %s, %u threads: %s is %s, expected absent\n", t->source, threads,
				       probe_pattern_name(p), fmt(&m[p].cpus));
			CHECK(!m[p].present);
			CHECK(m[p].absent && *m[p].absent);
			continue;
		}
		if (!m[p].present) {
			printf("# %s, %u threads: %s absent (%s), expected %s\n", t->source, threads, probe_pattern_name(p),
			       m[p].absent, expected[p]);
			test_failed = 1;
			continue;
		}
		if (strcmp(fmt(&m[p].cpus), expected[p]) != 0) {
			printf("# %s, %u threads: %s is %s, expected %s\n", t->source, threads, probe_pattern_name(p),
			       fmt(&m[p].cpus), expected[p]);
			test_failed = 1;
		}
	}
}

/* FIGURES.md numbers the 1800X as Windows does, CPU 2k and 2k+1 being core
 * k; Linux (and the XML) gives core k the PUs k and k + 8. */
static cpu_set_t windows_to_linux_1800x(unsigned mask) {
	cpu_set_t set;

	CPU_ZERO(&set);
	for (unsigned w = 0; w < 16; w++)
		if (mask & (1u << w))
			CPU_SET(w / 2 + 8 * (w % 2), &set);
	return set;
}

static void codec_masks_on_1800x_are_the_reference_table(void) {
	/* The mask column of the codec table, top to bottom, in our pattern order. */
	static const unsigned reference[PROBE_PATTERN_MAX] = {
		[PROBE_CCX_SMT_PACKED] = 0x000F,
		[PROBE_CCX_ONE_PER_CORE] = 0x0055,
		[PROBE_CCX_ALL] = 0x00FF,
		[PROBE_CROSS_CCX_SMT_PACKED] = 0x0303,
		[PROBE_CROSS_CCX_ONE_PER_CORE] = 0x0505,
		[PROBE_MACHINE] = 0xFFFF,
	};
	static const char *const hex[PROBE_PATTERN_MAX] = { "0x0303", "0x000f", "0x0f0f", "0x1111", "0x0033", "0xffff" };
	struct topology *t = test_topology_file("amd-ryzen7-1800x.xml");
	struct probe_plan plan;
	json_object *o, *codec;

	if (!t)
		return;
	CHECK_INT(probe_plan(t, 4, NULL, &plan), 0);
	for (int p = 0; p < PROBE_PATTERN_MAX; p++) {
		cpu_set_t want = windows_to_linux_1800x(reference[p]);
		CHECK(plan.masks[p].present);
		if (!CPU_EQUAL(&plan.masks[p].cpus, &want)) {
			printf("# %s: %s, expected %s\n", probe_pattern_name(p), fmt(&plan.masks[p].cpus), fmt(&want));
			test_failed = 1;
		}
	}
	o = probe_plan_json(t, &plan);
	CHECK(json_object_object_get_ex(o, "codec", &codec));
	CHECK_INT(json_object_array_length(codec), PROBE_PATTERN_MAX);
	for (int p = 0; p < PROBE_PATTERN_MAX; p++) {
		json_object *x = json_object_array_get_idx(codec, p), *v;
		CHECK(json_object_object_get_ex(x, "mask", &v));
		CHECK_STR(json_object_get_string(v), hex[p]);
		CHECK(json_object_object_get_ex(x, "pattern", &v));
		CHECK_STR(json_object_get_string(v), probe_pattern_name(p));
	}
	json_object_put(o);
	topology_free(t);
}

static void codec_masks_on_7950x(void) {
	static const char *const four[] = { "0-1,16-17", "0-3", "0-7,16-23", "0,8,16,24", "0-1,8-9", "0-31" };
	static const char *const six[] = { "0-2,16-18", "0-5", "0-7,16-23", NULL, "0-2,8-10", "0-31" };
	static const char *const eight[] = { "0-3,16-19", "0-7", "0-7,16-23", "0-1,8-9,16-17,24-25", "0-3,8-11",
					     "0-31" };
	struct topology *t = test_topology_file("amd-ryzen9-7950x.xml");

	if (!t)
		return;
	check_masks(t, 4, four);
	check_masks(t, 6, six);
	check_masks(t, 8, eight);
	topology_free(t);
}

static void codec_masks_on_epyc_7742(void) {
	static const char *const four[] = { "0-1,128-129", "0-3", "0-3,128-131", "0,4,128,132", "0-1,4-5", "0-255" };
	struct topology *t = test_topology_file("amd-epyc-7742-2s.xml");

	if (!t)
		return;
	check_masks(t, 4, four);
	topology_free(t);
}

static void codec_masks_without_smt_have_no_smt_shapes(void) {
	static const char *const four[] = { NULL, "0-3", "0-7", NULL, "0-1,8-9", "0-127" };
	struct topology *t = test_topology_file("amd-epyc-7763-2s.xml");
	struct probe_mask m[PROBE_PATTERN_MAX];

	if (!t)
		return;
	check_masks(t, 4, four);
	probe_codec_masks(t, 4, m);
	CHECK(strstr(m[PROBE_CCX_SMT_PACKED].absent, "SMT") != NULL);
	CHECK(strstr(m[PROBE_CROSS_CCX_SMT_PACKED].absent, "SMT") != NULL);
	topology_free(t);
}

static void codec_masks_with_one_ccx_have_no_cross_shapes(void) {
	static const char *const four[] = { "0-1,8-9", "0-3", "0-15", NULL, NULL, "0-15" };
	struct topology *t = test_topology_file("amd-ryzen7-5800x.xml");
	struct probe_mask m[PROBE_PATTERN_MAX];

	if (!t)
		return;
	check_masks(t, 4, four);
	probe_codec_masks(t, 4, m);
	CHECK_STR(m[PROBE_CROSS_CCX_ONE_PER_CORE].absent, "one CCX");
	topology_free(t);
}

/* For N other than 4 the same shapes, scaled; those whose numbers do not
 * divide, or do not fit, are absent. */
static void codec_masks_scale_with_threads(void) {
	static const char *const two[] = { "0,8", "0-1", "0-3,8-11", NULL, "0,4", "0-15" };
	static const char *const three[] = { NULL, "0-2", "0-3,8-11", NULL, NULL, "0-15" };
	static const char *const eight[] = { "0-3,8-11", NULL, "0-3,8-11", "0-1,4-5,8-9,12-13", "0-7", "0-15" };
	static const char *const sixteen[] = { NULL, NULL, NULL, "0-15", NULL, "0-15" };
	static const char *const one[] = { NULL, "0", "0-3,8-11", NULL, NULL, "0-15" };
	struct topology *t = test_topology_file("amd-ryzen7-1800x.xml");
	struct probe_mask m[PROBE_PATTERN_MAX];

	if (!t)
		return;
	check_masks(t, 2, two);
	check_masks(t, 3, three);
	check_masks(t, 8, eight);
	check_masks(t, 16, sixteen);
	check_masks(t, 1, one);
	CHECK_INT(probe_codec_masks(t, 0, m), -EINVAL);
	CHECK_INT(probe_codec_masks(t, CPU_SETSIZE + 1, m), -EINVAL);
	topology_free(t);
}

/* A cross-CCX shape should measure the L3 boundary, not a NUMA or package
 * one: on a Threadripper in NUMA mode its two CCXs share a node. */
static void cross_ccx_masks_stay_in_one_numa_node(void) {
	static const char *const four[] = { "0-1,16-17", "0-3", "0-3,16-19", "0,4,16,20", "0-1,4-5", "0-31" };
	struct topology *t = test_topology_file("amd-threadripper-1950x-numa.xml");

	if (!t)
		return;
	check_masks(t, 4, four);
	topology_free(t);
}

/* What every present mask must be, on every machine of the directory. */
static void check_mask_shapes(const struct topology *t, unsigned n) {
	struct probe_mask m[PROBE_PATTERN_MAX];

	CHECK_INT(probe_codec_masks(t, n, m), 0);
	for (int p = 0; p < PROBE_PATTERN_MAX; p++) {
		unsigned in_ccx[64] = { 0 }, ccxs = 0, count = (unsigned)CPU_COUNT(&m[p].cpus);
		int failed_before = test_failed;
		if (!m[p].present)
			continue;
		CHECK(cpulist_is_subset(&m[p].cpus, &t->online));
		for (unsigned i = 0; i < t->n_ccx && i < 64; i++) {
			cpu_set_t both;
			CPU_AND(&both, &m[p].cpus, &t->ccx[i].cpus);
			in_ccx[i] = (unsigned)CPU_COUNT(&both);
			ccxs += in_ccx[i] > 0;
		}
		switch (p) {
		case PROBE_CCX_SMT_PACKED:
		case PROBE_CCX_ONE_PER_CORE:
			CHECK_INT(count, n);
			CHECK_INT(ccxs, 1);
			break;
		case PROBE_CCX_ALL:
			CHECK(count >= n);
			CHECK_INT(ccxs, 1);
			break;
		case PROBE_CROSS_CCX_SMT_PACKED:
		case PROBE_CROSS_CCX_ONE_PER_CORE:
			CHECK_INT(count, n);
			CHECK_INT(ccxs, 2);
			break;
		case PROBE_MACHINE:
			CHECK(CPU_EQUAL(&m[p].cpus, &t->online));
			break;
		}
		if (test_failed && !failed_before)
			printf("# ^ %s, %u threads, %s = %s\n", t->source, n, probe_pattern_name(p), fmt(&m[p].cpus));
	}
}

static void codec_masks_have_their_shape_on_every_machine(void) {
	static const char *const files[] = {
		"amd-ryzen7-1800x.xml", "amd-ryzen9-3950x.xml", "amd-ryzen9-5900x.xml", "amd-epyc-7551-2s.xml",
		"amd-epyc-7402-2s.xml", "amd-epyc-7a53-nps4.xml", "amd-epyc-7763-2s.xml", "intel-xeon-e5-2695v4-2s.xml",
		"intel-xeon-8480-2s-snc4.xml", "intel-core-i7-1370p-hybrid.xml", "arm-kunpeng920-2s.xml",
		"ibm-power9-2s.xml", "intel-core-i7-7600u.xml",
	};
	static const unsigned threads[] = { 1, 2, 3, 4, 6, 8, 12, 16 };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct topology *t = test_topology_file(files[i]);
		if (!t)
			continue;
		for (size_t k = 0; k < sizeof(threads) / sizeof(threads[0]); k++)
			check_mask_shapes(t, threads[k]);
		topology_free(t);
	}
}

/* pairs: one "a,b" per relation, or NULL where absent */
static void check_pairs(const struct topology *t, const cpu_set_t *usable, const char *const expected[PROBE_RELATION_MAX]) {
	struct probe_pair pairs[PROBE_RELATION_MAX];

	probe_pick_pairs(t, usable, pairs);
	for (int r = 0; r < PROBE_RELATION_MAX; r++) {
		char got[32] = "absent";
		if (pairs[r].present)
			snprintf(got, sizeof(got), "%u,%u", pairs[r].cpu[0], pairs[r].cpu[1]);
		else
			CHECK(pairs[r].absent && *pairs[r].absent);
		if (strcmp(got, expected[r] ? expected[r] : "absent") != 0) {
			printf("# %s: %s is %s, expected %s\n", t->source, probe_relation_name(r), got,
			       expected[r] ? expected[r] : "absent");
			test_failed = 1;
		}
		if (pairs[r].present)
			CHECK_INT(probe_relation_of(t, pairs[r].cpu[0], pairs[r].cpu[1]), r);
	}
}

static void relation_pairs_on_real_machines(void) {
	static const struct {
		const char *file;
		const char *pairs[PROBE_RELATION_MAX];
	} machines[] = {
		{ "amd-ryzen7-1800x.xml", { "0,0", "0,8", "0,1", "0,4", NULL, NULL } },
		{ "amd-ryzen7-5800x.xml", { "0,0", "0,8", "0,1", NULL, NULL, NULL } },
		{ "amd-epyc-7742-2s.xml", { "0,0", "0,128", "0,1", "0,4", NULL, "0,64" } },
		{ "amd-epyc-7551-2s.xml", { "0,0", "0,64", "0,1", "0,4", "0,8", "0,32" } },
		{ "amd-epyc-7763-2s.xml", { "0,0", NULL, "0,1", "0,8", NULL, "0,64" } },
		{ "amd-threadripper-1950x-numa.xml", { "0,0", "0,16", "0,1", "0,4", "0,8", NULL } },
		/* one NUMA node known, the other CCX has none: no difference shows */
		{ "amd-threadripper-1900x-numa.xml", { "0,0", "0,8", "0,1", "0,4", NULL, NULL } },
		{ "intel-xeon-e5-2695v4-2s.xml", { "0,0", "0,36", "0,1", NULL, NULL, "0,18" } },
		{ "ibm-power9-2s.xml", { "8,8", "8,9", "8,12", "8,16", NULL, "8,96" } },
	};

	for (size_t i = 0; i < sizeof(machines) / sizeof(machines[0]); i++) {
		struct topology *t = test_topology_file(machines[i].file);
		if (!t)
			continue;
		check_pairs(t, NULL, machines[i].pairs);
		topology_free(t);
	}
}

static void relation_pairs_reasons_name_what_is_missing(void) {
	struct topology *t = test_topology_file("amd-ryzen7-5800x.xml");
	struct probe_pair pairs[PROBE_RELATION_MAX];

	if (!t)
		return;
	probe_pick_pairs(t, NULL, pairs);
	CHECK_STR(pairs[PROBE_CROSS_CCX].absent, "one CCX");
	CHECK_STR(pairs[PROBE_CROSS_NUMA].absent, "one NUMA node");
	CHECK_STR(pairs[PROBE_CROSS_PACKAGE].absent, "one package");
	topology_free(t);
}

static void relation_pairs_keep_to_usable_cpus(void) {
	static const char *const expected[] = { "4,4", "4,12", "4,5", NULL, NULL, NULL };
	struct topology *t = test_topology_file("amd-ryzen7-1800x.xml");
	cpu_set_t usable;

	if (!t)
		return;
	CHECK_INT(cpulist_parse("4-5,12", &usable), 0);
	check_pairs(t, &usable, expected);
	topology_free(t);
}

static void relation_pairs_on_split_two_cpu_machine(void) {
	static const char *const expected[] = { "0,0", NULL, NULL, "0,1", NULL, NULL };
	struct topology *t = test_topology(SYNTHETIC_2CPU);

	if (!t)
		return;
	check_pairs(t, NULL, expected);
	topology_free(t);
}

static void relation_of_classifies_pairs(void) {
	struct topology *t = test_topology_file("amd-epyc-7551-2s.xml");

	if (!t)
		return;
	CHECK_INT(probe_relation_of(t, 5, 5), PROBE_SAME_CPU);
	CHECK_INT(probe_relation_of(t, 5, 69), PROBE_SMT);
	CHECK_INT(probe_relation_of(t, 69, 5), PROBE_SMT);
	CHECK_INT(probe_relation_of(t, 4, 7), PROBE_SAME_CCX);
	CHECK_INT(probe_relation_of(t, 3, 4), PROBE_CROSS_CCX);
	CHECK_INT(probe_relation_of(t, 7, 8), PROBE_CROSS_NUMA);
	CHECK_INT(probe_relation_of(t, 31, 32), PROBE_CROSS_PACKAGE);
	CHECK_INT(probe_relation_of(t, 0, 200), -EINVAL);
	topology_free(t);
}

static void names_round_trip(void) {
	for (int r = 0; r < PROBE_RELATION_MAX; r++)
		CHECK_INT(probe_relation_from_name(probe_relation_name(r)), r);
	for (int p = 0; p < PROBE_PATTERN_MAX; p++)
		CHECK_INT(probe_pattern_from_name(probe_pattern_name(p)), p);
	CHECK_INT(probe_relation_from_name("nope"), -EINVAL);
	CHECK_INT(probe_pattern_from_name(NULL), -EINVAL);
	CHECK(probe_relation_name(PROBE_RELATION_MAX) == NULL);
	CHECK_STR(probe_relation_label(PROBE_SAME_CCX), "same CCX");
	CHECK_STR(probe_relation_label(PROBE_SAME_CPU), "same CPU");
}

static void stat_is_median_with_spread(void) {
	double odd[] = { 5, 1, 4, 2, 3 }, even[] = { 10, 40, 20, 30 };
	struct probe_stat s;

	probe_stat_of(odd, 5, &s);
	CHECK(s.median == 3 && s.min == 1 && s.max == 5);
	CHECK_INT(s.n, 5);
	probe_stat_of(even, 4, &s);
	CHECK(s.median == 25 && s.min == 10 && s.max == 40);
	probe_stat_of(even, 0, &s);
	CHECK_INT(s.n, 0);
}

static void measurements_refuse_cpus_they_may_not_use(void) {
	double v[2] = { -1, -1 };

	CHECK_INT(probe_pipe(0, CPU_SETSIZE - 1, 4096, 1 << 20, &v[0]), -EINVAL);
	CHECK_INT(probe_pipe(CPU_SETSIZE - 1, 0, 4096, 1 << 20, &v[0]), -EINVAL);
	CHECK_INT(probe_pingpong(0, CPU_SETSIZE - 1, 100, 2, v), -EINVAL);
	CHECK_INT(probe_pingpong(CPU_SETSIZE - 1, 0, 100, 2, v), -EINVAL);
	CHECK_INT(probe_pipe(0, 0, 0, 1 << 20, &v[0]), -EINVAL);
	CHECK_INT(probe_pingpong(0, 0, 0, 2, v), -EINVAL);
	CHECK(v[0] == -1 && v[1] == -1);
}

static void measurements_give_plausible_figures(void) {
	double gib = 0, small_gib = 0, ns[3] = { 0 };

	CHECK_INT(probe_pipe(0, 0, 64 * 1024, 8 << 20, &gib), 0);
	CHECK(gib > 0.01 && gib < 1000);
	CHECK_INT(probe_pipe(0, 0, 64, 256 << 10, &small_gib), 0);
	/* small writes cost a system call per 64 bytes */
	CHECK(small_gib > 0 && small_gib < gib);
	CHECK_INT(probe_pingpong(0, 0, 200, 3, ns), 0);
	for (int i = 0; i < 3; i++)
		CHECK(ns[i] > 1 && ns[i] < 1e7);
}

/* Options small enough for a unit test. */
static void tiny_options(struct probe_options *o, enum probe_mode mode) {
	probe_options_init(o, mode);
	o->repeats = 3;
	o->pipe_bytes = 4 << 20;
	o->pipe_small_bytes = 256 << 10;
	o->pingpong_rounds = 500;
	o->matrix_rounds = 200;
	o->codec_frames = 2;
	o->codec_repeats = 1;
}

static json_object *get(json_object *o, const char *key) {
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v)) {
		printf("# no \"%s\" in %s\n", key, json_object_to_json_string(o));
		test_failed = 1;
	}
	return v;
}

static double num(json_object *o, const char *key) {
	json_object *v = get(o, key);

	CHECK(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int));
	return json_object_get_double(v);
}

static void check_stat_json(json_object *x, const char *key) {
	char k[64];
	double median = num(x, key), lo, hi;

	snprintf(k, sizeof(k), "%s_min", key);
	lo = num(x, k);
	snprintf(k, sizeof(k), "%s_max", key);
	hi = num(x, k);
	CHECK(median > 0);
	CHECK(lo <= median && median <= hi);
}

struct progress_log {
	unsigned calls, last_done, total;
	bool monotonic, ended;
	int cancel_at;
};

static int record_progress(const struct probe_progress *p, void *userdata) {
	struct progress_log *log = userdata;

	if (log->calls && p->done < log->last_done)
		log->monotonic = false;
	if (log->calls && p->total != log->total)
		log->monotonic = false;
	log->last_done = p->done;
	log->total = p->total;
	log->ended = p->done == p->total && strcmp(p->phase, "done") == 0;
	log->calls++;
	CHECK(p->step && *p->step);
	return log->cancel_at && (int)log->calls == log->cancel_at ? -ECANCELED : 0;
}

/* The quick calibration on this very machine: its relations are the ones its
 * topology has (on a 2-CPU VM with one L3: same CPU and same CCX only). */
static void quick_run_json_has_the_machines_relations(void) {
	struct progress_log log = { .monotonic = true };
	struct probe_results *res = NULL, *back = NULL;
	struct probe_options o;
	struct topology *t = test_topology("system");
	struct probe_plan plan;
	json_object *j, *rel, *again;
	cpu_set_t allowed;
	size_t present = 0;

	if (!t)
		return;
	sched_getaffinity(0, sizeof(allowed), &allowed);
	probe_plan(t, 4, &allowed, &plan);
	tiny_options(&o, PROBE_QUICK);
	o.progress = record_progress;
	o.userdata = &log;
	CHECK_INT(probe_run(t, &o, &res), 0);
	if (!res)
		goto out;
	CHECK(log.monotonic);
	CHECK(log.ended);
	CHECK(log.calls >= 3);

	j = probe_results_json(res);
	CHECK_INT(json_object_get_int(get(j, "version")), PROBE_JSON_VERSION);
	CHECK_STR(json_object_get_string(get(j, "mode")), "quick");
	CHECK_STR(json_object_get_string(get(j, "topology")), "system");
	CHECK(num(j, "duration_s") > 0);
	rel = get(j, "relations");
	for (int r = 0; r < PROBE_RELATION_MAX; r++) {
		json_object *x = json_object_array_get_idx(rel, present), *cpus;
		if (!plan.pairs[r].present)
			continue;
		present++;
		if (!x) {
			printf("# %s missing\n", probe_relation_name(r));
			test_failed = 1;
			continue;
		}
		CHECK_STR(json_object_get_string(get(x, "relation")), probe_relation_name(r));
		cpus = get(x, "cpus");
		CHECK_INT(json_object_array_length(cpus), 2);
		CHECK_INT(json_object_get_int(json_object_array_get_idx(cpus, 0)), plan.pairs[r].cpu[0]);
		CHECK_INT(json_object_get_int(json_object_array_get_idx(cpus, 1)), plan.pairs[r].cpu[1]);
		check_stat_json(x, "pipe_gib_s");
		check_stat_json(x, "pipe_small_mib_s");
		check_stat_json(x, "latency_ns");
		CHECK(num(x, "pipe_ratio") > 0 && num(x, "pipe_ratio") <= 1);
		CHECK(num(x, "latency_ratio") >= 1);
	}
	CHECK_INT(json_object_array_length(rel), present);
	if (t->n_pus == 2 && t->n_ccx == 1 && t->n_cores == 2) {
		CHECK_INT(json_object_array_length(rel), 2);
		CHECK_STR(json_object_get_string(get(json_object_array_get_idx(rel, 0), "relation")), "same-cpu");
		CHECK_STR(json_object_get_string(get(json_object_array_get_idx(rel, 1), "relation")), "same-ccx");
	} else {
		printf("# not a 2-CPU one-L3 machine: checked against its own topology only\n");
	}
	CHECK_INT(json_object_array_length(get(j, "codec")), 0);
	CHECK(!json_object_object_get_ex(j, "matrix", NULL));

	/* what a daemon worker sends, its parent reads back unchanged */
	CHECK_INT(probe_results_from_json(j, &back), 0);
	if (back) {
		again = probe_results_json(back);
		CHECK_STR(json_object_to_json_string(again), json_object_to_json_string(j));
		json_object_put(again);
	}
	json_object_put(j);
out:
	probe_results_free(res);
	probe_results_free(back);
	topology_free(t);
}

static void full_run_json_has_codec_patterns_and_matrix(void) {
	struct probe_results *res = NULL, *back = NULL;
	struct probe_options o;
	struct topology *t = test_topology("system");
	struct probe_plan plan;
	cpu_set_t allowed;
	json_object *j, *codec, *m, *rows, *again;
	size_t n = 0;

	if (!t)
		return;
	sched_getaffinity(0, sizeof(allowed), &allowed);
	tiny_options(&o, PROBE_FULL);
	o.threads = 2;
	o.matrix = true;
	probe_plan(t, o.threads, &allowed, &plan);
	CHECK_INT(probe_run(t, &o, &res), 0);
	if (!res)
		goto out;
	j = probe_results_json(res);
	CHECK_STR(json_object_get_string(get(j, "mode")), "full");
	codec = get(j, "codec");
	for (int p = 0; p < PROBE_PATTERN_MAX; p++) {
		json_object *x;
		if (!plan.masks[p].present)
			continue;
		x = json_object_array_get_idx(codec, n++);
		CHECK_STR(json_object_get_string(get(x, "pattern")), probe_pattern_name(p));
		CHECK(json_object_get_string(get(x, "cpus")) != NULL);
		CHECK(strncmp(json_object_get_string(get(x, "mask")), "0x", 2) == 0);
		CHECK_INT(json_object_get_int(get(x, "threads")), 2);
		if (json_object_get_string(get(x, "error"))) {
			printf("# %s: %s\n", probe_pattern_name(p), json_object_get_string(get(x, "error")));
			continue;
		}
		check_stat_json(x, "encode_fps");
		check_stat_json(x, "decode_fps");
		CHECK(num(x, "encode_ratio") > 0 && num(x, "encode_ratio") <= 1);
		CHECK(num(x, "decode_ratio") > 0 && num(x, "decode_ratio") <= 1);
	}
	CHECK(n > 0);
	CHECK_INT(json_object_array_length(codec), n);
	CHECK(num(j, "codec_compression") > 0.1 && num(j, "codec_compression") < 0.9);

	m = get(j, "matrix");
	rows = get(m, "latency_ns");
	CHECK_INT(json_object_array_length(get(m, "cpus")), CPU_COUNT(&allowed));
	CHECK_INT(json_object_array_length(rows), CPU_COUNT(&allowed));
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		for (size_t k = 0; k < json_object_array_length(row); k++) {
			json_object *v = json_object_array_get_idx(row, k), *w;
			if (i == k) {
				CHECK(v == NULL);
				continue;
			}
			w = json_object_array_get_idx(json_object_array_get_idx(rows, k), i);
			CHECK(json_object_get_double(v) > 0);
			CHECK(json_object_get_double(v) == json_object_get_double(w));
		}
	}
	CHECK_INT(probe_results_from_json(j, &back), 0);
	if (back) {
		CHECK_INT(back->matrix.n, res->matrix.n);
		CHECK(isnan(back->matrix.latency_ns[0]));
		again = probe_results_json(back);
		CHECK_STR(json_object_to_json_string(again), json_object_to_json_string(j));
		json_object_put(again);
	}
	json_object_put(j);
out:
	probe_results_free(res);
	probe_results_free(back);
	topology_free(t);
}

static void progress_callback_can_cancel(void) {
	struct progress_log log = { .monotonic = true, .cancel_at = 2 };
	struct probe_results *res = NULL;
	struct probe_options o;
	struct topology *t = test_topology("system");

	if (!t)
		return;
	tiny_options(&o, PROBE_QUICK);
	o.progress = record_progress;
	o.userdata = &log;
	CHECK_INT(probe_run(t, &o, &res), -ECANCELED);
	CHECK(res == NULL);
	CHECK_INT(log.calls, 2);
	topology_free(t);
}

static void topology_with_no_cpu_here_is_refused(void) {
	struct probe_results *res = NULL;
	struct probe_options o;
	/* PUs 1000-1003 exist in no test machine */
	struct topology *t = test_topology("synthetic:pack:1 l3:1 core:4 pu:1(indexes=1000,1001,1002,1003)");

	if (!t)
		return;
	tiny_options(&o, PROBE_QUICK);
	CHECK_INT(probe_run(t, &o, &res), -ENXIO);
	o.threads = 0;
	CHECK_INT(probe_run(t, &o, &res), -EINVAL);
	CHECK(res == NULL);
	topology_free(t);
}

static void results_from_bad_json_are_errors(void) {
	static const char *const bad[] = {
		"{}",
		"{\"version\": 2, \"topology\": \"system\", \"date\": \"x\", \"mode\": \"quick\", \"threads\": 4, "
		"\"duration_s\": 1, \"relations\": [], \"codec\": []}",
		"{\"version\": 1, \"topology\": \"system\", \"date\": \"x\", \"mode\": \"quick\", \"threads\": 4, "
		"\"duration_s\": 1, \"relations\": [{\"relation\": \"nope\"}], \"codec\": []}",
		"{\"version\": 1, \"topology\": \"system\", \"date\": \"x\", \"mode\": \"quick\", \"threads\": 4, "
		"\"duration_s\": 1, \"relations\": [{\"relation\": \"same-cpu\", \"cpus\": [0, 5000]}], \"codec\": []}",
		"{\"version\": 1, \"topology\": \"system\", \"date\": \"x\", \"mode\": \"quick\", \"threads\": 4, "
		"\"duration_s\": 1, \"relations\": [], \"codec\": [{\"pattern\": \"machine\", \"cpus\": \"x\"}]}",
		"{\"version\": 1, \"topology\": \"system\", \"date\": \"x\", \"mode\": \"quick\", \"threads\": 4, "
		"\"duration_s\": 1, \"relations\": [], \"codec\": [], \"matrix\": {\"cpus\": [0], \"ccx\": [0], "
		"\"latency_ns\": [[1, 2]]}}",
	};
	static const char good[] = "{\"version\": 1, \"topology\": \"system\", \"date\": \"x\", \"mode\": \"quick\", "
				   "\"threads\": 4, \"duration_s\": 1, \"relations\": [], \"codec\": []}";

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_object *o = json_tokener_parse(bad[i]);
		struct probe_results *r = NULL;
		CHECK(o != NULL);
		CHECK_INT(probe_results_from_json(o, &r), -EBADMSG);
		CHECK(r == NULL);
		json_object_put(o);
	}
	{
		json_object *o = json_tokener_parse(good);
		struct probe_results *r = NULL;
		CHECK_INT(probe_results_from_json(o, &r), 0);
		if (r)
			CHECK_INT(r->threads, 4);
		probe_results_free(r);
		json_object_put(o);
	}
}

TEST_MAIN(T(codec_masks_on_1800x_are_the_reference_table), T(codec_masks_on_7950x), T(codec_masks_on_epyc_7742),
	  T(codec_masks_without_smt_have_no_smt_shapes), T(codec_masks_with_one_ccx_have_no_cross_shapes),
	  T(codec_masks_scale_with_threads), T(cross_ccx_masks_stay_in_one_numa_node),
	  T(codec_masks_have_their_shape_on_every_machine), T(relation_pairs_on_real_machines),
	  T(relation_pairs_reasons_name_what_is_missing), T(relation_pairs_keep_to_usable_cpus),
	  T(relation_pairs_on_split_two_cpu_machine), T(relation_of_classifies_pairs), T(names_round_trip),
	  T(stat_is_median_with_spread), T(measurements_refuse_cpus_they_may_not_use),
	  T(measurements_give_plausible_figures), T(quick_run_json_has_the_machines_relations),
	  T(full_run_json_has_codec_patterns_and_matrix), T(progress_callback_can_cancel),
	  T(topology_with_no_cpu_here_is_refused), T(results_from_bad_json_are_errors))
