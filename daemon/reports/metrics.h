/* ccxd's figures in the Prometheus text exposition format (with HELP and
 * TYPE lines), for ccxctl metrics and for node_exporter's textfile collector
 * (metrics_file =). Formatting is a pure function of a plain struct, so that
 * tests can feed it figures of their own. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ccxd_status;

#define METRICS_STATES_MAX 16
/* Groups with gauges of their own: a bound on the series a scrape holds. */
#define METRICS_GROUPS_MAX 64

/* A count per state: label is the state's name as ccxctl status shows it. */
struct metrics_count {
	const char *label;
	uint64_t value;
};

struct metrics {
	const char *version, *mode, *topology;
	uint64_t start_time_usec;      /* CLOCK_REALTIME */
	bool polling;                  /* scanning /proc: no process events */

	struct metrics_count processes[METRICS_STATES_MAX];
	size_t n_processes;

	/* The automatic policy's groups and sampling; left out of the text
	 * when have_sampling is false (no sampler running). */
	bool have_sampling;
	struct metrics_count groups[METRICS_STATES_MAX];
	size_t n_groups;
	uint64_t sample_cycles;
	uint64_t sample_cycle_cpu_usec; /* CPU time of the last cycle */

	/* The automatic policy's moves, and what measuring them decided. */
	uint64_t moves, decisions_kept, decisions_reverted;
	uint64_t events, event_overflows, rescans;
	uint64_t pins, restores, pin_failures;
	uint64_t reloads, reload_failures;
	uint64_t readopted;
	uint64_t log_dropped;

	/* Each group, the first METRICS_GROUPS_MAX of them: what it is, where
	 * it is seated, and what its last experiment measured. */
	struct metrics_group {
		int id;                        /* its lowest pid */
		char programs[256];            /* its programs' file names, "pv|yes" (cut to fit) */
		const char *state;
		const char *seating;           /* "": not seated */
		int ccx;                       /* -1: none */
		double bytes_per_s;            /* its traffic in the last sample */
		bool measured;                 /* its last experiment's: */
		double gain, noise;
	} each_group[METRICS_GROUPS_MAX];
	size_t n_each_group;

	/* The probe figures the automatic policy ranks seatings by: medians per
	 * relation. Left out when there are none. */
	struct metrics_relation {
		const char *relation;          /* "same-cpu", "same-ccx", ... */
		double pipe_bytes_per_s;       /* large writes */
		double latency_s;              /* cache-line ping-pong */
	} relations[8];
	size_t n_relations;
};

/* The text for x, malloc'd into *ret. Returns 0 or -ENOMEM. */
int metrics_format(const struct metrics *x, char **ret);

/* The running daemon's figures, from its status (status.h). Strings point
 * into it: valid while it is. */
void metrics_collect(const struct ccxd_status *st, struct metrics *ret);

/* Replaces path with text atomically: a temporary file in the same directory,
 * renamed over it, so that a reader never sees half a file. Mode 0644, for
 * node_exporter's user. Returns 0 or -errno. */
int metrics_write_file(const char *path, const char *text);

