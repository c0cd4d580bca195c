#include "placements.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "actuator.h"
#include "cpulist.h"
#include "log.h"
#include "util.h"

/* The ledger is written at most this often: a storm of rule-matched execs
 * would otherwise write it for every one (30 us on a tmpfs, ten times that
 * on a disk). */
#define LEDGER_GAP_USEC (100 * 1000)

/* Chained hash on pid: a few thousand entries at most, each looked up on
 * every fork/exec/exit event, so lookups must be O(1). */
struct entry {
	struct placement p;
	struct entry *next;
};

struct placements {
	sd_event *event;
	const char *root;
	struct entry **buckets;
	size_t n_buckets;          /* a power of two */
	size_t size;
	struct placements_stats stats;
	char *runtime_dir;         /* where the ledger goes; NULL: nowhere */
	sd_event_source *ledger_sync;  /* writes it, once per burst of changes */
	uint64_t ledger_usec;      /* CLOCK_MONOTONIC of the last write */
	char *ledger_text;         /* what was last written, NULL when nothing is owed */
	int ledger_error;          /* of the last write, 0 or -errno: logged when it changes */
	bool ledger_kept;          /* the last ccxd's could not all be taken back: never rewritten */
	int exits;                 /* epoll of every entry's pidfd: readable once its process is gone */
	void (*observer)(void *userdata, pid_t pid, bool in);
	void *observer_data;
};

static size_t bucket_of(size_t n_buckets, pid_t pid) {
	return ((size_t)pid * 2654435761u) & (n_buckets - 1);
}

const char *placement_state_to_string(enum placement_state s) {
	switch (s) {
	case PLACEMENT_PINNED: return "pinned";
	case PLACEMENT_DRY_RUN: return "dry-run";
	case PLACEMENT_SKIPPED: return "skipped";
	case PLACEMENT_IGNORED: return "ignored";
	case PLACEMENT_RELEASED: return "released";
	}
	return "unknown";
}

static int on_ledger_sync(sd_event_source *s, uint64_t usec, void *userdata);

int placements_new(sd_event *event, const char *root, const char *runtime_dir, struct placements **ret) {
	struct placements *pl = calloc(1, sizeof(*pl));
	int r;

	if (!pl)
		return -ENOMEM;
	pl->event = event;
	pl->root = root;
	pl->n_buckets = 256;
	pl->buckets = calloc(pl->n_buckets, sizeof(*pl->buckets));
	pl->exits = epoll_create1(EPOLL_CLOEXEC);
	if (pl->exits < 0) {
		r = -errno;
		placements_free(pl);
		return r;
	}
	if (!pl->buckets || (runtime_dir && !(pl->runtime_dir = strdup(runtime_dir)))) {
		placements_free(pl);
		return -ENOMEM;
	}
	if (pl->runtime_dir && event) {
		r = sd_event_add_time(event, &pl->ledger_sync, CLOCK_MONOTONIC, 0, 1000, on_ledger_sync, pl);
		if (r < 0) {
			placements_free(pl);
			return r;
		}
		sd_event_source_set_enabled(pl->ledger_sync, SD_EVENT_OFF);
	}
	*ret = pl;
	return 0;
}

static void entry_free(struct entry *e) {
	/* Closing the pidfd takes it out of the epoll of exits too. */
	if (e->p.pidfd >= 0)
		close(e->p.pidfd);
	free(e->p.rule);
	free(e->p.spread);
	free(e->p.spread_placed);
	free(e);
}

void placements_free(struct placements *pl) {
	if (!pl)
		return;
	for (size_t i = 0; i < pl->n_buckets; i++)
		for (struct entry *e = pl->buckets ? pl->buckets[i] : NULL, *next; e; e = next) {
			next = e->next;
			entry_free(e);
		}
	sd_event_source_disable_unref(pl->ledger_sync);
	if (pl->exits >= 0)
		close(pl->exits);
	free(pl->buckets);
	free(pl->runtime_dir);
	free(pl->ledger_text);
	free(pl);
}

void placements_observe(struct placements *pl, void (*observer)(void *userdata, pid_t pid, bool in), void *userdata) {
	pl->observer = observer;
	pl->observer_data = userdata;
}

