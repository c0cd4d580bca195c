#include "groups.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t find(size_t *parent, size_t i) {
	while (parent[i] != i) {
		parent[i] = parent[parent[i]];   /* path halving */
		i = parent[i];
	}
	return i;
}

static int compare_traffic(const void *a, const void *b) {
	const struct group *x = a, *y = b;

	if (x->bytes_per_s != y->bytes_per_s)
		return x->bytes_per_s > y->bytes_per_s ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

void groups_free(struct group *groups, size_t n) {
	for (size_t i = 0; groups && i < n; i++) {
		free(groups[i].pids);
		free(groups[i].channels);
	}
	free(groups);
}

double groups_process_demand(const struct sampler_process *p) {
	double d = p->cpu > (double)p->busy_threads ? p->cpu : (double)p->busy_threads;

	return d > GROUPS_MIN_DEMAND ? d : GROUPS_MIN_DEMAND;
}

bool groups_for_the_kernel(const struct group *g, int llc_balancing) {
	return llc_balancing == 1 && g->n_pids == 1;
}

uint64_t groups_signature(const struct group *g) {
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < g->n_pids; i++) {
		h ^= (uint64_t)(uint32_t)g->pids[i];
		h *= 1099511628211ULL;
	}
	return h ^ g->n_pids;
}

bool groups_thin(const struct group *g, const struct sampler_result *sample, bool kept, bool thinned) {
	double calls = 0;

	for (size_t k = 0; kept && k < g->n_channels; k++) {
		const struct sampler_channel *c = &sample->channels[g->channels[k]];
		if (c->exact)
			calls += c->messages_per_s;
	}
	return kept && calls >= (thinned ? GROUPS_THIN_BELOW : GROUPS_THIN_ABOVE);
}

/* The components over the channels not dropped: parent[] for find(). */
static void join(const struct sampler_result *s, const size_t *channels, size_t n_channels, const bool *dropped,
		 size_t *parent) {
	for (size_t i = 0; i < s->n_procs; i++)
		parent[i] = i;
	for (size_t k = 0; k < n_channels; k++) {
		const struct sampler_channel *c = &s->channels[channels[k]];
		long a = sampler_result_index(s, c->from), b = sampler_result_index(s, c->to);
		if (!dropped[k] && a >= 0 && b >= 0)
			parent[find(parent, (size_t)a)] = find(parent, (size_t)b);
	}
}

bool groups_take_turns(const struct sampler_channel *c) {
	return (c->both || c->shared) && c->messages_per_s > 0 && c->bytes_per_s <= c->messages_per_s * GROUPS_TURN_BYTES;
}

/* What a component of the channel graph is made of, by its root. */
struct component {
	size_t members;
	double sum, largest;       /* the members' demands, summed, and the largest */
	double messages;           /* a second, over its channels */
	double wakeups;            /* a second, of the member that wakes the most */
	double switches;           /* a second, of the member that switches the least */
	bool turns;                /* every member one busy thread at most, every channel taking turns */
};

/* Each component over the channels not dropped (parent as join() left it). */
static void components(const struct sampler_result *s, const size_t *channels, size_t n_channels, const bool *dropped,
		       size_t *parent, struct component *c) {
	for (size_t i = 0; i < s->n_procs; i++)
		c[i] = (struct component){ .turns = true, .switches = -1 };
	for (size_t i = 0; i < s->n_procs; i++) {
		const struct sampler_process *p = &s->procs[i];
		struct component *x = &c[find(parent, i)];
		double d = groups_process_demand(p);
		/* Every sleep is a switch too, whether or not switches were read. */
		double switches = p->switches_per_s > p->wakeups_per_s ? p->switches_per_s : p->wakeups_per_s;
		x->members++;
		x->sum += d;
		x->largest = d > x->largest ? d : x->largest;
		x->turns = x->turns && p->busy_threads <= 1;
		if (p->wakeups_per_s > x->wakeups)
			x->wakeups = p->wakeups_per_s;
		if (x->switches < 0 || switches < x->switches)
			x->switches = switches;
	}
	for (size_t k = 0; k < n_channels; k++) {
		const struct sampler_channel *ch = &s->channels[channels[k]];
		long a = sampler_result_index(s, ch->from);
		if (dropped[k] || a < 0)
			continue;
		c[find(parent, (size_t)a)].messages += ch->messages_per_s;
		if (!groups_take_turns(ch))
			c[find(parent, (size_t)a)].turns = false;
	}
}

