#include "latencies.h"

#include <stdlib.h>
#include <string.h>

void latencies_add(struct latencies *l, uint64_t usec) {
	l->usec[l->next] = usec > UINT32_MAX ? UINT32_MAX : (uint32_t)usec;
	l->next = (l->next + 1) % LATENCIES_KEPT;
	if (l->n < LATENCIES_KEPT)
		l->n++;
	l->total++;
}

static int compare_u32(const void *a, const void *b) {
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The nearest rank: the smallest value with at least p of them at or below. */
static uint32_t rank(const uint32_t *sorted, size_t n, unsigned percent) {
	size_t i = (n * percent + 99) / 100;

	return sorted[i > 0 ? i - 1 : 0];
}

struct latencies_summary latencies_summary(const struct latencies *l) {
	struct latencies_summary s = { .n = l->n };
	uint32_t sorted[LATENCIES_KEPT];

	if (l->n == 0)
		return s;
	memcpy(sorted, l->usec, l->n * sizeof(*sorted));
	qsort(sorted, l->n, sizeof(*sorted), compare_u32);
	s.p50_usec = rank(sorted, l->n, 50);
	s.p90_usec = rank(sorted, l->n, 90);
	s.max_usec = sorted[l->n - 1];
	return s;
}
