#include "seatings.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

const enum seating seatings_default[SEATINGS_DEFAULT_N] = { SEATING_CORES, SEATING_SMT, SEATING_SHARED };

static const int seating_relation[_SEATING_MAX] = {
	[SEATING_CORES] = PROBE_SAME_CCX,
	[SEATING_SMT] = PROBE_SMT,
	[SEATING_SHARED] = PROBE_SAME_CPU,
	[SEATING_CCX] = PROBE_SAME_CCX,
};

static bool figure_beats(const struct seatings_figure *a, const struct seatings_figure *b) {
	return a->measured && b->measured && a->min > b->max;
}

static int describe_figure(char *buf, size_t size, const char *name, const struct seatings_figure *f) {
	return snprintf(buf, size, "%s %.2f GiB/s (%.2f-%.2f)", name, f->gib_s, f->min, f->max);
}

int seatings_rank(const struct probe_results *r, const enum seating *allowed, size_t n,
		  struct seatings_ranking *ret) {
	struct seatings_ranking *p = ret;
	bool any = false, differs = false, swapped = true;
	size_t len;

	memset(p, 0, sizeof(*p));
	if (n == 0 || n > _SEATING_MAX) {
		allowed = seatings_default;
		n = SEATINGS_DEFAULT_N;
	}
	memcpy(p->order, allowed, n * sizeof(*allowed));
	p->n_order = n;
	snprintf(p->date, sizeof(p->date), "%s", r->date ? r->date : "?");
	for (size_t i = 0; i < r->n_relations; i++) {
		const struct probe_relation_result *x = &r->relations[i];
		struct seatings_figure f = { true, (int)x->relation, x->pipe_gib_s.median, x->pipe_gib_s.min,
						    x->pipe_gib_s.max };
		if (x->pipe_gib_s.n == 0)
			continue;
		for (int s = 0; s < _SEATING_MAX; s++)
			if (seating_relation[s] == (int)x->relation) {
				p->seating[s] = f;
				any = true;
			}
		/* Relations come nearest first: the last is the farthest. */
		if (!p->apart.measured || (int)x->relation > p->apart.relation)
			p->apart = f;
	}
	if (!any) {
		snprintf(p->note, sizeof(p->note), "probe of %s measured none of the layouts: topology order", p->date);
		return -ENODATA;
	}
	/* Only clear wins reorder; ties keep the configured order. Beating is
	 * transitive and never mutual, so the passes end. */
	while (swapped) {
		size_t prev = SIZE_MAX;
		swapped = false;
		/* Among the measured ones only: one never measured keeps its place. */
		for (size_t i = 0; i < p->n_order; i++) {
			if (!p->seating[p->order[i]].measured)
				continue;
			if (prev != SIZE_MAX && figure_beats(&p->seating[p->order[i]], &p->seating[p->order[prev]])) {
				enum seating x = p->order[prev];
				p->order[prev] = p->order[i];
				p->order[i] = x;
				swapped = true;
			}
			prev = i;
		}
	}
	for (int s = 0; s < _SEATING_MAX; s++)
		if (figure_beats(&p->seating[s], &p->apart) || figure_beats(&p->apart, &p->seating[s]))
			differs = true;
	p->no_gain = !differs;

	len = (size_t)snprintf(p->note, sizeof(p->note), "probe of %s: ", p->date);
	for (size_t i = 0; i < p->n_order && len < sizeof(p->note); i++)
		if (p->seating[p->order[i]].measured) {
			len += (size_t)describe_figure(p->note + len, sizeof(p->note) - len, seating_to_string(p->order[i]),
						       &p->seating[p->order[i]]);
			if (len < sizeof(p->note))
				len += (size_t)snprintf(p->note + len, sizeof(p->note) - len, ", ");
		}
	if (len < sizeof(p->note))
		len += (size_t)describe_figure(p->note + len, sizeof(p->note) - len, "apart", &p->apart);
	if (len < sizeof(p->note))
		snprintf(p->note + len, sizeof(p->note) - len, p->no_gain
			 ? ": no layout differs from apart beyond the noise, so groups are not moved"
			 : ": layouts tried in that order");
	return 0;
}
