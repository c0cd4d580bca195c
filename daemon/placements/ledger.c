#include "ledger.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "atomicfile.h"
#include "cpulist.h"
#include "regfile.h"
#include "util.h"

/* The file is ccxd's own, but a broken one must not make ccxd run wild:
 * nesting deeper than the format's is an error, not a recursion. */
#define LEDGER_JSON_DEPTH 8
/* Far more than any machine has processes: a bigger file is not ours. */
#define LEDGER_SIZE_MAX (64 << 20)

static const char *const owner_names[_LEDGER_OWNER_MAX] = {
	[LEDGER_RULE] = "rule",
	[LEDGER_HAND] = "hand",
	[LEDGER_AUTO] = "auto",
	[LEDGER_RELEASED] = "released",
};

const char *ledger_owner_to_string(enum ledger_owner o) {
	const char *name = NAME_OF(owner_names, o);

	return name ? name : "unknown";
}

/* {"version": 1, "processes": [{"pid": 812, "start_time": 5234, "comm": "x264",
 *   "owner": "rule", "rule": "encoder", "inherited_from": 0,
 *   "original": "0-15", "cpus": "0-7"}, ...]} */
int ledger_format(const struct ledger_entry *e, size_t n, char **ret) {
	json_object *o = json_object_new_object(), *list = json_object_new_array();
	char buf[CPULIST_MAX];
	const char *text;

	if (!o || !list) {
		json_object_put(o);
		json_object_put(list);
		return -ENOMEM;
	}
	json_object_object_add(o, "version", json_object_new_int(1));
	for (size_t i = 0; i < n; i++) {
		json_object *p = json_object_new_object();
		if (!p)
			break;
		json_object_object_add(p, "pid", json_object_new_int(e[i].pid));
		json_object_object_add(p, "start_time", json_object_new_uint64(e[i].start_time));
		json_object_object_add(p, "comm", json_object_new_string(e[i].comm));
		json_object_object_add(p, "owner", json_object_new_string(ledger_owner_to_string(e[i].owner)));
		if (e[i].owner == LEDGER_RULE)
			json_object_object_add(p, "rule", json_object_new_string(e[i].rule));
		if (e[i].inherited_from)
			json_object_object_add(p, "inherited_from", json_object_new_int(e[i].inherited_from));
		json_object_object_add(p, "original",
				       json_object_new_string(cpulist_format(&e[i].original, buf, sizeof(buf))));
		json_object_object_add(p, "cpus", json_object_new_string(cpulist_format(&e[i].cpus, buf, sizeof(buf))));
		json_object_array_add(list, p);
	}
	json_object_object_add(o, "processes", list);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	*ret = text ? strdup(text) : NULL;
	json_object_put(o);
	return *ret ? 0 : -ENOMEM;
}

static int fail(char **error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(char **error, const char *fmt, ...) {
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(error, fmt, ap) < 0)
		*error = NULL;
	va_end(ap);
	return -EINVAL;
}

static bool get_int(json_object *p, const char *key, int64_t min, int64_t max, int64_t *ret) {
	json_object *v;

	if (!json_object_object_get_ex(p, key, &v) || !json_object_is_type(v, json_type_int))
		return false;
	errno = 0;
	*ret = json_object_get_int64(v);
	return errno == 0 && *ret >= min && *ret <= max;
}

