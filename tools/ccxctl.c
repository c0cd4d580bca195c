/* ccxctl: asks ccxd over its control socket; tables for people, JSON for programs. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccxctl.h"
#include "cpulist.h"
#include "protocol.h"
#include "topology.h"

#define CALL_TIMEOUT_MS (30 * 1000)

struct command {
	const char *name;
	const char *args;
	const char *help;
	int min_args, max_args;   /* OWN_OPTIONS: parses argv itself, from its own name on */
	int (*run)(const struct options *o, int argc, char **argv);
};

#define OWN_OPTIONS (-1)

/* ---- tables ------------------------------------------------------------ */

void table_add(struct table *t, ...) {
	va_list ap;
	char **cells = realloc(t->cells, (t->n_rows + 1) * t->n_columns * sizeof(*cells));

	if (!cells) {
		fprintf(stderr, "ccxctl: out of memory\n");
		exit(1);
	}
	t->cells = cells;
	va_start(ap, t);
	for (size_t c = 0; c < t->n_columns; c++) {
		const char *s = va_arg(ap, const char *);
		t->cells[t->n_rows * t->n_columns + c] = strdup(s ? s : "-");
	}
	va_end(ap);
	t->n_rows++;
}

void table_print_free(struct table *t) {
	size_t width[TABLE_COLUMNS_MAX] = { 0 };

	for (size_t r = 0; r < t->n_rows; r++)
		for (size_t c = 0; c < t->n_columns; c++) {
			size_t len = strlen(t->cells[r * t->n_columns + c]);
			if (len > width[c])
				width[c] = len;
		}
	for (size_t r = 0; r < t->n_rows; r++) {
		for (size_t c = 0; c < t->n_columns; c++) {
			const char *s = t->cells[r * t->n_columns + c];
			if (c + 1 == t->n_columns)
				printf("%s\n", s);
			else
				printf("%-*s  ", (int)width[c], s);
			free(t->cells[r * t->n_columns + c]);
		}
	}
	free(t->cells);
}

/* ---- talking to the daemon -------------------------------------------- */

/* Calls method; prints the failure and returns NULL when there is no answer
 * or the answer is an error. */
static json_object *call(const struct options *o, const char *method, json_object *params) {
	json_object *reply = NULL, *v;
	char *error = NULL;
	int r = protocol_call(o->socket, method, params, CALL_TIMEOUT_MS, &reply, &error);

	json_object_put(params);
	if (r == -ENOENT || r == -ECONNREFUSED) {
		fprintf(stderr, "ccxctl: ccxd is not running (no answer on %s)\n", o->socket);
		return NULL;
	}
	if (r == -EACCES) {
		fprintf(stderr, "ccxctl: not allowed to talk to ccxd on %s\n", o->socket);
		return NULL;
	}
	if (r < 0) {
		fprintf(stderr, "ccxctl: talking to ccxd on %s failed: %s\n", o->socket, strerror(-r));
		return NULL;
	}
	if (error) {
		const char *msg = json_object_object_get_ex(reply, "message", &v) ? json_object_get_string(v) : error;
		fprintf(stderr, "ccxctl: %s (%s)\n", msg, error);
		if (json_object_object_get_ex(reply, "errors", &v))
			for (size_t i = 0; i < json_object_array_length(v); i++)
				fprintf(stderr, "%s\n", json_object_get_string(json_object_array_get_idx(v, i)));
		free(error);
		json_object_put(reply);
		return NULL;
	}
	return reply;
}

void print_json(json_object *o) {
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
}

static const char *str(json_object *o, const char *key) {
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return NULL;
	return json_object_get_string(v);
}

/* status's sampling.reading, as words */
static const char *reading_words(const char *reading) {
	if (!reading)
		return "(unknown)";
	if (strcmp(reading, "batch") == 0)
		return "through BPF, in one batch";
	if (strcmp(reading, "per-process") == 0)
		return "through BPF, one iterator each";
	if (strcmp(reading, "proc") == 0)
		return "from /proc";
	return reading;
}

/* A JSON array of small integers as "1" or "0,2" */
static const char *int_list(json_object *o, const char *key, char *buf, size_t size) {
	json_object *a;
	size_t len = 0;

	buf[0] = '\0';
	if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array))
		return str(o, key);
	for (size_t i = 0; i < json_object_array_length(a) && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%d", i ? "," : "",
					json_object_get_int(json_object_array_get_idx(a, i)));
	return len ? buf : NULL;
}

