#include "reasons.h"

#include <stdio.h>

void reasons_of_group(const struct reasons_group *g, double largest_ccx, unsigned window, unsigned release_after,
		      char *r, size_t size) {
	const struct experiment_trial *last = g->x->n_trials ? &g->x->trials[g->x->n_trials - 1] : NULL;

	if (!g->seen) {
		snprintf(r, size, "not seen communicating for %u samples: ends after %u, its members back where they were",
			 g->quiet, release_after);
		return;
	}
	switch (g->x->state) {
	case EXPERIMENT_MEASURING:
		snprintf(r, size, "measuring its rate where it is, before a move (%zu of %u samples)", g->x->n_before,
			 window);
		break;
	case EXPERIMENT_VALIDATING:
		if (g->x->recheck)
			snprintf(r, size, "kept on CCX %d (%s), checking again whether it is faster there than where "
				 "its members would run by themselves", g->ccx, seating_to_string(g->x->seating));
		else
			snprintf(r, size, "placed on CCX %d (%s), measuring whether it is faster there", g->ccx,
				 seating_to_string(g->x->seating));
		break;
	case EXPERIMENT_KEPT:
		snprintf(r, size, "kept on CCX %d (%s): %s%s%s", g->ccx, seating_to_string(g->x->seating),
			 g->x->guard ? "no layout beat its rate before, and the others ran slower"
				    : "faster there, beyond the noise",
			 g->crowding ? "; " : "", g->crowding ? g->crowding : "");
		break;
	case EXPERIMENT_CROWDED:
		snprintf(r, size, "put back: its CCX grew crowded (%s) (tried again in %u samples)",
			 g->crowding ? g->crowding : "its members waited for a CPU", g->x->backoff);
		break;
	case EXPERIMENT_REVERTED:
		snprintf(r, size, "put back: no layout beat its rate before%s (tried again in %u samples)",
			 last ? " by min_gain and the noise" : "", g->x->backoff);
		break;
	case EXPERIMENT_DRY_RUN:
		snprintf(r, size, "would be placed on CCX %d (%s); mode = dry-run moves nothing", g->ccx,
			 seating_to_string(g->x->seating));
		break;
	case EXPERIMENT_BY_RULE:
		snprintf(r, size, "a member is placed by a rule, and rules come first");
		break;
	case EXPERIMENT_BY_HAND:
		snprintf(r, size, "a member's CPUs were set by someone else, and are left to them");
		break;
	case EXPERIMENT_NO_ROOM:
		snprintf(r, size, "needs %.1f CPUs; the largest CCX has %.0f, and none has that much free", g->demand,
			 largest_ccx);
		break;
	case EXPERIMENT_NO_GAIN:
		snprintf(r, size, "the probe measured no gain in one CCX on this machine: not moved");
		break;
	case EXPERIMENT_BY_KERNEL:
		snprintf(r, size, "one process's threads: the kernel's cache-aware balancing (llc_balancing) keeps "
				  "them on one LLC and moves them when it is crowded, so they are left to it");
		break;
	case EXPERIMENT_OTHER_USERS:
		snprintf(r, size, "%s",
			 g->users == GROUPS_WITH_ROOT
				 ? "its members are root's and other users': root's processes move with other users' "
				   "by a rule alone, not on what others send them"
				 : "its members are several users', and not each sent to another's: one party's traffic "
				   "alone does not move another's processes");
		break;
	case EXPERIMENT_NO_RATE:
		snprintf(r, size, "moves no bytes by which to tell whether a move helps: not moved");
		break;
	default:
		snprintf(r, size, "%s", experiment_state_to_string(g->x->state));
		break;
	}
}