struct placement *placements_get(const struct placements *pl, pid_t pid) {
	for (struct entry *e = pl->buckets[bucket_of(pl->n_buckets, pid)]; e; e = e->next)
		if (e->p.pid == pid)
			return &e->p;
	return NULL;
}

size_t placements_count(const struct placements *pl) {
	return pl->size;
}

struct placement *placements_next(const struct placements *pl, const struct placement *p) {
	size_t i = 0;

	if (p) {
		const struct entry *e = (const struct entry *)p;   /* p is an entry's first member */
		if (e->next)
			return &e->next->p;
		i = bucket_of(pl->n_buckets, p->pid) + 1;
	}
	for (; i < pl->n_buckets; i++)
		if (pl->buckets[i])
			return &pl->buckets[i]->p;
	return NULL;
}

static void grow(struct placements *pl) {
	size_t n = pl->n_buckets * 2;
	struct entry **b = calloc(n, sizeof(*b));

	/* Growing is an optimisation: without memory the chains grow longer. */
	if (!b)
		return;
	for (size_t i = 0; i < pl->n_buckets; i++)
		for (struct entry *e = pl->buckets[i], *next; e; e = next) {
			size_t k = bucket_of(n, e->p.pid);
			next = e->next;
			e->next = b[k];
			b[k] = e;
		}
	free(pl->buckets);
	pl->buckets = b;
	pl->n_buckets = n;
}

void placements_remove(struct placements *pl, pid_t pid) {
	for (struct entry **pe = &pl->buckets[bucket_of(pl->n_buckets, pid)]; *pe; pe = &(*pe)->next) {
		struct entry *e = *pe;
		if (e->p.pid == pid) {
			*pe = e->next;
			entry_free(e);
			pl->size--;
			if (pl->observer)
				pl->observer(pl->observer_data, pid, false);
			return;
		}
	}
}

/* Nothing is owed to a process that is gone, and an entry of the ledger
 * for it is harmless (it names a start time that no process has any more):
 * the next sync drops it, not a write per exit. Exits are taken in one
 * system call each interval, not a wake-up each: a process that exec'd,
 * was pinned and is gone (a compiler, a script's commands) costs ccxd only
 * its exec. Until then, the entry's pidfd keeps its pid from being mistaken
 * for another process's. */
size_t placements_reap(struct placements *pl) {
	struct epoll_event events[64];
	size_t reaped = 0;
	int n;

	do {
		n = epoll_wait(pl->exits, events, 64, 0);
		for (int i = 0; i < n; i++)
			placements_remove(pl, (pid_t)events[i].data.u64);
		reaped += n > 0 ? (size_t)n : 0;
	} while (n == 64);
	return reaped;
}

/* A new entry for st's process, behind pidfd (which it takes over). */
static struct placement *add(struct placements *pl, const struct procfs_stat *st, int fd) {
	struct placement *p;
	struct entry *e = calloc(1, sizeof(*e));

	if (!e) {
		close(fd);
		log_error("Out of memory for the table of placements");
		errno = ENOMEM;
		return NULL;
	}
	p = &e->p;
	p->pid = st->pid;
	p->start_time = st->start_time;
	p->pidfd = fd;
	p->state = PLACEMENT_SKIPPED;
	p->owner = PLACEMENT_RULE;
	memcpy(p->comm, st->comm, sizeof(p->comm));
	if (epoll_ctl(pl->exits, EPOLL_CTL_ADD, fd, &(struct epoll_event){ .events = EPOLLIN, .data.u64 = (uint64_t)p->pid }) < 0)
		log_warning_errno(-errno, "Failed to watch %s[%d] for its exit; its next event will notice: %m",
				  p->comm, (int)p->pid);
	if (pl->size >= pl->n_buckets)
		grow(pl);
	e->next = pl->buckets[bucket_of(pl->n_buckets, p->pid)];
	pl->buckets[bucket_of(pl->n_buckets, p->pid)] = e;
	pl->size++;
	if (pl->observer)
		pl->observer(pl->observer_data, p->pid, true);
	return p;
}

struct placement *placements_track(struct placements *pl, const struct procfs_stat *st) {
	struct placement *p = placements_get(pl, st->pid);
	int fd;