static const char *human_size(uint64_t bytes, char *buf, size_t size) {
	if (bytes == 0)
		snprintf(buf, size, "-");
	else if (bytes % (1024 * 1024) == 0)
		snprintf(buf, size, "%llu MiB", (unsigned long long)(bytes >> 20));
	else
		snprintf(buf, size, "%llu KiB", (unsigned long long)(bytes >> 10));
	return buf;
}

/* ---- commands ---------------------------------------------------------- */

static void print_process_table(json_object *procs) {
	struct table t = { .n_columns = 8 };

	table_add(&t, "PID", "COMM", "STATE", "CCX", "CPUS", "ORIGINAL", "RULE", "REASON");
	for (size_t i = 0; i < json_object_array_length(procs); i++) {
		json_object *p = json_object_array_get_idx(procs, i);
		char ccx[256];
		table_add(&t, str(p, "pid"), str(p, "comm"), str(p, "state"), int_list(p, "ccx", ccx, sizeof(ccx)),
			  str(p, "cpus"), str(p, "original_cpus"), str(p, "rule"), str(p, "reason"));
	}
	table_print_free(&t);
}

static const char *human_rate(json_object *o, const char *key, char *buf, size_t size) {
	json_object *v;
	double bps;

	if (!json_object_object_get_ex(o, key, &v))
		return NULL;
	bps = json_object_get_double(v);
	if (bps >= 1024.0 * 1024 * 1024)
		snprintf(buf, size, "%.2f GiB/s", bps / (1024.0 * 1024 * 1024));
	else if (bps >= 1024.0 * 1024)
		snprintf(buf, size, "%.1f MiB/s", bps / (1024.0 * 1024));
	else
		snprintf(buf, size, "%.0f KiB/s", bps / 1024.0);
	return buf;
}

/* "PID COMM, PID COMM, ..." of a group's members; a member not active in
 * the last sample by its pid alone. */
static const char *members(json_object *g, char *buf, size_t size) {
	json_object *pids, *m;
	size_t len = 0;

	buf[0] = '\0';
	json_object_object_get_ex(g, "pids", &pids);
	json_object_object_get_ex(g, "members", &m);
	for (size_t i = 0; i < json_object_array_length(pids) && len < size; i++) {
		int pid = json_object_get_int(json_object_array_get_idx(pids, i));
		const char *comm = NULL;
		for (size_t k = 0; k < json_object_array_length(m); k++) {
			json_object *x = json_object_array_get_idx(m, k), *p;
			if (json_object_object_get_ex(x, "pid", &p) && json_object_get_int(p) == pid)
				comm = str(x, "comm");
		}
		len += (size_t)snprintf(buf + len, size - len, "%s%d%s%s", i ? ", " : "", pid, comm ? " " : "",
					comm ? comm : "");
	}
	return buf;
}

/* A channel's messages a second, rounded. */
static const char *messages(json_object *c) {
	static char buf[32];
	json_object *v;

	snprintf(buf, sizeof(buf), "%.0f",
		 json_object_object_get_ex(c, "messages_per_s", &v) ? json_object_get_double(v) : 0.0);
	return buf;
}

/* A channel's arrow: writer > reader, or <> where both directions carried
 * something; - between the two ends of a socket, or of pipes both hold
 * whole, whose directions are not known (estimated). */
static const char *arrow(json_object *c) {
	json_object *both, *exact, *shared;
	const char *kind = str(c, "kind");

	if (json_object_object_get_ex(c, "both", &both) && json_object_get_boolean(both))
		return "<>";
	if (json_object_object_get_ex(c, "shared", &shared) && json_object_get_boolean(shared))
		return "-";
	if (kind && strcmp(kind, "pipe") != 0 && !(json_object_object_get_ex(c, "exact", &exact) &&
						  json_object_get_boolean(exact)))
		return "-";
	return ">";
}

