#include "experiment.h"

#include <errno.h>
#include <string.h>

#include "util.h"

/* What the action last returned was for, to read its result by. */
enum pending {
	PENDING_NOTHING,
	PENDING_TURN,              /* a seating's turn: order[next] */
	PENDING_ORIGINALS,         /* the turn of the members' own placement */
	PENDING_KEEP,              /* the winner, back in place to stay */
	PENDING_RELEASE,           /* the end */
};

static const char *const state_names[] = {
	[EXPERIMENT_MEASURING] = "measuring",
	[EXPERIMENT_VALIDATING] = "validating",
	[EXPERIMENT_KEPT] = "kept",
	[EXPERIMENT_REVERTED] = "reverted",
	[EXPERIMENT_DRY_RUN] = "dry-run",
	[EXPERIMENT_BY_RULE] = "by-rule",
	[EXPERIMENT_BY_HAND] = "by-hand",
	[EXPERIMENT_NO_ROOM] = "no-room",
	[EXPERIMENT_NO_GAIN] = "no-gain",
	[EXPERIMENT_NO_RATE] = "no-rate",
	[EXPERIMENT_BY_KERNEL] = "by-kernel",
	[EXPERIMENT_CROWDED] = "crowded",
	[EXPERIMENT_OTHER_USERS] = "other-users",
};

/* "unknown" past the end: status.c lists the states up to that name. */
const char *experiment_state_to_string(enum experiment_state s) {
	const char *name = NAME_OF(state_names, s);

	return name ? name : "unknown";
}

static const struct experiment_intent nothing = { .action = EXPERIMENT_NOTHING };

static void record(double *window, size_t *n, double v) {
	if (*n == VALIDATOR_WINDOW_MAX) {
		memmove(window, window + 1, (VALIDATOR_WINDOW_MAX - 1) * sizeof(*window));
		(*n)--;
	}
	window[(*n)++] = v;
}

static void drop_seating(struct experiment *x, size_t i) {
	memmove(&x->order[i], &x->order[i + 1], (x->n_order - i - 1) * sizeof(x->order[0]));
	memmove(&x->trials[i], &x->trials[i + 1], (x->n_trials - i - 1) * sizeof(x->trials[0]));
	x->n_order--;
	x->n_trials--;
}

/* Whether a trial ran clearly slower than the rate before: the rate before
 * beats it by the tests that a seating must pass to beat the rate before. */
static bool clearly_slower(const struct experiment_trial *trial, const double *before, size_t n_before,
			   double min_gain) {
	return validator_judge(trial->after, trial->n_after, before, n_before, min_gain, NULL) == VALIDATOR_KEEP;
}

static size_t fastest(const struct experiment_trial *trials, size_t n) {
	size_t best = 0;

	for (size_t i = 1; i < n; i++)
		if (trials[i].evidence.after > trials[best].evidence.after)
			best = i;
	return best;
}

int experiment_guard(const struct experiment_trial *trials, size_t n, const double *before, size_t n_before,
		     double min_gain) {
	size_t best = fastest(trials, n);

	if (n < 2 || clearly_slower(&trials[best], before, n_before, min_gain))
		return -1;   /* nothing to guard against, or a loss to keep */
	for (size_t i = 0; i < n; i++) {
		if (i == best)
			continue;
		/* Clearly slower than the rate before, and than the best seating. */
		if (validator_judge(trials[i].after, trials[i].n_after, before, n_before, min_gain, NULL) ==
			    VALIDATOR_KEEP &&
		    validator_judge(trials[i].after, trials[i].n_after, trials[best].after, trials[best].n_after,
				    min_gain, NULL) == VALIDATOR_KEEP)
			return (int)best;
	}
	return -1;
}

/* Each seating's evidence so far, against the rate before taken in turns
 * with it. */
static void weigh(struct experiment *x, double min_gain) {
	for (size_t i = 0; i < x->n_trials; i++) {
		struct experiment_trial *tr = &x->trials[i];
		tr->beat = validator_judge(x->before, x->n_before, tr->after, tr->n_after, min_gain, &tr->evidence) ==
			   VALIDATOR_KEEP;
	}
}

/* Whether to go on past window rounds, up to VALIDATOR_WINDOW_MAX: no
 * seating beat the rate before, but the fastest might yet, its median
 * being above it by more than min_gain; or the guard might yet hold, the
 * fastest not being clearly slower than before and another's median being
 * below it by more than min_gain. Only not clear of the noise yet: more
 * rounds tell a difference from the noise better (validator_judge()).
 * Where nothing differs, no more rounds are spent. */
