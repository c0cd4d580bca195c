#include "config-keys.h"

#include "config-parse.h"
#include "util.h"

#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#define INTERVAL_MIN   UINT64_C(10000)         /* 10 ms */
#define INTERVAL_MAX   UINT64_C(3600000000)    /* 1 h */

/* ---- the values of the enumerated keys, by name ---- */

static const char *const mode_names[] = {
	[CONFIG_MODE_ENFORCE] = "enforce",
	[CONFIG_MODE_DRY_RUN] = "dry-run",
	[CONFIG_MODE_OFF] = "off",
};

const char *config_mode_to_string(enum config_mode m) {
	return NAME_OF(mode_names, m);
}

/* The bpf key's values, by the reading they allow at best. */
static const char *const bpf_names[] = {
	[SAMPLER_READ_BATCH] = "auto",
	[SAMPLER_READ_EACH] = "per-process",
	[SAMPLER_READ_PROC] = "no",
};

const char *config_bpf_to_string(enum sampler_reading r) {
	return NAME_OF(bpf_names, r);
}

static const char *const traffic_names[] = {
	[SAMPLER_COUNT_AUTO] = "auto",
	[SAMPLER_COUNT_SYSCALLS] = "syscalls",
	[SAMPLER_COUNT_NO] = "no",
};

const char *config_traffic_to_string(enum sampler_counting c) {
	return NAME_OF(traffic_names, c);
}

static const char *const execs_names[] = {
	[CONFIG_EXECS_AUTO] = "auto",
	[CONFIG_EXECS_CONNECTOR] = "connector",
};

const char *config_execs_to_string(enum config_execs e) {
	return NAME_OF(execs_names, e);
}

static const char *const x3d_names[] = {
	[CONFIG_X3D_KEEP] = "keep",
	[CONFIG_X3D_CACHE] = "cache",
	[CONFIG_X3D_FREQUENCY] = "frequency",
};

const char *config_x3d_to_string(enum config_x3d x) {
	return NAME_OF(x3d_names, x);
}

/* One key = value line, on its way into the config. */
struct assignment {
	struct config *config;
	struct rule *rule;        /* of [program:NAME]; NULL in [daemon] */
	unsigned line;
	const char *key, *value;
	char *error;              /* why the value is refused */
};

__attribute__((format(printf, 2, 3)))
static int reject(struct assignment *a, const char *fmt, ...) {
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&a->error, fmt, ap);
	va_end(ap);
	if (r < 0) {
		a->error = NULL;
		return -ENOMEM;
	}
	return -EINVAL;
}

/* The usual refusal: the value is none of what the key expects. */
static int invalid(struct assignment *a, const char *expected) {
	return reject(a, "invalid value '%s' for %s (expected %s)", a->value, a->key, expected);
}

static int set_string(char **field, const char *value) {
	char *s = strdup(value);

	if (!s)
		return -ENOMEM;
	free(*field);
	*field = s;
	return 0;
}

/* Joins the names that name(0), name(1), ... return into "a, b or c". */
static void join_names(const char *(*name)(int), char *buf, size_t size) {
	size_t len = 0, n = 0;

	while (name((int)n))
		n++;
	buf[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
		int r = snprintf(buf + len, size - len, "%s%s", sep, name((int)i));

		if (r < 0)
			break;
		len += (size_t)r;
	}
}

/* Returns the index whose name(index) is the value. */
static int parse_enum(struct assignment *a, const char *(*name)(int)) {
	char expected[128];

	for (int i = 0; name(i); i++)
		if (strcmp(a->value, name(i)) == 0)
			return i;
	join_names(name, expected, sizeof(expected));
	return invalid(a, expected);
}

/* Adapters so that one parse_enum() serves every enum type; the rules' names
 * are rules.c's own, reached through its functions. */
static const char *mode_name(int i) { return NAME_OF(mode_names, i); }
static const char *bpf_name(int i) { return NAME_OF(bpf_names, i); }
static const char *traffic_name(int i) { return NAME_OF(traffic_names, i); }
static const char *execs_name(int i) { return NAME_OF(execs_names, i); }
static const char *x3d_name(int i) { return NAME_OF(x3d_names, i); }
static const char *policy_name(int i) { return rule_policy_to_string((enum rule_policy)i); }
static const char *smt_name(int i) { return rule_smt_to_string((enum rule_smt)i); }
static const char *prefer_name(int i) { return rule_prefer_to_string((enum rule_prefer)i); }