	if (p && p->start_time == st->start_time) {
		memcpy(p->comm, st->comm, sizeof(p->comm));
		return p;
	}
	if (p)
		placements_remove(pl, st->pid);   /* the pid was reused behind our back */
	fd = actuator_open(pl->root, st->pid, st->start_time);
	if (fd < 0) {
		errno = ESRCH;
		return NULL;
	}
	return add(pl, st, fd);
}

struct placement *placements_track_opened(struct placements *pl, const struct procfs_stat *st, int pidfd) {
	/* Alive now, the pidfd's process had the pid all along since it was
	 * opened: st, read in between, is its own. */
	if (placements_get(pl, st->pid) || !actuator_alive(pidfd)) {
		errno = ESRCH;
		return NULL;
	}
	return add(pl, st, pidfd);
}

int placement_set_rule(struct placement *p, const char *rule) {
	char *copy = NULL;

	if (rule && !(copy = strdup(rule)))
		return -ENOMEM;
	free(p->rule);
	p->rule = copy;
	return 0;
}

/* Takes ownership of tids (n, in any order): the threads given a set, and
 * no other. */
static void set_spread_placed(struct placement *p, pid_t *tids, size_t n) {
	if (tids && n > 1)
		qsort(tids, n, sizeof(*tids), util_compare_pid);
	free(p->spread_placed);
	p->spread_placed = tids;
	p->n_spread_placed = tids ? n : 0;
}

static bool spread_placed(const struct placement *p, pid_t tid) {
	return p->n_spread_placed && bsearch(&tid, p->spread_placed, p->n_spread_placed, sizeof(tid), util_compare_pid);
}

void placement_set_spread(struct placement *p, cpu_set_t *sets, size_t n) {
	free(p->spread);
	p->spread = sets;
	p->n_spread = sets ? n : 0;
	p->spread_next = 0;
	set_spread_placed(p, NULL, 0);
}

void placement_set_reason(struct placement *p, const char *fmt, ...) {
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->reason, sizeof(p->reason), fmt, ap);
	va_end(ap);
}

int placements_original_of(const struct placement *p, cpu_set_t *ret) {
	if (p->have_original && (p->state == PLACEMENT_PINNED || p->owner == PLACEMENT_AUTO)) {
		*ret = p->original;   /* what an earlier owner kept is the process's own */
		return 0;
	}
	return actuator_get(p->pid, ret) < 0 ? -ESRCH : 0;
}

int placements_claim(struct placements *pl, struct placement *p, enum placement_owner owner, const char *rule,
		     const cpu_set_t *allowed, bool force, const cpu_set_t *known) {
	cpu_set_t current;
	int r;

	(void)pl;
	if (known)
		current = *known;
	else if (placements_original_of(p, &current) < 0)
		return -ESRCH;
	/* Narrower than everything it may use: somebody chose that by hand. */
	if (!cpulist_is_subset(allowed, &current) && !force)
		return -EPERM;
	r = placement_set_rule(p, owner == PLACEMENT_RULE ? rule : NULL);
	if (r < 0)
		return r;
	p->owner = owner;
	p->original = current;
	p->have_original = true;
	p->inherited_from = 0;
	return 0;
}

int placements_pin(struct placements *pl, struct placement *p, const cpu_set_t *cpus) {
	int r;

	p->cpus = *cpus;
	if (p->n_spread > 0) {
		pid_t *placed;
		size_t n_placed;
		r = actuator_apply_each(pl->root, p->pid, p->pidfd, p->spread, p->n_spread, &p->spread_next, &placed,
					&n_placed);
		set_spread_placed(p, placed, n_placed);
	} else
		r = actuator_apply(pl->root, p->pid, p->pidfd, cpus);
	if (r == -ESRCH)
		return r;
	if (r < 0) {
		char list[CPULIST_MAX];
		pl->stats.pin_failures++;
		return log_warning_errno(r, "Failed to set the affinity of %s[%d] to %s: %m", p->comm, (int)p->pid,
					 cpulist_format(cpus, list, sizeof(list)));
	}
	placements_pinned(pl, p, cpus);
	return 0;
}

