/* Groups from samples written as struct literals; the split on real
 * machines' topologies. */
#include <stdlib.h>
#include <unistd.h>

#include "groups.h"
#include "placer.h"
#include "test.h"
#include "fixture.h"
#include "topologies.h"

#define MIB (1024.0 * 1024.0)
static const struct groups_limits LIMITS = { MIB, GROUPS_DEFAULT_MIN_MESSAGE_RATE, NULL, 0 };
static const struct groups_limits BYTES_ONLY = { MIB, 0, NULL, 0 };
/* A channel estimated: no messages counted. */
#define CH(k, f, t, i, b) { .kind = (k), .from = (f), .to = (t), .inode = (i), .bytes_per_s = (b) }
/* A channel counted: its messages too. */
#define COUNTED(k, f, t, b, m) { .kind = (k), .from = (f), .to = (t), .bytes_per_s = (b), .messages_per_s = (m), .exact = true }

static struct sampler_process procs[] = {
	{ .pid = 10, .cpu = 1.0 }, { .pid = 11, .cpu = 0.5 }, { .pid = 12, .cpu = 0.5 },
	{ .pid = 13, .cpu = 0.5 }, { .pid = 20, .cpu = 1.0 }, { .pid = 21, .cpu = 1.0 },
	{ .pid = 30, .cpu = 0.1 }, { .pid = 31, .cpu = 0.1 },
};

static void a_four_stage_pipeline_is_one_group(void) {
	struct sampler_channel ch[] = {
		CH(CHANNEL_PIPE, 10, 11, 1, 100 * MIB),
		CH(CHANNEL_PIPE, 11, 12, 2, 90 * MIB),
		CH(CHANNEL_UNIX, 12, 13, 3, 80 * MIB),
	};
	struct sampler_result s = { .procs = procs, .n_procs = 4, .channels = ch, .n_channels = 3 };
	struct group *g;
	size_t n;

	CHECK_INT(groups_build(&s, &LIMITS, 0, &g, &n), 0);
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
		CH(CHANNEL_PIPE, 10, 11, 1, 100 * MIB),
		CH(CHANNEL_TCP, 11, 20, 2, 0.5 * MIB),
		CH(CHANNEL_TCP, 20, 21, 3, 50 * MIB),
		CH(CHANNEL_UNIX, 30, 31, 4, 0.1 * MIB),
	};
	struct sampler_result s = { .procs = procs, .n_procs = 8, .channels = ch, .n_channels = 4 };
	struct group *g;
	size_t n;

	CHECK_INT(groups_build(&s, &LIMITS, 0, &g, &n), 0);
	CHECK_INT(n, 2);
	/* largest traffic first */
	CHECK_INT(g[0].id, 10);
	CHECK_INT(g[0].n_pids, 2);
	CHECK_INT(g[1].id, 20);
	CHECK_INT(g[1].pids[1], 21);
	groups_free(g, n);
}

/* A ping-pong pair over two pipes moves few bytes and many messages; a
 * pair whose channels are weak alone but strong together; and chatter. */
static void a_pair_counts_by_its_messages_and_its_total(void) {
	struct sampler_channel ch[] = {
		COUNTED(CHANNEL_PIPE, 10, 11, 0.2 * MIB, 40000),
		COUNTED(CHANNEL_PIPE, 11, 10, 0.2 * MIB, 40000),
		CH(CHANNEL_TCP, 20, 21, 0, 0.6 * MIB),
		CH(CHANNEL_UNIX, 21, 20, 0, 0.6 * MIB),
		COUNTED(CHANNEL_UNIX, 30, 31, 0.1 * MIB, 100),
	};
	struct sampler_result s = { .procs = procs, .n_procs = 8, .channels = ch, .n_channels = 5 };
	struct group *g;
	size_t n;

	CHECK_INT(groups_build(&s, &LIMITS, 0, &g, &n), 0);
	CHECK_INT(n, 2);
	CHECK(n == 2 && g[0].id == 20 && g[0].n_channels == 2);
	CHECK(n == 2 && g[1].id == 10 && g[1].n_channels == 2);
	groups_free(g, n);
	/* By bytes alone, the ping-pong pair is chatter. */
	CHECK_INT(groups_build(&s, &BYTES_ONLY, 0, &g, &n), 0);
	CHECK_INT(n, 1);
	CHECK(n == 1 && g[0].id == 20);
	groups_free(g, n);
}