/* Whether a component's members wait for each other's messages: one of
 * them sleeps for at least half of the messages it receives (a quarter of
 * all), and each gives up its CPU as often. On one CPU, the other is not
 * always asleep when its message comes: the answer's wake-up preempts it
 * before it blocks, and the next message is there when it runs again
 * (pgbench's PostgreSQL backend, seated with pgbench: 250 sleeps a second,
 * 58,000 switches). Two busy processes that only now and then tell each
 * other something sleep seldom: they run at once. */
static bool alternates(const struct component *c) {
	return c->messages > 0 && c->wakeups * 4 >= c->messages && c->switches * 4 >= c->messages;
}

/* The CPUs a component needs. Two processes that take turns run one at a
 * time: together they need one CPU, or what the larger needs alone where
 * that is more, whatever each used while they ran apart (half a CPU each
 * for a request/response pair that spends half its time in the other's
 * wake-up). Larger components, a server with several clients, may run
 * several members at once: their demands add up. */
static bool pair_takes_turns(const struct component *c) {
	return c->members == 2 && c->turns && alternates(c);
}

static double component_demand(const struct component *c) {
	double one = c->largest > 1.0 ? c->largest : 1.0;

	if (pair_takes_turns(c))
		return c->sum < one ? c->sum : one;
	return c->sum;
}

/* One round: each component over capacity loses its weakest channel (the
 * first listed among equals). Returns how many were dropped. */
static size_t drop_weakest(const struct sampler_result *s, const size_t *channels, size_t n_channels, double capacity,
			   bool *dropped, size_t *parent, struct component *comp, size_t *weakest) {
	size_t n = s->n_procs, count = 0;

	join(s, channels, n_channels, dropped, parent);
	components(s, channels, n_channels, dropped, parent, comp);
	for (size_t i = 0; i < n; i++)
		weakest[i] = SIZE_MAX;
	for (size_t k = 0; k < n_channels; k++) {
		long a = sampler_result_index(s, s->channels[channels[k]].from);
		size_t root, *w;
		if (dropped[k] || a < 0)
			continue;
		root = find(parent, (size_t)a);
		w = &weakest[root];
		if (*w == SIZE_MAX || s->channels[channels[k]].bytes_per_s < s->channels[channels[*w]].bytes_per_s)
			*w = k;
	}
	for (size_t i = 0; i < n; i++)
		if (find(parent, i) == i && component_demand(&comp[i]) > capacity && weakest[i] != SIZE_MAX) {
			dropped[weakest[i]] = true;
			count++;
		}
	return count;
}

size_t groups_split_channels(const struct sampler_result *s, const size_t *channels, size_t n_channels,
			     double capacity, bool *dropped) {
	size_t n = s->n_procs ? s->n_procs : 1, total = 0, round;
	size_t *parent = malloc(n * sizeof(*parent)), *weakest = malloc(n * sizeof(*weakest));
	struct component *comp = malloc(n * sizeof(*comp));

	for (size_t k = 0; k < n_channels; k++)
		dropped[k] = false;
	/* Every round drops a channel or ends: at most n_channels rounds. */
	while (parent && weakest && comp && capacity > 0 &&
	       (round = drop_weakest(s, channels, n_channels, capacity, dropped, parent, comp, weakest)) > 0)
		total += round;
	free(parent);
	free(weakest);
	free(comp);
	return total;
}

