#include "budget.h"

void budget_init(struct budget *b, uint64_t window_usec, uint64_t share_usec) {
	*b = (struct budget){ .window_usec = window_usec, .share_usec = share_usec };
}

static void roll(struct budget *b, uint64_t now_usec) {
	if (now_usec - b->begin_usec >= b->window_usec || now_usec < b->begin_usec) {
		b->begin_usec = now_usec;
		b->used_usec = 0;
	}
}

bool budget_left(struct budget *b, uint64_t now_usec) {
	roll(b, now_usec);
	return b->used_usec < b->share_usec;
}

void budget_charge(struct budget *b, uint64_t now_usec, uint64_t cpu_usec) {
	bool had = budget_left(b, now_usec);

	b->used_usec += cpu_usec;
	if (had && b->used_usec >= b->share_usec)
		b->spent++;
}

uint64_t budget_next_usec(const struct budget *b) {
	return b->begin_usec + b->window_usec;
}