static int parse_bool_key(struct assignment *a, bool *b) {
	if (config_parse_bool(a->value, b) < 0)
		return invalid(a, "yes, no, true, false, on, off, 1 or 0");
	return 0;
}

static int parse_path_key(struct assignment *a, char **field) {
	if (a->value[0] != '/')
		return invalid(a, "an absolute path");
	return set_string(field, a->value);
}

/* Caught here, since bind() would only fail on it much later, at start-up. */
static int socket_fits(struct assignment *a) {
	size_t max = sizeof(((struct sockaddr_un *)NULL)->sun_path) - 1, len = strlen(a->value);

	if (a->value[0] == '/' && len > max)
		return reject(a, "%s path too long (%zu bytes, at most %zu)", a->key, len, max);
	return 0;
}

static bool topology_spec_valid(const char *s) {
	if (strcmp(s, "system") == 0)
		return true;
	if (strncmp(s, "xml:", 4) == 0)
		return s[4] != '\0';
	if (strncmp(s, "synthetic:", 10) == 0)
		return s[10] != '\0';
	return false;
}

static int set_topology(struct assignment *a) {
	if (!topology_spec_valid(a->value)) {
		a->config->topology_invalid = true;
		return invalid(a, "system, xml:PATH or synthetic:STRING");
	}
	return set_string(&a->config->topology, a->value);
}

static int set_interval(struct assignment *a) {
	uint64_t usec;
	int r = config_parse_duration(a->value, &usec);

	if (r == -EINVAL)
		return invalid(a, "a duration such as 500ms, 1s or 2m");
	if (r < 0 || usec < INTERVAL_MIN || usec > INTERVAL_MAX)
		return reject(a, "%s %s out of range (10ms..1h)", a->key, a->value);
	a->config->interval_usec = usec;
	return 0;
}

/* Caught here rather than at the first interval's write, which would only
 * log it. (The line length limit keeps any path far below PATH_MAX.) */
static int names_a_file(struct assignment *a) {
	size_t len = strlen(a->value);

	if (a->value[0] == '/' && a->value[len - 1] == '/')
		return invalid(a, "the path of a file, not a directory");
	return 0;
}

static int set_min_rate(struct assignment *a) {
	uint64_t bytes;

	if (config_parse_size(a->value, &bytes) < 0)
		return invalid(a, "a rate such as 512K, 1M or 4M/s");
	a->config->min_rate = (double)bytes;
	return 0;
}

/* Messages a second: "500", "2k", "500/s". */
static int set_min_message_rate(struct assignment *a) {
	char *end;
	double v;

	errno = 0;
	v = strtod(a->value, &end);
	if (end != a->value && (*end == 'k' || *end == 'K'))
		v *= 1000.0, end++;
	if (strcmp(end, "/s") == 0)
		end += 2;
	if (errno || end == a->value || *end || !(v >= 0.0 && v <= 1e9))
		return invalid(a, "messages a second, such as 500, 2k or 500/s; 0: bytes alone");
	a->config->min_message_rate = v;
	return 0;
}

static int set_recheck(struct assignment *a) {
	uint64_t usec;
	int r = config_parse_duration(a->value, &usec);

	if (r == -EINVAL)
		return invalid(a, "a duration such as 30s, 5m or 1h; 0: only when the group changes");
	if (r < 0 || usec > 24 * 3600 * 1000000ULL)
		return reject(a, "%s %s out of range (0..24h)", a->key, a->value);
	a->config->recheck_usec = usec;
	return 0;
}

/* Returns the seating named w. */
static int parse_seating(struct assignment *a, const char *w, const enum seating *list, size_t n) {
	int found = -1;

	for (int s = 0; s < _SEATING_MAX; s++)
		if (strcmp(w, seating_to_string((enum seating)s)) == 0)
			found = s;
	if (found < 0)
		return reject(a, "invalid value '%s' for %s (expected one-per-core, smt-siblings, shared-cpu, whole-ccx)", w,
			      a->key);
	for (size_t i = 0; i < n; i++)
		if (list[i] == (enum seating)found)
			return reject(a, "%s lists %s twice", a->key, w);
	return found;
}

static int set_seatings(struct assignment *a) {
	enum seating list[_SEATING_MAX];
	size_t n = 0;
	char *copy = strdup(a->value), *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *w = strtok_r(copy, ", \t", &save); w; w = strtok_r(NULL, ", \t", &save)) {
		int s = parse_seating(a, w, list, n);

		if (s < 0) {
			free(copy);
			return s;
		}
		list[n++] = (enum seating)s;
	}
	free(copy);
	if (n == 0)
		return reject(a, "empty value for %s (expected one-per-core, smt-siblings, shared-cpu, whole-ccx)", a->key);
	memcpy(a->config->seatings, list, n * sizeof(*list));
	a->config->n_seatings = n;
	return 0;
}

