/* The automatic policy: each cycle samples who talks to whom, forms groups,
 * decides a CCX for each group that no rule owns, and in enforce mode seats
 * it there as an experiment: each seating and the members' own placement
 * take turns, a sample each, round after round, and the group's rate in each
 * seating is set against its rate in its own placement. The fastest seating
 * that beat that rate, gain and noise both, goes back and stays; when none
 * did, the group is left as it was. What won is remembered per set of
 * programs and tried first. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "groups.h"
#include "placer.h"
#include "probe.h"
#include "procfs.h"
#include "sampler.h"
#include "topology.h"
#include "validator.h"

enum autoplace_state {
	AUTOPLACE_MEASURING,       /* its rate before any move */
	AUTOPLACE_VALIDATING,      /* the experiment: the seatings and its own placement take turns */
	AUTOPLACE_KEPT,            /* the move beat the noise: it stays */
	AUTOPLACE_REVERTED,        /* no seating helped: originals back; tried again later */
	AUTOPLACE_DRY_RUN,         /* mode = dry-run: the decision is all there is */
	AUTOPLACE_BY_RULE,         /* a member is a rule's: rules win */
	AUTOPLACE_BY_HAND,         /* a member's affinity was set by somebody else */
	AUTOPLACE_NO_ROOM,         /* no CCX has room for its CPU demand */
	AUTOPLACE_NO_GAIN,         /* the probe measured no seating apart from apart: not moved */
	AUTOPLACE_NO_RATE,         /* nothing to judge a move by (threads that do no I/O): not moved */
};

/* What the probe's figures say about seating groups (autoplace_probe_rank). */
struct autoplace_probe_figure {
	bool measured;
	int relation;              /* enum probe_relation it was measured as */
	double gib_s, min, max;    /* pipe throughput, large writes: median and spread */
};

struct autoplace_probe {
	enum seating order[_SEATING_MAX];      /* the seatings allowed, best measured first */
	size_t n_order;
	struct autoplace_probe_figure seating[_SEATING_MAX];   /* by enum seating */
	struct autoplace_probe_figure apart;   /* the farthest relation measured: a group left alone */
	bool no_gain;              /* no seating differs from apart beyond the spreads: no moves */
	char date[32];             /* when the figures were measured */
	char note[320];            /* the decision, citing the figures */
};

/* Ranks the seatings allowed (n == 0: the default order) by r's pipe
 * throughput: one goes before another only where every repeat of its figure
 * beat every repeat of the other's (its min above the other's max); else the
 * given order stands. no_gain when no measured seating differs from apart
 * beyond both spreads, whichever way: then where a group sits does not
 * matter on this machine. Pure. Returns 0, or -ENODATA when r measured none
 * of the seatings (the given order stands, no_gain is false). */
int autoplace_probe_rank(const struct probe_results *r, const enum seating *allowed, size_t n,
			 struct autoplace_probe *ret);

/* A process the policy moved: enough to put it back. */
struct autoplace_member {
	pid_t pid;
	uint64_t start_time;
	char comm[PROCFS_COMM_MAX];
	int pidfd;
	cpu_set_t original;
	cpu_set_t cpus;            /* where it was seated */
};

struct autoplace_trial {
	enum seating seating;
	struct validator_evidence evidence;
	bool beat;                 /* beat the rate before, gain and noise both */
	double after[VALIDATOR_WINDOW_MAX];   /* its turns' samples, to set it against the other seatings */
	size_t n_after;
};

struct autoplace_group {
	pid_t id;                  /* its lowest pid */
	struct group group;        /* as last seen; channels index the last sample */
	bool seen;                 /* in the last sample */
	unsigned quiet;            /* samples in a row it was not seen */
	char *programs;            /* its members' executables, sorted, joined by '|' */
	enum autoplace_state state;
	int ccx;                   /* decided CCX, -1 if none */
	cpu_set_t cpus;            /* the CPUs its members have (or would have) */
	enum seating seating;      /* tried or kept */
	enum seating order[_SEATING_MAX];   /* seatings to try, best first */
	size_t n_order;
	size_t next;               /* the experiment's turn: order[next], or its own placement at n_order */
	double before[VALIDATOR_WINDOW_MAX];  /* its rate in its own placement */
	size_t n_before;
	unsigned backoff;          /* samples before trying again once all were reverted */
	struct autoplace_member *members;
	size_t n_members;
	struct autoplace_trial trials[_SEATING_MAX];   /* by order, while it is tried and after */
	size_t n_trials;
	bool guard;                /* kept without beating the rate before: see autoplace_guard() */
	bool probe_used;           /* its last plan cited probe figures: */
	struct autoplace_probe probe;
};

struct autoplace_stats {
	uint64_t cycles;
	uint64_t last_cycle_usec;  /* CPU time the last cycle took */
	size_t last_scanned;       /* processes looked at */
	size_t last_active;        /* of which used CPU */
	uint64_t moves, kept, reverted;
	const char *source;        /* where active processes are read from: "bpf" or "proc" */
	enum sampler_reading reading;
	const char *note;          /* why not as the config asked; NULL when as asked */
};

struct autoplace_options {
	double min_rate;           /* bytes/s for a channel to count */
	double min_gain;           /* relative gain for a move to be kept */
	unsigned window;           /* samples of each seating, and of its own placement, in an experiment */
	const enum seating *seatings;   /* the seatings to try, in order */
	size_t n_seatings;
	const struct autoplace_probe *probe;   /* the figures that ranked them; NULL: none */
};

struct autoplace;

int autoplace_new(const char *root, enum sampler_reading reading, struct autoplace **ret);

/* Where what won is kept across restarts (a JSON file in state_dir): read
 * now, written whenever a move is kept. A missing file is no error. */
int autoplace_set_memory(struct autoplace *a, const char *path);
void autoplace_free(struct autoplace *a);

/* ruled(userdata, pid): whether a rule (or a hand) placed that process. */
int autoplace_cycle(struct autoplace *a, const struct topology *t, enum config_mode mode,
		    const struct autoplace_options *options, bool (*ruled)(void *userdata, pid_t pid),
		    void *userdata, uint64_t now_usec);

/* Puts back every process the policy moved (shutdown, or a mode that must
 * not pin). */
void autoplace_release_all(struct autoplace *a);

/* A rule takes over pid: the policy lets go of it without touching its
 * affinity, and hands over the original it kept. Returns false when the
 * policy never moved it. */
bool autoplace_forget(struct autoplace *a, pid_t pid, cpu_set_t *original);

const struct autoplace_group *autoplace_groups(const struct autoplace *a, size_t *n);
/* The last sample, for the channels that groups name. NULL before the first cycle. */
const struct sampler_result *autoplace_sample(const struct autoplace *a);
struct autoplace_stats autoplace_stats(const struct autoplace *a);

const char *autoplace_state_to_string(enum autoplace_state s);

/* When no seating beat the rate before: the seating to keep all the same,
 * or -1. Left alone, a group runs where the scheduler puts it, and that
 * may be the good placement while the rate before was measured and the
 * bad one later (a ping-pong pair here runs ten times slower apart, and
 * the scheduler seats it either way). So the fastest seating is kept when
 * it did not run clearly slower than before and another seating ran
 * clearly slower than both it and the rate before; clearly, as a seating
 * must beat the rate before (the rank test of validator_judge, and
 * min_gain). That slower placement is one the group was shown to fall
 * into, and keeping the fast one rules it out. Pure. */
int autoplace_guard(const struct autoplace_trial *trials, size_t n, const double *before, size_t n_before,
		    double min_gain);