static void print_group_table(json_object *groups) {
	struct table t = { .n_columns = 8 };

	table_add(&t, "GROUP", "MEMBERS", "STATE", "CCX", "CPUS", "TRAFFIC", "WAKEUPS/S", "CHANNELS");
	for (size_t i = 0; i < json_object_array_length(groups); i++) {
		json_object *g = json_object_array_get_idx(groups, i), *chans;
		char pids[512], rate[64], wakeups[32], channels[512] = "";
		json_object *w;
		size_t len = 0;

		json_object_object_get_ex(g, "channels", &chans);
		for (size_t k = 0; k < json_object_array_length(chans) && len < sizeof(channels); k++) {
			json_object *c = json_object_array_get_idx(chans, k);
			const char *kind = str(c, "kind");
			char r[64];
			/* A process's own threads: one end, and how many are busy. */
			if (kind && strcmp(kind, "threads") == 0)
				len += (size_t)snprintf(channels + len, sizeof(channels) - len, "%sthreads %s x%s %s",
							k ? ", " : "", str(c, "from"), str(c, "busy_threads"),
							human_rate(c, "bytes_per_s", r, sizeof(r)));
			else
				len += (size_t)snprintf(channels + len, sizeof(channels) - len, "%s%s %s%s%s %s %s msg/s",
							k ? ", " : "", kind, str(c, "from"), arrow(c), str(c, "to"),
							human_rate(c, "bytes_per_s", r, sizeof(r)), messages(c));
		}
		snprintf(wakeups, sizeof(wakeups), "%.0f",
			 json_object_object_get_ex(g, "wakeups_per_s", &w) ? json_object_get_double(w) : 0.0);
		table_add(&t, str(g, "id"), members(g, pids, sizeof(pids)), str(g, "state"), str(g, "ccx"),
			  str(g, "cpus"), human_rate(g, "bytes_per_s", rate, sizeof(rate)), wakeups, channels);
	}
	table_print_free(&t);
	for (size_t i = 0; i < json_object_array_length(groups); i++) {
		json_object *g = json_object_array_get_idx(groups, i);
		printf("  %s: %s\n", str(g, "id"), str(g, "reason"));
	}
}

/* The processes that communicate but are in no group, and why. */
static void print_cut(json_object *status) {
	json_object *cut;

	if (!json_object_object_get_ex(status, "cut", &cut))
		return;
	for (size_t i = 0; i < json_object_array_length(cut); i++) {
		json_object *c = json_object_array_get_idx(cut, i);
		printf("alone:    %s %s: %s\n", str(c, "pid"), str(c, "comm"), str(c, "reason"));
	}
}

/* The probe figures the automatic policy uses, how old they are, and what
 * they decide; or what the probe is doing. */
/* Where execs come from. */
static void print_execs(json_object *watcher) {
	json_object *e;

	if (!json_object_object_get_ex(watcher, "execs", &e) || !e || !str(e, "source"))
		return;
	if (strcmp(str(e, "source"), "bpf") == 0)
		printf("execs:    filtered in the kernel (BPF); %s reported as the exec names the task, %s when it is done\n",
		       str(e, "at_rename"), str(e, "at_end"));
	else
		printf("execs:    every one from the proc connector: %s\n", str(e, "note") ? str(e, "note") : "");
}

/* How soon after the kernel's exec event the last programs were pinned. */
static void print_exec_pins(json_object *status) {
	json_object *e;

	if (!json_object_object_get_ex(status, "exec_pins", &e) || !e)
		return;
	printf("          at exec: pinned %s us after the exec event at the median, %s at p90, %s at most "
	       "(last %s)\n", str(e, "p50_usec"), str(e, "p90_usec"), str(e, "max_usec"), str(e, "count"));
}

static void print_probe_line(json_object *status) {
	json_object *p, *f, *d;
	const char *state;

	if (!json_object_object_get_ex(status, "probe", &p))
		return;
	state = str(p, "state");
	if (state && strcmp(state, "idle") != 0)
		printf("probe:    %s, step %s of %s (worker %s)\n", state, str(p, "done"), str(p, "total"),
		       str(p, "worker_pid"));
	if (!json_object_object_get_ex(p, "figures", &f) || json_object_is_type(f, json_type_null)) {
		printf("probe:    no figures%s%s; seatings in topology order\n", str(p, "note") ? ": " : "",
		       str(p, "note") ? str(p, "note") : "");
		return;
	}
	printf("probe:    figures from the %s of %s (%s s old, fingerprint %s)\n", str(f, "source"), str(f, "date"),
	       str(f, "age_s"), str(f, "fingerprint"));
	if (json_object_object_get_ex(p, "decision", &d))
		printf("          %s\n", str(d, "note"));
}