static bool undecided(const struct experiment *x, double min_gain) {
	size_t best;
	bool slower = false;

	if (x->n_before >= VALIDATOR_WINDOW_MAX || x->n_trials == 0)
		return false;
	for (size_t i = 0; i < x->n_trials; i++)
		if (x->trials[i].beat)
			return false;
	best = fastest(x->trials, x->n_trials);
	for (size_t i = 0; i < x->n_trials; i++)
		slower |= i != best && x->trials[i].evidence.gain < -min_gain;
	if (x->trials[best].evidence.gain > min_gain)
		return true;
	return slower && experiment_guard(x->trials, x->n_trials, x->before, x->n_before, min_gain) < 0 &&
	       !clearly_slower(&x->trials[best], x->before, x->n_before, min_gain);
}

/* The seating to keep: the fastest of those that beat the rate before;
 * failing that, the guard's; or -1. */
static int winner(const struct experiment *x, double min_gain, bool *guard) {
	int best = -1;

	for (size_t i = 0; i < x->n_trials; i++)
		if (x->trials[i].beat && (best < 0 || x->trials[i].evidence.after > x->trials[best].evidence.after))
			best = (int)i;
	*guard = best < 0 && (best = experiment_guard(x->trials, x->n_trials, x->before, x->n_before, min_gain)) >= 0;
	return best;
}

static struct experiment_intent release(struct experiment *x) {
	x->pending = PENDING_RELEASE;
	return (struct experiment_intent){ .action = EXPERIMENT_RELEASE };
}

static struct experiment_intent revert(struct experiment *x) {
	x->guard = false;
	x->state = EXPERIMENT_REVERTED;
	x->backoff = EXPERIMENT_BACKOFF;
	return release(x);
}

/* Every seating had its turns, and the members are back where they were:
 * the winner goes back in place and stays, or they stay where they are. */
static struct experiment_intent conclude(struct experiment *x, double min_gain) {
	bool guard;
	int best = winner(x, min_gain, &guard);

	if (best < 0)
		return revert(x);
	x->pending = PENDING_KEEP;
	return (struct experiment_intent){ .action = EXPERIMENT_SEAT, .seating = x->trials[best].seating };
}

/* The turn order[next], or the members' own at next == n_order. */
static struct experiment_intent turn(struct experiment *x) {
	if (x->next < x->n_order) {
		x->pending = PENDING_TURN;
		return (struct experiment_intent){ .action = EXPERIMENT_SEAT, .seating = x->order[x->next] };
	}
	x->pending = PENDING_ORIGINALS;
	return (struct experiment_intent){ .action = EXPERIMENT_ORIGINALS };
}

static struct experiment_intent start(struct experiment *x, const struct experiment_input *in) {
	struct experiment_intent i;

	x->n_order = in->n_plan < _SEATING_MAX ? in->n_plan : _SEATING_MAX;
	memcpy(x->order, in->plan, x->n_order * sizeof(x->order[0]));
	x->n_trials = x->n_order;
	for (size_t k = 0; k < x->n_order; k++)
		x->trials[k] = (struct experiment_trial){ .seating = x->order[k] };
	x->next = 0;
	x->n_before = 0;   /* measured again, in turns with the seatings */
	x->state = EXPERIMENT_VALIDATING;
	x->recheck = false;
	i = turn(x);
	i.first = true;
	return i;
}

/* The kept seating against the members' own placement, where it sits. */
static struct experiment_intent recheck(struct experiment *x) {
	x->n_order = x->n_trials = 1;
	x->order[0] = x->seating;
	x->trials[0] = (struct experiment_trial){ .seating = x->seating };
	x->next = 0;
	x->n_before = 0;
	x->state = EXPERIMENT_VALIDATING;
	x->recheck = true;
	x->rechecks++;
	return turn(x);
}

/* Whether a kept seating is due for a re-check, this sample counted. What
 * the group is shows in its bytes per CPU-second: a pair that starts or
 * stops computing between its messages moves it far, while a group that is
 * stopped (SIGSTOP, a debugger) or idle for part of a sample, or waits on
 * a crowded CCX, moves its rate and its CPU together. Its first window
 * samples kept are the reference. */
static bool recheck_due(struct experiment *x, const struct experiment_input *in) {
	double now;

	x->kept_for++;
	if (in->rate > 0 && in->cpu > 0) {
		if (x->n_recent == in->window) {
			memmove(x->recent, x->recent + 1, (x->n_recent - 1) * sizeof(x->recent[0]));
			x->n_recent--;
		}
		x->recent[x->n_recent++] = in->rate / in->cpu;
	}
	if (in->changed || (in->recheck_after && x->kept_for >= in->recheck_after))
		return true;
	if (in->crowded || x->n_recent < in->window)
		return false;
	now = validator_median(x->recent, x->n_recent);
	if (x->kept_yield <= 0) {
		x->kept_yield = now;
		return false;
	}
	return now >= x->kept_yield * EXPERIMENT_RECHECK_FACTOR || now * EXPERIMENT_RECHECK_FACTOR <= x->kept_yield;
}