static int parse_glob_key(struct assignment *a, char **field) {
	/* An empty glob matches only an empty string: a typo, never a rule. */
	if (!a->value[0])
		return reject(a, "empty value for %s (expected a glob)", a->key);
	return set_string(field, a->value);
}

/* A unit's name never holds a '/': such a glob could never match, and is
 * more likely a cgroup path meant for cgroup =. */
static int names_a_unit(struct assignment *a) {
	if (strchr(a->value, '/'))
		return invalid(a, "a glob on a unit name such as foo.service or session-*.scope, without '/'");
	return 0;
}

/* Every cgroup path starts at the root, "/": a glob that cannot match one
 * is refused rather than left to match nothing. */
static int starts_at_the_root(struct assignment *a) {
	if (a->value[0] && a->value[0] != '/' && a->value[0] != '*')
		return invalid(a, "a glob on a cgroup path, starting with / or *");
	return 0;
}

/* Parses a ccx list, "1" or "0, 2", into list[] in the order given. Returns
 * the number of indexes. */
static int parse_ccx_list(struct assignment *a, unsigned *list) {
	unsigned char used[CONFIG_PARSE_CCX_MAX] = { 0 };
	const char *s = a->value;
	int n = 0;

	for (;;) {
		size_t len = strcspn(s, ",");
		const char *next = s[len] ? s + len + 1 : NULL;
		unsigned idx;
		int r;

		while (len > 0 && isblank((unsigned char)*s))
			s++, len--;
		while (len > 0 && isblank((unsigned char)s[len - 1]))
			len--;
		r = config_parse_ccx_index(s, len, &idx);
		if (r == -ERANGE)
			return reject(a, "%s index %.*s out of range (0..%d)", a->key, (int)len, s,
				      CONFIG_PARSE_CCX_MAX - 1);
		if (r < 0)
			return invalid(a, "auto or a comma-separated list of CCX indexes such as 1 or 0,2");
		if (used[idx])
			return reject(a, "duplicate %s index %u in '%s'", a->key, idx, a->value);
		used[idx] = 1;
		list[n++] = idx;
		if (!next)
			return n;
		s = next;
	}
}

/* list NULL: ccx = auto. */
static int keep_ccx(struct assignment *a, unsigned *list, size_t n) {
	free(a->rule->ccx);
	a->rule->ccx = list;
	a->rule->n_ccx = n;
	a->rule->ccx_auto = !list;
	a->rule->ccx_line = a->line;
	return 0;
}

static int set_ccx(struct assignment *a) {
	unsigned *list;
	size_t n = 1;
	int r;

	if (strcmp(a->value, "auto") == 0)
		return keep_ccx(a, NULL, 0);
	for (const char *q = a->value; *q; q++)
		n += *q == ',';
	list = calloc(n, sizeof(*list));
	if (!list)
		return -ENOMEM;
	r = parse_ccx_list(a, list);
	if (r < 0) {
		free(list);
		return r;
	}
	return keep_ccx(a, list, (size_t)r);
}

/* A whole number within min..max: "a number of samples, 1 to 8". */
static int parse_count(struct assignment *a, long min, long max, const char *expected, unsigned *field) {
	char *end;
	long v;

	errno = 0;
	v = strtol(a->value, &end, 10);
	if (errno || end == a->value || *end || v < min || v > max)
		return invalid(a, expected);
	*field = (unsigned)v;
	return 0;
}

/* A share, "25%" or "0.25", from 0 to max. */
static int parse_share(struct assignment *a, double max, const char *expected, double *field) {
	char *end;
	double v;

	errno = 0;
	v = strtod(a->value, &end);
	if (end != a->value && *end == '%' && end[1] == '\0')
		v /= 100.0;
	else if (end == a->value || *end)
		v = -1;
	if (errno || !(v >= 0.0 && v <= max))
		return invalid(a, expected);
	*field = v;
	return 0;
}

/* How a key's value is read, and the field it goes to. */
enum key_kind {
	KEY_BOOL,       /* yes or no: a bool */
	KEY_ENUM,       /* one of names(): an enum */
	KEY_PATH,       /* an absolute path: a string */
	KEY_GLOB,       /* a glob, not empty: a string */
	KEY_COUNT,      /* a whole number, min to max: an unsigned */
	KEY_SHARE,      /* "25%" or "0.25", 0 to max: a double */
	KEY_OWN,        /* read and set by own() alone */
};

