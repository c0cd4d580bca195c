/* The automatic policy: each cycle samples who talks to whom, forms groups,
 * decides a CCX for each group that no rule owns, and in enforce mode seats
 * it there as an experiment (experiment.h) and carries out what the
 * experiment asks. What won is remembered per set of programs and tried
 * first. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "crowding.h"
#include "experiment.h"
#include "groups.h"
#include "placements.h"
#include "placer.h"
#include "probe.h"
#include "procfs.h"
#include "sampler.h"
#include "seatings.h"
#include "topology.h"
#include "validator.h"
#include "waits.h"



/* A process the policy moved; its original and seat are in its entry of
 * the table of placements. */
struct autoplace_member {
	pid_t pid;
	uint64_t start_time;
	struct waits_times times;  /* its threads' at the last sample, while its group is kept */
	bool have_times;
};


struct autoplace_group {
	pid_t id;                  /* its lowest pid */
	struct group group;        /* as last seen; channels index the last sample */
	bool seen;                 /* in the last sample */
	unsigned quiet;            /* samples in a row it was not seen */
	char *programs;            /* its members' executables, sorted, joined by '|' */
	struct experiment x;       /* its experiment, and so its state */
	int ccx;                   /* decided CCX, -1 if none */
	cpu_set_t cpus;            /* the CPUs its members have (or would have) */
	struct autoplace_member *members;
	size_t n_members, allocated_members;
	bool probe_used;           /* its last plan cited probe figures: */
	struct seatings_ranking probe;
	double waited;             /* kept: its members' share of wanted time spent waiting for a
				    * CPU in the last sample (waits_share()); -1: not known */
	struct crowding_alone seated_alone;   /* kept: its first samples in its seat, before
					       * a crowd */
	unsigned strikes;          /* kept: crowded samples in a row (crowding.h) */
	uint64_t kept_pids;        /* kept: which processes it was kept as (a signature of its pids) */
	bool thinned;              /* kept, and its calls counted one in 16 (sampler_thin()) */
	enum groups_users users;   /* whose processes it holds, at the last sample */
	char crowding[160];        /* why it last moved, or was put back, for its CCX was crowded */
	char reason[256];          /* its state, why, in words for a person */
};

struct autoplace_stats {
	uint64_t cycles;
	uint64_t last_cycle_usec;  /* CPU time the last cycle took */
	uint64_t last_counting_usec;   /* of which reading the traffic counters (sampler_counting_usec()) */
	uint64_t last_counts_lost;     /* calls the counters lost, full, in the last window: it was estimated */
	size_t last_scanned;       /* processes looked at */
	size_t last_active;        /* of which used CPU */
	uint64_t moves, kept, reverted;
	uint64_t crowded_moves, crowded_releases;   /* kept groups moved, or put back, off a crowded CCX */
	uint64_t rechecks;         /* kept seatings checked again */
	const char *source;        /* where active processes are read from: "bpf" or "proc" */
	enum sampler_reading reading;
	const char *note;          /* why not as the config asked; NULL when as asked */
	const char *counted;       /* what the kernel counts exactly (sampler_counted()) */
	const char *counted_note;  /* why not all; NULL */
};

struct autoplace_options {
	double min_rate;           /* bytes/s for a pair's channels to count */
	double min_message_rate;   /* or messages/s */
	double min_gain;           /* relative gain for a move to be kept */
	unsigned window;           /* samples of each seating, and of its own placement, in an experiment */
	const enum seating *seatings;   /* the seatings to try, in order */
	size_t n_seatings;
	const struct seatings_ranking *probe;   /* the figures that ranked them; NULL: none */
	struct crowding_options crowding;       /* crowded_wait, crowded_samples */
	unsigned recheck_after;    /* samples a seating stays kept before it is checked again; 0: never */
};

struct autoplace;

/* The members it seats are entries of placements, which outlives it. */
int autoplace_new(const char *root, enum sampler_reading reading, enum sampler_counting counting,
		  struct placements *placements,
		  struct autoplace **ret);

/* Where what won is kept across restarts (a JSON file in state_dir): read
 * now, written whenever a move is kept. A missing file is no error. */
int autoplace_set_memory(struct autoplace *a, const char *path);
void autoplace_free(struct autoplace *a);

/* A process that a rule or a hand placed (placements) is not the
 * policy's to move: a group with one is left to them. */
int autoplace_cycle(struct autoplace *a, const struct topology *t, enum config_mode mode,
		    const struct autoplace_options *options, uint64_t now_usec);

/* Puts back every process the policy moved (shutdown, or a mode that must
 * not pin). */
void autoplace_release_all(struct autoplace *a);

const struct autoplace_group *autoplace_groups(const struct autoplace *a, size_t *n);
/* The last sample, for the channels that groups name. NULL before the first cycle. */
const struct sampler_result *autoplace_sample(const struct autoplace *a);
/* The processes of the last sample that communicate but are in no group
 * (a split left them alone), by pid. */
const struct group_cut *autoplace_cut(const struct autoplace *a, size_t *n);
struct autoplace_stats autoplace_stats(const struct autoplace *a);
/* What won per set of programs (learned.h), and forgetting one by hand:
 * learned_forget()'s returns. */
const struct learned *autoplace_learned(const struct autoplace *a);
int autoplace_forget(struct autoplace *a, const char *programs);