/* One sample of the turn in place; then the next turn, or the verdict once
 * the originals' turn ends the last round. A move is made just after a
 * sample is taken, so the next sample is all its turn's. */
static struct experiment_intent next_turn(struct experiment *x, const struct experiment_input *in) {
	size_t window = x->recheck ? 1 : in->window;

	if (x->next < x->n_order)
		record(x->trials[x->next].after, &x->trials[x->next].n_after, in->rate);
	else
		record(x->before, &x->n_before, in->rate);
	weigh(x, in->min_gain);
	if (x->next == x->n_order && x->n_before >= window && !undecided(x, in->min_gain))
		return conclude(x, in->min_gain);
	x->next = x->next == x->n_order ? 0 : x->next + 1;
	return turn(x);
}

struct experiment_intent experiment_sample(struct experiment *x, const struct experiment_input *in) {
	x->pending = PENDING_NOTHING;
	switch (x->state) {
	case EXPERIMENT_NO_GAIN:
		if (in->no_gain)
			break;
		x->state = EXPERIMENT_MEASURING;
		x->n_before = 0;
		/* fall through */
	case EXPERIMENT_NO_RATE:
	case EXPERIMENT_NO_ROOM:
	case EXPERIMENT_MEASURING:
		/* Placement makes no measurable difference here: moving costs
		 * and buys nothing. */
		if (in->no_gain) {
			x->state = EXPERIMENT_NO_GAIN;
			break;
		}
		/* A move that cannot be judged is not made. */
		if (in->rate <= 0) {
			x->state = EXPERIMENT_NO_RATE;
			x->n_before = 0;
			break;
		}
		if (x->state == EXPERIMENT_NO_RATE)
			x->state = EXPERIMENT_MEASURING;
		record(x->before, &x->n_before, in->rate);
		if (x->n_before >= in->window && in->may_start)
			return start(x, in);
		break;
	case EXPERIMENT_VALIDATING:
		return next_turn(x, in);
	case EXPERIMENT_KEPT:
		if (recheck_due(x, in))
			return recheck(x);
		break;
	case EXPERIMENT_REVERTED:
	case EXPERIMENT_BY_HAND:
	case EXPERIMENT_CROWDED:
		if (x->backoff > 0 && --x->backoff == 0) {
			x->state = EXPERIMENT_MEASURING;
			x->n_before = 0;
		}
		break;
	default:
		break;
	}
	return nothing;
}

struct experiment_intent experiment_done(struct experiment *x, const struct experiment_input *in, int result) {
	enum pending p = (enum pending)x->pending;
	bool guard;
	int best;

	x->pending = PENDING_NOTHING;
	switch (p) {
	case PENDING_TURN:
		if (result >= 0) {
			x->seating = x->order[x->next];
			return nothing;
		}
		if (result == -EXFULL || result == -EPERM) {
			x->state = result == -EXFULL ? EXPERIMENT_NO_ROOM : EXPERIMENT_BY_HAND;
			x->backoff = result == -EPERM ? EXPERIMENT_BACKOFF : 0;   /* no room is looked at each sample */
			return release(x);
		}
		/* That seating cannot be had: the experiment goes on without it. */
		drop_seating(x, x->next);
		return turn(x);
	case PENDING_ORIGINALS:
		return x->n_order == 0 ? conclude(x, in->min_gain) : nothing;   /* none could be seated */
	case PENDING_KEEP:
		best = winner(x, in->min_gain, &guard);
		if (result < 0 || best < 0)
			return revert(x);
		x->seating = x->trials[best].seating;
		x->guard = guard;
		x->state = EXPERIMENT_KEPT;
		x->kept_for = 0;
		x->kept_yield = 0;
		x->n_recent = 0;
		return nothing;
	case PENDING_NOTHING:
	case PENDING_RELEASE:
		break;
	}
	return nothing;
}

struct experiment_intent experiment_crowded(struct experiment *x) {
	x->guard = false;
	x->state = EXPERIMENT_CROWDED;
	x->backoff = EXPERIMENT_BACKOFF;
	return release(x);
}

void experiment_reseated(struct experiment *x) {
	x->kept_yield = 0;
	x->n_recent = 0;
}

void experiment_reset(struct experiment *x) {
	if (x->state == EXPERIMENT_VALIDATING || x->state == EXPERIMENT_KEPT) {
		x->state = EXPERIMENT_MEASURING;
		x->n_before = 0;
		x->next = 0;
	}
	x->pending = PENDING_NOTHING;
}