struct key {
	const char *name;
	enum key_kind kind;
	size_t offset;             /* of the field, in struct config or, for a [program:NAME] key, struct rule */
	const char *(*names)(int); /* KEY_ENUM */
	long min, max;             /* KEY_COUNT; max also KEY_SHARE's, in hundredths */
	const char *expected;      /* KEY_COUNT, KEY_SHARE: what a refusal says is expected */
	int (*own)(struct assignment *a);   /* KEY_OWN: the setter; else a check first, or NULL */
};

#define DAEMON(field) .offset = offsetof(struct config, field)
#define RULE(field) .offset = offsetof(struct rule, field)

/* Every enum a KEY_ENUM key sets is stored as an int. */
_Static_assert(sizeof(enum config_mode) == sizeof(int) && sizeof(enum sampler_reading) == sizeof(int) &&
	       sizeof(enum sampler_counting) == sizeof(int) && sizeof(enum config_execs) == sizeof(int) &&
	       sizeof(enum config_x3d) == sizeof(int) && sizeof(enum rule_policy) == sizeof(int) &&
	       sizeof(enum rule_smt) == sizeof(int) && sizeof(enum rule_prefer) == sizeof(int),
	       "an enum key's field is not an int");

static const struct key daemon_keys[] = {
	{ "socket", KEY_PATH, DAEMON(socket), .own = socket_fits },
	{ "topology", KEY_OWN, .own = set_topology },
	{ "mode", KEY_ENUM, DAEMON(mode), .names = mode_name },
	{ "automatic", KEY_BOOL, DAEMON(automatic) },
	{ "interval", KEY_OWN, .own = set_interval },
	{ "restore_on_exit", KEY_BOOL, DAEMON(restore_on_exit) },
	{ "state_dir", KEY_PATH, DAEMON(state_dir) },
	{ "runtime_dir", KEY_PATH, DAEMON(runtime_dir) },
	{ "realtime_wait", KEY_BOOL, DAEMON(realtime_wait) },
	{ "calibrate", KEY_BOOL, DAEMON(calibrate) },
	{ "bpf", KEY_ENUM, DAEMON(bpf), .names = bpf_name },
	{ "traffic", KEY_ENUM, DAEMON(traffic), .names = traffic_name },
	{ "exec_events", KEY_ENUM, DAEMON(exec_events), .names = execs_name },
	{ "metrics_file", KEY_PATH, DAEMON(metrics_file), .own = names_a_file },
	{ "min_rate", KEY_OWN, .own = set_min_rate },
	{ "min_message_rate", KEY_OWN, .own = set_min_message_rate },
	{ "min_gain", KEY_SHARE, DAEMON(min_gain), .max = 1000, .expected = "a gain such as 5% or 0.05, at most 1000%" },
	{ "window", KEY_COUNT, DAEMON(window), .min = 1, .max = 8, .expected = "a number of samples, 1 to 8" },
	{ "crowded_wait", KEY_SHARE, DAEMON(crowded_wait), .max = 100,
	  .expected = "a share of the time such as 25% or 0.25, at most 100%; 0: never" },
	{ "crowded_samples", KEY_COUNT, DAEMON(crowded_samples), .min = 1, .max = 60,
	  .expected = "a number of samples, 1 to 60" },
	{ "recheck", KEY_OWN, .own = set_recheck },
	{ "seatings", KEY_OWN, .own = set_seatings },
	{ "x3d_mode", KEY_ENUM, DAEMON(x3d_mode), .names = x3d_name },
	{ .name = NULL },
};

static const struct key program_keys[] = {
	{ "exe", KEY_GLOB, RULE(exe) },
	{ "cmdline", KEY_GLOB, RULE(cmdline) },
	{ "parent", KEY_GLOB, RULE(parent) },
	{ "ancestor", KEY_GLOB, RULE(ancestor) },
	{ "unit", KEY_GLOB, RULE(unit), .own = names_a_unit },
	{ "cgroup", KEY_GLOB, RULE(cgroup), .own = starts_at_the_root },
	{ "ccx", KEY_OWN, .own = set_ccx },
	{ "policy", KEY_ENUM, RULE(policy), .names = policy_name },
	{ "smt", KEY_ENUM, RULE(smt), .names = smt_name },
	{ "prefer", KEY_ENUM, RULE(prefer), .names = prefer_name },
	{ "force", KEY_BOOL, RULE(force) },
	{ "spill", KEY_BOOL, RULE(spill) },
	{ .name = NULL },
};

