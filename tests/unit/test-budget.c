/* The share of CPU for work that others cause, from times the test gives. */
#include "budget.h"
#include "test.h"

#define MS 1000ull

static void work_goes_on_within_the_share(void) {
	struct budget b;

	budget_init(&b, 100 * MS, 10 * MS);
	CHECK(budget_left(&b, 1000 * MS));
	budget_charge(&b, 1001 * MS, 9 * MS);
	CHECK(budget_left(&b, 1002 * MS));
	CHECK_INT(b.spent, 0);
}

static void a_spent_window_waits_for_the_next(void) {
	struct budget b;

	budget_init(&b, 100 * MS, 10 * MS);
	CHECK(budget_left(&b, 1000 * MS));
	budget_charge(&b, 1005 * MS, 6 * MS);
	budget_charge(&b, 1010 * MS, 6 * MS);
	CHECK(!budget_left(&b, 1050 * MS));
	CHECK_INT(b.spent, 1);
	CHECK_INT(budget_next_usec(&b), 1100 * MS);
	/* Charging more in a spent window counts it once. */
	budget_charge(&b, 1060 * MS, 1 * MS);
	CHECK_INT(b.spent, 1);
	CHECK(budget_left(&b, 1100 * MS));
	CHECK_INT(b.used_usec, 0);
}

static void over_any_stretch_the_work_gets_its_share(void) {
	struct budget b;
	uint64_t now = 5000 * MS, done = 0;

	/* Work that would take all of a CPU, in 1 ms pieces, for 10 s: it gets
	 * at most a window's share, plus the one piece that spends it, per
	 * window. */
	budget_init(&b, 100 * MS, 10 * MS);
	while (now < 15000 * MS) {
		if (budget_left(&b, now)) {
			budget_charge(&b, now + MS, MS);
			done += MS;
			now += MS;
		} else
			now = budget_next_usec(&b);
	}
	CHECK(done <= 100 * 10 * MS);
	CHECK(done >= 100 * 9 * MS);
}

static void a_clock_that_goes_back_starts_a_window(void) {
	struct budget b;

	budget_init(&b, 100 * MS, 10 * MS);
	budget_charge(&b, 1000 * MS, 20 * MS);
	CHECK(!budget_left(&b, 1001 * MS));
	CHECK(budget_left(&b, 500 * MS));
}

TEST_MAIN(T(work_goes_on_within_the_share), T(a_spent_window_waits_for_the_next),
	  T(over_any_stretch_the_work_gets_its_share), T(a_clock_that_goes_back_starts_a_window))
