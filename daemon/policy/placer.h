/* Placement policy: pure functions from the topology, a rule and the current
 * load to CPU sets. Nothing here reads the system. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#include "rules.h"
#include "topology.h"

/* What else a decision depends on. */
struct placer_context {
	const unsigned *processes;  /* how many processes ccxd placed on each CCX, n_ccx long */
	size_t n_ccx;
	const cpu_set_t *allowed;   /* the CPUs the process may have (cgroup cpuset); NULL: all */
};

/* The CCXs a rule may use, best first: the ones it lists (or for ccx = auto
 * every usable CCX that has a CPU the process may have), ordered by its
 * prefer = key (cache: the largest L3; frequency: the highest clock the
 * topology knows, else the smallest L3), then those whose NUMA node has
 * memory, then by load, then by index. Returns how many were written to order (at most t->n_ccx), or
 * -ENOENT when a listed CCX does not exist or has no online CPU. */
int placer_rule_candidates(const struct topology *t, const struct rule *r,
			   const struct placer_context *ctx, unsigned *order);

/* Whether the CPUs r gives depend on the load: it takes the best of its
 * CCXs (ccx = auto, policy = compact), the least loaded among equals. */
bool placer_rule_balances(const struct rule *r);

/* Whether the load bears on anything r decides: it has CCXs to order
 * (ccx = auto, or more than one listed). With one CCX listed it is none. */
bool placer_rule_weighs_load(const struct rule *r);

/* The CPUs a process matched by r gets: for policy pin, every listed CCX (or
 * the best one for ccx = auto); for compact, the best listed CCX; for spread,
 * all of them (placer_spread_sets() says which thread gets which). With
 * smt = avoid only the first PU of each core. *ccx gets the first CCX used.
 * Returns 0, -ENOENT (no usable CCX), -EOPNOTSUPP for policies that are not
 * decided per process. */
int placer_rule_cpus(const struct topology *t, const struct rule *r, const struct placer_context *ctx,
		     cpu_set_t *ret, unsigned *ccx);

/* For policy spread: one CPU set per candidate CCX, best first, for threads
 * to take in turn. sets must hold t->n_ccx entries. Returns how many, or
 * -ENOENT. */
int placer_spread_sets(const struct topology *t, const struct rule *r, const struct placer_context *ctx,
		       cpu_set_t *sets);

/* The CPUs of one CCX, honouring smt = avoid. */
void placer_ccx_cpus(const struct topology_ccx *ccx, enum rule_smt smt, cpu_set_t *ret);

/* The indexes of the CCXs that cpus touches, at most max of them, in ret. Returns how many. */
size_t placer_ccxs_of(const struct topology *t, const cpu_set_t *cpus, unsigned *ret, size_t max);

/* "1" or "0,2": the CCXs that cpus touches, formatted into buf. */
char *placer_ccx_list(const struct topology *t, const cpu_set_t *cpus, char *buf, size_t size);

/* The load on each CCX (busy, t->n_ccx entries) in CPUs: the sum of what
 * its CPUs were busy (cpu_load, by CPU number, 0..1, n_cpus long; CPUs
 * beyond it count as idle). */
void placer_ccx_load(const struct topology *t, const double *cpu_load, size_t n_cpus, double *busy);

/* The CPUs of the largest usable CCX: a group that needs more is split. */
double placer_largest_ccx(const struct topology *t);

/* Communicating groups onto CCXs: each goes onto a usable CCX that has room
 * for its CPU demand after what ccxd seated there (busy, in CPUs; NULL:
 * none) and what the groups placed before it took; among those, onto one
 * whose NUMA node has memory, if any has room, and then onto the one
 * with the most room left once other programs' load is counted too (load,
 * in CPUs; NULL: none), for balance. That load steers but never refuses: it
 * is not pinned, so the scheduler can move it out of the way, and a busy
 * machine is where seating a group pays most. The largest demands go first,
 * so that small groups fill the gaps big ones leave (first-fit decreasing).
 * ccx[i] is -1 for a group that fits no CCX: it is left alone. Returns how
 * many were placed. */
size_t placer_groups(const struct topology *t, const double *demand, size_t n_groups, const double *busy,
		     const double *load, int *ccx);

/* Ways to seat a group's members inside one CCX, in the order tried when no
 * probe has measured them: the most CPU first. */
enum seating {
	SEATING_CORES,             /* each member on a physical core of its own */
	SEATING_SMT,               /* the members on SMT siblings of one core */
	SEATING_SHARED,            /* all members on one shared CPU */
	SEATING_CCX,               /* each member on the whole CCX: the one seating for a group of
				    * several users' processes (groups_users()) */
	_SEATING_MAX,
};

const char *seating_to_string(enum seating s);

/* What one group needs to be seated. */
struct placer_group_need {
	double demand;             /* CPUs: what its members used */
	enum seating seating;      /* how it is to be seated */
	size_t n;                  /* members */
	const unsigned *threads;   /* each member's busy threads, as placer_seat() takes them */
};

/* The CCX for one group, counting room as the seating does: among the
 * usable CCXs with room for its CPU demand (as placer_groups() counts it),
 * those where its seating fits in cores no other group holds a CPU of
 * (taken, n_ccx sets, by CCX; NULL: none) come first: one-per-core needs a
 * free core per busy thread, smt-siblings free cores' PUs, shared-cpu one
 * free core. Then, as placer_groups(), a CCX with local memory, then the
 * most room left after load. A CCX where it only fits on others' cores is
 * still chosen when none is better: seating there shares their cores, as
 * it always did. Returns the CCX, or -1 when none has room for its demand. */
int placer_group_ccx(const struct topology *t, const struct placer_group_need *need, const double *busy,
		     const double *load, const cpu_set_t *taken);

/* Whether seating s of these members fits on ccx in cores that have no CPU
 * in taken (NULL: none). */
bool placer_seat_fits(const struct topology_ccx *ccx, enum seating s, size_t n, const unsigned *threads,
		      const cpu_set_t *taken);

/* The CPUs of each of n members (member_cpus has n entries) for seating s on
 * ccx, preferring cores with no CPU in taken (given to other groups already;
 * NULL: none). threads[i] is member i's busy threads (NULL, 0 or 1: one),
 * each of which needs a CPU: one-per-core gives it that many cores;
 * smt-siblings packs every member's threads onto sibling PUs over the
 * fewest cores (members of one thread each: onto one core, as a pair of
 * processes shares a core); shared-cpu is only for members of one thread.
 * -ENOSPC when the CCX cannot seat them that way (too few cores, no SMT). */
int placer_seat(const struct topology_ccx *ccx, enum seating s, size_t n, const unsigned *threads,
		const cpu_set_t *taken, cpu_set_t *member_cpus);