void placements_pinned(struct placements *pl, struct placement *p, const cpu_set_t *cpus) {
	p->cpus = *cpus;
	p->state = PLACEMENT_PINNED;
	pl->stats.pins++;
	placements_owe_changed(pl);
}

int placements_give_back(struct placements *pl, struct placement *p) {
	int r;

	if (p->state != PLACEMENT_PINNED || !p->have_original)
		return 0;
	r = actuator_apply(pl->root, p->pid, p->pidfd, &p->original);
	if (r == -ESRCH)
		return r;
	if (r < 0)
		return log_warning_errno(r, "Failed to restore the affinity of %s[%d]: %m", p->comm, (int)p->pid);
	placement_set_spread(p, NULL, 0);
	p->state = PLACEMENT_SKIPPED;
	pl->stats.restores++;
	placements_owe_changed(pl);
	return 0;
}

/* ---- children ---------------------------------------------------------- */

struct placement *placements_inherit(struct placements *pl, const struct procfs_stat *st,
				     const struct placement *parent) {
	struct placement *child = placements_track(pl, st);

	if (!child)
		return NULL;
	child->owner = parent->owner;
	child->state = parent->state;
	child->original = parent->original;
	child->have_original = parent->have_original;
	child->cpus = parent->cpus;
	child->inherited_from = parent->pid;
	if (parent->n_spread > 0) {
		cpu_set_t *sets = malloc(parent->n_spread * sizeof(*sets));
		if (sets)
			memcpy(sets, parent->spread, parent->n_spread * sizeof(*sets));
		placement_set_spread(child, sets, sets ? parent->n_spread : 0);
	}
	placement_set_rule(child, parent->rule);
	placement_set_reason(child, "inherited from %s[%d]", parent->comm, (int)parent->pid);
	if (child->state == PLACEMENT_PINNED)
		placements_owe_changed(pl);
	return child;
}

/* A rule's or a hand's: placements that follow a process's descendants. */
static bool follows_children(const struct placement *p) {
	return p->owner != PLACEMENT_AUTO && p->state == PLACEMENT_PINNED;
}

bool placements_adopt_if_inherited(struct placements *pl, const struct procfs_stat *st) {
	struct placement *parent = placements_get(pl, st->ppid), *child;
	cpu_set_t current;

	if (!parent || !follows_children(parent) || actuator_get(st->pid, &current) < 0)
		return false;
	if (!CPU_EQUAL(&current, &parent->cpus) && !(parent->have_original && CPU_EQUAL(&current, &parent->original)))
		return false;
	child = placements_inherit(pl, st, parent);
	if (!child)
		return false;
	if (!CPU_EQUAL(&current, &child->cpus) && placements_pin(pl, child, &child->cpus) == -ESRCH) {
		placements_remove(pl, st->pid);
		return false;
	}
	return true;
}

/* A child of a pinned process, not known yet: adopted if it inherited the
 * placement, and then its own children are looked at too. */
static bool adopt_child(void *userdata, pid_t pid) {
	struct placements *pl = userdata;
	struct procfs_stat st;

	return !placements_get(pl, pid) && procfs_read_stat(pl->root, pid, &st) >= 0 &&
	       placements_adopt_if_inherited(pl, &st);
}

/* The pids of the entries that pass keep, into a fresh array. */
static pid_t *pids_where(const struct placements *pl, bool (*keep)(const struct placement *), size_t *n) {
	pid_t *pids = malloc((pl->size + 1) * sizeof(*pids));

	*n = 0;
	for (struct placement *p = placements_next(pl, NULL); pids && p; p = placements_next(pl, p))
		if (keep(p))
			pids[(*n)++] = p->pid;
	return pids;
}

static bool any(const struct placement *p) {
	(void)p;
	return true;
}

pid_t *placements_pids(const struct placements *pl, size_t *n) {
	return pids_where(pl, any, n);
}

void placements_adopt_children(struct placements *pl) {
	size_t n;
	pid_t *pinned = pids_where(pl, follows_children, &n);

	if (pinned)
		procfs_walk_children(pl->root, pinned, n, adopt_child, pl);
	else
		log_warning("Out of memory: children of pinned processes are looked at next interval");
	free(pinned);
}