static int cmd_status(const struct options *o, int argc, char **argv) {
	json_object *r = call(o, CCXD_METHOD_GET_STATUS, NULL), *w, *c, *procs, *groups;

	(void)argc;
	(void)argv;
	if (!r)
		return 1;
	if (o->json) {
		print_json(r);
		json_object_put(r);
		return 0;
	}
	json_object_object_get_ex(r, "watcher", &w);
	json_object_object_get_ex(r, "counters", &c);
	json_object_object_get_ex(r, "processes", &procs);
	printf("ccxd %s, mode %s, topology %s\n", str(r, "version"), str(r, "mode"), str(r, "topology"));
	printf("config:   %s\n", str(r, "config") ? str(r, "config") : "(defaults)");
	printf("events:   %s%s%s; %s handled, %s lost, %s rescans\n", str(w, "source"),
	       str(w, "note") ? ": " : "", str(w, "note") ? str(w, "note") : "",
	       str(c, "events"), str(c, "lost_events"), str(c, "rescans"));
	print_execs(w);
	printf("pins:     %s set, %s restored, %s failed, %s taken back after a restart\n", str(c, "pins"),
	       str(c, "restores"), str(c, "pin_failures"), str(c, "readopted"));
	print_exec_pins(r);
	print_probe_line(r);
	printf("\n");
	if (json_object_array_length(procs) == 0)
		printf("No processes placed by rules.\n");
	else
		print_process_table(procs);
	if (json_object_object_get_ex(r, "groups", &groups)) {
		json_object *sampling;
		json_object_object_get_ex(r, "sampling", &sampling);
		printf("\nsampling: %s processes looked at, %s of them active (used CPU), last cycle %s us; "
		       "active ones read %s\n",
		       str(sampling, "processes_scanned"), str(sampling, "processes_active"),
		       str(sampling, "last_cycle_usec"), reading_words(str(sampling, "reading")));
		if (str(sampling, "note"))
			printf("          (%s)\n", str(sampling, "note"));
		printf("traffic:  counted by the kernel: %s%s\n", str(sampling, "counted"),
		       strcmp(str(sampling, "counted") ? str(sampling, "counted") : "", "pipes and sockets") == 0
			       ? ""
			       : "; the rest estimated from /proc");
		if (str(sampling, "counted_note"))
			printf("          (%s)\n", str(sampling, "counted_note"));
		if (json_object_array_length(groups) == 0)
			printf("No communicating groups.\n");
		else
			print_group_table(groups);
		print_cut(r);
	}
	json_object_put(r);
	return 0;
}

static json_object *local_topology(const char *spec) {
	struct topology *t;
	char *error = NULL;
	json_object *o;
	int r = topology_load(spec, &t, &error);

	if (r < 0) {
		fprintf(stderr, "ccxctl: topology %s: %s\n", spec, error ? error : strerror(-r));
		free(error);
		return NULL;
	}
	o = protocol_topology_json(t);
	topology_free(t);
	return o;
}

/* The largest L3 and the highest clock among the usable CCXs of a topology's JSON. */
static void topology_bests(json_object *ccxs, int64_t *cache, int64_t *clock, int64_t *lowest_clock) {
	*cache = *clock = 0;
	*lowest_clock = INT64_MAX;
	for (size_t i = 0; i < json_object_array_length(ccxs); i++) {
		json_object *x = json_object_array_get_idx(ccxs, i), *v;
		if (json_object_object_get_ex(x, "usable", &v) && !json_object_get_boolean(v))
			continue;
		if (json_object_object_get_ex(x, "cache_size", &v) && json_object_get_int64(v) > *cache)
			*cache = json_object_get_int64(v);
		if (json_object_object_get_ex(x, "clock", &v) && v) {
			int64_t c = json_object_get_int64(v);
			if (c > *clock)
				*clock = c;
			if (c < *lowest_clock)
				*lowest_clock = c;
		}
	}
}

static bool json_true(json_object *x, const char *key) {
	json_object *v;

	return json_object_object_get_ex(x, key, &v) && json_object_get_boolean(v);
}

/* What sets one CCX apart from the others: a larger L3, a higher clock,
 * efficiency cores, a NUMA node without memory. */