static int add_channel(struct group *g, size_t v) {
	size_t *grown = util_grow(g->channels, &g->allocated_channels, g->n_channels + 1, sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	g->channels = grown;
	g->channels[g->n_channels++] = v;
	return 0;
}

/* Channels (indexes into channels) of one pair of processes, whatever
 * their kind, next to each other. */
static int compare_pair(const void *a, const void *b, void *channels) {
	const struct sampler_channel *x = (const struct sampler_channel *)channels + *(const size_t *)a;
	const struct sampler_channel *y = (const struct sampler_channel *)channels + *(const size_t *)b;
	pid_t xl = x->from < x->to ? x->from : x->to, yl = y->from < y->to ? y->from : y->to;
	pid_t xh = x->from < x->to ? x->to : x->from, yh = y->from < y->to ? y->to : y->from;

	if (xl != yl)
		return xl < yl ? -1 : 1;
	return (xh > yh) - (xh < yh);
}

static int compare_index(const void *a, const void *b) {
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

/* Whether a and b were members of one of the previous groups. */
static bool together(const struct groups_limits *l, pid_t a, pid_t b) {
	for (size_t i = 0; i < l->n_previous; i++) {
		const struct group *g = &l->previous[i];
		if (bsearch(&a, g->pids, g->n_pids, sizeof(pid_t), util_compare_pid))
			return bsearch(&b, g->pids, g->n_pids, sizeof(pid_t), util_compare_pid) != NULL;
	}
	return false;
}

/* The channels between processes that count: both ends active, and the
 * pair's channels together carrying at least min_rate bytes or
 * min_message_rate messages a second, or a quarter of that for a pair
 * already joined. A pair that ping-pongs over two pipes, or a client that
 * opens a connection per request, talks through many channels, each weak
 * alone. */
static size_t streams(const struct sampler_result *s, const struct groups_limits *l, size_t *ret) {
	size_t n = 0, k = 0;

	for (size_t c = 0; c < s->n_channels; c++) {
		const struct sampler_channel *ch = &s->channels[c];
		if (ch->kind != CHANNEL_THREADS && sampler_result_index(s, ch->from) >= 0 &&
		    sampler_result_index(s, ch->to) >= 0)
			ret[n++] = c;
	}
	if (n > 1)
		qsort_r(ret, n, sizeof(*ret), compare_pair, s->channels);
	for (size_t i = 0; i < n;) {
		size_t end = i;
		double bytes = 0, messages = 0;
		while (end < n && compare_pair(&ret[end], &ret[i], s->channels) == 0) {
			bytes += s->channels[ret[end]].bytes_per_s;
			messages += s->channels[ret[end]].messages_per_s;
			end++;
		}
		const struct sampler_channel *c = &s->channels[ret[i]];
		double f = together(l, c->from, c->to) ? GROUPS_KEEP_FACTOR : 1.0;
		if (bytes >= l->min_rate * f || (l->min_message_rate > 0 && messages >= l->min_message_rate * f))
			for (size_t j = i; j < end; j++)
				ret[k++] = ret[j];
		i = end;
	}
	/* In the sample's order again: the first listed is dropped first among equals. */
	if (k > 1)
		qsort(ret, k, sizeof(*ret), compare_index);
	return k;
}

/* Members, in pid order (procs are sorted by pid), and each group's demand. */
static int gather_members(const struct sampler_result *s, size_t *parent, const struct component *comp, long *slot,
			  struct group *groups, size_t *n_groups) {
	for (size_t i = 0; i < s->n_procs; i++) {
		size_t root = find(parent, i);
		struct group *g;
		pid_t *pids;

		if (slot[root] < 0)
			slot[root] = (long)(*n_groups)++;
		g = &groups[slot[root]];
		pids = util_grow(g->pids, &g->allocated_pids, g->n_pids + 1, sizeof(*pids));
		if (!pids)
			return -ENOMEM;
		g->pids = pids;
		if (g->n_pids == 0)
			g->id = s->procs[i].pid;
		g->pids[g->n_pids++] = s->procs[i].pid;
		g->cpu += s->procs[i].cpu;
		g->demand = component_demand(&comp[root]);
		g->turns = pair_takes_turns(&comp[root]);
	}
	return 0;
}

/* Each group's streams; a stream that was dropped marks both its ends'
 * groups as pieces of what was one component. */
static int gather_streams(const struct sampler_result *s, const size_t *live, size_t n_live, const bool *dropped,
			  size_t *parent, const long *slot, struct group *groups) {
	for (size_t k = 0; k < n_live; k++) {
		const struct sampler_channel *c = &s->channels[live[k]];
		struct group *g = &groups[slot[find(parent, (size_t)sampler_result_index(s, c->from))]];
		if (dropped[k]) {
			g->split = true;
			groups[slot[find(parent, (size_t)sampler_result_index(s, c->to))]].split = true;
			continue;
		}
		if (add_channel(g, live[k]) < 0)
			return -ENOMEM;
		g->bytes_per_s += c->bytes_per_s;
	}
	return 0;
}

/* The threads channels of each group's members (n_threads[slot] counts
 * them). A group with no stream, one process's threads, takes their rate:
 * in a group with streams the same bytes are the streams' already. */
static int gather_threads(const struct sampler_result *s, size_t *parent, const long *slot, struct group *groups,
			  size_t n_groups, unsigned *n_threads) {
	for (size_t c = 0; c < s->n_channels; c++) {
		long a = sampler_result_index(s, s->channels[c].from);
		size_t at;
		if (s->channels[c].kind != CHANNEL_THREADS || a < 0)
			continue;
		at = (size_t)slot[find(parent, (size_t)a)];
		if (add_channel(&groups[at], c) < 0)
			return -ENOMEM;
		n_threads[at]++;
	}
	for (size_t i = 0; i < n_groups; i++)
		if (n_threads[i] > 0 && groups[i].n_channels == n_threads[i])
			for (size_t k = 0; k < groups[i].n_channels; k++)
				groups[i].bytes_per_s += s->channels[groups[i].channels[k]].bytes_per_s;
	return 0;
}

int groups_build(const struct sampler_result *s, const struct groups_limits *limits, double capacity,
		 struct group **ret, size_t *n_ret) {
	size_t n = s->n_procs ? s->n_procs : 1, n_groups = 0, n_live;
	size_t *parent = malloc(n * sizeof(*parent)), *live = calloc(s->n_channels ? s->n_channels : 1, sizeof(*live));
	bool *dropped = calloc(s->n_channels ? s->n_channels : 1, sizeof(*dropped));
	unsigned *n_threads = calloc(n, sizeof(*n_threads));
	long *slot = malloc(n * sizeof(*slot));
	struct group *groups = calloc(n, sizeof(*groups));
	struct component *comp = malloc(n * sizeof(*comp));
	int r = 0;

	if (!parent || !live || !dropped || !n_threads || !slot || !groups || !comp) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->n_procs; i++)
		slot[i] = -1;
	n_live = streams(s, limits, live);
	groups_split_channels(s, live, n_live, capacity, dropped);
	join(s, live, n_live, dropped, parent);
	components(s, live, n_live, dropped, parent, comp);
	r = gather_members(s, parent, comp, slot, groups, &n_groups);
	if (r >= 0)
		r = gather_streams(s, live, n_live, dropped, parent, slot, groups);
	if (r >= 0)
		r = gather_threads(s, parent, slot, groups, n_groups, n_threads);
	if (r < 0)
		goto out;

	/* A process alone is no group, unless its own threads are busy. */
	size_t k = 0;
	for (size_t i = 0; i < n_groups; i++) {
		if (groups[i].n_pids < 2 && n_threads[i] == 0) {
			free(groups[i].pids);
			free(groups[i].channels);
			continue;
		}
		groups[k++] = groups[i];
	}
	n_groups = k;
	qsort(groups, n_groups, sizeof(*groups), compare_traffic);
out:
	free(parent);
	free(live);
	free(dropped);
	free(n_threads);
	free(slot);
	free(comp);
	if (r < 0) {
		groups_free(groups, n_groups);
		return r;
	}
	*ret = groups;
	*n_ret = n_groups;
	return 0;
}

static bool in_groups(const struct group *groups, size_t n, pid_t pid) {
	for (size_t i = 0; i < n; i++)
		if (bsearch(&pid, groups[i].pids, groups[i].n_pids, sizeof(pid_t), util_compare_pid))
			return true;
	return false;
}

int groups_cut(const struct sampler_result *s, const struct groups_limits *limits, const struct group *groups,
	       size_t n, struct group_cut **ret, size_t *n_ret) {
	size_t procs = s->n_procs ? s->n_procs : 1, n_live, n_cut = 0;
	size_t *parent = malloc(procs * sizeof(*parent)), *live = calloc(s->n_channels ? s->n_channels : 1, sizeof(*live));
	bool *none = calloc(s->n_channels ? s->n_channels : 1, sizeof(*none)), *on_stream = calloc(procs, sizeof(bool));
	struct component *comp = malloc(procs * sizeof(*comp));
	struct group_cut *cut = calloc(procs, sizeof(*cut));
	int r = 0;

	if (!parent || !live || !none || !on_stream || !comp || !cut) {
		r = -ENOMEM;
		goto out;
	}
	/* The components before any split. */
	n_live = streams(s, limits, live);
	join(s, live, n_live, none, parent);
	components(s, live, n_live, none, parent, comp);
	for (size_t k = 0; k < n_live; k++) {
		on_stream[sampler_result_index(s, s->channels[live[k]].from)] = true;
		on_stream[sampler_result_index(s, s->channels[live[k]].to)] = true;
	}
	for (size_t i = 0; i < s->n_procs; i++)
		if (on_stream[i] && !in_groups(groups, n, s->procs[i].pid))
			cut[n_cut++] = (struct group_cut){ .pid = s->procs[i].pid,
							   .component = comp[find(parent, i)].members,
							   .demand = component_demand(&comp[find(parent, i)]) };
out:
	free(parent);
	free(live);
	free(none);
	free(on_stream);
	free(comp);
	if (r < 0) {
		free(cut);
		return r;
	}
	*ret = cut;
	*n_ret = n_cut;
	return 0;
}

static long member_index(const struct group *g, pid_t pid) {
	const pid_t *at = bsearch(&pid, g->pids, g->n_pids, sizeof(pid_t), util_compare_pid);

	return at ? at - g->pids : -1;
}

enum groups_users groups_users(const struct group *g, const struct sampler_result *sample, const uid_t *uids) {
	bool several = false, root = false, *sent;
	enum groups_users verdict = GROUPS_USERS_ANSWER;

	for (size_t k = 0; k < g->n_pids; k++) {
		several = several || uids[k] != uids[0];
		root = root || uids[k] == 0;
	}
	if (!several)
		return GROUPS_ONE_USER;
	if (root)
		return GROUPS_WITH_ROOT;
	sent = calloc(g->n_pids, sizeof(*sent));
	if (!sent)
		return GROUPS_ONE_SIDED;
	for (size_t c = 0; c < g->n_channels; c++) {
		const struct sampler_channel *ch = &sample->channels[g->channels[c]];
		long from = member_index(g, ch->from), to = member_index(g, ch->to);

		if (from < 0 || to < 0 || uids[from] == uids[to])
			continue;
		/* A pipe's writer, and a counted channel's sender(s), are
		 * known; an estimated socket's are not. */
		if (ch->kind == CHANNEL_PIPE || ch->exact)
			sent[from] = true;
		if (ch->exact && ch->both)
			sent[to] = true;
	}
	/* Each user, through one of their processes at least. */
	for (size_t k = 0; k < g->n_pids && verdict == GROUPS_USERS_ANSWER; k++) {
		bool theirs = false;
		for (size_t j = 0; j < g->n_pids && !theirs; j++)
			theirs = uids[j] == uids[k] && sent[j];
		if (!theirs)
			verdict = GROUPS_ONE_SIDED;
	}
	free(sent);
	return verdict;
}

const char *groups_users_to_string(enum groups_users u) {
	static const char *const names[] = {
		[GROUPS_ONE_USER] = "one",
		[GROUPS_USERS_ANSWER] = "several",
		[GROUPS_ONE_SIDED] = "one-sided",
		[GROUPS_WITH_ROOT] = "with-root",
	};
	return NAME_OF(names, u);
}
