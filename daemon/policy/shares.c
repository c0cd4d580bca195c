#include "shares.h"

static void refill(struct share *s, const struct shares_limits *l, uint64_t now) {
	if (now > s->at)
		s->usec += (int64_t)((now - s->at) * l->percent / 100);
	if (s->usec > (int64_t)l->burst_usec)
		s->usec = (int64_t)l->burst_usec;
	s->at = now;
}

uint64_t shares_wait_until(struct share *s, const struct shares_limits *l, uint64_t now) {
	refill(s, l, now);
	if (s->usec > 0)
		return 0;
	return now + (uint64_t)(-s->usec) * 100 / l->percent + 1000;
}

void shares_take(struct share *s, uint64_t usec) {
	s->usec -= (int64_t)usec;
}

struct share *shares_of(struct share *slots, size_t n, uid_t uid, const struct shares_limits *l, uint64_t now) {
	struct share *take = NULL;

	for (size_t i = 0; i < n; i++)
		if (slots[i].used && slots[i].uid == uid)
			return &slots[i];
	for (size_t i = 0; i < n; i++) {
		struct share *s = &slots[i];
		if (s->connections > 0)
			continue;
		if (!s->used) {
			take = s;
			break;
		}
		refill(s, l, now);
		if (!take || s->usec > take->usec)
			take = s;
	}
	if (take)
		*take = (struct share){ .used = true, .uid = uid, .usec = (int64_t)l->burst_usec, .at = now };
	return take;
}
