/* One group's experiment, as a state machine that touches nothing: fed the
 * group's rate once a sample, it says what to do with the members (seat
 * them one way, put them back), and is told what came of it.
 *
 * Each seating and the members' own placement take turns, a sample each,
 * round after round, until each has window samples: a machine's throughput
 * drifts over a minute by as much as the gains looked for, and taking turns
 * spreads that drift evenly over the seatings and the rate before. The
 * fastest seating that beat the rate before, gain and noise both
 * (validator_judge), goes back and stays; failing that, the fastest as a
 * guard (experiment_guard); failing that, the members stay as they were,
 * and the group is tried again after a while.
 *
 * A kept seating is checked again: after recheck_after samples, and at
 * once when the group's members changed or its rate moved by a factor of
 * EXPERIMENT_RECHECK_FACTOR from the rate it was kept at. A re-check is the
 * same experiment with the kept seating alone, one turn of it and one of
 * the members' own placement, and more rounds only while that is not
 * enough to tell (as any experiment). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "placer.h"
#include "validator.h"

/* After every seating was reverted, wait this many samples before trying
 * again: what the machine does may have changed by then. */
#define EXPERIMENT_BACKOFF 60
/* A kept group whose rate has moved this far, up or down, over window
 * samples, is not the group that was measured: a steady pipeline's rate
 * varies by 5 % from one second to the next and drifts by a quarter over a
 * minute (docs/design.md), a pair that starts or stops computing by far
 * more. */
#define EXPERIMENT_RECHECK_FACTOR 2.0

enum experiment_state {
	EXPERIMENT_MEASURING,      /* its rate before any move */
	EXPERIMENT_VALIDATING,     /* the seatings and its own placement take turns */
	EXPERIMENT_KEPT,           /* the move beat the noise: it stays */
	EXPERIMENT_REVERTED,       /* no seating helped: originals back; tried again later */
	EXPERIMENT_DRY_RUN,        /* mode = dry-run: the decision is all there is */
	EXPERIMENT_BY_RULE,        /* a member is a rule's: rules win */
	EXPERIMENT_BY_HAND,        /* a member's affinity was set by somebody else */
	EXPERIMENT_NO_ROOM,        /* no CCX has room for its CPU demand */
	EXPERIMENT_NO_GAIN,        /* the probe measured no seating apart from apart: not moved */
	EXPERIMENT_NO_RATE,        /* nothing to judge a move by (threads that do no I/O): not moved */
	EXPERIMENT_BY_KERNEL,      /* one process's threads, which the kernel's cache-aware balancing keeps */
	EXPERIMENT_CROWDED,        /* its CCX grew crowded and no other had room: originals back; tried
				    * again later */
	EXPERIMENT_OTHER_USERS,    /* several users' processes, root's among them or not each
				    * sending to another's (groups_users()): not moved */
};

struct experiment_trial {
	enum seating seating;
	struct validator_evidence evidence;
	bool beat;                 /* beat the rate before, gain and noise both */
	double after[VALIDATOR_WINDOW_MAX];   /* its turns' samples, to set it against the other seatings */
	size_t n_after;
};

struct experiment {
	enum experiment_state state;
	enum seating seating;      /* in place, or kept */
	enum seating order[_SEATING_MAX];   /* seatings to try, best first */
	size_t n_order;
	size_t next;               /* the turn: order[next], or its own placement at n_order */
	double before[VALIDATOR_WINDOW_MAX];  /* its rate in its own placement */
	size_t n_before;
	unsigned backoff;          /* samples before trying again */
	struct experiment_trial trials[_SEATING_MAX];   /* by order */
	size_t n_trials;
	bool guard;                /* kept without beating the rate before (experiment_guard) */
	int pending;               /* what the last action was for (experiment.c) */
	bool recheck;              /* the experiment under way re-checks a kept seating */
	unsigned kept_for;         /* kept: samples since */
	double kept_yield;         /* kept: its bytes per CPU-second in its first window samples
				    * kept; 0 until then */
	double recent[VALIDATOR_WINDOW_MAX];  /* kept: those in the last window samples */
	size_t n_recent;
	unsigned rechecks;         /* re-checks started */
};

/* What a sample brings. */
struct experiment_input {
	double rate;               /* the group's bytes/s in this sample; <= 0: nothing to judge by */
	double cpu;                /* the CPUs' worth of time its members used in it; <= 0: not known */
	bool no_gain;              /* the probe found that placement makes no difference here */
	bool may_start;            /* a new experiment may start in this sample */
	const enum seating *plan;  /* the seatings to try, best first, should one start */
	size_t n_plan;
	double min_gain;           /* relative gain for a move to be kept */
	unsigned window;           /* samples of each seating and of the rate before (1..VALIDATOR_WINDOW_MAX) */
	unsigned recheck_after;    /* samples a seating stays kept before it is checked again; 0: never */
	bool changed;              /* kept: its members are not those it was kept with */
	bool crowded;              /* kept: its CCX is being crowded (crowding.h), which its rate
				    * says, not a change in the group */
};

enum experiment_action {
	EXPERIMENT_NOTHING,
	EXPERIMENT_SEAT,           /* seat the members as .seating (.first: a new experiment's first) */
	EXPERIMENT_ORIGINALS,      /* put the members back where they were; the experiment goes on */
	EXPERIMENT_RELEASE,        /* put them back: the experiment is over (see state) */
};

struct experiment_intent {
	enum experiment_action action;
	enum seating seating;
	bool first;
};

/* One sample of the group's rate (a group seen in this sample). */
struct experiment_intent experiment_sample(struct experiment *x, const struct experiment_input *in);

/* What came of the intent last returned, which the caller carried out, in
 * the same sample (in as given then): 0, or for a seating -EXFULL (no CCX
 * has room), -EPERM (somebody else set a member's affinity), or any other
 * -errno (that seating cannot be had: the next is tried). Returns what to
 * do next; the caller goes on until EXPERIMENT_NOTHING. */
struct experiment_intent experiment_done(struct experiment *x, const struct experiment_input *in, int result);

/* A kept group whose CCX grew crowded, with no other CCX to go to
 * (crowding.h): its members go back to their own placement, and it is
 * tried again after EXPERIMENT_BACKOFF samples. Returns the release. */
struct experiment_intent experiment_crowded(struct experiment *x);

/* A kept group seated again elsewhere, the same way (crowding.h): its rate
 * is judged afresh there. */
void experiment_reseated(struct experiment *x);

/* Nothing is seated any more (the members were put back from outside): an
 * experiment under way, or a kept seating, starts again from measuring. */
void experiment_reset(struct experiment *x);

/* When no seating beat the rate before: the seating to keep all the same,
 * or -1. Left alone, a group runs where the scheduler puts it, and that
 * may be the good placement while the rate before was measured and the
 * bad one later (a ping-pong pair here runs ten times slower apart, and
 * the scheduler seats it either way). So the fastest seating is kept when
 * it did not run clearly slower than before and another seating ran
 * clearly slower than both it and the rate before; clearly, as a seating
 * must beat the rate before (the rank test of validator_judge, and
 * min_gain). That slower placement is one the group was shown to fall
 * into, and keeping the fast one rules it out. */
int experiment_guard(const struct experiment_trial *trials, size_t n, const double *before, size_t n_before,
		     double min_gain);

const char *experiment_state_to_string(enum experiment_state s);