struct seat_walk {
	struct placements *pl;
	const struct placement *member;
	bool (*in_group)(void *, pid_t);
	void *userdata;
};

/* Gives pid the member's original if it still has the seat it inherited
 * from the member. true when it had it, and so may have passed it on to its
 * own children. */
static bool return_seat(void *userdata, pid_t pid) {
	struct seat_walk *w = userdata;
	const struct placement *mb = w->member;
	struct procfs_stat st;
	cpu_set_t current;
	int fd, r;

	if (placements_get(w->pl, pid) || (w->in_group && w->in_group(w->userdata, pid)))
		return false;   /* its placement is decided elsewhere */
	if (procfs_read_stat(w->pl->root, pid, &st) < 0)
		return false;
	fd = actuator_open(w->pl->root, pid, st.start_time);
	if (fd < 0)
		return false;
	if (actuator_get(pid, &current) < 0 || !CPU_EQUAL(&current, &mb->cpus)) {
		close(fd);
		return false;
	}
	r = actuator_apply(w->pl->root, pid, fd, &mb->original);
	close(fd);
	if (r < 0) {
		if (r != -ESRCH)
			log_warning_errno(r, "Failed to restore the affinity of process %d: %m", (int)pid);
		return false;
	}
	log_debug("%s[%d] had inherited the seat of %s[%d]: its original is back", st.comm, (int)pid, mb->comm,
		  (int)mb->pid);
	return true;
}

static bool seated_member(const struct placement *p) {
	return p->owner == PLACEMENT_AUTO && p->state == PLACEMENT_PINNED && !CPU_EQUAL(&p->cpus, &p->original);
}

void placements_return_inherited(struct placements *pl, bool (*in_group)(void *userdata, pid_t pid),
				 void *userdata) {
	size_t n;
	pid_t *seated = pids_where(pl, seated_member, &n);

	for (size_t i = 0; seated && i < n; i++) {
		struct seat_walk w = { pl, placements_get(pl, seated[i]), in_group, userdata };
		if (w.member)
			procfs_walk_children(pl->root, &seated[i], 1, return_seat, &w);
	}
	free(seated);
}

/* ---- policy = spread --------------------------------------------------- */

static void spread_note(struct placement *p, pid_t tid) {
	size_t i = p->n_spread_placed;
	pid_t *grown;

	if (spread_placed(p, tid))
		return;
	grown = realloc(p->spread_placed, (p->n_spread_placed + 1) * sizeof(*grown));
	if (!grown)
		return;   /* it may be given a set again: harmless */
	for (; i > 0 && grown[i - 1] > tid; i--)   /* kept sorted */
		grown[i] = grown[i - 1];
	grown[i] = tid;
	p->spread_placed = grown;
	p->n_spread_placed++;
}

void placements_spread_thread(struct placements *pl, struct placement *p, pid_t tid) {
	(void)pl;
	if (p->state != PLACEMENT_PINNED || p->n_spread == 0 || spread_placed(p, tid))
		return;
	actuator_apply_thread(p->pidfd, tid, &p->spread[p->spread_next++ % p->n_spread]);
	spread_note(p, tid);
}

