/* Each user's share of ccxd's loop for control calls: a bucket of loop time
 * per user, refilled at a share of the time that passes up to a burst, each
 * call's time taken off. A user over it waits; one that floods with calls
 * gets its answers later and costs ccxd no more than its share. Kept per uid
 * while that user has no connection too, so that connecting again gives no
 * fresh burst. Pure: the caller reads the clock. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct shares_limits {
	unsigned percent;            /* of the time that passes, given back */
	uint64_t burst_usec;         /* at most this much held */
};

struct share {
	bool used;                   /* false: a slot never given to a user */
	uid_t uid;
	unsigned connections;        /* the user's open ones */
	int64_t usec;                /* time left; below 0 after a call that took more */
	uint64_t at;                 /* CLOCK_MONOTONIC usec of the last refill */
};

/* 0 when s's user may have a call handled at now; else when it may. */
uint64_t shares_wait_until(struct share *s, const struct shares_limits *l, uint64_t now);

/* A call of s's user took usec of the loop. */
void shares_take(struct share *s, uint64_t usec);

/* uid's share among the n slots: its own, whether or not it has
 * connections open; else a slot of no connection, never used or the
 * fullest (a share refilled to the burst is as good as none), given a full
 * burst. NULL when every slot has connections. */
struct share *shares_of(struct share *slots, size_t n, uid_t uid, const struct shares_limits *l, uint64_t now);
