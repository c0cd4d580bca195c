#include "groups.h"
#include "test.h"

#define MIB (1024.0 * 1024.0)

static struct sampler_process procs[] = {
	{ .pid = 10, .cpu = 1.0 }, { .pid = 11, .cpu = 0.5 }, { .pid = 12, .cpu = 0.5 },
	{ .pid = 13, .cpu = 0.5 }, { .pid = 20, .cpu = 1.0 }, { .pid = 21, .cpu = 1.0 },
	{ .pid = 30, .cpu = 0.1 }, { .pid = 31, .cpu = 0.1 },
};

static void a_four_stage_pipeline_is_one_group(void) {
	struct sampler_channel ch[] = {
		{ CHANNEL_PIPE, 10, 11, 1, 100 * MIB },
		{ CHANNEL_PIPE, 11, 12, 2, 90 * MIB },
		{ CHANNEL_UNIX, 12, 13, 3, 80 * MIB },
	};
	struct sampler_result s = { .procs = procs, .n_procs = 4, .channels = ch, .n_channels = 3 };
	struct group *g;
	size_t n;

	CHECK_INT(groups_build(&s, MIB, &g, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(g[0].id, 10);
	CHECK_INT(g[0].n_pids, 4);
	CHECK_INT(g[0].n_channels, 3);
	CHECK(g[0].bytes_per_s > 269 * MIB && g[0].bytes_per_s < 271 * MIB);
	CHECK(g[0].cpu > 2.49 && g[0].cpu < 2.51);
	groups_free(g, n);
}

static void chatter_below_min_rate_joins_nothing(void) {
	struct sampler_channel ch[] = {
		{ CHANNEL_PIPE, 10, 11, 1, 100 * MIB },
		{ CHANNEL_TCP, 11, 20, 2, 0.5 * MIB },
		{ CHANNEL_TCP, 20, 21, 3, 50 * MIB },
		{ CHANNEL_UNIX, 30, 31, 4, 0.1 * MIB },
	};
	struct sampler_result s = { .procs = procs, .n_procs = 8, .channels = ch, .n_channels = 4 };
	struct group *g;
	size_t n;

	CHECK_INT(groups_build(&s, MIB, &g, &n), 0);
	CHECK_INT(n, 2);
	/* largest traffic first */
	CHECK_INT(g[0].id, 10);
	CHECK_INT(g[0].n_pids, 2);
	CHECK_INT(g[1].id, 20);
	CHECK_INT(g[1].pids[1], 21);
	groups_free(g, n);
}

static void processes_without_channels_are_no_group(void) {
	struct sampler_result s = { .procs = procs, .n_procs = 8 };
	struct group *g;
	size_t n;

	CHECK_INT(groups_build(&s, MIB, &g, &n), 0);
	CHECK_INT(n, 0);
	groups_free(g, n);
}

static void channels_to_unknown_processes_are_ignored(void) {
	struct sampler_channel ch[] = { { CHANNEL_PIPE, 10, 99, 1, 100 * MIB } };
	struct sampler_result s = { .procs = procs, .n_procs = 8, .channels = ch, .n_channels = 1 };
	struct group *g;
	size_t n;

	CHECK_INT(groups_build(&s, MIB, &g, &n), 0);
	CHECK_INT(n, 0);
	groups_free(g, n);
}

TEST_MAIN(T(a_four_stage_pipeline_is_one_group), T(chatter_below_min_rate_joins_nothing),
	  T(processes_without_channels_are_no_group), T(channels_to_unknown_processes_are_ignored))
