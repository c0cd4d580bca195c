/* Communicating groups: the connected components of the channel graph,
 * counting only the channels of pairs of processes that carry at least
 * min_rate bytes or min_message_rate messages a second between them, and
 * processes whose own threads are busy. A pure function of a sample, so that it can be
 * tested with struct literals. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sample.h"

/* Below this a channel is chatter, not a stream worth a placement: 1 MiB/s is
 * about what a pipe carries in 0.03 % of one core's time, far below what
 * moving two processes costs in cache refills. */
#define GROUPS_DEFAULT_MIN_RATE (1024.0 * 1024.0)

/* Or a pair that wakes each other this often: a ping-pong pair or a
 * fan-out (hackbench) moves few bytes, and is where one L3 pays the most:
 * every message crosses between the caches of the two, and the wake-up
 * between CCXs costs more than within one. 200 a second is a wake-up every
 * 5 ms: each of hackbench's sender and receiver pairs carries a few
 * hundred, 20 to a receiver, while a shell or a logger talks far less. */
#define GROUPS_DEFAULT_MIN_MESSAGE_RATE 200.0

/* A member that is hardly busy still needs somewhere to run. */
#define GROUPS_MIN_DEMAND 0.1

/* A message of at most this many bytes is handed over whole: a pipe's
 * buffer, and the most a socket's reader takes at once by default. Two
 * processes that send each other such messages both ways take turns: one
 * works on a request while the other waits for the answer. */
#define GROUPS_TURN_BYTES (64.0 * 1024.0)

struct group {
	pid_t id;                  /* its lowest pid: stable while its members are */
	pid_t *pids;               /* sorted */
	size_t n_pids, allocated_pids;
	size_t *channels;          /* indexes into the sample's channels */
	size_t n_channels, allocated_channels;
	double bytes_per_s;        /* over its channels between processes; a group of
				    * one process's threads: that process's read+write bytes */
	double cpu;                /* CPUs' worth of time its members used */
	double demand;             /* CPUs it needs: groups_process_demand() summed, or for a
				    * pair that takes turns (groups_take_turns()) at most one
				    * CPU between them, or what the larger needs alone */
	bool split;                /* a piece of a component too large for capacity */
	bool turns;                /* a pair that takes turns: what one CPU gains it is its
				    * wake-ups', which the probe's throughput does not tell */
};

/* A pair of processes that were in one group at the previous sample stays
 * joined down to a quarter of either threshold: a stream's rate wavers
 * from one sample to the next, the more so on a busy machine, and a group
 * that loses and regains a member at every sample cannot be placed. */
#define GROUPS_KEEP_FACTOR 0.25

/* What makes two processes' channels count. */
struct groups_limits {
	double min_rate;           /* bytes a second, or */
	double min_message_rate;   /* messages a second (0: bytes alone) */
	const struct group *previous;   /* the groups of the previous sample, whose pairs stay
					 * joined down to GROUPS_KEEP_FACTOR of those */
	size_t n_previous;
};

/* The CPUs a process needs: what it used, or one for each of its busy
 * threads where that is more, and never less than GROUPS_MIN_DEMAND. */
double groups_process_demand(const struct sampler_process *p);

/* Whether the two ends of c take turns: messages both ways (exact counts,
 * or pipes that both hold whole), of GROUPS_TURN_BYTES or less. A one-way
 * stream, or one of large writes, runs both ends at once. */
bool groups_take_turns(const struct sampler_channel *c);

/* Groups of two processes or more, and single processes with two busy
 * threads or more (groups of their threads), largest traffic first.
 * capacity (CPUs; 0: no limit) is what the largest CCX holds: a component
 * that needs more is split along its weakest channels (groups_split_channels),
 * and each piece that is still a group is one of its own. */
int groups_build(const struct sampler_result *sample, const struct groups_limits *limits, double capacity,
		 struct group **ret, size_t *n);
void groups_free(struct group *groups, size_t n);

/* A process that communicates but is in no group: the split left it alone. */
struct group_cut {
	pid_t pid;
	size_t component;          /* how many processes the component it was cut from had */
	double demand;             /* and the CPUs that component needed */
};

/* The processes on channels that count (as groups_build() counts them)
 * that are in none of groups (n, as groups_build() built them with the
 * same thresholds): cut off by a split, each alone. Sorted by pid. */
int groups_cut(const struct sampler_result *sample, const struct groups_limits *limits, const struct group *groups,
	       size_t n, struct group_cut **ret, size_t *n_ret);

/* Whether g is the kernel's to place: one process's threads alone, where
 * the kernel's cache-aware balancing is on (llc_balancing 1, topology.h).
 * That balancing keeps a process's threads on one LLC and lets them spill
 * to another when theirs is crowded, which a pin would not; what it does
 * not do is put separate processes together, and that stays ccxd's. */
bool groups_for_the_kernel(const struct group *g, int llc_balancing);

/* Whose processes g holds, and what any user's traffic may do with the
 * others' (docs/design.md, SECURITY.md): any user can talk to another's
 * process (a service on loopback, D-Bus, journald's stream) and so join
 * it to a group of theirs. */
enum groups_users {
	GROUPS_ONE_USER,           /* one user's: seated as the policy finds best */
	GROUPS_USERS_ANSWER,       /* several users', each of whom sent to another's over the
				    * group's channels: seated on a whole CCX at most */
	GROUPS_ONE_SIDED,          /* several users', one of whom sent nothing (or nothing
				    * known) to the others: not moved on one party's say */
	GROUPS_WITH_ROOT,          /* root's and others': root's processes move with other
				    * users' only by a rule */
};

/* uids[k] owns g->pids[k] ((uid_t)-1 where it is not known, a user of its
 * own). The channels are g's, in sample: a pipe says who wrote, a counted
 * channel who sent (both ways where it says so); an estimated socket says
 * nothing of who sent. */
enum groups_users groups_users(const struct group *g, const struct sampler_result *sample, const uid_t *uids);
const char *groups_users_to_string(enum groups_users u);

/* Which processes g is, in one number: its sorted pids, hashed (FNV-1a). */
uint64_t groups_signature(const struct group *g);

/* Whether a kept group's calls are counted one in 16 (sampler_thin()):
 * while its channels carry GROUPS_THIN_ABOVE counted calls a second or
 * more, and once thinned, until they fall below GROUPS_THIN_BELOW. Counting
 * a call costs about 100 ns (BENCHMARKS.md, "Traffic counters"): below
 * 10,000 a second that is under 0.1 % of a CPU, not worth estimates; a pair
 * that takes turns on one CPU makes up to a million, and loses 9 % of its
 * rate to the counting, thinned 4 %. 625 counted calls a second still
 * estimate its rate within 12 % (three standard errors), where a re-check
 * waits for half or double. */
#define GROUPS_THIN_ABOVE 10000.0
#define GROUPS_THIN_BELOW 5000.0
bool groups_thin(const struct group *g, const struct sampler_result *sample, bool kept, bool thinned);

/* The split itself, over the channels between processes (indexes into the
 * sample's channels, each joining two of its processes): a component whose
 * demand exceeds capacity loses its weakest channel (dropped[k] set), again
 * and again, until every component fits or is a single process. What fits
 * is never cut, and the strongest streams stay together. Returns how many
 * were dropped. */
size_t groups_split_channels(const struct sampler_result *sample, const size_t *channels, size_t n_channels,
			     double capacity, bool *dropped);