static void ccx_note(json_object *x, size_t n_ccx, int64_t best_cache, int64_t best_clock, int64_t lowest_clock,
		     char *buf, size_t size) {
	json_object *v;
	size_t len = 0;

#define NOTE(text) \
	len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", len ? ", " : "", text)
	buf[0] = '\0';
	if (!json_true(x, "usable")) {
		NOTE("unusable: no online CPU");
		return;
	}
	(void)best_cache;
	/* Only where the CCXs differ: one CCX, or all alike, is nothing to note. */
	if (n_ccx > 1 && best_clock > lowest_clock && json_object_object_get_ex(x, "clock", &v) && v &&
	    json_object_get_int64(v) == best_clock)
		NOTE("higher clock");
	if (json_true(x, "efficiency_cores"))
		NOTE("efficiency cores");
	if (!json_true(x, "local_memory"))
		NOTE("no local memory");
#undef NOTE
}

static int cmd_topology(const struct options *o, int argc, char **argv) {
	json_object *r, *ccxs;
	struct table t = { .n_columns = 7 };
	int64_t best_cache, best_clock, lowest_clock, smallest_cache = INT64_MAX;

	(void)argc;
	(void)argv;
	r = o->topology ? local_topology(o->topology) : call(o, CCXD_METHOD_GET_TOPOLOGY, NULL);
	if (!r)
		return 1;
	if (o->json) {
		print_json(r);
		json_object_put(r);
		return 0;
	}
	json_object_object_get_ex(r, "ccxs", &ccxs);
	printf("%s: %s packages, %s NUMA nodes, %zu CCXs, %s cores, %s CPUs (online %s)\n", str(r, "source"),
	       str(r, "packages"), str(r, "numa_nodes"), json_object_array_length(ccxs), str(r, "cores"),
	       str(r, "pus"), str(r, "online"));
	topology_bests(ccxs, &best_cache, &best_clock, &lowest_clock);
	if (str(r, "clock_source") && strcmp(str(r, "clock_source"), "none") != 0)
		printf("clocks: from %s%s\n", str(r, "clock_source"), best_clock > lowest_clock ? "" : ", all alike");
	else
		printf("clocks: not known (prefer = frequency takes the smallest L3)\n");
	if (str(r, "x3d_mode"))
		printf("x3d:    amd_x3d_vcache in %s mode: the scheduler fills the %s CCX's cores first\n",
		       str(r, "x3d_mode"), strcmp(str(r, "x3d_mode"), "cache") == 0 ? "larger L3" : "faster");
	if (str(r, "llc_balancing"))
		printf("sched:  cache-aware balancing %s%s\n", json_true(r, "llc_balancing") ? "on" : "off",
		       json_true(r, "llc_balancing")
			       ? ": the kernel keeps each process's threads on one LLC; ccxd groups processes, "
				 "and its pins override the kernel for what it places"
			       : "");
	printf("\n");
	for (size_t i = 0; i < json_object_array_length(ccxs); i++) {
		json_object *v;
		if (json_true(json_object_array_get_idx(ccxs, i), "usable") &&
		    json_object_object_get_ex(json_object_array_get_idx(ccxs, i), "cache_size", &v) &&
		    json_object_get_int64(v) < smallest_cache)
			smallest_cache = json_object_get_int64(v);
	}
	table_add(&t, "CCX", "CPUS", "CORES", "CACHE", "NUMA", "PACKAGE", "NOTE");
	for (size_t i = 0; i < json_object_array_length(ccxs); i++) {
		json_object *x = json_object_array_get_idx(ccxs, i), *v;
		char cache[64], size[32], note[128], both[160];
		json_object_object_get_ex(x, "cache_size", &v);
		snprintf(cache, sizeof(cache), "L%s %s", str(x, "cache_level"),
			 human_size((uint64_t)json_object_get_int64(v), size, sizeof(size)));
		ccx_note(x, json_object_array_length(ccxs), best_cache, best_clock, lowest_clock, note, sizeof(note));
		/* A larger L3 than some other CCX's: the X3D die. */
		if (json_true(x, "usable") && json_object_get_int64(v) == best_cache && best_cache > smallest_cache)
			snprintf(both, sizeof(both), "larger L3%s%s", note[0] ? ", " : "", note);
		else
			snprintf(both, sizeof(both), "%s", note);
		table_add(&t, str(x, "index"), str(x, "cpus"), str(x, "cores"), cache, str(x, "numa_node"),
			  str(x, "package"), both);
	}
	table_print_free(&t);
	json_object_put(r);
	return 0;
}