/* A pair that needs 1.5 CPUs where the largest CCX has 1: no group, and
 * both are said to be cut off, with the component they were cut from;
 * chatter is not. */
static void those_a_split_leaves_alone_are_told(void) {
	struct sampler_channel ch[] = {
		CH(CHANNEL_PIPE, 10, 11, 1, 100 * MIB),
		CH(CHANNEL_UNIX, 30, 31, 4, 0.1 * MIB),
	};
	struct sampler_result s = { .procs = procs, .n_procs = 8, .channels = ch, .n_channels = 2 };
	struct group_cut *cut;
	struct group *g;
	size_t n, n_cut;

	CHECK_INT(groups_build(&s, &LIMITS, 1.0, &g, &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(groups_cut(&s, &LIMITS, g, n, &cut, &n_cut), 0);
	CHECK_INT(n_cut, 2);
	CHECK(n_cut == 2 && cut[0].pid == 10 && cut[1].pid == 11);
	CHECK(n_cut == 2 && cut[0].component == 2 && cut[0].demand > 1.49 && cut[0].demand < 1.51);
	free(cut);
	groups_free(g, n);
	/* Where it fits, nothing is cut. */
	CHECK_INT(groups_build(&s, &LIMITS, 4.0, &g, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(groups_cut(&s, &LIMITS, g, n, &cut, &n_cut), 0);
	CHECK_INT(n_cut, 0);
	free(cut);
	groups_free(g, n);
}

/* A pair joined at the previous sample stays joined down to a quarter of
 * the thresholds, by bytes or by messages; another pair as weak (20 and
 * 21) does not join. */
static void a_group_holds_through_a_weak_sample(void) {
	struct sampler_channel ch[] = {
		CH(CHANNEL_PIPE, 10, 11, 1, 0.3 * MIB),
		CH(CHANNEL_PIPE, 20, 21, 2, 0.3 * MIB),
		COUNTED(CHANNEL_UNIX, 30, 31, 0, 100),
	};
	struct sampler_result s = { .procs = procs, .n_procs = 8, .channels = ch, .n_channels = 3 };
	pid_t before_a[] = { 10, 11 }, before_b[] = { 30, 31 };
	struct group previous[] = { { .id = 10, .pids = before_a, .n_pids = 2 }, { .id = 30, .pids = before_b, .n_pids = 2 } };
	struct groups_limits l = LIMITS;
	struct group *g;
	size_t n;

	l.previous = previous;
	l.n_previous = 2;
	CHECK_INT(groups_build(&s, &l, 0, &g, &n), 0);
	CHECK_INT(n, 2);
	CHECK(n == 2 && g[0].id == 10 && g[1].id == 30);
	groups_free(g, n);
	/* Below a quarter: gone. */
	ch[0].bytes_per_s = 0.2 * MIB;
	ch[2].messages_per_s = 40;
	CHECK_INT(groups_build(&s, &l, 0, &g, &n), 0);
	CHECK_INT(n, 0);
	groups_free(g, n);
}

static void processes_without_channels_are_no_group(void) {
	struct sampler_result s = { .procs = procs, .n_procs = 8 };
	struct group *g;
	size_t n;

	CHECK_INT(groups_build(&s, &LIMITS, 0, &g, &n), 0);
	CHECK_INT(n, 0);
	groups_free(g, n);
}

static void channels_to_unknown_processes_are_ignored(void) {
	struct sampler_channel ch[] = { CH(CHANNEL_PIPE, 10, 99, 1, 100 * MIB) };
	struct sampler_result s = { .procs = procs, .n_procs = 8, .channels = ch, .n_channels = 1 };
	struct group *g;
	size_t n;

	CHECK_INT(groups_build(&s, &LIMITS, 0, &g, &n), 0);
	CHECK_INT(n, 0);
	groups_free(g, n);
}

static void a_process_with_busy_threads_is_a_group_of_them(void) {
	struct sampler_process p[] = { { .pid = 40, .cpu = 2.5, .busy_threads = 3 }, { .pid = 41, .cpu = 1.0, .busy_threads = 1 } };
	struct sampler_channel ch[] = { CH(CHANNEL_THREADS, 40, 40, 0, 20 * MIB) };
	struct sampler_result s = { .procs = p, .n_procs = 2, .channels = ch, .n_channels = 1 };
	struct group *g;
	size_t n;

	CHECK_INT(groups_build(&s, &LIMITS, 0, &g, &n), 0);
	/* One busy thread (41) makes no group: only several do. */
	CHECK_INT(n, 1);
	CHECK_INT(g[0].id, 40);
	CHECK_INT(g[0].n_pids, 1);
	CHECK_INT(g[0].n_channels, 1);
	/* Its rate is its own I/O; its demand a CPU for each busy thread. */
	CHECK(g[0].bytes_per_s > 19.9 * MIB && g[0].bytes_per_s < 20.1 * MIB);
	CHECK(g[0].demand > 2.99 && g[0].demand < 3.01);
	groups_free(g, n);

	/* No I/O: still a group, with no rate (autoplace will not move it). */
	ch[0].bytes_per_s = 0;
	CHECK_INT(groups_build(&s, &LIMITS, 0, &g, &n), 0);
	CHECK_INT(n, 1);
	CHECK(g[0].bytes_per_s == 0);
	groups_free(g, n);
}

static void busy_threads_count_in_a_pipelines_demand(void) {
	struct sampler_process p[] = { { .pid = 10, .cpu = 1.0 }, { .pid = 41, .cpu = 1.5, .busy_threads = 4 } };
	struct sampler_channel ch[] = { CH(CHANNEL_PIPE, 10, 41, 1, 100 * MIB), CH(CHANNEL_THREADS, 41, 41, 0, 100 * MIB) };
	struct sampler_result s = { .procs = p, .n_procs = 2, .channels = ch, .n_channels = 2 };
	struct group *g;
	size_t n;

	CHECK_INT(groups_build(&s, &LIMITS, 0, &g, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(g[0].n_pids, 2);
	CHECK_INT(g[0].n_channels, 2);
	/* The threads' bytes are the pipe's: counted once. */
	CHECK(g[0].bytes_per_s > 99.9 * MIB && g[0].bytes_per_s < 100.1 * MIB);
	CHECK(g[0].demand > 4.99 && g[0].demand < 5.01);
	CHECK(g[0].cpu > 2.49 && g[0].cpu < 2.51);
	groups_free(g, n);
}

/* A pipeline of n stages of one CPU each; stage i writes rate[i] to i + 1. */
static struct sampler_result *pipeline(size_t n, const double *rate) {
	struct sampler_result *s = calloc(1, sizeof(*s));

	s->procs = calloc(n, sizeof(*s->procs));
	s->channels = calloc(n, sizeof(*s->channels));
	s->n_procs = n;
	for (size_t i = 0; i < n; i++)
		s->procs[i] = (struct sampler_process){ .pid = (pid_t)(100 + i), .cpu = 1.0 };
	for (size_t i = 0; i + 1 < n; i++)
		s->channels[s->n_channels++] = (struct sampler_channel)CH(CHANNEL_PIPE, (pid_t)(100 + i), (pid_t)(101 + i),
									 i + 1, rate[i] * MIB);
	return s;
}

static void free_pipeline(struct sampler_result *s) {
	free(s->procs);
	free(s->channels);
	free(s);
}

/* Twelve busy stages need 12 CPUs; a CCX of the 1800X has 8 (4 cores, SMT).
 * The weakest link is in the middle: two pieces of six, one on each CCX. */
static void a_pipeline_larger_than_a_ccx_is_cut_at_its_weakest_link(void) {
	struct topology *t = test_topology_file("amd-ryzen7-1800x.xml");
	double rate[11] = { 90, 80, 95, 85, 70, 5, 60, 99, 75, 65, 88 }, demand[2];
	struct sampler_result *s = pipeline(12, rate);
	struct group *g;
	size_t n;
	int ccx[2];

	CHECK(placer_largest_ccx(t) == 8.0);
	CHECK_INT(groups_build(s, &LIMITS, placer_largest_ccx(t), &g, &n), 0);
	CHECK_INT(n, 2);
	for (size_t i = 0; i < n; i++) {
		CHECK_INT(g[i].n_pids, 6);
		CHECK_INT(g[i].n_channels, 5);
		CHECK(g[i].split);
		demand[i] = g[i].demand;
	}
	/* Largest traffic first: stages 106-111 carry 387 MiB/s, 100-105 420. */
	CHECK_INT(g[0].id, 100);
	CHECK_INT(g[1].id, 106);
	CHECK_INT(placer_groups(t, demand, 2, NULL, NULL, ccx), 2);
	CHECK(ccx[0] >= 0 && ccx[1] >= 0 && ccx[0] != ccx[1]);
	/* Without a limit it stays whole, and fits no CCX. */
	groups_free(g, n);
	CHECK_INT(groups_build(s, &LIMITS, 0, &g, &n), 0);
	CHECK_INT(n, 1);
	CHECK(!g[0].split);
	CHECK_INT(placer_groups(t, &g[0].demand, 1, NULL, NULL, ccx), 0);
	groups_free(g, n);
	free_pipeline(s);
	topology_free(t);
}

/* Links that weaken along the pipeline: cutting the weakest, one at a time,
 * sheds the tail until the head fits; a stage cut off alone is no group. */
static void cuts_go_on_until_every_piece_fits(void) {
	struct topology *t = test_topology_file("amd-ryzen7-1800x.xml");
	double rate[11] = { 110, 100, 90, 80, 70, 60, 50, 40, 30, 20, 10 };
	struct sampler_result *s = pipeline(12, rate);
	size_t live[11];
	bool dropped[11];
	struct group *g;
	size_t n;

	for (size_t i = 0; i < 11; i++)
		live[i] = i;
	CHECK_INT(groups_split_channels(s, live, 11, placer_largest_ccx(t), dropped), 4);
	for (size_t i = 0; i < 11; i++)
		CHECK_INT(dropped[i], i >= 7);
	CHECK_INT(groups_build(s, &LIMITS, placer_largest_ccx(t), &g, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(g[0].n_pids, 8);
	CHECK(g[0].demand <= 8.0);
	groups_free(g, n);
	free_pipeline(s);
	topology_free(t);
}

/* On an EPYC 7763 a CCX has 8 cores and no SMT: a 3-stage pipeline with the
 * weakest links of all fits and is never cut, next to one that is. */
static void what_fits_is_never_cut(void) {
	struct topology *t = test_topology_file("amd-epyc-7763-2s.xml");
	double rate[11] = { 50, 50, 50, 50, 1.5, 50, 50, 50, 50, 50, 50 };
	struct sampler_result *s = pipeline(12, rate);
	struct group *g;
	size_t n;

	/* Stages 100-102 alone (no stream from 102 to 103), joined by links
	 * weaker than any in the nine stages 103-111. */
	s->channels[2].bytes_per_s = 0;
	s->channels[0].bytes_per_s = 1.2 * MIB;
	s->channels[1].bytes_per_s = 1.1 * MIB;
	CHECK(placer_largest_ccx(t) == 8.0);
	CHECK_INT(groups_build(s, &LIMITS, placer_largest_ccx(t), &g, &n), 0);
	/* 100-102 fits and keeps its weak links; the nine lose their weakest,
	 * 104>105 (1.5 MiB/s): 103-104 and 105-111. */
	CHECK_INT(n, 3);
	for (size_t i = 0; i < n; i++) {
		if (g[i].id == 100) {
			CHECK_INT(g[i].n_pids, 3);
			CHECK(!g[i].split);
		} else {
			CHECK(g[i].split);
			CHECK_INT(g[i].n_pids, g[i].id == 103 ? 2 : 7);
		}
	}
	groups_free(g, n);
	free_pipeline(s);
	topology_free(t);
}

/* A single process needing more than any CCX cannot be cut: it stays one
 * group, and the placer leaves it alone. */
static void one_process_too_large_for_any_ccx_stays_whole(void) {
	struct topology *t = test_topology_file("amd-ryzen7-1800x.xml");
	struct sampler_process p[] = { { .pid = 50, .cpu = 9.0, .busy_threads = 12 } };
	struct sampler_channel ch[] = { CH(CHANNEL_THREADS, 50, 50, 0, 10 * MIB) };
	struct sampler_result s = { .procs = p, .n_procs = 1, .channels = ch, .n_channels = 1 };
	struct group *g;
	size_t n;
	int ccx;

	CHECK_INT(groups_build(&s, &LIMITS, placer_largest_ccx(t), &g, &n), 0);
	CHECK_INT(n, 1);
	CHECK(g[0].demand > 11.99);
	CHECK_INT(placer_groups(t, &g[0].demand, 1, NULL, NULL, &ccx), 0);
	CHECK_INT(ccx, -1);
	groups_free(g, n);
	topology_free(t);
}

/* Where the kernel's cache-aware balancing is on, as a fixture debugfs tree
 * says it, one process's busy threads are left to it; separate processes
 * that talk are still ccxd's. Off, or not known, both are ccxd's. */
static void one_process_threads_are_the_kernels_where_it_balances_by_cache(void) {
	char root[PATH_MAX], enabled[PATH_MAX + 64];
	struct sampler_process p[] = { { .pid = 40, .cpu = 2.5, .busy_threads = 3 }, { .pid = 60, .cpu = 0.5 },
				       { .pid = 61, .cpu = 0.5 } };
	struct sampler_channel ch[] = { CH(CHANNEL_THREADS, 40, 40, 0, 20 * MIB), CH(CHANNEL_PIPE, 60, 61, 0, 50 * MIB) };
	struct sampler_result s = { .procs = p, .n_procs = 3, .channels = ch, .n_channels = 2 };
	static const struct { const char *enabled; int llc_balancing; } cases[] = { { "1\n", 1 }, { "0\n", 0 }, { NULL, -1 } };
	struct group *g;
	size_t n;

	fixture_root(root);
	snprintf(enabled, sizeof(enabled), "%s/sys/kernel/debug/sched/llc_balancing/enabled", root);
	CHECK_INT(groups_build(&s, &LIMITS, 0, &g, &n), 0);
	CHECK_INT(n, 2);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct topology *t = NULL;
		if (cases[i].enabled)
			fixture_file(root, "/sys/kernel/debug/sched/llc_balancing/enabled", cases[i].enabled);
		else
			CHECK_INT(unlink(enabled), 0);
		/* The running system's topology, its /sys read from the fixture. */
		CHECK_INT(topology_load_at("system", root, &t, NULL), 0);
		if (!t)
			continue;
		CHECK_INT(t->llc_balancing, cases[i].llc_balancing);
		for (size_t k = 0; k < n; k++)
			CHECK(groups_for_the_kernel(&g[k], t->llc_balancing) == (cases[i].llc_balancing == 1 && g[k].id == 40));
		topology_free(t);
	}
	groups_free(g, n);
	fixture_remove(root);
}

/* Demand, from real pairs (figures as ccxd's status gave them on a 2-vCPU
 * guest, each pair running apart), against one CPU per CCX: two processes
 * that take turns need one CPU between them, whatever each used apart;
 * a stream's two ends, or two busy processes that seldom talk, add up. */
static void a_pair_that_takes_turns_needs_one_cpu(void) {
	/* A TCP request/response pair, one request in flight: 51,500 requests
	 * a second, 64 bytes each way, each end half a CPU apart. */
	struct sampler_process tcp[] = { { .pid = 70, .cpu = 0.52, .wakeups_per_s = 51500 },
					 { .pid = 71, .cpu = 0.51, .wakeups_per_s = 51500 } };
	struct sampler_channel tcp_ch[] = { { .kind = CHANNEL_TCP, .from = 70, .to = 71, .bytes_per_s = 103000 * 64.0,
					      .messages_per_s = 103000, .both = true, .exact = true } };
	/* perf bench sched pipe, where the kernel refuses the pipe counters:
	 * two pipes both ends hold, 4-byte messages. */
	struct sampler_process pp[] = { { .pid = 72, .cpu = 0.37, .wakeups_per_s = 21144 },
					{ .pid = 73, .cpu = 0.33, .wakeups_per_s = 21126 } };
	struct sampler_channel pp_ch[] = { { .kind = CHANNEL_PIPE, .from = 72, .to = 73, .inode = 5, .bytes_per_s = 186245,
					     .messages_per_s = 10563, .shared = true } };
	struct sampler_result s = { .procs = tcp, .n_procs = 2, .channels = tcp_ch, .n_channels = 1 };
	struct group_cut *cut;
	struct group *g;
	size_t n, n_cut;

	CHECK(groups_take_turns(&tcp_ch[0]));
	CHECK_INT(groups_build(&s, &LIMITS, 1.0, &g, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(g[0].n_pids, 2);
	CHECK(!g[0].split);
	CHECK(g[0].demand > 0.99 && g[0].demand < 1.01);
	CHECK(g[0].cpu > 1.02);
	CHECK(g[0].turns);
	CHECK_INT(groups_cut(&s, &LIMITS, g, n, &cut, &n_cut), 0);
	CHECK_INT(n_cut, 0);
	free(cut);
	groups_free(g, n);

	/* Below one CPU, the sum is what it needs. */
	s = (struct sampler_result){ .procs = pp, .n_procs = 2, .channels = pp_ch, .n_channels = 1 };
	CHECK_INT(groups_build(&s, &LIMITS, 1.0, &g, &n), 0);
	CHECK_INT(n, 1);
	CHECK(g[0].demand > 0.69 && g[0].demand < 0.71);
	groups_free(g, n);
}

static void pairs_that_run_at_once_add_up(void) {
	/* A Unix stream, one way, 64 KiB writes: both ends busy at once. */
	struct sampler_process p[] = { { .pid = 80, .cpu = 0.6, .wakeups_per_s = 4000 },
				       { .pid = 81, .cpu = 0.6, .wakeups_per_s = 4000 } };
	struct sampler_channel ch[] = { COUNTED(CHANNEL_UNIX, 80, 81, 500 * MIB, 8000) };
	struct sampler_result s = { .procs = p, .n_procs = 2, .channels = ch, .n_channels = 1 };
	struct group_cut *cut;
	struct group *g;
	size_t n, n_cut;

	CHECK(!groups_take_turns(&ch[0]));
	CHECK_INT(groups_build(&s, &LIMITS, 1.0, &g, &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(groups_cut(&s, &LIMITS, g, n, &cut, &n_cut), 0);
	CHECK_INT(n_cut, 2);
	CHECK(n_cut == 2 && cut[0].demand > 1.19);
	free(cut);
	groups_free(g, n);

	/* Small messages both ways, but two busy processes that seldom sleep:
	 * they do not wait for each other. */
	ch[0] = (struct sampler_channel){ .kind = CHANNEL_UNIX, .from = 80, .to = 81, .bytes_per_s = 400 * 64.0,
					  .messages_per_s = 400, .both = true, .exact = true };
	p[0].wakeups_per_s = p[1].wakeups_per_s = 20;
	CHECK(groups_take_turns(&ch[0]));
	CHECK_INT(groups_build(&s, &LIMITS, 1.0, &g, &n), 0);
	CHECK_INT(n, 0);
	groups_free(g, n);

	/* Nor do they when one of them has two busy threads. */
	p[0].wakeups_per_s = p[1].wakeups_per_s = 400;
	p[0].busy_threads = 2;
	CHECK_INT(groups_build(&s, &LIMITS, 4.0, &g, &n), 0);
	CHECK_INT(n, 1);
	CHECK(n == 1 && g[0].demand > 2.59);
	CHECK(n == 1 && !g[0].turns);
	groups_free(g, n);
}

/* pgbench -c1 -S and its PostgreSQL backend, kept on one CPU (figures from
 * ccxd's sample on the 2-vCPU guest): the backend is preempted by
 * pgbench's wake-up at each answer rather than sleeping, so it sleeps 250
 * times a second and switches 58,000; the two use the CPU whole between
 * them, a little over it in some samples. They still take turns, and need
 * one CPU: a one-CPU CCX holds them in every sample. Without those
 * switches (two busy processes that seldom give up the CPU) they add up. */
static void a_pair_seated_on_one_cpu_still_takes_turns(void) {
	struct sampler_process p[] = { { .pid = 7346, .cpu = 0.226, .wakeups_per_s = 58283, .switches_per_s = 58460 },
				       { .pid = 7352, .cpu = 0.778, .wakeups_per_s = 258, .switches_per_s = 58463 } };
	struct sampler_channel c[] = { { .kind = CHANNEL_UNIX, .from = 7352, .to = 7346, .bytes_per_s = 7360345,
					 .messages_per_s = 115119, .both = true, .exact = true } };
	struct sampler_result s = { .procs = p, .n_procs = 2, .channels = c, .n_channels = 1 };
	struct group *g;
	size_t n;

	CHECK_INT(groups_build(&s, &LIMITS, 1.0, &g, &n), 0);
	CHECK_INT(n, 1);
	CHECK(n == 1 && g[0].turns && g[0].demand <= 1.0);
	groups_free(g, n);

	p[1].switches_per_s = 300;   /* preempted only at the end of its slices */
	CHECK_INT(groups_build(&s, &LIMITS, 1.0, &g, &n), 0);
	CHECK_INT(n, 0);
	groups_free(g, n);
}

/* A kept pair whose calls the kernel counts is thinned while it makes
 * many (the TCP pair of a_pair_that_takes_turns_needs_one_cpu, kept on
 * one CPU: 190,000 round trips a second), and counted in full again once
 * it makes few; between the two thresholds it stays as it was. Estimated
 * channels, and groups not kept, are never thinned. */
static void a_busy_kept_pair_is_thinned(void) {
	struct sampler_process p[] = { { .pid = 70, .cpu = 0.5 }, { .pid = 71, .cpu = 0.5 } };
	struct sampler_channel c[] = { { .kind = CHANNEL_TCP, .from = 70, .to = 71, .bytes_per_s = 380000 * 64.0,
					 .messages_per_s = 380000, .both = true, .exact = true } };
	struct sampler_result s = { .procs = p, .n_procs = 2, .channels = c, .n_channels = 1 };
	struct group *g;
	size_t n;

	CHECK_INT(groups_build(&s, &LIMITS, 1.0, &g, &n), 0);
	CHECK_INT(n, 1);
	if (n != 1)
		return;
	CHECK(groups_thin(&g[0], &s, true, false));
	CHECK(!groups_thin(&g[0], &s, false, false));   /* not kept: measuring, or re-checked */
	CHECK(!groups_thin(&g[0], &s, false, true));
	c[0].messages_per_s = 7000;   /* between the thresholds */
	CHECK(groups_thin(&g[0], &s, true, true));
	CHECK(!groups_thin(&g[0], &s, true, false));
	c[0].messages_per_s = 3000;
	CHECK(!groups_thin(&g[0], &s, true, true));
	c[0].messages_per_s = 380000;
	c[0].exact = false;   /* estimated from /proc: nothing to thin */
	CHECK(!groups_thin(&g[0], &s, true, false));
	groups_free(g, n);
}

/* A group's signature tells its processes apart, whatever else changed. */
static void a_signature_names_the_processes(void) {
	pid_t a[] = { 70, 71 }, b[] = { 70, 72 }, c[] = { 70 };
	struct group x = { .pids = a, .n_pids = 2, .bytes_per_s = 1 }, y = x, z = x, w = x;

	y.bytes_per_s = 2;
	z.pids = b;
	w.pids = c;
	w.n_pids = 1;
	CHECK(groups_signature(&x) == groups_signature(&y));
	CHECK(groups_signature(&x) != groups_signature(&z));
	CHECK(groups_signature(&x) != groups_signature(&w));
}

/* Whose processes a group holds: one user's; root's with others'; several
 * users' each of whom sent to another's; or a stream one party alone sent
 * (or a socket whose sender is not known). */
static void whose_processes_and_who_sent(void) {
	pid_t pids[] = { 10, 20, 30 };
	size_t ch[] = { 0, 1 };
	struct sampler_channel channels[2];
	struct sampler_result s = { .channels = channels, .n_channels = 2 };
	struct group g = { .pids = pids, .n_pids = 2, .channels = ch, .n_channels = 1 };
	uid_t one[] = { 1000, 1000, 1000 }, root[] = { 65534, 0, 65534 }, two[] = { 65534, 1, 1 };

	/* 10 asks, 20 answers: a counted channel that went both ways. */
	channels[0] = (struct sampler_channel){ .kind = CHANNEL_TCP, .from = 10, .to = 20, .bytes_per_s = 1e6,
						.exact = true, .both = true };
	CHECK_INT(groups_users(&g, &s, one), GROUPS_ONE_USER);
	CHECK_INT(groups_users(&g, &s, root), GROUPS_WITH_ROOT);
	CHECK_INT(groups_users(&g, &s, two), GROUPS_USERS_ANSWER);
	/* One way only: nobody's stream into another user's process. */
	channels[0].both = false;
	CHECK_INT(groups_users(&g, &s, two), GROUPS_ONE_SIDED);
	/* An estimated socket does not say who sent. */
	channels[0].exact = false;
	channels[0].kind = CHANNEL_UNIX;
	CHECK_INT(groups_users(&g, &s, two), GROUPS_ONE_SIDED);
	/* Pipes do, one each way. */
	channels[0] = (struct sampler_channel){ .kind = CHANNEL_PIPE, .from = 10, .to = 20, .bytes_per_s = 1e6 };
	channels[1] = (struct sampler_channel){ .kind = CHANNEL_PIPE, .from = 20, .to = 10, .bytes_per_s = 1e6 };
	g.n_channels = 2;
	CHECK_INT(groups_users(&g, &s, two), GROUPS_USERS_ANSWER);
	/* A user's processes answer through any of them; a channel between one
	 * user's own says nothing of the other. */
	g.n_pids = 3;
	channels[1] = (struct sampler_channel){ .kind = CHANNEL_PIPE, .from = 30, .to = 20, .bytes_per_s = 1e6 };
	CHECK_INT(groups_users(&g, &s, two), GROUPS_ONE_SIDED);
	channels[1] = (struct sampler_channel){ .kind = CHANNEL_PIPE, .from = 30, .to = 10, .bytes_per_s = 1e6 };
	CHECK_INT(groups_users(&g, &s, two), GROUPS_USERS_ANSWER);
	/* A process whose owner is not known is a user of its own, who must
	 * answer too. */
	two[2] = (uid_t)-1;
	CHECK_INT(groups_users(&g, &s, two), GROUPS_ONE_SIDED);   /* 20's user sent nothing */
	channels[0] = (struct sampler_channel){ .kind = CHANNEL_PIPE, .from = 20, .to = 30, .bytes_per_s = 1e6 };
	CHECK_INT(groups_users(&g, &s, two), GROUPS_ONE_SIDED);   /* now 10 (nobody) sent nothing */
	channels[1] = (struct sampler_channel){ .kind = CHANNEL_TCP, .from = 30, .to = 10, .bytes_per_s = 1e6,
						.exact = true, .both = true };
	CHECK_INT(groups_users(&g, &s, two), GROUPS_USERS_ANSWER);
}

TEST_MAIN(T(a_process_with_busy_threads_is_a_group_of_them), T(busy_threads_count_in_a_pipelines_demand),
	  T(a_pipeline_larger_than_a_ccx_is_cut_at_its_weakest_link), T(cuts_go_on_until_every_piece_fits),
	  T(what_fits_is_never_cut), T(one_process_too_large_for_any_ccx_stays_whole),
	  T(a_four_stage_pipeline_is_one_group), T(a_pair_counts_by_its_messages_and_its_total),
	  T(chatter_below_min_rate_joins_nothing), T(those_a_split_leaves_alone_are_told),
	  T(a_group_holds_through_a_weak_sample),
	  T(processes_without_channels_are_no_group), T(channels_to_unknown_processes_are_ignored),
	  T(one_process_threads_are_the_kernels_where_it_balances_by_cache),
	  T(a_pair_that_takes_turns_needs_one_cpu), T(pairs_that_run_at_once_add_up),
	  T(a_pair_seated_on_one_cpu_still_takes_turns), T(a_busy_kept_pair_is_thinned),
	  T(a_signature_names_the_processes), T(whose_processes_and_who_sent))
