#include "autoplace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "actuator.h"
#include "cpulist.h"
#include "log.h"
#include "procfs.h"

/* A group unseen for this many samples has ended: its members get their
 * originals back. Short gaps (a pipeline between two files) keep it. */
#define AUTOPLACE_RELEASE_AFTER 5
/* After every seating was reverted, wait this many samples before trying
 * again: what the machine does may have changed by then. */
#define AUTOPLACE_BACKOFF 60
/* Moves started per sample, so that a burst of new groups is seated a few at
 * a time and each experiment's window is not disturbed by all the others. */
#define AUTOPLACE_MOVES_PER_CYCLE 4
#define AUTOPLACE_WINDOW_MAX 8

static const enum seating default_order[] = { SEATING_CORES, SEATING_SMT, SEATING_SHARED };

struct learned {
	char *programs;
	enum seating seating;
};

struct autoplace {
	const char *root;
	struct sampler *sampler;
	struct sampler_result *sample;
	struct autoplace_group *groups;
	size_t n_groups;
	struct learned *learned;
	size_t n_learned;
	struct autoplace_stats stats;
};

const char *autoplace_state_to_string(enum autoplace_state s) {
	switch (s) {
	case AUTOPLACE_MEASURING: return "measuring";
	case AUTOPLACE_VALIDATING: return "validating";
	case AUTOPLACE_KEPT: return "kept";
	case AUTOPLACE_REVERTED: return "reverted";
	case AUTOPLACE_DRY_RUN: return "dry-run";
	case AUTOPLACE_BY_RULE: return "by-rule";
	case AUTOPLACE_BY_HAND: return "by-hand";
	case AUTOPLACE_NO_ROOM: return "no-room";
	}
	return "unknown";
}

int autoplace_new(const char *root, struct autoplace **ret) {
	struct autoplace *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	a->root = root;
	r = sampler_new(root, &a->sampler);
	if (r < 0) {
		free(a);
		return r;
	}
	*ret = a;
	return 0;
}

/* ---- members: moving and putting back ----------------------------------- */

static void release(struct autoplace *a, struct autoplace_group *g, bool (*ruled)(void *, pid_t), void *userdata) {
	for (size_t i = 0; i < g->n_members; i++) {
		struct autoplace_member *mb = &g->members[i];
		/* A rule took it meanwhile: its placement is the rule's now. */
		if (!ruled || !ruled(userdata, mb->pid)) {
			int r = actuator_apply(a->root, mb->pid, mb->pidfd, &mb->original);
			if (r < 0 && r != -ESRCH)
				log_warning_errno(r, "Failed to restore the affinity of process %d: %m", (int)mb->pid);
		}
		close(mb->pidfd);
	}
	free(g->members);
	g->members = NULL;
	g->n_members = 0;
}

static void group_clear(struct autoplace *a, struct autoplace_group *g) {
	release(a, g, NULL, NULL);
	free(g->group.pids);
	free(g->group.channels);
	free(g->programs);
}

void autoplace_release_all(struct autoplace *a) {
	for (size_t i = 0; i < a->n_groups; i++) {
		struct autoplace_group *g = &a->groups[i];
		release(a, g, NULL, NULL);
		if (g->state == AUTOPLACE_VALIDATING || g->state == AUTOPLACE_KEPT) {
			g->state = AUTOPLACE_MEASURING;
			g->n_before = g->n_after = 0;
			g->next = 0;
		}
	}
}

void autoplace_free(struct autoplace *a) {
	if (!a)
		return;
	for (size_t i = 0; i < a->n_groups; i++)
		group_clear(a, &a->groups[i]);
	free(a->groups);
	for (size_t i = 0; i < a->n_learned; i++)
		free(a->learned[i].programs);
	free(a->learned);
	sampler_result_free(a->sample);
	sampler_free(a->sampler);
	free(a);
}

bool autoplace_forget(struct autoplace *a, pid_t pid, cpu_set_t *original) {
	for (size_t i = 0; i < a->n_groups; i++) {
		struct autoplace_group *g = &a->groups[i];
		for (size_t k = 0; k < g->n_members; k++) {
			if (g->members[k].pid != pid)
				continue;
			*original = g->members[k].original;
			close(g->members[k].pidfd);
			g->members[k] = g->members[--g->n_members];
			return true;
		}
	}
	return false;
}