/* What a rule of GetRules matches on, "comm x265, cmdline *--slow*, parent
 * make", into buf: its name is a glob on comm unless it has exe. */
static const char *rule_match(json_object *x, char *buf, size_t size) {
	static const char *const keys[] = { "exe", "cmdline", "parent", "ancestor", "unit", "cgroup" };
	size_t len = 0;

	if (!str(x, "exe"))
		len = (size_t)snprintf(buf, size, "comm %s", str(x, "name") ? str(x, "name") : "");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && len < size; i++)
		if (str(x, keys[i]))
			len += (size_t)snprintf(buf + len, size - len, "%s%s %s", len ? ", " : "", keys[i],
						str(x, keys[i]));
	return buf;
}

static int cmd_rules(const struct options *o, int argc, char **argv) {
	json_object *r = call(o, CCXD_METHOD_GET_RULES, NULL), *rules;
	struct table t = { .n_columns = 7 };

	(void)argc;
	(void)argv;
	if (!r)
		return 1;
	if (o->json) {
		print_json(r);
		json_object_put(r);
		return 0;
	}
	json_object_object_get_ex(r, "rules", &rules);
	if (json_object_array_length(rules) == 0) {
		printf("No rules in %s.\n", str(r, "config") ? str(r, "config") : "the default configuration");
		json_object_put(r);
		return 0;
	}
	table_add(&t, "FILE:LINE", "NAME", "CCX", "POLICY", "SMT", "FORCE", "MATCHES");
	for (size_t i = 0; i < json_object_array_length(rules); i++) {
		json_object *x = json_object_array_get_idx(rules, i);
		char ccx[256], where[4096], match[4096];

		snprintf(where, sizeof(where), "%s:%s", str(x, "file") ? str(x, "file") : "-", str(x, "line"));
		table_add(&t, where, str(x, "name"), int_list(x, "ccx", ccx, sizeof(ccx)), str(x, "policy"),
			  str(x, "smt"), strcmp(str(x, "force"), "true") == 0 ? "yes" : "no",
			  rule_match(x, match, sizeof(match)));
	}
	table_print_free(&t);
	json_object_put(r);
	return 0;
}