/* Reads a's value as k says, into its field. */
static int set_key(const struct key *k, struct assignment *a) {
	void *field = (char *)(a->rule ? (void *)a->rule : (void *)a->config) + k->offset;
	int r = k->own ? k->own(a) : 0;

	if (r < 0 || k->kind == KEY_OWN)
		return r;
	switch (k->kind) {
	case KEY_BOOL:
		return parse_bool_key(a, field);
	case KEY_ENUM:
		r = parse_enum(a, k->names);
		if (r >= 0)
			*(int *)field = r;
		return r < 0 ? r : 0;
	case KEY_PATH:
		return parse_path_key(a, field);
	case KEY_GLOB:
		return parse_glob_key(a, field);
	case KEY_COUNT:
		return parse_count(a, k->min, k->max, k->expected, field);
	case KEY_SHARE:
		return parse_share(a, (double)k->max / 100.0, k->expected, field);
	case KEY_OWN:
		break;
	}
	return r;
}

_Static_assert(ELEMENTSOF(daemon_keys) <= CONFIG_KEYS_MAX + 1, "CONFIG_KEYS_MAX too small");
_Static_assert(ELEMENTSOF(program_keys) <= CONFIG_KEYS_MAX + 1, "CONFIG_KEYS_MAX too small");

static const struct key *section_keys(enum config_keys_section s) {
	return s == CONFIG_KEYS_DAEMON ? daemon_keys : program_keys;
}

int config_keys_find(enum config_keys_section s, const char *key) {
	const struct key *keys = section_keys(s);

	for (int i = 0; keys[i].name; i++)
		if (strcmp(key, keys[i].name) == 0)
			return i;
	return -ENOENT;
}

void config_keys_list(enum config_keys_section s, char *buf, size_t size) {
	const struct key *keys = section_keys(s);
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; keys[i].name && len < size; i++) {
		int r = snprintf(buf + len, size - len, "%s%s", i ? ", " : "", keys[i].name);

		if (r < 0)
			break;
		len += (size_t)r;
	}
}

int config_keys_set(enum config_keys_section s, int index, struct config *c, unsigned line, const char *value,
		    char **error) {
	const struct key *key = &section_keys(s)[index];
	struct assignment a = {
		.config = c,
		.rule = s == CONFIG_KEYS_PROGRAM ? &c->rules[c->n_rules - 1] : NULL,
		.line = line,
		.key = key->name,
		.value = value,
	};
	int r = set_key(key, &a);

	*error = a.error;
	return r;
}

/* note NOTES N MAX FMT...: one more note, where there is room */
#define note(notes, n, max, ...) \
	do { \
		if (*(n) < (max)) \
			snprintf((notes)[(*(n))++], CONFIG_NOTE_MAX, __VA_ARGS__); \
	} while (0)

/* *next keeps running's path. */
static void keep_path(char **next, const char *running) {
	char *p = strdup(running);

	if (p) {
		free(*next);
		*next = p;
	}
}

size_t config_keys_at_next_start(struct config *next, const struct config *running, char (*notes)[CONFIG_NOTE_MAX],
				 size_t max) {
	size_t n = 0;

	if (strcmp(next->socket, running->socket) != 0) {
		note(notes, &n, max, "The socket path changes from %s to %s at the next start", running->socket,
		     next->socket);
		keep_path(&next->socket, running->socket);
	}
	if (strcmp(next->runtime_dir, running->runtime_dir) != 0) {
		note(notes, &n, max, "The runtime directory changes from %s to %s at the next start",
		     running->runtime_dir, next->runtime_dir);
		keep_path(&next->runtime_dir, running->runtime_dir);
	}
	if (next->bpf != running->bpf)
		note(notes, &n, max, "bpf changes from %s to %s at the next start", config_bpf_to_string(running->bpf),
		     config_bpf_to_string(next->bpf));
	if (next->exec_events != running->exec_events)
		note(notes, &n, max, "exec_events changes from %s to %s at the next start",
		     config_execs_to_string(running->exec_events), config_execs_to_string(next->exec_events));
	if (next->traffic != running->traffic)
		note(notes, &n, max, "traffic changes from %s to %s at the next start",
		     config_traffic_to_string(running->traffic), config_traffic_to_string(next->traffic));
	next->bpf = running->bpf;
	next->exec_events = running->exec_events;
	next->traffic = running->traffic;
	return n;
}
