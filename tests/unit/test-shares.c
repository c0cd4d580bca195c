/* Each user's share of the loop for control calls, from struct literals:
 * 10 % of the time that passes, up to a burst of 100 ms. */
#include "shares.h"
#include "test.h"

static const struct shares_limits limits = { 10, 100000 };

static void a_burst_then_a_share_of_the_time(void) {
	struct share s = { .used = true, .uid = 65534, .usec = 100000, .at = 1000000 };

	/* The burst: a call of 100 ms goes at once, the next waits. */
	CHECK(shares_wait_until(&s, &limits, 1000000) == 0);
	shares_take(&s, 100000);
	/* Nothing left: 10 % of the time refills it, so it is due in 1 ms of
	 * loop time per 10 ms, plus a millisecond's slack. */
	CHECK(shares_wait_until(&s, &limits, 1000000) == 1000000 + 1000);
	/* 50 ms later, 5 ms are back. */
	CHECK(shares_wait_until(&s, &limits, 1050000) == 0);
	CHECK(s.usec == 5000);
	/* A call that took more than there was: the debt is paid first. */
	shares_take(&s, 25000);
	CHECK(shares_wait_until(&s, &limits, 1050000) == 1050000 + 200000 + 1000);
	/* However long the quiet, no more than the burst. */
	CHECK(shares_wait_until(&s, &limits, 100000000) == 0);
	CHECK(s.usec == 100000);
}

static void each_user_keeps_its_own(void) {
	struct share slots[3] = { { .used = false } };
	struct share *a, *b, *c;

	a = shares_of(slots, 3, 1000, &limits, 0);
	CHECK(a && a->uid == 1000 && a->usec == 100000);
	a->connections = 1;
	shares_take(a, 100000);
	/* Its own again, spent, however many connections it opens. */
	CHECK(shares_of(slots, 3, 1000, &limits, 0) == a);
	CHECK(a->usec == 0);
	/* Closing them does not give it a fresh burst. */
	a->connections = 0;
	CHECK(shares_of(slots, 3, 1000, &limits, 0) == a && a->usec == 0);
	b = shares_of(slots, 3, 1001, &limits, 0);
	c = shares_of(slots, 3, 1002, &limits, 0);
	CHECK(b && c && b != a && c != a && b != c);
	/* Every slot used, none with a connection: a newcomer takes the
	 * fullest (a share full again is as good as none), not a spent one. */
	b->connections = 1;
	shares_take(c, 50000);
	CHECK(shares_of(slots, 3, 1003, &limits, 0) == c);
	/* Every slot with connections: none. */
	a->connections = c->connections = 1;
	CHECK(shares_of(slots, 3, 1004, &limits, 0) == NULL);
}

TEST_MAIN(T(a_burst_then_a_share_of_the_time), T(each_user_keeps_its_own))