void placements_spread_catch_up(struct placements *pl, struct placement *p) {
	pid_t *tasks;
	size_t n;

	if (procfs_list_tasks(pl->root, p->pid, &tasks, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (!spread_placed(p, tasks[i]))
			actuator_apply_thread(p->pidfd, tasks[i], &p->spread[p->spread_next++ % p->n_spread]);
	set_spread_placed(p, tasks, n);   /* those that ended are forgotten */
}

/* ---- the ledger -------------------------------------------------------- */

void placements_owe_changed(struct placements *pl) {
	int enabled = SD_EVENT_OFF;
	uint64_t now, at;

	if (!pl->ledger_sync || sd_event_source_get_enabled(pl->ledger_sync, &enabled) < 0 || enabled != SD_EVENT_OFF)
		return;   /* a write is due already */
	if (sd_event_now(pl->event, CLOCK_MONOTONIC, &now) < 0)
		return;
	at = pl->ledger_usec + LEDGER_GAP_USEC > now ? pl->ledger_usec + LEDGER_GAP_USEC : now;
	sd_event_source_set_time(pl->ledger_sync, at);
	sd_event_source_set_enabled(pl->ledger_sync, SD_EVENT_ONESHOT);
}

static enum ledger_owner ledger_owner_of(const struct placement *p) {
	if (p->state == PLACEMENT_RELEASED)
		return LEDGER_RELEASED;
	return p->owner == PLACEMENT_AUTO ? LEDGER_AUTO : p->rule ? LEDGER_RULE : LEDGER_HAND;
}

/* Every process whose affinity ccxd changed and has not given back, and
 * those released by hand (left alone across a restart too). */
static int collect_owed(const struct placements *pl, struct ledger_entry **ret, size_t *ret_n) {
	struct ledger_entry *e = calloc(pl->size + 1, sizeof(*e));
	size_t n = 0;

	if (!e)
		return -ENOMEM;
	for (const struct placement *p = placements_next(pl, NULL); p; p = placements_next(pl, p)) {
		struct ledger_entry *x = &e[n];
		if ((p->state != PLACEMENT_PINNED && p->state != PLACEMENT_RELEASED) || !p->have_original)
			continue;
		*x = (struct ledger_entry){ .pid = p->pid, .start_time = p->start_time, .owner = ledger_owner_of(p),
					    .inherited_from = p->inherited_from, .original = p->original,
					    .cpus = p->state == PLACEMENT_RELEASED ? p->original : p->cpus };
		memcpy(x->comm, p->comm, sizeof(x->comm));
		snprintf(x->rule, sizeof(x->rule), "%s", x->owner == LEDGER_RULE ? p->rule : "");
		n++;
	}
	*ret = e;
	*ret_n = n;
	return 0;
}

static int compare_entry(const void *a, const void *b) {
	pid_t x = ((const struct ledger_entry *)a)->pid, y = ((const struct ledger_entry *)b)->pid;

	return (x > y) - (x < y);
}

int placements_sync_ledger(struct placements *pl) {
	struct ledger_entry *e;
	size_t n;
	char *text;
	int r;

	if (!pl->runtime_dir || pl->ledger_kept)
		return 0;
	r = collect_owed(pl, &e, &n);
	if (r >= 0) {
		qsort(e, n, sizeof(*e), compare_entry);   /* the same text for the same debts */
		r = ledger_format(e, n, &text);
		free(e);
	}
	if (r < 0)
		return log_warning_errno(r, "Failed to list the original affinities owed: %m");
	if (pl->ledger_text && strcmp(text, pl->ledger_text) == 0) {
		free(text);
		return 0;
	}
	r = n > 0 ? ledger_write(pl->runtime_dir, text) : ledger_remove(pl->runtime_dir);
	if (r < 0) {
		/* Once per kind of failure: it is retried at every change. */
		if (r != pl->ledger_error)
			log_warning_errno(r, "Failed to write %s/%s; a restart after a crash would not know the "
					  "original affinities: %m", pl->runtime_dir, LEDGER_FILE);
		pl->ledger_error = r;
		free(text);
		return r;
	}
	if (pl->ledger_error)
		log_info("Wrote %s/%s again", pl->runtime_dir, LEDGER_FILE);
	pl->ledger_error = 0;
	free(pl->ledger_text);
	pl->ledger_text = text;
	return 0;
}

static int on_ledger_sync(sd_event_source *s, uint64_t usec, void *userdata) {
	struct placements *pl = userdata;

	(void)s;
	pl->ledger_usec = usec;
	placements_sync_ledger(pl);
	return 0;
}

/* Puts e's process back as it was, when a restarted ccxd will not keep it. */
static void give_back_entry(struct placements *pl, const struct ledger_entry *e, const char *why) {
	char list[CPULIST_MAX];
	int fd = actuator_open(pl->root, e->pid, e->start_time), r;

	if (fd < 0)
		return;
	r = actuator_apply(pl->root, e->pid, fd, &e->original);
	close(fd);
	if (r < 0 && r != -ESRCH)
		log_warning_errno(r, "Failed to restore the affinity of %s[%d]: %m", e->comm, (int)e->pid);
	else if (r >= 0) {
		pl->stats.restores++;
		log_info("Restored %s[%d] to CPUs %s, as before ccxd last ran: %s", e->comm, (int)e->pid,
			 cpulist_format(&e->original, list, sizeof(list)), why);
	}
}

/* e's process, still running as the killed ccxd left it: taken back.
 * -ENOMEM when there was no memory for its entry. */
static int take_back(struct placements *pl, const struct ledger_entry *e, const struct procfs_stat *st) {
	struct placement *p = placements_track(pl, st);

	if (!p)
		return errno == ENOMEM ? -ENOMEM : 0;
	p->original = e->original;
	p->have_original = true;
	if (e->owner == LEDGER_RELEASED) {
		/* Left alone until it executes another program, restart or not. */
		p->state = PLACEMENT_RELEASED;
		placement_set_reason(p, "released by hand; left alone until it executes a new program");
		return 0;
	}
	p->owner = e->owner == LEDGER_RULE ? PLACEMENT_RULE : PLACEMENT_HAND;
	p->state = PLACEMENT_PINNED;
	p->cpus = e->cpus;
	p->inherited_from = e->inherited_from;
	placement_set_rule(p, e->owner == LEDGER_RULE ? e->rule : NULL);
	placement_set_reason(p, e->owner == LEDGER_HAND ? "pinned by hand (before ccxd restarted)"
			     : "rule %s (before ccxd restarted)", e->rule);
	pl->stats.readopted++;
	return 0;
}

/* Out of memory while taking back what a killed ccxd owed: what its ledger
 * names is not all known here, so the file stays as it is, for the next
 * start to take back, and what is owed from now on is not written. */
static void keep_ledger(struct placements *pl) {
	pl->ledger_kept = true;
	log_error("Out of memory taking back what ccxd had placed before it restarted: %s/%s stays as it is, "
		  "and is not rewritten until the next start", pl->runtime_dir, LEDGER_FILE);
}

int placements_readopt(struct placements *pl, const struct placements_readopt_ops *ops, void *userdata) {
	struct ledger_entry *e;
	size_t n;
	char *error = NULL;
	int r;

	if (!pl->runtime_dir)
		return 0;
	r = ledger_read(pl->runtime_dir, &e, &n, &error);
	if (r == -ENOENT)
		return 0;
	if (r == -ENOMEM) {
		keep_ledger(pl);
		return r;
	}
	if (r < 0) {
		log_warning("Ignoring %s/%s: %s", pl->runtime_dir, LEDGER_FILE, error ? error : strerror(-r));
		free(error);
		placements_owe_changed(pl);   /* replaced by what is owed now */
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct procfs_stat st;
		cpu_set_t current;
		const char *why;

		if (procfs_read_stat(pl->root, e[i].pid, &st) < 0 || st.start_time != e[i].start_time ||
		    actuator_get(e[i].pid, &current) < 0) {
			e[i].pid = 0;   /* gone: nothing owed */
			continue;
		}
		if (e[i].owner != LEDGER_RELEASED && !cpulist_is_subset(&current, &e[i].cpus)) {
			log_info("%s[%d] was moved by somebody else since ccxd last ran; leaving it alone", e[i].comm,
				 (int)e[i].pid);
			e[i].pid = 0;
			continue;
		}
		why = e[i].owner == LEDGER_RELEASED ? NULL : ops->keep(userdata, &e[i]);
		if (why) {
			give_back_entry(pl, &e[i], why);
			e[i].pid = 0;
		} else if (take_back(pl, &e[i], &st) == -ENOMEM) {
			keep_ledger(pl);
			e[i].pid = 0;
		}
	}
	if (pl->stats.readopted)
		log_info("Took back %" PRIu64 " process%s that ccxd had placed before it restarted", pl->stats.readopted,
			 pl->stats.readopted == 1 ? "" : "es");
	/* Under the rules as they are now, once all are back. */
	for (size_t i = 0; i < n; i++)
		if (e[i].pid && e[i].owner == LEDGER_RULE && !e[i].inherited_from)
			ops->decide(userdata, e[i].pid);
	free(e);
	placements_owe_changed(pl);
	return 0;
}

struct placements_stats placements_stats(const struct placements *pl) {
	return pl->stats;
}
