/* A group's reason in words, from struct literals. */
#include "reasons.h"
#include "test.h"

static void no_room_says_what_is_needed(void) {
	struct experiment x = { 0 };
	struct reasons_group g = { .x = &x, .seen = true, .ccx = -1 };
	char r[192];

	x.state = EXPERIMENT_NO_ROOM;
	g.demand = 1.9;
	reasons_of_group(&g, 1.0, 3, 5, r, sizeof(r));
	CHECK_STR(r, "needs 1.9 CPUs; the largest CCX has 1, and none has that much free");
}

static void an_unseen_group_says_when_it_ends(void) {
	struct experiment x = { 0 };
	struct reasons_group g = { .x = &x, .seen = false, .quiet = 2 };
	char r[192];

	x.state = EXPERIMENT_KEPT;
	reasons_of_group(&g, 8.0, 3, 5, r, sizeof(r));
	CHECK_STR(r, "not seen communicating for 2 samples: ends after 5, its members back where they were");
}

static void measuring_counts_its_samples(void) {
	struct experiment x = { 0 };
	struct reasons_group g = { .x = &x, .seen = true };
	char r[192];

	x.state = EXPERIMENT_MEASURING;
	x.n_before = 1;
	reasons_of_group(&g, 8.0, 3, 5, r, sizeof(r));
	CHECK_STR(r, "measuring its rate where it is, before a move (1 of 3 samples)");
}

static void the_kernels_says_whose_it_is(void) {
	struct experiment x = { .state = EXPERIMENT_BY_KERNEL };
	struct reasons_group g = { .x = &x, .seen = true, .ccx = -1 };
	char r[192];

	reasons_of_group(&g, 8.0, 3, 5, r, sizeof(r));
	CHECK_STR(r, "one process's threads: the kernel's cache-aware balancing (llc_balancing) keeps them on one LLC "
		     "and moves them when it is crowded, so they are left to it");
}

static void a_move_off_a_crowded_ccx_is_said(void) {
	struct experiment x = { .state = EXPERIMENT_KEPT, .seating = SEATING_SHARED };
	struct reasons_group g = { .x = &x, .seen = true, .ccx = 1,
				   .crowding = "moved: waited 57 % of the time on CCX 0 (34 % once placed); CCX 1 had "
					       "1.0 CPUs free" };
	char r[256];

	reasons_of_group(&g, 1.0, 3, 5, r, sizeof(r));
	CHECK_STR(r, "kept on CCX 1 (shared-cpu): faster there, beyond the noise; moved: waited 57 % of the time on "
		     "CCX 0 (34 % once placed); CCX 1 had 1.0 CPUs free");
	x.state = EXPERIMENT_CROWDED;
	x.backoff = 60;
	g.crowding = "waited 58 % of the time on CCX 0 (34 % once placed), and no other CCX had 1.0 CPUs free";
	reasons_of_group(&g, 1.0, 3, 5, r, sizeof(r));
	CHECK_STR(r, "put back: its CCX grew crowded (waited 58 % of the time on CCX 0 (34 % once placed), and no "
		     "other CCX had 1.0 CPUs free) (tried again in 60 samples)");
}

TEST_MAIN(T(no_room_says_what_is_needed), T(an_unseen_group_says_when_it_ends), T(measuring_counts_its_samples),
	  T(the_kernels_says_whose_it_is), T(a_move_off_a_crowded_ccx_is_said))