static const char *get_string(json_object *p, const char *key) {
	json_object *v;

	if (!json_object_object_get_ex(p, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int parse_entry(json_object *p, size_t i, struct ledger_entry *e, char **error) {
	const char *comm = get_string(p, "comm"), *owner = get_string(p, "owner"), *rule = get_string(p, "rule");
	const char *original = get_string(p, "original"), *cpus = get_string(p, "cpus");
	int64_t pid, start_time, parent = 0;
	int owner_index;

	memset(e, 0, sizeof(*e));
	if (!json_object_is_type(p, json_type_object))
		return fail(error, "process %zu is not an object", i);
	if (!get_int(p, "pid", 1, INT_MAX, &pid) || !get_int(p, "start_time", 0, INT64_MAX, &start_time))
		return fail(error, "process %zu: no valid pid and start_time", i);
	if (json_object_object_get_ex(p, "inherited_from", NULL) && !get_int(p, "inherited_from", 1, INT_MAX, &parent))
		return fail(error, "process %zu: inherited_from is not a pid", i);
	e->pid = (pid_t)pid;
	e->start_time = (uint64_t)start_time;
	e->inherited_from = (pid_t)parent;
	if (!comm || strlen(comm) >= sizeof(e->comm))
		return fail(error, "process %d: no valid comm", e->pid);
	strcpy(e->comm, comm);
	if ((owner_index = INDEX_OF(owner_names, owner)) < 0)
		return fail(error, "process %d: owner is not rule, hand, auto or released", e->pid);
	e->owner = (enum ledger_owner)owner_index;
	if (e->owner == LEDGER_RULE && (!rule || !*rule || strlen(rule) >= sizeof(e->rule)))
		return fail(error, "process %d: no valid rule name", e->pid);
	if (e->owner == LEDGER_RULE)
		strcpy(e->rule, rule);
	if (!original || cpulist_parse(original, &e->original) < 0 || CPU_COUNT(&e->original) == 0)
		return fail(error, "process %d: original is not a CPU list", e->pid);
	if (!cpus || cpulist_parse(cpus, &e->cpus) < 0 || CPU_COUNT(&e->cpus) == 0)
		return fail(error, "process %d: cpus is not a CPU list", e->pid);
	return 0;
}

int ledger_parse(const char *text, struct ledger_entry **ret, size_t *n, char **error) {
	struct json_tokener *tok = json_tokener_new_ex(LEDGER_JSON_DEPTH);
	json_object *o = NULL, *list;
	struct ledger_entry *entries = NULL;
	size_t count = 0;
	int64_t version;
	int r = 0;

	*ret = NULL;
	*n = 0;
	*error = NULL;
	if (!tok)
		return -ENOMEM;
	o = json_tokener_parse_ex(tok, text, (int)strnlen(text, LEDGER_SIZE_MAX));
	if (!o || json_tokener_get_error(tok) != json_tokener_success)
		r = fail(error, "not JSON: %s", json_tokener_error_desc(json_tokener_get_error(tok)));
	else if (!json_object_is_type(o, json_type_object) || !get_int(o, "version", 1, 1, &version))
		r = fail(error, "not a version 1 ledger");
	else if (!json_object_object_get_ex(o, "processes", &list) || !json_object_is_type(list, json_type_array))
		r = fail(error, "no processes array");
	else {
		count = json_object_array_length(list);
		entries = count ? calloc(count, sizeof(*entries)) : NULL;
		if (count && !entries)
			r = -ENOMEM;
		for (size_t i = 0; r == 0 && i < count; i++)
			r = parse_entry(json_object_array_get_idx(list, i), i, &entries[i], error);
	}
	json_object_put(o);
	json_tokener_free(tok);
	if (r < 0) {
		free(entries);
		return r;
	}
	*ret = entries;
	*n = count;
	return 0;
}

static int path_in(const char *dir, const char *name, char *buf, size_t size) {
	int len = snprintf(buf, size, "%s/%s", dir, name);

	return len < 0 || (size_t)len >= size ? -ENAMETOOLONG : 0;
}

int ledger_write(const char *dir, const char *text) {
	char path[PATH_MAX];
	int r = path_in(dir, LEDGER_FILE, path, sizeof(path));

	/* Not durable: the runtime directory is a tmpfs, and the processes the
	 * file speaks of do not outlive the machine either. */
	return r < 0 ? r : atomicfile_write(path, text, 0600, false);
}

int ledger_log_line(const struct ledger_entry *e, char *buf, size_t size) {
	char original[CPULIST_MAX], cpus[CPULIST_MAX];
	int len = snprintf(buf, size, "%d %" PRIu64 " %s %s\n", (int)e->pid, e->start_time,
			   cpulist_format(&e->original, original, sizeof(original)),
			   cpulist_format(&e->cpus, cpus, sizeof(cpus)));

	return len < 0 || (size_t)len >= size ? -ENOBUFS : len;
}

/* One line of the log, strictly: four fields, nothing after. */
_Static_assert(CPULIST_MAX == 4096, "the field widths below");
static bool parse_log_line(const char *line, struct ledger_entry *ret) {
	char original[CPULIST_MAX], cpus[CPULIST_MAX], end;
	long long pid;
	unsigned long long start;

	if (sscanf(line, "%lld %llu %4095s %4095s %c", &pid, &start,
		   original, cpus, &end) != 4 || pid <= 0 || pid > INT_MAX)
		return false;
	*ret = (struct ledger_entry){ .pid = (pid_t)pid, .start_time = start, .owner = LEDGER_AUTO };
	return cpulist_parse(original, &ret->original) == 0 && cpulist_parse(cpus, &ret->cpus) == 0 &&
	       CPU_COUNT(&ret->original) > 0 && CPU_COUNT(&ret->cpus) > 0;
}

int ledger_apply_log(const char *text, struct ledger_entry **e, size_t *n) {
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		char buf[2 * CPULIST_MAX + 64];
		struct ledger_entry x, *grown;
		size_t len = nl ? (size_t)(nl - line) : strlen(line), i;

		if (!nl || len >= sizeof(buf))
			break;   /* cut short by a crash, or not a line of ours */
		memcpy(buf, line, len);
		buf[len] = '\0';
		if (!parse_log_line(buf, &x))
			break;
		for (i = 0; i < *n; i++)
			if ((*e)[i].pid == x.pid && (*e)[i].start_time == x.start_time)
				break;
		if (i < *n) {
			(*e)[i].cpus = x.cpus;
		} else {
			grown = realloc(*e, (*n + 1) * sizeof(**e));
			if (!grown)
				return -ENOMEM;
			*e = grown;
			(*e)[(*n)++] = x;
		}
		line = nl + 1;
	}
	return 0;
}

/* Read as root reads what ccxd's own user may replace (ccxd --give-back):
 * a regular file only, never through a link, never a FIFO that would hang
 * the read, and of a ledger's size at most. */
static int read_file(const char *dir, const char *name, char **text, char **error) {
	char path[PATH_MAX];
	size_t len;
	int r;

	if ((r = path_in(dir, name, path, sizeof(path))) < 0)
		return r;
	r = regfile_read(path, REGFILE_NOFOLLOW, LEDGER_SIZE_MAX, text, &len);
	if (r == -ENOENT || r == -ENOMEM || r >= 0)
		return r;
	return fail(error, "%s: %s", name, regfile_strerror(r));
}

int ledger_read(const char *dir, struct ledger_entry **ret, size_t *n, char **error) {
	char *text = NULL, *log = NULL;
	int r, rl;

	*ret = NULL;
	*n = 0;
	*error = NULL;
	r = read_file(dir, LEDGER_FILE, &text, error);
	if (r < 0 && r != -ENOENT)
		return r;
	if (r == 0) {
		r = ledger_parse(text, ret, n, error);
		free(text);
		if (r < 0)
			return r;
	}
	rl = read_file(dir, LEDGER_LOG_FILE, &log, error);
	if (rl == -ENOENT)
		return r;   /* the file's, or -ENOENT: neither */
	if (rl == 0) {
		rl = ledger_apply_log(log, ret, n);
		free(log);
	}
	if (rl < 0) {
		free(*ret);
		*ret = NULL;
		*n = 0;
	}
	return rl;
}

int ledger_remove(const char *dir) {
	char path[PATH_MAX];
	int r = path_in(dir, LEDGER_FILE, path, sizeof(path));

	if (r < 0)
		return r;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	if ((r = path_in(dir, LEDGER_LOG_FILE, path, sizeof(path))) < 0)
		return r;
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}
