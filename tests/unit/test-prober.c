/* The daemon's probe: the topology fingerprint that its cache is keyed by,
 * and the cache itself. (The seating order that the figures give:
 * test-seatings.c.) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prober.h"
#include "test.h"

static void fingerprint(const char *spec, char fp[PROBER_FINGERPRINT_SIZE]) {
	struct topology *t = NULL;

	if (topology_load(spec, &t, NULL) < 0)
		SKIP_TEST("synthetic topologies need hwloc");
	prober_fingerprint(t, fp);
	topology_free(t);
}

static void fingerprint_is_the_same_for_the_same_topology(void) {
	char a[PROBER_FINGERPRINT_SIZE], b[PROBER_FINGERPRINT_SIZE];

	fingerprint("synthetic:pack:1 l3:2 core:1 pu:1", a);
	fingerprint("synthetic:pack:1 l3:2 core:1 pu:1", b);
	CHECK_STR(a, b);
	CHECK_INT((int)strlen(a), 16);
	CHECK(strspn(a, "0123456789abcdef") == 16);
}

static void fingerprint_changes_with_the_ccxs(void) {
	char two_ccx[PROBER_FINGERPRINT_SIZE], one_ccx[PROBER_FINGERPRINT_SIZE], smt[PROBER_FINGERPRINT_SIZE];

	fingerprint("synthetic:pack:1 l3:2 core:1 pu:1", two_ccx);
	fingerprint("synthetic:pack:1 l3:1 core:2 pu:1", one_ccx);
	fingerprint("synthetic:pack:1 l3:1 core:1 pu:2", smt);
	CHECK(strcmp(two_ccx, one_ccx) != 0);
	CHECK(strcmp(one_ccx, smt) != 0);
	CHECK(strcmp(two_ccx, smt) != 0);
}

/* Two cores of one PU each in one CCX, as plain structs. */
static void make_topology(struct topology *t, struct topology_ccx *ccx, struct topology_core cores[2],
			  const char *source, uint64_t cache_size) {
	memset(cores, 0, 2 * sizeof(*cores));
	CPU_SET(0, &cores[0].pus);
	CPU_SET(1, &cores[1].pus);
	*ccx = (struct topology_ccx){ .n_cores = 2, .n_pus = 2, .cores = cores, .cache_level = 3,
				      .cache_size = cache_size, .numa_node = 0, .package = 0, .usable = true };
	CPU_SET(0, &ccx->cpus);
	CPU_SET(1, &ccx->cpus);
	*t = (struct topology){ .source = (char *)source, .online = ccx->cpus, .n_packages = 1, .n_numa = 1,
				.n_cores = 2, .n_pus = 2, .n_ccx = 1, .ccx = ccx };
}

static void fingerprint_ignores_the_spec_but_not_the_cache(void) {
	struct topology a, b, c;
	struct topology_ccx ca, cb, cc;
	struct topology_core ka[2], kb[2], kc[2];
	char fa[PROBER_FINGERPRINT_SIZE], fb[PROBER_FINGERPRINT_SIZE], fc[PROBER_FINGERPRINT_SIZE];

	make_topology(&a, &ca, ka, "system", 16 << 20);
	make_topology(&b, &cb, kb, "xml:/tmp/this-machine.xml", 16 << 20);
	make_topology(&c, &cc, kc, "system", 32 << 20);
	prober_fingerprint(&a, fa);
	prober_fingerprint(&b, fb);
	prober_fingerprint(&c, fc);
	CHECK_STR(fa, fb);
	CHECK(strcmp(fa, fc) != 0);
	/* the same PUs, paired into one core: SMT siblings now */
	CPU_SET(1, &ka[0].pus);
	ca.n_cores = 1;
	prober_fingerprint(&a, fc);
	CHECK(strcmp(fa, fc) != 0);
}

/* ---- the cache ------------------------------------------------------------- */

#define REL(r, a, b, med, lo, hi) \
	{ .relation = (r), .cpu = { (a), (b) }, .pipe_gib_s = { (med), (lo), (hi), 3 }, \
	  .pipe_small_mib_s = { 100, 90, 110, 3 }, .latency_ns = { 40, 38, 45, 3 } }

static void cache_round_trip(void) {
	struct probe_results r = { .topology = "system", .date = "2025-01-02T03:04:05Z", .mode = PROBE_QUICK,
				   .threads = 4, .n_relations = 2,
				   .relations = { REL(PROBE_SAME_CPU, 0, 0, 4.7, 4.5, 5.0),
						  REL(PROBE_SAME_CCX, 0, 1, 2.0, 1.8, 2.2) } };
	char dir[] = "/tmp/ccxd-prober.XXXXXX", sub[64], path[128];
	json_object *j, *back = NULL;
	uint64_t when = 0;
	char *source = NULL;

	/* what the plan had, as probe_run leaves it */
	for (int i = 0; i < PROBE_RELATION_MAX; i++)
		r.plan.pairs[i] = (struct probe_pair){ .present = i == PROBE_SAME_CPU || i == PROBE_SAME_CCX,
							.absent = "not on this machine" };
	for (int i = 0; i < PROBE_PATTERN_MAX; i++)
		r.plan.masks[i].absent = "quick: no codec";
	CHECK(mkdtemp(dir) != NULL);
	snprintf(sub, sizeof(sub), "%s/state", dir);
	j = probe_results_json(&r);
	CHECK_INT(prober_cache_read(sub, "0123456789abcdef", &back, &when, &source), -ENOENT);
	CHECK_INT(prober_cache_write(sub, "0123456789abcdef", "system", "calibration", 1234567, j), 0);
	CHECK_INT(prober_cache_read(sub, "0123456789abcdef", &back, &when, &source), 0);
	CHECK(when == 1234567);
	CHECK_STR(source, "calibration");
	CHECK(json_object_equal(back, j));
	json_object_put(back);
	free(source);
	CHECK_INT(prober_cache_read(sub, "fedcba9876543210", &back, &when, &source), -ESTALE);

	snprintf(path, sizeof(path), "%s/%s", sub, PROBER_CACHE_FILE);
	FILE *f = fopen(path, "w");
	fputs("{\"version\": 1, \"fingerprint\": \"0123456789abcdef\", \"results\": {\"version\": 1}}", f);
	fclose(f);
	CHECK_INT(prober_cache_read(sub, "0123456789abcdef", &back, &when, &source), -EBADMSG);
	unlink(path);
	rmdir(sub);
	rmdir(dir);
	json_object_put(j);
}

TEST_MAIN(T(fingerprint_is_the_same_for_the_same_topology), T(fingerprint_changes_with_the_ccxs),
	  T(fingerprint_ignores_the_spec_but_not_the_cache), T(cache_round_trip))
