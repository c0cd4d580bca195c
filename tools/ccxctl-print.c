/* ccxd's replies as text for people: the views of ccxctl's commands. */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ccxctl-print.h"
#include "ccxctl-text.h"

/* ---- reading a reply --------------------------------------------------- */

static json_object *get(json_object *o, const char *key) {
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* A value as text; NULL for null or nothing, and for an object or an array,
 * which are never printed whole. */
static const char *text_of(json_object *v) {
	switch (json_object_get_type(v)) {
	case json_type_null:
	case json_type_object:
	case json_type_array:
		return NULL;
	default:
		return json_object_get_string(v);
	}
}

static const char *str(json_object *o, const char *key) {
	return text_of(get(o, key));
}

static bool is(json_object *o, const char *key, const char *word) {
	const char *s = str(o, key);

	return s && strcmp(s, word) == 0;
}

static bool json_true(json_object *o, const char *key) {
	return json_object_get_boolean(get(o, key));
}

/* An array's length; 0 for anything else. */
static size_t len_of(json_object *a) {
	return json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static json_object *item(json_object *a, size_t i) {
	return json_object_array_get_idx(a, i);
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
	json_object *a = get(o, key);
	size_t len = 0;

	buf[0] = '\0';
	if (!json_object_is_type(a, json_type_array))
		return text_of(a);
	for (size_t i = 0; i < len_of(a) && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%d", i ? "," : "", json_object_get_int(item(a, i)));
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

static const char *human_rate(json_object *o, const char *key, char *buf, size_t size) {
	json_object *v = get(o, key);
	double bps;

	if (!v)
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

/* ---- status ------------------------------------------------------------ */

static void print_process_table(FILE *f, json_object *procs) {
	struct table t = { .n_columns = 8 };

	table_add(&t, "PID", "COMM", "STATE", "CCX", "CPUS", "ORIGINAL", "RULE", "REASON");
	for (size_t i = 0; i < len_of(procs); i++) {
		json_object *p = item(procs, i);
		char ccx[256];
		table_add(&t, str(p, "pid"), str(p, "comm"), str(p, "state"), int_list(p, "ccx", ccx, sizeof(ccx)),
			  str(p, "cpus"), str(p, "original_cpus"), str(p, "rule"), str(p, "reason"));
	}
	table_print_free(f, &t);
}

/* "PID COMM, PID COMM, ..." of a group's members; a member not active in
 * the last sample by its pid alone. */
static const char *members(json_object *g, char *buf, size_t size) {
	json_object *pids = get(g, "pids"), *m = get(g, "members");
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < len_of(pids) && len < size; i++) {
		int pid = json_object_get_int(item(pids, i));
		const char *comm = NULL;
		for (size_t k = 0; k < len_of(m); k++) {
			json_object *x = item(m, k), *p = get(x, "pid");
			if (p && json_object_get_int(p) == pid)
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
	json_object *v = get(c, "messages_per_s");

	snprintf(buf, sizeof(buf), "%.0f", v ? json_object_get_double(v) : 0.0);
	return buf;
}

/* A channel's arrow: writer > reader, or <> where both directions carried
 * something; - between the two ends of a socket, or of pipes both hold
 * whole, whose directions are not known (estimated). */
static const char *arrow(json_object *c) {
	const char *kind = str(c, "kind");

	if (json_true(c, "both"))
		return "<>";
	if (json_true(c, "shared"))
		return "-";
	if (kind && strcmp(kind, "pipe") != 0 && !json_true(c, "exact"))
		return "-";
	return ">";
}

/* What the group's last experiment measured: "+23% (noise 4%)", the gain
 * of its rate over its own placement's, and how much that rate varied
 * before; "-" before the first. */
static const char *gain(json_object *g, char *buf, size_t size) {
	json_object *v = get(g, "gain");

	if (!v || json_object_is_type(v, json_type_null))
		return "-";
	snprintf(buf, size, "%+.0f%% (noise %.0f%%)", json_object_get_double(v) * 100,
		 json_object_get_double(get(g, "noise")) * 100);
	return buf;
}

static void print_group_table(FILE *f, json_object *groups) {
	struct table t = { .n_columns = 9 };

	table_add(&t, "GROUP", "MEMBERS", "STATE", "CCX", "CPUS", "GAIN", "TRAFFIC", "WAKEUPS/S", "CHANNELS");
	for (size_t i = 0; i < len_of(groups); i++) {
		json_object *g = item(groups, i), *chans = get(g, "channels"), *w = get(g, "wakeups_per_s");
		char pids[512], rate[64], wakeups[32], channels[512] = "", won[64];
		size_t len = 0;

		for (size_t k = 0; k < len_of(chans) && len < sizeof(channels); k++) {
			json_object *c = item(chans, k);
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
		snprintf(wakeups, sizeof(wakeups), "%.0f", w ? json_object_get_double(w) : 0.0);
		table_add(&t, str(g, "id"), members(g, pids, sizeof(pids)), str(g, "state"), str(g, "ccx"),
			  str(g, "cpus"), gain(g, won, sizeof(won)), human_rate(g, "bytes_per_s", rate, sizeof(rate)),
			  wakeups, channels);
	}
	table_print_free(f, &t);
	for (size_t i = 0; i < len_of(groups); i++) {
		json_object *g = item(groups, i), *thinned = get(g, "thinned");
		fprintf(f, "  %s: %s%s\n", str(g, "id"), str(g, "reason"),
			thinned && json_object_get_boolean(thinned) ? " (its calls counted 1 in 16)" : "");
	}
}

/* The processes that communicate but are in no group, and why. */
static void print_cut(FILE *f, json_object *status) {
	json_object *cut = get(status, "cut");

	for (size_t i = 0; i < len_of(cut); i++) {
		json_object *c = item(cut, i);
		fprintf(f, "alone:    %s %s: %s\n", str(c, "pid"), str(c, "comm"), str(c, "reason"));
	}
}

/* Where execs come from. */
static void print_execs(FILE *f, json_object *watcher) {
	json_object *e = get(watcher, "execs");

	if (!str(e, "source"))
		return;
	if (is(e, "source", "bpf"))
		fprintf(f, "execs:    filtered in the kernel (BPF); %s reported as the exec begins, %s as it "
			"names the task, %s when it is done\n", str(e, "at_enter") ? str(e, "at_enter") : "0",
			str(e, "at_rename"), str(e, "at_end"));
	else
		fprintf(f, "execs:    every one from the proc connector: %s\n", str(e, "note") ? str(e, "note") : "");
}

/* How soon after the kernel's exec event the last programs were pinned. */
static void print_exec_pins(FILE *f, json_object *status) {
	json_object *e = get(status, "exec_pins"), *s = get(status, "scheduling");

	if (s) {
		const char *note = str(s, "note"), *slice = str(s, "slice_usec");

		if (is(s, "wait", "chosen"))
			fprintf(f, "          ccxd runs under the scheduling policy chosen for it\n");
		else
			fprintf(f, "          ccxd waits at %s priority%s%s%s, time slice %s%s\n", str(s, "wait"),
				note ? " (" : "", note ? note : "", note ? ")" : "", slice ? slice : "the kernel's",
				slice ? " us" : "");
	}
	if (!e)
		return;
	fprintf(f, "          at exec: pinned %s us after the exec event at the median, %s at p90, %s at most "
		"(last %s)\n", str(e, "p50_usec"), str(e, "p90_usec"), str(e, "max_usec"), str(e, "count"));
}

/* The probe figures the automatic policy uses, how old they are, and what
 * they decide; or what the probe is doing. */
static void print_probe_line(FILE *f, json_object *status) {
	json_object *p = get(status, "probe"), *fig, *d;
	const char *state;

	if (!p)
		return;
	state = str(p, "state");
	if (state && strcmp(state, "idle") != 0)
		fprintf(f, "probe:    %s, step %s of %s (worker %s)\n", state, str(p, "done"), str(p, "total"),
			str(p, "worker_pid"));
	fig = get(p, "figures");
	if (!fig || json_object_is_type(fig, json_type_null)) {
		fprintf(f, "probe:    no figures%s%s; layouts tried in topology order\n", str(p, "note") ? ": " : "",
			str(p, "note") ? str(p, "note") : "");
		return;
	}
	fprintf(f, "probe:    figures from the %s of %s (%s s old, fingerprint %s)\n", str(fig, "source"),
		str(fig, "date"), str(fig, "age_s"), str(fig, "fingerprint"));
	if ((d = get(p, "decision")))
		fprintf(f, "          %s\n", str(d, "note"));
}

void print_status(FILE *f, json_object *r) {
	json_object *w = get(r, "watcher"), *c = get(r, "counters"), *procs = get(r, "processes"), *groups;

	text_escape_json(r); /* the strings, in place: the objects above stay */
	fprintf(f, "ccxd %s, mode %s%s, topology %s\n", str(r, "version"), str(r, "mode"),
		json_object_get_boolean(get(r, "automatic")) || !get(r, "automatic") ? "" : " (rules only)",
		str(r, "topology"));
	fprintf(f, "config:   %s\n", str(r, "config") ? str(r, "config") : "(defaults)");
	fprintf(f, "events:   %s%s%s; %s handled, %s lost, %s rescans\n", str(w, "source"), str(w, "note") ? ": " : "",
		str(w, "note") ? str(w, "note") : "", str(c, "events"), str(c, "lost_events"), str(c, "rescans"));
	print_execs(f, w);
	fprintf(f, "pins:     %s set, %s restored, %s failed, %s resumed after a restart\n", str(c, "pins"),
		str(c, "restores"), str(c, "pin_failures"), str(c, "readopted"));
	if (str(c, "spills") && !is(c, "spills", "0"))
		fprintf(f, "spills:   %s to another CCX while a rule's was crowded, %s back\n", str(c, "spills"),
			str(c, "spill_returns"));
	print_exec_pins(f, r);
	print_probe_line(f, r);
	fprintf(f, "\n");
	if (len_of(procs) == 0)
		fprintf(f, "No processes placed by rules.\n");
	else
		print_process_table(f, procs);
	if ((groups = get(r, "groups"))) {
		json_object *sampling = get(r, "sampling");
		fprintf(f, "\nsampling: %s processes looked at, %s of them active (used CPU), last cycle %s us; "
			"active ones read %s\n",
			str(sampling, "processes_scanned"), str(sampling, "processes_active"),
			str(sampling, "last_cycle_usec"), reading_words(str(sampling, "reading")));
		if (str(sampling, "note"))
			fprintf(f, "          (%s)\n", str(sampling, "note"));
		fprintf(f, "traffic:  counted by the kernel: %s%s\n", str(sampling, "counted"),
			is(sampling, "counted", "pipes and sockets") ? "" : "; the rest estimated from /proc");
		if (str(sampling, "counted_note"))
			fprintf(f, "          (%s)\n", str(sampling, "counted_note"));
		if (str(sampling, "last_counts_lost") && !is(sampling, "last_counts_lost", "0"))
			fprintf(f, "          (the counters were full in the last sample, %s calls lost: it was "
				"estimated from /proc)\n",
				str(sampling, "last_counts_lost"));
		if (len_of(groups) == 0)
			fprintf(f, "No communicating groups.\n");
		else
			print_group_table(f, groups);
		print_cut(f, r);
	}
}

/* ---- topology ---------------------------------------------------------- */

/* The largest L3 and the highest clock among the usable CCXs of a topology's JSON. */
static void topology_bests(json_object *ccxs, int64_t *cache, int64_t *clock, int64_t *lowest_clock) {
	*cache = *clock = 0;
	*lowest_clock = INT64_MAX;
	for (size_t i = 0; i < len_of(ccxs); i++) {
		json_object *x = item(ccxs, i), *v;
		if ((v = get(x, "usable")) && !json_object_get_boolean(v))
			continue;
		if ((v = get(x, "cache_size")) && json_object_get_int64(v) > *cache)
			*cache = json_object_get_int64(v);
		if ((v = get(x, "clock"))) {
			int64_t c = json_object_get_int64(v);
			if (c > *clock)
				*clock = c;
			if (c < *lowest_clock)
				*lowest_clock = c;
		}
	}
}

/* What sets one CCX apart from the others: a higher clock, efficiency
 * cores, a NUMA node without memory. */
static void ccx_note(json_object *x, size_t n_ccx, int64_t best_clock, int64_t lowest_clock, char *buf, size_t size) {
	json_object *v;
	size_t len = 0;

#define NOTE(text) \
	len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", len ? ", " : "", text)
	buf[0] = '\0';
	if (!json_true(x, "usable")) {
		NOTE("unusable: no online CPU");
		return;
	}
	/* Only where the CCXs differ: one CCX, or all alike, is nothing to note. */
	if (n_ccx > 1 && best_clock > lowest_clock && (v = get(x, "clock")) && json_object_get_int64(v) == best_clock)
		NOTE("higher clock");
	if (json_true(x, "efficiency_cores"))
		NOTE("efficiency cores");
	if (!json_true(x, "local_memory"))
		NOTE("no local memory");
#undef NOTE
}

/* "1 package", "2 packages": count with its noun, then after. */
static void print_count(FILE *f, const char *count, const char *noun, const char *after) {
	fprintf(f, "%s %s%s%s", count ? count : "?", noun, count && strcmp(count, "1") == 0 ? "" : "s", after);
}

void print_topology(FILE *f, json_object *r) {
	json_object *ccxs = get(r, "ccxs");
	struct table t = { .n_columns = 7 };
	int64_t best_cache, best_clock, lowest_clock, smallest_cache = INT64_MAX;
	char n_ccxs[24];

	text_escape_json(r);
	snprintf(n_ccxs, sizeof(n_ccxs), "%zu", len_of(ccxs));
	fprintf(f, "%s: ", str(r, "source"));
	print_count(f, str(r, "packages"), "package", ", ");
	print_count(f, str(r, "numa_nodes"), "NUMA node", ", ");
	print_count(f, n_ccxs, "CCX", ", ");
	print_count(f, str(r, "cores"), "core", ", ");
	print_count(f, str(r, "pus"), "CPU", "");
	fprintf(f, " (online %s)\n", str(r, "online"));
	topology_bests(ccxs, &best_cache, &best_clock, &lowest_clock);
	if (str(r, "clock_source") && !is(r, "clock_source", "none"))
		fprintf(f, "clocks: from %s%s\n", str(r, "clock_source"),
			best_clock > lowest_clock ? "" : ", all alike");
	else
		fprintf(f, "clocks: not known (prefer = frequency takes the smallest L3)\n");
	if (str(r, "x3d_mode"))
		fprintf(f, "x3d:    amd_x3d_vcache in %s mode: the scheduler fills the %s CCX's cores first\n",
			str(r, "x3d_mode"), is(r, "x3d_mode", "cache") ? "larger L3" : "faster");
	if (str(r, "llc_balancing"))
		fprintf(f, "sched:  cache-aware balancing %s%s\n", json_true(r, "llc_balancing") ? "on" : "off",
			json_true(r, "llc_balancing")
				? ": the kernel keeps each process's threads on one LLC; ccxd groups processes, "
				  "and its pins override the kernel for what it places"
				: "");
	fprintf(f, "\n");
	for (size_t i = 0; i < len_of(ccxs); i++) {
		json_object *x = item(ccxs, i), *v = get(x, "cache_size");
		if (json_true(x, "usable") && v && json_object_get_int64(v) < smallest_cache)
			smallest_cache = json_object_get_int64(v);
	}
	table_add(&t, "CCX", "CPUS", "CORES", "CACHE", "NUMA", "PACKAGE", "NOTE");
	for (size_t i = 0; i < len_of(ccxs); i++) {
		json_object *x = item(ccxs, i);
		int64_t cache_size = json_object_get_int64(get(x, "cache_size"));
		char cache[64], size[32], note[128], both[160];
		snprintf(cache, sizeof(cache), "L%s %s", str(x, "cache_level"),
			 human_size((uint64_t)cache_size, size, sizeof(size)));
		ccx_note(x, len_of(ccxs), best_clock, lowest_clock, note, sizeof(note));
		/* A larger L3 than some other CCX's: the X3D die. */
		if (json_true(x, "usable") && cache_size == best_cache && best_cache > smallest_cache)
			snprintf(both, sizeof(both), "larger L3%s%s", note[0] ? ", " : "", note);
		else
			snprintf(both, sizeof(both), "%s", note);
		table_add(&t, str(x, "index"), str(x, "cpus"), str(x, "cores"), cache, str(x, "numa_node"),
			  str(x, "package"), both);
	}
	table_print_free(f, &t);
}

/* ---- rules ------------------------------------------------------------- */

/* What a rule of GetRules matches on, "comm x265, cmdline *--slow*, parent
 * make", into buf: its name is a glob on comm unless it has exe. */
static const char *rule_match(json_object *x, char *buf, size_t size) {
	static const char *const keys[] = { "exe", "cmdline", "parent", "ancestor", "unit", "cgroup" };
	size_t len = 0;

	buf[0] = '\0';
	if (!str(x, "exe"))
		len = (size_t)snprintf(buf, size, "comm %s", str(x, "name") ? str(x, "name") : "");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && len < size; i++)
		if (str(x, keys[i]))
			len += (size_t)snprintf(buf + len, size - len, "%s%s %s", len ? ", " : "", keys[i],
						str(x, keys[i]));
	return buf;
}

void print_rules(FILE *f, json_object *r) {
	json_object *rules = get(r, "rules");
	struct table t = { .n_columns = 8 };

	text_escape_json(r);
	if (len_of(rules) == 0) {
		fprintf(f, "No rules in %s.\n", str(r, "config") ? str(r, "config") : "the default configuration");
		return;
	}
	table_add(&t, "FILE:LINE", "NAME", "CCX", "POLICY", "SMT", "FORCE", "SPILL", "MATCHES");
	for (size_t i = 0; i < len_of(rules); i++) {
		json_object *x = item(rules, i);
		char ccx[256], where[4096], match[4096];

		snprintf(where, sizeof(where), "%s:%s", str(x, "file") ? str(x, "file") : "-", str(x, "line"));
		table_add(&t, where, str(x, "name"), int_list(x, "ccx", ccx, sizeof(ccx)), str(x, "policy"),
			  str(x, "smt"), is(x, "force", "true") ? "yes" : "no", is(x, "spill", "true") ? "yes" : "no",
			  rule_match(x, match, sizeof(match)));
	}
	table_print_free(f, &t);
}

/* ---- explain ----------------------------------------------------------- */

/* The rules in order: the first that matches decides. */
static void print_verdicts(FILE *f, json_object *rules) {
	struct table t = { .n_columns = 3 };
	const char *decides = NULL;

	if (len_of(rules) == 0) {
		fprintf(f, "rules:    none in force\n");
		return;
	}
	fprintf(f, "rules:    in the order they are tried; the first that matches decides\n");
	for (size_t i = 0; i < len_of(rules); i++) {
		json_object *x = item(rules, i);
		char where[4096], verdict[512];
		snprintf(where, sizeof(where), "  %s:%s", str(x, "file") ? str(x, "file") : "-", str(x, "line"));
		if (!json_true(x, "matches"))
			snprintf(verdict, sizeof(verdict), "no: %s", str(x, "why") ? str(x, "why") : "-");
		else if (!decides)
			snprintf(verdict, sizeof(verdict), "matches: decides");
		else
			snprintf(verdict, sizeof(verdict), "matches, but %s comes first", decides);
		if (json_true(x, "matches") && !decides)
			decides = str(x, "name") ? str(x, "name") : "-";
		table_add(&t, where, str(x, "name"), verdict);
	}
	table_print_free(f, &t);
}

/* What the automatic policy sees of it: its group, or why it has none. */
static void print_seen(FILE *f, json_object *e) {
	json_object *g = get(e, "group"), *alone = get(e, "alone"), *p = get(e, "placement");
	char won[64];

	if (p && str(p, "rule"))
		fprintf(f, "automatic: not its to place: rule %s decides\n", str(p, "rule"));
	else if (json_object_is_type(get(e, "automatic"), json_type_boolean) && !json_true(e, "automatic"))
		fprintf(f, "automatic: off (automatic = no): rules only\n");
	else if (g) {
		json_object *one = json_object_new_array();
		fprintf(f, "automatic: in group %s, %s%s%s, gain %s\n\n", str(g, "id"), str(g, "state"),
			str(g, "ccx") ? " on CCX " : "", str(g, "ccx") ? str(g, "ccx") : "", gain(g, won, sizeof(won)));
		json_object_array_add(one, json_object_get(g));
		print_group_table(f, one);
		json_object_put(one);
	} else if (alone)
		fprintf(f, "automatic: in no group: %s\n", str(alone, "reason"));
	else if (json_true(e, "sampling"))
		fprintf(f, "automatic: in no group: it talked to no process above min_rate or min_message_rate "
			   "in the last sample, or used no CPU\n");
	else
		fprintf(f, "automatic: not sampling yet\n");
}

void print_explained(FILE *f, json_object *e) {
	json_object *p;

	text_escape_json(e);
	fprintf(f, "process:  %s %s", str(e, "pid"), str(e, "comm"));
	if (str(e, "parent"))
		fprintf(f, ", child of %s %s", str(e, "parent"), str(e, "parent_comm"));
	fprintf(f, "\n");
	if (get(e, "exe"))
		fprintf(f, "exe:      %s\ncmdline:  %s\ncgroup:   %s\n", str(e, "exe") ? str(e, "exe") : "(unreadable)",
			str(e, "cmdline") ? str(e, "cmdline") : "(unreadable, or not read within a second)",
			str(e, "cgroup") ? str(e, "cgroup") : "(none)");
	print_verdicts(f, get(e, "rules"));
	if ((p = get(e, "placement")))
		fprintf(f, "placed:   %s, CPUs %s (originally %s): %s\n", str(p, "state"), str(p, "cpus") ? str(p, "cpus") : "-",
			str(p, "original_cpus") ? str(p, "original_cpus") : "-", str(p, "reason"));
	else
		fprintf(f, "placed:   no: ccxd has not changed its CPUs\n");
	print_seen(f, e);
}

/* ---- the rest ---------------------------------------------------------- */

void print_placed(FILE *f, json_object *reply, const char *verb) {
	json_object *p = get(reply, "process");

	text_escape_json(reply);
	if (p)
		fprintf(f, "%s %s[%s]: %s\n", verb, str(p, "comm"), str(p, "pid"), str(p, "reason"));
}

void print_learned(FILE *f, json_object *reply) {
	json_object *learned = get(reply, "learned");
	struct table t = { .n_columns = 2 };

	text_escape_json(reply);
	if (len_of(learned) == 0) {
		fprintf(f, "Nothing learned yet: a group's layout is remembered once it is kept.\n");
		return;
	}
	table_add(&t, "SEATING", "PROGRAMS");
	for (size_t i = 0; i < len_of(learned); i++)
		table_add(&t, str(item(learned, i), "seating"), str(item(learned, i), "programs"));
	table_print_free(f, &t);
	fprintf(f, "\nEach set of programs, the least recently kept first, with the layout tried first when\n"
		   "they form a group again. ccxctl forget PROGRAMS forgets one (root).\n");
}

void print_reloaded(FILE *f, json_object *reply) {
	text_escape_json(reply);
	fprintf(f, "reloaded: %s rules\n", str(reply, "rules"));
}

void print_version(FILE *f, json_object *version) {
	text_escape_json(version);
	fprintf(f, "ccxd %s (protocol %s)\n", str(version, "version"), str(version, "protocol"));
}

void print_error(FILE *f, const char *who, json_object *reply, const char *error) {
	json_object *errors = get(reply, "errors");
	char *name = text_escape(error ? error : "");

	text_escape_json(reply);
	fprintf(f, "%s: %s (%s)\n", who, str(reply, "message") ? str(reply, "message") : name, name);
	for (size_t i = 0; i < len_of(errors); i++)
		fprintf(f, "%s\n", text_of(item(errors, i)) ? text_of(item(errors, i)) : "-");
	free(name);
}
