/* A group's life: built from each sample, merged with the groups the policy
 * follows, thinned once settled, and ended. */
#include "autoplace-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "procfs.h"
#include "util.h"

void autoplace_group_clear(struct autoplace_group *g) {
	free(g->members);
	free(g->group.pids);
	free(g->group.channels);
	free(g->programs);
}

bool autoplace_in_a_group(void *userdata, pid_t pid) {
	const struct autoplace *a = userdata;

	for (size_t i = 0; i < a->n_groups; i++) {
		const struct autoplace_group *g = &a->groups[i];
		if (autoplace_is_member(g, pid))
			return true;
		for (size_t k = 0; k < g->group.n_pids; k++)
			if (g->group.pids[k] == pid)
				return true;
	}
	return false;
}

/* Whether a rule or a hand placed pid: rules win. */
static bool ruled(const struct autoplace *a, pid_t pid) {
	const struct placement *p = placements_get(a->placements, pid);

	return p && p->owner != PLACEMENT_AUTO;
}

static struct autoplace_group *find_group(struct autoplace *a, pid_t id) {
	for (size_t i = 0; i < a->n_groups; i++)
		if (a->groups[i].id == id)
			return &a->groups[i];
	return NULL;
}

int autoplace_build_groups(struct autoplace *a, const struct sampler_result *sample, const struct autoplace_options *o,
			double capacity, struct group **ret, size_t *n) {
	struct group *previous = calloc(a->n_groups ? a->n_groups : 1, sizeof(*previous));
	struct groups_limits limits = { .min_rate = o->min_rate, .min_message_rate = o->min_message_rate };
	int r;

	if (!previous)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_groups; i++)
		if (a->groups[i].seen)
			previous[limits.n_previous++] = a->groups[i].group;   /* shallow: only read */
	limits.previous = previous;
	r = groups_build(sample, &limits, capacity, ret, n);
	free(a->cut);
	a->cut = NULL;
	a->n_cut = 0;
	if (r >= 0 && groups_cut(sample, &limits, *ret, *n, &a->cut, &a->n_cut) < 0) {
		a->cut = NULL;
		a->n_cut = 0;
	}
	free(previous);
	return r;
}

int autoplace_merge_groups(struct autoplace *a, struct group *fresh, size_t n) {
	for (size_t i = 0; i < a->n_groups; i++)
		a->groups[i].seen = false;
	for (size_t i = 0; i < n; i++) {
		struct autoplace_group *g = find_group(a, fresh[i].id);
		if (!g) {
			struct autoplace_group *grown =
				util_grow(a->groups, &a->allocated_groups, a->n_groups + 1, sizeof(*grown));
			if (!grown) {
				groups_free(fresh + i, n - i);
				return -ENOMEM;
			}
			a->groups = grown;
			g = &a->groups[a->n_groups++];
			memset(g, 0, sizeof(*g));
			g->id = fresh[i].id;
			g->ccx = -1;
			g->waited = -1;
			g->x.state = EXPERIMENT_MEASURING;
			g->programs = learned_programs(a->root, &fresh[i], a->sample);
		} else {
			free(g->group.pids);
			free(g->group.channels);
		}
		g->group = fresh[i];
		g->seen = true;
		g->quiet = 0;
	}
	return 0;
}

/* Whether a group seen in this sample holds one of g's members. */
static bool taken_over(const struct autoplace *a, const struct autoplace_group *g) {
	for (size_t i = 0; i < a->n_groups; i++) {
		const struct autoplace_group *o = &a->groups[i];
		if (o == g || !o->seen)
			continue;
		for (size_t k = 0; k < g->group.n_pids; k++)
			if (bsearch(&g->group.pids[k], o->group.pids, o->group.n_pids, sizeof(pid_t), util_compare_pid))
				return true;
	}
	return false;
}

/* Whether one of g's members has not exited. */
static bool any_alive(const struct autoplace *a, const struct autoplace_group *g) {
	for (size_t k = 0; k < g->group.n_pids; k++) {
		struct procfs_stat st;
		if (procfs_read_stat(a->root, g->group.pids[k], &st) == 0 && st.state != 'Z' && st.state != 'X')
			return true;
	}
	return false;
}

void autoplace_drop_ended(struct autoplace *a) {
	bool *ended = calloc(a->n_groups ? a->n_groups : 1, sizeof(*ended));
	size_t k = 0;

	for (size_t i = 0; ended && i < a->n_groups; i++)
		ended[i] = !a->groups[i].seen && (taken_over(a, &a->groups[i]) || !any_alive(a, &a->groups[i]));
	for (size_t i = 0; i < a->n_groups; i++) {
		struct autoplace_group *g = &a->groups[i];
		if ((ended && ended[i]) || (!g->seen && ++g->quiet >= AUTOPLACE_RELEASE_AFTER)) {
			autoplace_release(a, g);
			autoplace_group_clear(g);
			continue;
		}
		a->groups[k++] = *g;
	}
	a->n_groups = k;
	free(ended);
}

void autoplace_thin_settled(struct autoplace *a) {
	pid_t *pids;
	size_t n = 0, max = 0;

	for (size_t i = 0; i < a->n_groups; i++)
		max += a->groups[i].group.n_pids;
	pids = calloc(max ? max : 1, sizeof(*pids));
	if (!pids)
		return;
	for (size_t i = 0; i < a->n_groups; i++) {
		struct autoplace_group *g = &a->groups[i];
		g->thinned = g->seen && groups_thin(&g->group, a->sample, g->x.state == EXPERIMENT_KEPT, g->thinned);
		for (size_t k = 0; g->thinned && k < g->group.n_pids; k++)
			pids[n++] = g->group.pids[k];
	}
	sampler_thin(a->sampler, pids, n);
	free(pids);
}

bool autoplace_any_ruled(const struct autoplace *a, const struct group *grp) {
	for (size_t k = 0; k < grp->n_pids; k++)
		if (ruled(a, grp->pids[k]))
			return true;
	return false;
}

enum groups_users autoplace_users_of(const struct autoplace *a, const struct autoplace_group *g) {
	uid_t *uids = calloc(g->group.n_pids ? g->group.n_pids : 1, sizeof(*uids));
	enum groups_users u;

	if (!uids)
		return GROUPS_ONE_SIDED;
	for (size_t k = 0; k < g->group.n_pids; k++)
		if (procfs_read_uid(a->root, g->group.pids[k], &uids[k]) < 0)
			uids[k] = (uid_t)-1;
	u = groups_users(&g->group, a->sample, uids);
	free(uids);
	return u;
}
