/* The automatic policy: each cycle samples who talks to whom, forms groups,
 * decides a CCX for each group that no rule owns, and in enforce mode seats
 * it there as an experiment: the group's rate before the move against its
 * rate after, kept only when the gain beats the noise, otherwise put back
 * and the next seating tried. What won is remembered per set of programs. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "groups.h"
#include "placer.h"
#include "sampler.h"
#include "topology.h"
#include "validator.h"

enum autoplace_state {
	AUTOPLACE_MEASURING,       /* its rate before any move */
	AUTOPLACE_VALIDATING,      /* a seating is in place; its rate after */
	AUTOPLACE_KEPT,            /* the move beat the noise: it stays */
	AUTOPLACE_REVERTED,        /* no seating helped: originals back; tried again later */
	AUTOPLACE_DRY_RUN,         /* mode = dry-run: the decision is all there is */
	AUTOPLACE_BY_RULE,         /* a member is a rule's: rules win */
	AUTOPLACE_BY_HAND,         /* a member's affinity was set by somebody else */
	AUTOPLACE_NO_ROOM,         /* no CCX has room for its CPU demand */
};

/* A process the policy moved: enough to put it back. */
struct autoplace_member {
	pid_t pid;
	int pidfd;
	cpu_set_t original;
};

struct autoplace_trial {
	enum seating seating;
	struct validator_evidence evidence;
	bool kept;
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
	size_t n_order, next;
	double before[8], after[8];
	size_t n_before, n_after;
	unsigned settle;           /* samples to let pass after a move before measuring */
	unsigned backoff;          /* samples before trying again once all were reverted */
	struct autoplace_member *members;
	size_t n_members;
	struct autoplace_trial trials[_SEATING_MAX];
	size_t n_trials;
};

struct autoplace_stats {
	uint64_t cycles;
	uint64_t last_cycle_usec;  /* CPU time the last cycle took */
	size_t last_scanned;       /* processes looked at */
	size_t last_active;        /* of which used CPU */
	uint64_t moves, kept, reverted;
};

struct autoplace_options {
	double min_rate;           /* bytes/s for a channel to count */
	double min_gain;           /* relative gain for a move to be kept */
	unsigned window;           /* samples in each of the before and after windows */
};

struct autoplace;

int autoplace_new(const char *root, struct autoplace **ret);
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
