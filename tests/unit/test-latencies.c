/* Percentiles of the last delays, from numbers the test gives. */
#include "latencies.h"
#include "test.h"

static void none_is_no_summary(void) {
	struct latencies l = { .n = 0 };

	CHECK_INT(latencies_summary(&l).n, 0);
}

static void percentiles_by_nearest_rank(void) {
	struct latencies l = { .n = 0 };
	struct latencies_summary s;

	/* 100 down to 1: the order they come in does not matter. */
	for (int i = 100; i >= 1; i--)
		latencies_add(&l, (uint64_t)i);
	s = latencies_summary(&l);
	CHECK_INT(s.n, 100);
	CHECK_INT(s.p50_usec, 50);
	CHECK_INT(s.p90_usec, 90);
	CHECK_INT(s.max_usec, 100);
}

static void only_the_last_are_kept(void) {
	struct latencies l = { .n = 0 };
	struct latencies_summary s;

	for (int i = 0; i < LATENCIES_KEPT; i++)
		latencies_add(&l, 1000000);
	for (int i = 1; i <= LATENCIES_KEPT; i++)
		latencies_add(&l, (uint64_t)i);
	s = latencies_summary(&l);
	CHECK_INT(s.n, LATENCIES_KEPT);
	CHECK_INT(s.max_usec, LATENCIES_KEPT);
	CHECK_INT(s.p50_usec, LATENCIES_KEPT / 2);
	CHECK_INT((int)l.total, 2 * LATENCIES_KEPT);
}

static void one_is_every_percentile(void) {
	struct latencies l = { .n = 0 };
	struct latencies_summary s;

	latencies_add(&l, 7);
	s = latencies_summary(&l);
	CHECK_INT(s.p50_usec, 7);
	CHECK_INT(s.p90_usec, 7);
	CHECK_INT(s.max_usec, 7);
}

static void a_huge_delay_is_capped_not_wrapped(void) {
	struct latencies l = { .n = 0 };

	latencies_add(&l, (uint64_t)UINT32_MAX + 5);
	CHECK(latencies_summary(&l).max_usec == UINT32_MAX);
}

TEST_MAIN(T(none_is_no_summary), T(percentiles_by_nearest_rank), T(only_the_last_are_kept),
	  T(one_is_every_percentile), T(a_huge_delay_is_capped_not_wrapped))
