/* Seating a group's members: taking hold of each, what its cgroup allows
 * it, moving it, and giving its original back. */
#include "autoplace-internal.h"

#include <errno.h>
#include <stdlib.h>

#include "cgroup.h"
#include "cpulist.h"
#include "log.h"
#include "procfs.h"
#include "util.h"

/* A member's entry, while it is still the policy's: NULL when the process
 * is gone, or a rule or a hand took it (its placement is theirs then). */
static const struct placement *member_entry(const struct autoplace *a, const struct autoplace_member *mb) {
	const struct placement *p = placements_get(a->placements, mb->pid);

	return p && p->start_time == mb->start_time && p->owner == PLACEMENT_AUTO ? p : NULL;
}

void autoplace_release(struct autoplace *a, struct autoplace_group *g) {
	for (size_t i = 0; i < g->n_members; i++) {
		const struct placement *p = member_entry(a, &g->members[i]);
		if (p) {
			placements_give_back(a->placements, p);
			placements_remove(a->placements, p->pid);
		}
	}
	free(g->members);
	g->members = NULL;
	g->n_members = g->allocated_members = 0;
}

bool autoplace_is_member(const struct autoplace_group *g, pid_t pid) {
	for (size_t k = 0; k < g->n_members; k++)
		if (g->members[k].pid == pid)
			return true;
	return false;
}

/* Takes hold of pid for g, and what its cgroup cpuset allows it. -EPERM
 * when somebody else narrowed its affinity: such a process is not ours to
 * move. */
static const struct placement *hold(struct autoplace *a, const struct topology *t, struct autoplace_group *g, pid_t pid,
			      cpu_set_t *allowed, int *ret) {
	struct autoplace_member *grown;
	struct procfs_stat st;
	const struct placement *p;
	bool fresh;
	int r;

	r = cgroup_read_cpuset(a->root, pid, allowed);
	if (r == -ENOENT)
		*allowed = t->online;
	else if (r < 0)
		goto fail;
	CPU_AND(allowed, allowed, &t->online);
	r = procfs_read_stat(a->root, pid, &st);
	if (r < 0)
		goto fail;
	p = placements_get(a->placements, pid);
	fresh = !p || p->start_time != st.start_time;
	if (!fresh && autoplace_is_member(g, pid))
		return p->owner == PLACEMENT_AUTO ? p : (*ret = -EPERM, NULL);
	p = placements_track(a->placements, &st);
	if (!p) {
		r = -ESRCH;
		goto fail;
	}
	grown = util_grow(g->members, &g->allocated_members, g->n_members + 1, sizeof(*grown));
	r = grown ? placements_claim(a->placements, p, PLACEMENT_AUTO, NULL, allowed, false, NULL) : -ENOMEM;
	if (grown)
		g->members = grown;
	if (r < 0) {
		if (r == -EPERM) {
			char list[CPULIST_MAX], cpuset[CPULIST_MAX];
			cpu_set_t mask;
			placements_original_of(p, &mask);
			log_debug("%s[%d] has CPUs %s of %s: set by somebody else, not the automatic policy's to move",
				  p->comm, (int)pid, cpulist_format(&mask, list, sizeof(list)),
				  cpulist_format(allowed, cpuset, sizeof(cpuset)));
		}
		if (fresh)
			placements_remove(a->placements, pid);
		goto fail;
	}
	g->members[g->n_members++] = (struct autoplace_member){ .pid = pid, .start_time = st.start_time };
	return p;
fail:
	*ret = r;
	return NULL;
}

/* Seats g's members: member i on cpus[i], within its cgroup cpuset. */
static int move(struct autoplace *a, const struct topology *t, struct autoplace_group *g, const cpu_set_t *cpus) {
	CPU_ZERO(&g->cpus);
	for (size_t i = 0; i < g->group.n_pids; i++) {
		pid_t pid = g->group.pids[i];
		cpu_set_t allowed, target;
		int r = 0;
		const struct placement *p = hold(a, t, g, pid, &allowed, &r);

		if (r == -ESRCH || r == -ENOENT)
			continue;   /* gone meanwhile: one member less */
		if (r < 0)
			return r;
		CPU_AND(&target, &cpus[i], &allowed);
		if (CPU_COUNT(&target) == 0)
			return -EXDEV;
		r = placements_pin(a->placements, p, &target);
		if (r < 0 && r != -ESRCH)
			return r;
		CPU_OR(&g->cpus, &g->cpus, &target);
	}
	a->stats.moves++;
	return 0;
}

int autoplace_room_of(const struct autoplace *a, const struct topology *t, const struct autoplace_group *g,
		   struct room_view *v, struct room_group **groups) {
	struct room_group *rg = calloc(a->n_groups ? a->n_groups : 1, sizeof(*rg));

	*groups = rg;
	if (!rg)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_groups; i++) {
		const struct autoplace_group *o = &a->groups[i];
		enum experiment_state st = o->x.state;
		rg[i] = (struct room_group){
			.group = &o->group, .ccx = o->ccx, .cpus = o->cpus,
			.seated = st == EXPERIMENT_VALIDATING || st == EXPERIMENT_KEPT || st == EXPERIMENT_DRY_RUN,
		};
	}
	*v = (struct room_view){ t, a->sample, rg, a->n_groups, (size_t)(g - a->groups) };
	return 0;
}

int autoplace_seat(struct autoplace *a, const struct topology *t, struct autoplace_group *g, enum seating s) {
	struct room_view v;
	struct room_group *others;
	cpu_set_t taken, *cpus = calloc(g->group.n_pids ? g->group.n_pids : 1, sizeof(*cpus));
	unsigned *threads = autoplace_room_of(a, t, g, &v, &others) < 0 ? NULL : room_threads(&v, &g->group);
	int r;

	if (!cpus || !threads) {
		free(cpus);
		free(threads);
		free(others);
		return -ENOMEM;
	}
	/* Every seating of an experiment goes to the CCX its first went to, so
	 * that the CCX is not measured along with the seating; unless another
	 * group took the CPUs it needs there meanwhile. */
	r = -ENOSPC;
	if (g->ccx >= 0 && (unsigned)g->ccx < t->n_ccx) {
		room_taken_on(&v, g->ccx, &taken);
		r = placer_seat(&t->ccx[g->ccx], s, g->group.n_pids, threads, &taken, cpus);
	}
	if (r == -ENOSPC) {
		g->ccx = room_choose_ccx(&v, s, threads, &taken);
		if (g->ccx < 0)
			r = -EXFULL;
		else
			r = placer_seat(&t->ccx[g->ccx], s, g->group.n_pids, threads, &taken, cpus);
	}
	free(others);
	if (r >= 0)
		r = move(a, t, g, cpus);
	free(cpus);
	free(threads);
	return r;
}

double autoplace_members_waited(struct autoplace *a, struct autoplace_group *g) {
	struct waits_times before = { 0 }, now = { 0 };

	for (size_t i = 0; i < g->n_members; i++) {
		struct autoplace_member *mb = &g->members[i];
		struct waits_times w;
		bool had = mb->have_times;

		mb->have_times = member_entry(a, mb) && waits_read(a->root, mb->pid, &w) >= 0;
		if (!mb->have_times)
			continue;
		if (had) {
			before.run_ns += mb->times.run_ns;
			before.wait_ns += mb->times.wait_ns;
			now.run_ns += w.run_ns;
			now.wait_ns += w.wait_ns;
		}
		mb->times = w;
	}
	return waits_share(&before, &now);
}
