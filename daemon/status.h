/* What ccxd is doing at one moment, for whoever reports it (the control
 * methods, the metrics): built by manager_status(), read only, and valid
 * until the manager handles its next event. A view into the daemon's
 * tables, not a copy of them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "autoplace.h"
#include "config.h"
#include "latencies.h"
#include "placements.h"
#include "execs.h"
#include "probe.h"
#include "topology.h"

struct prober;

struct ccxd_status {
	const struct config *config;
	const char *config_path;          /* what a reload reads */
	const struct topology *topology;
	uint64_t started_usec;            /* CLOCK_REALTIME */
	const char *bpf_capabilities;     /* "dropped", "kept" or "none" (caps_bpf_to_string()) */

	const char *watcher_source;       /* "netlink", "polling" or "starting" */
	const char *watcher_note;         /* why polling; NULL otherwise */
	const char *execs_note;           /* why the proc connector tells of execs; NULL: the exec programs do */
	struct execs_stats execs;         /* the exec programs' */
	uint64_t events, lost_events, rescans, reloads, reload_failures;
	struct latencies_summary exec_pins;   /* the last pins at exec, from the kernel's event */
	struct placements_stats placements;

	/* The processes a rule or a hand placed, or that a rule names, by pid. */
	const struct placement **processes;
	size_t n_processes;

	/* The automatic policy; have_sampling false when it could not start. */
	bool have_sampling;
	struct autoplace_stats sampling;
	const struct autoplace_group *groups;
	size_t n_groups;
	const struct sampler_result *sample;  /* the channels groups name; NULL before the first */
	const struct group_cut *cut;          /* processes a split left alone, by pid */
	size_t n_cut;

	/* The probe; prober NULL when it could not start. decision: what its
	 * figures decide for the next cycle, when there are figures. */
	const struct prober *prober;
	const struct probe_results *probe_results;
	bool have_decision;
	struct seatings_ranking decision;
};


