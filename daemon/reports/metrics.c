#include "metrics.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomicfile.h"
#include "log.h"
#include "status.h"

/* ---- the text --------------------------------------------------------- */

/* Label values escape backslash, double quote and newline. */
static void put_label_value(FILE *f, const char *s) {
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void put_header(FILE *f, const char *name, const char *type, const char *help) {
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void put_u64(FILE *f, const char *name, const char *type, const char *help, uint64_t v) {
	put_header(f, name, type, help);
	fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

static void put_by_label(FILE *f, const char *name, const char *help, const char *label,
			 const struct metrics_count *counts, size_t n) {
	put_header(f, name, "gauge", help);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s{%s=", name, label);
		put_label_value(f, counts[i].label);
		fprintf(f, "} %llu\n", (unsigned long long)counts[i].value);
	}
}

/* One gauge a group: name{group="ID"} value. */
static void put_group_value(FILE *f, const char *name, int id, const char *format, double v) {
	fprintf(f, "%s{group=\"%d\"} ", name, id);
	fprintf(f, format, v);
	fputc('\n', f);
}

static void put_groups(FILE *f, const struct metrics *x) {
	put_header(f, "ccxd_group_info", "gauge",
		   "Each group of communicating processes (at most 64), by its lowest pid: its programs' file names, "
		   "state, seating and CCX.");
	for (size_t i = 0; i < x->n_each_group; i++) {
		const struct metrics_group *g = &x->each_group[i];
		fprintf(f, "ccxd_group_info{group=\"%d\",programs=", g->id);
		put_label_value(f, g->programs);
		fputs(",state=", f);
		put_label_value(f, g->state);
		fputs(",seating=", f);
		put_label_value(f, g->seating);
		if (g->ccx >= 0)
			fprintf(f, ",ccx=\"%d\"} 1\n", g->ccx);
		else
			fputs(",ccx=\"\"} 1\n", f);
	}
	put_header(f, "ccxd_group_bytes_per_second", "gauge", "The traffic between a group's members in the last sample.");
	for (size_t i = 0; i < x->n_each_group; i++)
		put_group_value(f, "ccxd_group_bytes_per_second", x->each_group[i].id, "%.0f", x->each_group[i].bytes_per_s);
	put_header(f, "ccxd_group_gain_ratio", "gauge",
		   "How much faster a group ran in its last experiment's seating than where its members ran by "
		   "themselves: 0.23 is 23 % faster.");
	for (size_t i = 0; i < x->n_each_group; i++)
		if (x->each_group[i].measured)
			put_group_value(f, "ccxd_group_gain_ratio", x->each_group[i].id, "%.4f", x->each_group[i].gain);
	put_header(f, "ccxd_group_noise_ratio", "gauge",
		   "How much a group's own rate varied in its last experiment, which a gain must clear.");
	for (size_t i = 0; i < x->n_each_group; i++)
		if (x->each_group[i].measured)
			put_group_value(f, "ccxd_group_noise_ratio", x->each_group[i].id, "%.4f", x->each_group[i].noise);
}

static void put_all(FILE *f, const struct metrics *x) {
	put_header(f, "ccxd_info", "gauge", "The running ccxd: version, mode and topology.");
	fputs("ccxd_info{version=", f);
	put_label_value(f, x->version);
	fputs(",mode=", f);
	put_label_value(f, x->mode);
	fputs(",topology=", f);
	put_label_value(f, x->topology);
	fputs("} 1\n", f);
	put_header(f, "ccxd_start_time_seconds", "gauge", "When ccxd started, in seconds since the epoch.");
	fprintf(f, "ccxd_start_time_seconds %llu.%06llu\n", (unsigned long long)(x->start_time_usec / 1000000),
		(unsigned long long)(x->start_time_usec % 1000000));
	put_u64(f, "ccxd_polling", "gauge",
		"1 when ccxd scans /proc every interval because the kernel sends no process events.", x->polling);

	put_by_label(f, "ccxd_processes", "Processes ccxd has decided about, by state.", "state", x->processes,
		     x->n_processes);
	if (x->have_sampling) {
		put_by_label(f, "ccxd_groups", "Groups of communicating processes, by state.", "state", x->groups,
			     x->n_groups);
		put_groups(f, x);
		put_u64(f, "ccxd_sample_cycles_total", "counter", "Sampling cycles run.", x->sample_cycles);
		put_header(f, "ccxd_sample_cycle_cpu_seconds", "gauge", "CPU time the last sampling cycle took.");
		fprintf(f, "ccxd_sample_cycle_cpu_seconds %llu.%06llu\n",
			(unsigned long long)(x->sample_cycle_cpu_usec / 1000000),
			(unsigned long long)(x->sample_cycle_cpu_usec % 1000000));
	}
	put_u64(f, "ccxd_moves_total", "counter", "Groups the automatic policy moved to try a placement.", x->moves);
	put_header(f, "ccxd_decisions_total", "counter",
		   "Automatic placements that the before/after measurement kept or reverted.");
	fprintf(f, "ccxd_decisions_total{outcome=\"kept\"} %llu\n", (unsigned long long)x->decisions_kept);
	fprintf(f, "ccxd_decisions_total{outcome=\"reverted\"} %llu\n", (unsigned long long)x->decisions_reverted);

	put_u64(f, "ccxd_process_events_total", "counter", "Process events (exec, comm, fork) handled.", x->events);
	put_u64(f, "ccxd_process_event_overflows_total", "counter",
		"Times the kernel dropped process events for want of buffer; each is followed by a rescan.",
		x->event_overflows);
	put_u64(f, "ccxd_rescans_total", "counter", "Full scans of /proc.", x->rescans);
	put_u64(f, "ccxd_pins_total", "counter", "CPU affinities set.", x->pins);
	put_u64(f, "ccxd_restores_total", "counter", "Original CPU affinities put back.", x->restores);
	put_u64(f, "ccxd_pin_failures_total", "counter", "CPU affinities the kernel refused to set.",
		x->pin_failures);
	put_u64(f, "ccxd_readopted_total", "counter",
		"Processes a previous ccxd had placed, taken back with their originals at start.", x->readopted);
	put_u64(f, "ccxd_reloads_total", "counter", "Configuration reloads that took effect.", x->reloads);
	put_u64(f, "ccxd_reload_failures_total", "counter",
		"Reloads refused because the configuration had errors.", x->reload_failures);
	put_u64(f, "ccxd_log_messages_dropped_total", "counter",
		"Log messages dropped because the journal did not keep up.", x->log_dropped);
	if (x->n_relations == 0)
		return;
	put_header(f, "ccxd_probe_pipe_bytes_per_second", "gauge",
		   "Pipe throughput between two CPUs of each relation, as the probe measured it (median).");
	for (size_t i = 0; i < x->n_relations; i++) {
		fputs("ccxd_probe_pipe_bytes_per_second{relation=", f);
		put_label_value(f, x->relations[i].relation);
		fprintf(f, "} %.0f\n", x->relations[i].pipe_bytes_per_s);
	}
	put_header(f, "ccxd_probe_latency_seconds", "gauge",
		   "Cache-line ping-pong latency between two CPUs of each relation, as the probe measured it (median).");
	for (size_t i = 0; i < x->n_relations; i++) {
		fputs("ccxd_probe_latency_seconds{relation=", f);
		put_label_value(f, x->relations[i].relation);
		fprintf(f, "} %.9f\n", x->relations[i].latency_s);
	}
}

int metrics_format(const struct metrics *x, char **ret) {
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		return -ENOMEM;
	put_all(f, x);
	if (ferror(f) | fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	*ret = text;
	return 0;
}

/* ---- the daemon's figures --------------------------------------------- */

/* Every state there is, each counted 0 so far: series that come and go
 * confuse rate() and alerts. */
static size_t init_states(struct metrics_count *counts, const char *const *names, size_t n) {
	if (n > METRICS_STATES_MAX)
		n = METRICS_STATES_MAX;
	for (size_t i = 0; i < n; i++)
		counts[i] = (struct metrics_count) { names[i], 0 };
	return n;
}

static void count_state(struct metrics_count *counts, size_t n, const char *state) {
	for (size_t i = 0; i < n; i++)
		if (strcmp(counts[i].label, state) == 0) {
			counts[i].value++;
			return;
		}
}

/* The programs' file names alone, as status gives them to anyone (the
 * file is for anyone to read), cut to size. Users name their programs: each byte but printable ASCII becomes '?', so
 * that a name can neither break the exposition format (which must be
 * UTF-8) nor reach a terminal as a control character through ccxctl
 * metrics, which prints the text as it is. */
static void program_names(const char *programs, char *buf, size_t size) {
	status_program_names(programs, buf, size);
	for (char *c = buf; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			*c = '?';
}

static void collect_group(const struct status_group *g, struct metrics_group *ret) {
	const struct status_trial *last = g->last >= 0 ? &g->trials[g->last] : NULL;

	*ret = (struct metrics_group){
		.id = (int)g->id,
		.state = g->state,
		.seating = g->placed && g->seating ? g->seating : "",
		.ccx = g->placed ? g->ccx : -1,
		.bytes_per_s = g->bytes_per_s,
		.measured = last != NULL,
		.gain = last ? last->gain : 0,
		.noise = last ? last->noise : 0,
	};
	program_names(g->programs, ret->programs, sizeof(ret->programs));
}

void metrics_collect(const struct ccxd_status *st, struct metrics *ret) {
	const struct probe_results *pr = st->probe_results;

	*ret = (struct metrics) {
		.version = CCXD_VERSION,
		.mode = config_mode_to_string(st->config->mode),
		.topology = st->topology->source,
		.start_time_usec = st->started_usec,
		.polling = st->watcher_note != NULL,
		.events = st->events,
		.event_overflows = st->lost_events,
		.rescans = st->rescans,
		.pins = st->placements.pins,
		.restores = st->placements.restores,
		.pin_failures = st->placements.pin_failures,
		.reloads = st->reloads,
		.reload_failures = st->reload_failures,
		.readopted = st->placements.readopted,
		.log_dropped = log_dropped(),
	};
	ret->n_processes = init_states(ret->processes, st->process_states, st->n_process_states);
	for (size_t i = 0; i < st->n_processes; i++)
		count_state(ret->processes, ret->n_processes, st->processes[i].state);

	if (st->have_sampling) {
		ret->have_sampling = true;
		ret->sample_cycles = st->sampling.cycles;
		ret->sample_cycle_cpu_usec = st->sampling.last_cycle_usec;
		ret->moves = st->sampling.moves;
		ret->decisions_kept = st->sampling.kept;
		ret->decisions_reverted = st->sampling.reverted;
		ret->n_groups = init_states(ret->groups, st->group_states, st->n_group_states);
		for (size_t i = 0; i < st->n_groups; i++)
			count_state(ret->groups, ret->n_groups, st->groups[i].state);
		for (size_t i = 0; i < st->n_groups && i < METRICS_GROUPS_MAX; i++)
			collect_group(&st->groups[i], &ret->each_group[ret->n_each_group++]);
	}

	for (size_t i = 0; pr && i < pr->n_relations && ret->n_relations < sizeof(ret->relations) / sizeof(ret->relations[0]); i++) {
		const struct probe_relation_result *rr = &pr->relations[i];
		if (rr->pipe_gib_s.n == 0 && rr->latency_ns.n == 0)
			continue;
		ret->relations[ret->n_relations++] = (struct metrics_relation){
			.relation = probe_relation_name(rr->relation),
			.pipe_bytes_per_s = rr->pipe_gib_s.median * 1024.0 * 1024 * 1024,
			.latency_s = rr->latency_ns.median / 1e9,
		};
	}
}

/* ---- the file --------------------------------------------------------- */

int metrics_write_file(const char *path, const char *text) {
	return atomicfile_write(path, text, 0644, false);
}