static int parse_number(const char *what, const char *s, long long max, long long *ret) {
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max) {
		fprintf(stderr, "ccxctl: invalid %s '%s'\n", what, s);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

static int print_process(const struct options *o, json_object *r, const char *verb) {
	json_object *p;

	if (o->json)
		print_json(r);
	else if (json_object_object_get_ex(r, "process", &p))
		printf("%s %s[%s]: %s\n", verb, str(p, "comm"), str(p, "pid"), str(p, "reason"));
	json_object_put(r);
	return 0;
}

static int cmd_pin(const struct options *o, int argc, char **argv) {
	long long pid, ccx;
	json_object *params, *r;

	(void)argc;
	if (parse_number("PID", argv[0], INT_MAX, &pid) < 0 || parse_number("CCX", argv[1], CPU_SETSIZE - 1, &ccx) < 0)
		return 2;
	params = json_object_new_object();
	json_object_object_add(params, "pid", json_object_new_int64(pid));
	json_object_object_add(params, "ccx", json_object_new_int64(ccx));
	r = call(o, CCXD_METHOD_PIN, params);
	return r ? print_process(o, r, "pinned") : 1;
}

static int cmd_unpin(const struct options *o, int argc, char **argv) {
	long long pid;
	json_object *params, *r;

	(void)argc;
	if (parse_number("PID", argv[0], INT_MAX, &pid) < 0)
		return 2;
	params = json_object_new_object();
	json_object_object_add(params, "pid", json_object_new_int64(pid));
	r = call(o, CCXD_METHOD_UNPIN, params);
	return r ? print_process(o, r, "unpinned") : 1;
}

static int cmd_reload(const struct options *o, int argc, char **argv) {
	json_object *r = call(o, CCXD_METHOD_RELOAD, NULL);

	(void)argc;
	(void)argv;
	if (!r)
		return 1;
	if (o->json)
		print_json(r);
	else
		printf("reloaded: %s rules\n", str(r, "rules"));
	json_object_put(r);
	return 0;
}

/* Prometheus text as it is, so that it can be piped or scraped. */
static int cmd_metrics(const struct options *o, int argc, char **argv) {
	json_object *r = call(o, CCXD_METHOD_GET_METRICS, NULL);

	(void)argc;
	(void)argv;
	if (!r)
		return 1;
	if (o->json)
		print_json(r);
	else
		fputs(str(r, "text") ? str(r, "text") : "", stdout);
	json_object_put(r);
	return 0;
}

static int cmd_version(const struct options *o, int argc, char **argv) {
	json_object *r = call(o, CCXD_METHOD_GET_VERSION, NULL);

	(void)argc;
	(void)argv;
	if (o->json) {
		json_object *out = json_object_new_object();
		json_object_object_add(out, "ccxctl", json_object_new_string(CCXD_VERSION));
		json_object_object_add(out, "ccxd", r ? json_object_get(r) : NULL);
		print_json(out);
		json_object_put(out);
	} else {
		printf("ccxctl %s\n", CCXD_VERSION);
		if (r)
			printf("ccxd %s (protocol %s)\n", str(r, "version"), str(r, "protocol"));
	}
	json_object_put(r);
	return r ? 0 : 1;
}

static const struct command commands[] = {
	{ "status",   "",        "processes ccxd placed, and why",          0, 0, cmd_status },
	{ "topology", "",        "the CCXs of the machine (--topology SPEC: any topology, no daemon)", 0, 0, cmd_topology },
	{ "rules",    "",        "the rules in force",                      0, 0, cmd_rules },
	{ "pin",      "PID CCX", "pin a process to a CCX by hand (root)",   2, 2, cmd_pin },
	{ "unpin",    "PID",     "restore a process's original affinity (root)", 1, 1, cmd_unpin },
	{ "reload",   "",        "read the configuration again (root)",     0, 0, cmd_reload },
	{ "metrics",  "",        "counters in Prometheus text format",      0, 0, cmd_metrics },
	{ "version",  "",        "versions of ccxctl and ccxd",             0, 0, cmd_version },
	{ "probe",    "[OPTIONS]", "measure what placement costs (--local; --help)", OWN_OPTIONS, OWN_OPTIONS, cmd_probe },
};

static void usage(FILE *f) {
	fprintf(f, "Usage: ccxctl [--socket PATH] [--json] COMMAND [ARGS]\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		char left[32];
		snprintf(left, sizeof(left), "%s %s", commands[i].name, commands[i].args);
		fprintf(f, "  %-18s %s\n", left, commands[i].help);
	}
	fprintf(f, "\nOptions:\n"
		   "  -s, --socket PATH   ccxd's socket (default $CCXD_SOCKET or /run/ccxd/ccxd.sock)\n"
		   "  -j, --json          print the daemon's JSON\n"
		   "  -t, --topology SPEC with 'topology': system, xml:PATH or synthetic:STRING\n"
		   "  -h, --help          print this help\n");
}

/* Returns -1 to go on, or the exit status. */
static int parse_options(int argc, char **argv, const char *optstring, struct options *o) {
	static const struct option long_options[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "topology", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int opt;

	while ((opt = getopt_long(argc, argv, optstring, long_options, NULL)) >= 0) {
		switch (opt) {
		case 's':
			o->socket = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 't':
			o->topology = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	return -1;
}

static const struct command *find_command(const char *name) {
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv) {
	struct options o = { .socket = getenv("CCXD_SOCKET") };
	const struct command *c;
	char **rest;
	int r, n;

	if (!o.socket || !*o.socket)
		o.socket = CCXD_DEFAULT_SOCKET;
	/* ccxctl's own options come before the command ("+": stop there) ... */
	r = parse_options(argc, argv, "+s:jt:h", &o);
	if (r >= 0)
		return r;
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	c = find_command(argv[optind]);
	if (!c) {
		fprintf(stderr, "ccxctl: unknown command '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (c->min_args == OWN_OPTIONS)
		return c->run(&o, argc - optind, argv + optind);
	/* ... or anywhere after it ("topology --topology SPEC"). getopt
	 * starts afresh on the rest, with the program's name in front for
	 * its messages. */
	rest = argv + optind;
	n = argc - optind;
	rest[0] = argv[0];
	optind = 0;
	r = parse_options(n, rest, "s:jt:h", &o);
	if (r >= 0)
		return r;
	n -= optind;
	if (n < c->min_args || n > c->max_args) {
		fprintf(stderr, "Usage: ccxctl %s %s\n", c->name, c->args);
		return 2;
	}
	return c->run(&o, n, rest + optind);
}
