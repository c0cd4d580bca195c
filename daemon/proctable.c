#include "proctable.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Chained hash on pid: a few thousand entries at most, each looked up on every
 * fork/exec/exit event, so lookups must be O(1). */
struct bucket_entry {
	struct proc proc;
	struct bucket_entry *next;
};

struct proctable {
	struct bucket_entry **buckets;
	size_t n_buckets;          /* a power of two */
	size_t size;
};

static size_t bucket_of(const struct proctable *t, pid_t pid) {
	return ((size_t)pid * 2654435761u) & (t->n_buckets - 1);
}

struct proctable *proctable_new(void) {
	struct proctable *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->n_buckets = 256;
	t->buckets = calloc(t->n_buckets, sizeof(*t->buckets));
	if (!t->buckets) {
		free(t);
		return NULL;
	}
	return t;
}

static void entry_free(struct bucket_entry *e) {
	sd_event_source_disable_unref(e->proc.exit_watch);
	if (e->proc.pidfd >= 0)
		close(e->proc.pidfd);
	free(e->proc.rule);
	free(e->proc.spread);
	free(e->proc.spread_placed);
	free(e);
}

void proctable_free(struct proctable *t) {
	if (!t)
		return;
	for (size_t i = 0; i < t->n_buckets; i++) {
		struct bucket_entry *e = t->buckets[i];
		while (e) {
			struct bucket_entry *next = e->next;
			entry_free(e);
			e = next;
		}
	}
	free(t->buckets);
	free(t);
}

size_t proctable_size(const struct proctable *t) {
	return t->size;
}

struct proc *proctable_get(const struct proctable *t, pid_t pid) {
	for (struct bucket_entry *e = t->buckets[bucket_of(t, pid)]; e; e = e->next)
		if (e->proc.pid == pid)
			return &e->proc;
	return NULL;
}

static void grow(struct proctable *t) {
	size_t n = t->n_buckets * 2;
	struct bucket_entry **b = calloc(n, sizeof(*b));

	/* Growing is an optimisation: without memory we keep longer chains. */
	if (!b)
		return;
	for (size_t i = 0; i < t->n_buckets; i++) {
		struct bucket_entry *e = t->buckets[i];
		while (e) {
			struct bucket_entry *next = e->next;
			size_t k = ((size_t)e->proc.pid * 2654435761u) & (n - 1);
			e->next = b[k];
			b[k] = e;
			e = next;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->n_buckets = n;
}

struct proc *proctable_add(struct proctable *t, pid_t pid, uint64_t start_time) {
	struct bucket_entry *e;
	size_t k;

	proctable_remove(t, pid);
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->proc.pid = pid;
	e->proc.start_time = start_time;
	e->proc.pidfd = -1;
	e->proc.state = PROC_SKIPPED;
	if (t->size >= t->n_buckets)
		grow(t);
	k = bucket_of(t, pid);
	e->next = t->buckets[k];
	t->buckets[k] = e;
	t->size++;
	return &e->proc;
}

void proctable_remove(struct proctable *t, pid_t pid) {
	for (struct bucket_entry **pe = &t->buckets[bucket_of(t, pid)]; *pe; pe = &(*pe)->next) {
		struct bucket_entry *e = *pe;
		if (e->proc.pid == pid) {
			*pe = e->next;
			entry_free(e);
			t->size--;
			return;
		}
	}
}

static int compare_pid(const void *a, const void *b) {
	const struct proc *pa = *(struct proc *const *)a, *pb = *(struct proc *const *)b;

	return (pa->pid > pb->pid) - (pa->pid < pb->pid);
}

struct proc **proctable_list(const struct proctable *t, size_t *n) {
	struct proc **list = malloc((t->size ? t->size : 1) * sizeof(*list));
	size_t k = 0;

	if (!list)
		return NULL;
	for (size_t i = 0; i < t->n_buckets; i++)
		for (struct bucket_entry *e = t->buckets[i]; e; e = e->next)
			list[k++] = &e->proc;
	qsort(list, k, sizeof(*list), compare_pid);
	*n = k;
	return list;
}

int proc_set_rule(struct proc *p, const char *rule) {
	char *copy = NULL;

	if (rule) {
		copy = strdup(rule);
		if (!copy)
			return -ENOMEM;
	}
	free(p->rule);
	p->rule = copy;
	return 0;
}

void proc_set_spread(struct proc *p, cpu_set_t *sets, size_t n) {
	free(p->spread);
	p->spread = sets;
	p->n_spread = sets ? n : 0;
	p->spread_next = 0;
	proc_spread_set_placed(p, NULL, 0);
}

static int compare_tid(const void *a, const void *b) {
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

bool proc_spread_placed(const struct proc *p, pid_t tid) {
	return p->n_spread_placed && bsearch(&tid, p->spread_placed, p->n_spread_placed, sizeof(tid), compare_tid);
}

int proc_spread_note(struct proc *p, pid_t tid) {
	size_t i = p->n_spread_placed;
	pid_t *grown;

	if (proc_spread_placed(p, tid))
		return 0;
	grown = realloc(p->spread_placed, (p->n_spread_placed + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	for (; i > 0 && grown[i - 1] > tid; i--)   /* kept sorted */
		grown[i] = grown[i - 1];
	grown[i] = tid;
	p->spread_placed = grown;
	p->n_spread_placed++;
	return 0;
}

void proc_spread_set_placed(struct proc *p, pid_t *tids, size_t n) {
	if (tids && n > 1)
		qsort(tids, n, sizeof(*tids), compare_tid);
	free(p->spread_placed);
	p->spread_placed = tids;
	p->n_spread_placed = tids ? n : 0;
}

const char *proc_state_to_string(enum proc_state s) {
	switch (s) {
	case PROC_PINNED: return "pinned";
	case PROC_DRY_RUN: return "dry-run";
	case PROC_SKIPPED: return "skipped";
	case PROC_IGNORED: return "ignored";
	case PROC_RELEASED: return "released";
	}
	return "unknown";
}