static struct autoplace_member *member_of(struct autoplace_group *g, pid_t pid) {
	for (size_t k = 0; k < g->n_members; k++)
		if (g->members[k].pid == pid)
			return &g->members[k];
	return NULL;
}

/* Takes hold of pid for g: a pidfd and its affinity as it was. -EPERM when
 * somebody else narrowed that affinity: such a process is not ours to move. */
static int hold(struct autoplace *a, const struct topology *t, struct autoplace_group *g, pid_t pid,
		cpu_set_t *allowed) {
	struct autoplace_member *mb, *grown;
	struct procfs_stat st;
	cpu_set_t current;
	int fd, r;

	r = procfs_read_cpuset(a->root, pid, allowed);
	if (r == -ENOENT)
		*allowed = t->online;
	else if (r < 0)
		return r;
	CPU_AND(allowed, allowed, &t->online);
	if (member_of(g, pid))
		return 0;
	r = procfs_read_stat(a->root, pid, &st);
	if (r < 0)
		return r;
	fd = actuator_open(a->root, pid, st.start_time);
	if (fd < 0)
		return fd;
	if (actuator_get(pid, &current) < 0 || !cpulist_is_subset(allowed, &current)) {
		close(fd);
		return -EPERM;
	}
	grown = realloc(g->members, (g->n_members + 1) * sizeof(*grown));
	if (!grown) {
		close(fd);
		return -ENOMEM;
	}
	g->members = grown;
	mb = &g->members[g->n_members++];
	mb->pid = pid;
	mb->pidfd = fd;
	mb->original = current;
	return 0;
}

/* Seats g's members: member i on cpus[i], within its cgroup cpuset. */
static int move(struct autoplace *a, const struct topology *t, struct autoplace_group *g, const cpu_set_t *cpus) {
	CPU_ZERO(&g->cpus);
	for (size_t i = 0; i < g->group.n_pids; i++) {
		pid_t pid = g->group.pids[i];
		cpu_set_t allowed, target;
		struct autoplace_member *mb;
		int r = hold(a, t, g, pid, &allowed);

		if (r == -ESRCH || r == -ENOENT)
			continue;   /* gone meanwhile: one member less */
		if (r < 0)
			return r;
		CPU_AND(&target, &cpus[i], &allowed);
		if (CPU_COUNT(&target) == 0)
			return -EXDEV;
		mb = member_of(g, pid);
		r = actuator_apply(a->root, pid, mb->pidfd, &target);
		if (r < 0 && r != -ESRCH)
			return r;
		CPU_OR(&g->cpus, &g->cpus, &target);
	}
	a->stats.moves++;
	return 0;
}

/* ---- decisions --------------------------------------------------------- */

static int compare_str(const void *x, const void *y) {
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* "a|b": the sorted executables of the group, the key that what won is kept
 * under. Process names stand in for executables that cannot be read. */
static char *programs_of(struct autoplace *a, const struct group *grp, const struct sampler_result *s) {
	char **names = calloc(grp->n_pids ? grp->n_pids : 1, sizeof(*names)), *key = NULL;
	size_t len = 1;

	for (size_t i = 0; names && i < grp->n_pids; i++) {
		if (procfs_read_exe(a->root, grp->pids[i], &names[i]) < 0) {
			for (size_t k = 0; k < s->n_procs; k++)
				if (s->procs[k].pid == grp->pids[i])
					names[i] = strdup(s->procs[k].comm);
		}
		if (!names[i])
			names[i] = strdup("?");
		len += names[i] ? strlen(names[i]) + 1 : 2;
	}
	if (names) {
		qsort(names, grp->n_pids, sizeof(*names), compare_str);
		key = calloc(1, len);
		for (size_t i = 0; key && i < grp->n_pids; i++) {
			if (i)
				strcat(key, "|");
			strcat(key, names[i] ? names[i] : "?");
		}
		for (size_t i = 0; i < grp->n_pids; i++)
			free(names[i]);
	}
	free(names);
	return key;
}

static void plan_order(struct autoplace *a, struct autoplace_group *g) {
	enum seating first = _SEATING_MAX;

	for (size_t i = 0; g->programs && i < a->n_learned; i++)
		if (strcmp(a->learned[i].programs, g->programs) == 0)
			first = a->learned[i].seating;
	g->n_order = 0;
	if (first != _SEATING_MAX)
		g->order[g->n_order++] = first;
	for (size_t i = 0; i < sizeof(default_order) / sizeof(default_order[0]); i++)
		if (default_order[i] != first)
			g->order[g->n_order++] = default_order[i];
	g->next = 0;
}

static void learn(struct autoplace *a, const struct autoplace_group *g) {
	struct learned *grown;

	if (!g->programs)
		return;
	for (size_t i = 0; i < a->n_learned; i++)
		if (strcmp(a->learned[i].programs, g->programs) == 0) {
			a->learned[i].seating = g->seating;
			return;
		}
	grown = realloc(a->learned, (a->n_learned + 1) * sizeof(*grown));
	if (!grown)
		return;
	a->learned = grown;
	a->learned[a->n_learned].programs = strdup(g->programs);
	if (a->learned[a->n_learned].programs)
		a->learned[a->n_learned++].seating = g->seating;
}

static double demand_of(const struct group *grp) {
	/* A member that is hardly busy still needs somewhere to run. */
	double floor = (double)grp->n_pids * 0.1;

	return grp->cpu > floor ? grp->cpu : floor;
}

/* The CCX for g, with room counted after every other group that sits
 * somewhere; and the CPUs those groups hold there, which g's seating avoids. */
static int choose_ccx(const struct autoplace *a, const struct topology *t, const struct autoplace_group *g,
		      cpu_set_t *taken) {
	double *busy = calloc(t->n_ccx ? t->n_ccx : 1, sizeof(*busy)), demand = demand_of(&g->group);
	int ccx = -1;

	if (!busy)
		return -1;
	for (size_t i = 0; i < a->n_groups; i++) {
		const struct autoplace_group *o = &a->groups[i];
		if (o == g || o->ccx < 0 || (o->state != AUTOPLACE_VALIDATING && o->state != AUTOPLACE_KEPT))
			continue;
		busy[o->ccx] += demand_of(&o->group);
	}
	placer_groups(t, &demand, 1, busy, &ccx);
	free(busy);
	CPU_ZERO(taken);
	for (size_t i = 0; ccx >= 0 && i < a->n_groups; i++) {
		const struct autoplace_group *o = &a->groups[i];
		if (o != g && o->ccx == ccx && (o->state == AUTOPLACE_VALIDATING || o->state == AUTOPLACE_KEPT))
			CPU_OR(taken, taken, &o->cpus);
	}
	return ccx;
}

/* The seatings left to try, in order, until one can be put in place. */
static void try_next_seating(struct autoplace *a, const struct topology *t, struct autoplace_group *g,
			     bool (*ruled)(void *, pid_t), void *userdata) {
	cpu_set_t taken, *cpus = calloc(g->group.n_pids ? g->group.n_pids : 1, sizeof(*cpus));

	g->ccx = cpus ? choose_ccx(a, t, g, &taken) : -1;
	if (g->ccx < 0) {
		g->state = AUTOPLACE_NO_ROOM;
		free(cpus);
		return;
	}
	for (; g->next < g->n_order; g->next++) {
		int r = placer_seat(&t->ccx[g->ccx], g->order[g->next], g->group.n_pids, &taken, cpus);
		if (r == -ENOSPC)
			continue;
		if (r >= 0)
			r = move(a, t, g, cpus);
		if (r == -EPERM) {
			release(a, g, ruled, userdata);
			g->state = AUTOPLACE_BY_HAND;
			g->backoff = AUTOPLACE_BACKOFF;
			free(cpus);
			return;
		}
		if (r < 0) {
			release(a, g, ruled, userdata);
			log_debug_errno(r, "Seating group %d %s failed, trying the next: %m", (int)g->id,
					seating_to_string(g->order[g->next]));
			continue;
		}
		g->seating = g->order[g->next++];
		g->state = AUTOPLACE_VALIDATING;
		g->settle = 1;   /* the sample in flight straddles the move */
		g->n_after = 0;
		free(cpus);
		return;
	}
	g->state = AUTOPLACE_REVERTED;
	g->backoff = AUTOPLACE_BACKOFF;
	free(cpus);
}

static void record(double *window, size_t *n, double v) {
	if (*n == AUTOPLACE_WINDOW_MAX) {
		memmove(window, window + 1, (AUTOPLACE_WINDOW_MAX - 1) * sizeof(*window));
		(*n)--;
	}
	window[(*n)++] = v;
}

static void judge(struct autoplace *a, const struct topology *t, struct autoplace_group *g,
		  const struct autoplace_options *o, bool (*ruled)(void *, pid_t), void *userdata) {
	struct autoplace_trial *trial = &g->trials[g->n_trials < _SEATING_MAX ? g->n_trials++ : _SEATING_MAX - 1];
	enum validator_verdict v = validator_judge(g->before, g->n_before, g->after, g->n_after, o->min_gain,
						   &trial->evidence);

	trial->seating = g->seating;
	trial->kept = v == VALIDATOR_KEEP;
	log_info("Group %d (%s) on CCX %d %s: %.1f -> %.1f MiB/s (%+.0f %%): %s", (int)g->id,
		 g->programs ? g->programs : "?", g->ccx, seating_to_string(g->seating),
		 trial->evidence.before / 1048576, trial->evidence.after / 1048576, trial->evidence.gain * 100,
		 trial->kept ? "kept" : "reverted");
	if (trial->kept) {
		g->state = AUTOPLACE_KEPT;
		a->stats.kept++;
		learn(a, g);
		return;
	}
	a->stats.reverted++;
	release(a, g, ruled, userdata);
	try_next_seating(a, t, g, ruled, userdata);
}

static void step(struct autoplace *a, const struct topology *t, struct autoplace_group *g,
		 const struct autoplace_options *o, bool (*ruled)(void *, pid_t), void *userdata, unsigned *moves) {
	double rate = g->group.bytes_per_s;

	switch (g->state) {
	case AUTOPLACE_NO_ROOM:
	case AUTOPLACE_MEASURING:
		record(g->before, &g->n_before, rate);
		if (g->n_before >= o->window && *moves < AUTOPLACE_MOVES_PER_CYCLE) {
			(*moves)++;
			g->n_trials = 0;
			plan_order(a, g);
			try_next_seating(a, t, g, ruled, userdata);
		}
		break;
	case AUTOPLACE_VALIDATING:
		if (g->settle > 0) {
			g->settle--;
			break;
		}
		record(g->after, &g->n_after, rate);
		if (g->n_after >= o->window)
			judge(a, t, g, o, ruled, userdata);
		break;
	case AUTOPLACE_REVERTED:
	case AUTOPLACE_BY_HAND:
		if (g->backoff > 0 && --g->backoff == 0) {
			g->state = AUTOPLACE_MEASURING;
			g->n_before = 0;
		}
		break;
	default:
		break;
	}
}

/* ---- the cycle ----------------------------------------------------------- */

static struct autoplace_group *find_group(struct autoplace *a, pid_t id) {
	for (size_t i = 0; i < a->n_groups; i++)
		if (a->groups[i].id == id)
			return &a->groups[i];
	return NULL;
}

static int merge_groups(struct autoplace *a, struct group *fresh, size_t n) {
	for (size_t i = 0; i < a->n_groups; i++)
		a->groups[i].seen = false;
	for (size_t i = 0; i < n; i++) {
		struct autoplace_group *g = find_group(a, fresh[i].id);
		if (!g) {
			struct autoplace_group *grown = realloc(a->groups, (a->n_groups + 1) * sizeof(*grown));
			if (!grown) {
				groups_free(fresh + i, n - i);
				return -ENOMEM;
			}
			a->groups = grown;
			g = &a->groups[a->n_groups++];
			memset(g, 0, sizeof(*g));
			g->id = fresh[i].id;
			g->ccx = -1;
			g->state = AUTOPLACE_MEASURING;
			g->programs = programs_of(a, &fresh[i], a->sample);
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

/* Groups that ended: their members get their originals back. */
static void drop_ended(struct autoplace *a, bool (*ruled)(void *, pid_t), void *userdata) {
	size_t k = 0;

	for (size_t i = 0; i < a->n_groups; i++) {
		struct autoplace_group *g = &a->groups[i];
		if (!g->seen && ++g->quiet >= AUTOPLACE_RELEASE_AFTER) {
			release(a, g, ruled, userdata);
			group_clear(a, g);
			continue;
		}
		a->groups[k++] = *g;
	}
	a->n_groups = k;
}

static bool any_ruled(const struct group *grp, bool (*ruled)(void *, pid_t), void *userdata) {
	for (size_t k = 0; k < grp->n_pids; k++)
		if (ruled(userdata, grp->pids[k]))
			return true;
	return false;
}

static void dry_run(struct autoplace *a, const struct topology *t, struct autoplace_group *g) {
	cpu_set_t taken, *cpus = calloc(g->group.n_pids ? g->group.n_pids : 1, sizeof(*cpus));

	g->state = AUTOPLACE_NO_ROOM;
	g->ccx = cpus ? choose_ccx(a, t, g, &taken) : -1;
	CPU_ZERO(&g->cpus);
	plan_order(a, g);
	for (size_t k = 0; g->ccx >= 0 && k < g->n_order; k++) {
		if (placer_seat(&t->ccx[g->ccx], g->order[k], g->group.n_pids, &taken, cpus) < 0)
			continue;
		for (size_t i = 0; i < g->group.n_pids; i++)
			CPU_OR(&g->cpus, &g->cpus, &cpus[i]);
		g->seating = g->order[k];
		g->state = AUTOPLACE_DRY_RUN;
		break;
	}
	free(cpus);
}

static uint64_t cpu_time_usec(void) {
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

int autoplace_cycle(struct autoplace *a, const struct topology *t, enum config_mode mode,
		    const struct autoplace_options *options, bool (*ruled)(void *userdata, pid_t pid),
		    void *userdata, uint64_t now_usec) {
	struct autoplace_options o = *options;
	uint64_t started = cpu_time_usec();
	struct sampler_result *sample;
	struct group *fresh;
	unsigned moves = 0;
	size_t n;
	int r;

	if (o.window < 1)
		o.window = 1;
	if (o.window > AUTOPLACE_WINDOW_MAX)
		o.window = AUTOPLACE_WINDOW_MAX;
	r = sampler_sample(a->sampler, now_usec, &sample);
	if (r < 0)
		return r;
	r = groups_build(sample, o.min_rate, &fresh, &n);
	if (r < 0) {
		sampler_result_free(sample);
		return r;
	}
	sampler_result_free(a->sample);
	a->sample = sample;
	r = merge_groups(a, fresh, n);
	free(fresh);
	drop_ended(a, ruled, userdata);

	for (size_t i = 0; i < a->n_groups; i++) {
		struct autoplace_group *g = &a->groups[i];
		if (!g->seen)
			continue;
		if (any_ruled(&g->group, ruled, userdata)) {
			release(a, g, ruled, userdata);
			g->state = AUTOPLACE_BY_RULE;
			g->ccx = -1;
			continue;
		}
		if (g->state == AUTOPLACE_BY_RULE || g->state == AUTOPLACE_DRY_RUN) {
			g->state = AUTOPLACE_MEASURING;
			g->n_before = 0;
		}
		if (mode == CONFIG_MODE_DRY_RUN)
			dry_run(a, t, g);
		else
			step(a, t, g, &o, ruled, userdata, &moves);
	}

	a->stats.cycles++;
	a->stats.last_scanned = sample->n_scanned;
	a->stats.last_active = sample->n_procs;
	a->stats.last_cycle_usec = cpu_time_usec() - started;
	return r;
}

const struct autoplace_group *autoplace_groups(const struct autoplace *a, size_t *n) {
	*n = a->n_groups;
	return a->groups;
}

const struct sampler_result *autoplace_sample(const struct autoplace *a) {
	return a->sample;
}

struct autoplace_stats autoplace_stats(const struct autoplace *a) {
	return a->stats;
}
