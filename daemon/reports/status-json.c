/* What ccxd is doing, as the JSON of io.ccxd.GetStatus (docs/protocol.md):
 * the snapshot of status.h, written out. */
#include "status-json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "probe.h"
#include "protocol.h"
#include "sample.h"

static json_object *cpus_json(const cpu_set_t *cpus) {
	char list[CPULIST_MAX];

	return json_object_new_string(cpulist_format(cpus, list, sizeof(list)));
}

/* The numbers in a set, smallest first. */
static json_object *ccx_array(const cpu_set_t *ccxs) {
	json_object *a = json_object_new_array();

	for (int i = 0, left = CPU_COUNT(ccxs); left > 0 && i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, ccxs)) {
			json_object_array_add(a, json_object_new_int(i));
			left--;
		}
	return a;
}

json_object *status_process_json(const struct status_process *p) {
	json_object *o = json_object_new_object();

	json_object_object_add(o, "pid", json_object_new_int(p->pid));
	json_object_object_add(o, "comm", json_object_new_string(p->comm));
	json_object_object_add(o, "state", json_object_new_string(p->state));
	json_object_object_add(o, "ccx", p->placed ? ccx_array(&p->ccxs) : json_object_new_array());
	json_object_object_add(o, "cpus", p->placed ? cpus_json(&p->cpus) : NULL);
	json_object_object_add(o, "rule", p->rule ? json_object_new_string(p->rule) : NULL);
	json_object_object_add(o, "reason", json_object_new_string(p->reason));
	json_object_object_add(o, "original_cpus", p->have_original ? cpus_json(&p->original) : NULL);
	json_object_object_add(o, "inherited_from", p->inherited_from ? json_object_new_int(p->inherited_from) : NULL);
	return o;
}

static json_object *u64(uint64_t v) {
	return json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

/* The last pins at exec: how long after the kernel's event each was set. */
static json_object *exec_pins_json(const struct latencies_summary *s) {
	json_object *o;

	if (s->n == 0)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "count", u64(s->n));
	json_object_object_add(o, "p50_usec", u64(s->p50_usec));
	json_object_object_add(o, "p90_usec", u64(s->p90_usec));
	json_object_object_add(o, "max_usec", u64(s->max_usec));
	return o;
}

static json_object *channel_json(const struct sampler_channel *c, const struct sampler_result *sample) {
	json_object *o = json_object_new_object();

	json_object_object_add(o, "kind", json_object_new_string(channel_kind_to_string(c->kind)));
	json_object_object_add(o, "from", json_object_new_int(c->from));
	json_object_object_add(o, "to", json_object_new_int(c->to));
	json_object_object_add(o, "bytes_per_s", json_object_new_double(c->bytes_per_s));
	json_object_object_add(o, "messages_per_s",
			       c->kind != CHANNEL_THREADS ? json_object_new_double(c->messages_per_s) : NULL);
	json_object_object_add(o, "both", json_object_new_boolean(c->both));
	json_object_object_add(o, "exact", json_object_new_boolean(c->exact));
	json_object_object_add(o, "shared", json_object_new_boolean(c->shared));
	if (c->kind == CHANNEL_THREADS) {
		long k = sampler_result_index(sample, c->from);
		json_object_object_add(o, "busy_threads", json_object_new_int(k >= 0 ? (int)sample->procs[k].busy_threads : 0));
	}
	return o;
}

/* What the last sample saw of each member that was active in it. */
static json_object *members_json(const struct status_group *g, const struct sampler_result *sample, double *wakeups,
				 double *switches) {
	json_object *list = json_object_new_array();

	*wakeups = *switches = 0;
	for (size_t k = 0; sample && k < g->n_pids; k++) {
		long i = sampler_result_index(sample, g->pids[k]);
		const struct sampler_process *p = i >= 0 ? &sample->procs[i] : NULL;
		json_object *o;
		if (!p)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "pid", json_object_new_int(p->pid));
		json_object_object_add(o, "comm", json_object_new_string(p->comm));
		json_object_object_add(o, "cpu", json_object_new_double(p->cpu));
		json_object_object_add(o, "busy_threads", json_object_new_int((int)p->busy_threads));
		json_object_object_add(o, "wakeups_per_s", json_object_new_double(p->wakeups_per_s));
		json_object_object_add(o, "switches_per_s", json_object_new_double(p->switches_per_s));
		json_object_array_add(list, o);
		*wakeups += p->wakeups_per_s;
		*switches += p->switches_per_s;
	}
	return list;
}

static json_object *trial_json(const struct status_trial *t) {
	json_object *o = json_object_new_object();

	json_object_object_add(o, "rate_before", json_object_new_double(t->before));
	json_object_object_add(o, "rate_after", json_object_new_double(t->after));
	json_object_object_add(o, "gain", json_object_new_double(t->gain));
	json_object_object_add(o, "noise", json_object_new_double(t->noise));
	json_object_object_add(o, "seating", json_object_new_string(t->seating));
	json_object_object_add(o, "beat", json_object_new_boolean(t->beat));
	return o;
}

static json_object *figure_json(const struct status_figure *f) {
	json_object *o;

	if (!f->measured)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "relation", json_object_new_string(f->relation));
	json_object_object_add(o, "pipe_gib_s", json_object_new_double(f->gib_s));
	json_object_object_add(o, "pipe_gib_s_min", json_object_new_double(f->min));
	json_object_object_add(o, "pipe_gib_s_max", json_object_new_double(f->max));
	return o;
}

/* The probe figures a decision used: the seatings' order, each one's
 * measured figure, the "apart" it was compared with, and the verdict. */
static json_object *probe_evidence_json(const struct status_ranking *p) {
	json_object *o = json_object_new_object(), *order = json_object_new_array(),
		    *figures = json_object_new_object();

	for (size_t i = 0; i < p->n_order; i++)
		json_object_array_add(order, json_object_new_string(p->order[i]));
	for (size_t i = 0; i < p->n_seatings; i++)
		json_object_object_add(figures, p->seatings[i].seating, figure_json(&p->seatings[i]));
	json_object_object_add(o, "date", json_object_new_string(p->date));
	json_object_object_add(o, "order", order);
	json_object_object_add(o, "seatings", figures);
	json_object_object_add(o, "apart", figure_json(&p->apart));
	json_object_object_add(o, "gain", json_object_new_boolean(!p->no_gain));
	json_object_object_add(o, "note", json_object_new_string(p->note));
	return o;
}

/* programs ("a|b", executables' paths) for a caller who may not see other
 * users' paths: each program by its file name alone, as its comm shows it
 * anyway. */
static json_object *programs_json(const char *programs, bool paths) {
	json_object *o;
	char *names;

	if (!programs)
		return NULL;
	if (paths)
		return json_object_new_string(programs);
	names = malloc(strlen(programs) + 1);
	if (!names)
		return NULL;
	status_program_names(programs, names, strlen(programs) + 1);
	o = json_object_new_string(names);
	free(names);
	return o;
}

static json_object *group_json(const struct status_group *g, const struct sampler_result *sample, bool paths) {
	json_object *o = json_object_new_object(), *pids = json_object_new_array(),
		    *channels = json_object_new_array(), *trials = json_object_new_array(), *members;
	const struct status_trial *last = g->last >= 0 ? &g->trials[g->last] : NULL;
	double wakeups, switches;

	for (size_t k = 0; k < g->n_pids; k++)
		json_object_array_add(pids, json_object_new_int(g->pids[k]));
	for (size_t k = 0; g->seen && sample && k < g->n_channels; k++)
		json_object_array_add(channels, channel_json(&sample->channels[g->channels[k]], sample));
	for (size_t k = 0; k < g->n_trials; k++)
		json_object_array_add(trials, trial_json(&g->trials[k]));
	json_object_object_add(o, "id", json_object_new_int(g->id));
	json_object_object_add(o, "pids", pids);
	json_object_object_add(o, "programs", programs_json(g->programs, paths));
	json_object_object_add(o, "users", json_object_new_string(g->users ? g->users : "one"));
	json_object_object_add(o, "state", json_object_new_string(g->state));
	json_object_object_add(o, "reason", json_object_new_string(g->reason));
	json_object_object_add(o, "seen", json_object_new_boolean(g->seen));
	json_object_object_add(o, "ccx", g->placed && g->ccx >= 0 ? json_object_new_int(g->ccx) : NULL);
	json_object_object_add(o, "cpus", g->placed ? cpus_json(&g->cpus) : NULL);
	json_object_object_add(o, "seating", g->placed ? json_object_new_string(g->seating) : NULL);
	/* Kept without beating the rate before, against a seating that ran slower. */
	json_object_object_add(o, "guard", json_object_new_boolean(g->guard));
	json_object_object_add(o, "bytes_per_s", json_object_new_double(g->bytes_per_s));
	json_object_object_add(o, "cpu", json_object_new_double(g->cpu));
	json_object_object_add(o, "demand", json_object_new_double(g->demand));
	json_object_object_add(o, "split", json_object_new_boolean(g->split));
	json_object_object_add(o, "turns", json_object_new_boolean(g->turns));
	json_object_object_add(o, "thinned", json_object_new_boolean(g->thinned));
	json_object_object_add(o, "waited", g->waited >= 0 ? json_object_new_double(g->waited) : NULL);
	json_object_object_add(o, "waited_seated", g->waited_seated >= 0 ? json_object_new_double(g->waited_seated) : NULL);
	json_object_object_add(o, "kept_bytes_per_cpu_s",
			       g->kept_bytes_per_cpu_s > 0 ? json_object_new_double(g->kept_bytes_per_cpu_s) : NULL);
	members = members_json(g, g->seen ? sample : NULL, &wakeups, &switches);
	json_object_object_add(o, "wakeups_per_s", json_object_new_double(wakeups));
	json_object_object_add(o, "switches_per_s", json_object_new_double(switches));
	json_object_object_add(o, "members", members);
	/* The evidence of the last experiment, and every one tried. */
	json_object_object_add(o, "rate_before", last ? json_object_new_double(last->before) : NULL);
	json_object_object_add(o, "rate_after", last ? json_object_new_double(last->after) : NULL);
	json_object_object_add(o, "gain", last ? json_object_new_double(last->gain) : NULL);
	json_object_object_add(o, "noise", last ? json_object_new_double(last->noise) : NULL);
	json_object_object_add(o, "trials", trials);
	json_object_object_add(o, "probe", g->probe_used ? probe_evidence_json(&g->probe) : NULL);
	json_object_object_add(o, "channels", channels);
	return o;
}

static json_object *groups_json(const struct ccxd_status *st, bool paths) {
	json_object *list = json_object_new_array();

	for (size_t i = 0; i < st->n_groups; i++)
		json_object_array_add(list, group_json(&st->groups[i], st->sample, paths));
	return list;
}

/* Each process a split left alone, with why. */
static json_object *cut_json(const struct ccxd_status *st) {
	json_object *list = json_object_new_array();

	for (size_t i = 0; i < st->n_cut; i++) {
		const struct status_cut *c = &st->cut[i];
		long k = st->sample ? sampler_result_index(st->sample, c->pid) : -1;
		json_object *o = json_object_new_object();
		char reason[160];

		snprintf(reason, sizeof(reason),
			 "cut from %zu communicating processes that need %.1f CPUs, more than the largest CCX has",
			 c->component, c->demand);
		json_object_object_add(o, "pid", json_object_new_int(c->pid));
		json_object_object_add(o, "comm", k >= 0 ? json_object_new_string(st->sample->procs[k].comm) : NULL);
		json_object_object_add(o, "reason", json_object_new_string(reason));
		json_object_array_add(list, o);
	}
	return list;
}

static json_object *sampling_json(const struct status_sampling *st) {
	json_object *o = json_object_new_object();

	json_object_object_add(o, "source", json_object_new_string(st->source));
	json_object_object_add(o, "reading", json_object_new_string(st->reading));
	json_object_object_add(o, "note", st->note ? json_object_new_string(st->note) : NULL);
	json_object_object_add(o, "counted", json_object_new_string(st->counted));
	json_object_object_add(o, "counted_note", st->counted_note ? json_object_new_string(st->counted_note) : NULL);
	json_object_object_add(o, "cycles", u64(st->cycles));
	json_object_object_add(o, "last_cycle_usec", u64(st->last_cycle_usec));
	json_object_object_add(o, "last_counting_usec", u64(st->last_counting_usec));
	json_object_object_add(o, "last_counts_lost", u64(st->last_counts_lost));
	json_object_object_add(o, "processes_scanned", u64(st->last_scanned));
	json_object_object_add(o, "processes_active", u64(st->last_active));
	json_object_object_add(o, "moves", u64(st->moves));
	json_object_object_add(o, "kept", u64(st->kept));
	json_object_object_add(o, "reverted", u64(st->reverted));
	json_object_object_add(o, "crowded_moves", u64(st->crowded_moves));
	json_object_object_add(o, "crowded_releases", u64(st->crowded_releases));
	json_object_object_add(o, "rechecks", u64(st->rechecks));
	return o;
}

/* How many CPUs' worth of each CCX was busy at the last sample (status.h
 * says when it is null). */
static json_object *ccx_load_json(const struct ccxd_status *st) {
	json_object *a;

	if (!st->ccx_load)
		return NULL;
	a = json_object_new_array();
	for (unsigned c = 0; c < st->topology->n_ccx; c++)
		json_object_array_add(a, json_object_new_double(st->ccx_load[c]));
	return a;
}

/* Where execs come from: the exec programs, with how many each point
 * reported, or the proc connector, with why. */
static json_object *execs_json(const struct ccxd_status *st) {
	json_object *e = json_object_new_object();

	json_object_object_add(e, "source", json_object_new_string(st->execs_note ? "connector" : "bpf"));
	json_object_object_add(e, "note", st->execs_note ? json_object_new_string(st->execs_note) : NULL);
	json_object_object_add(e, "at_enter", u64(st->execs.at_enter));
	json_object_object_add(e, "at_rename", u64(st->execs.at_rename));
	json_object_object_add(e, "at_end", u64(st->execs.at_end));
	json_object_object_add(e, "dropped", u64(st->execs.dropped));
	json_object_object_add(e, "share_spent", u64(st->execs.share_spent));
	json_object_object_add(e, "maps_full", u64(st->execs.full));
	json_object_object_add(e, "pinned_first", u64(st->execs.pinned_first));
	return e;
}

/* The command lines the rules needed: read off the loop, how many, and
 * how many reads block (another user's process that will not let its
 * arguments be read). */
static json_object *cmdlines_json(const struct ccxd_status *st) {
	json_object *o = json_object_new_object();

	json_object_object_add(o, "read", u64(st->cmdlines.read));
	json_object_object_add(o, "refused", u64(st->cmdlines.refused));
	json_object_object_add(o, "blocked", u64(st->cmdlines.blocked));
	return o;
}

/* ccxd's own scheduling: how soon it can pin at an exec. */
static json_object *scheduling_json(const struct ccxd_status *st) {
	json_object *o = json_object_new_object();

	json_object_object_add(o, "slice_usec", st->scheduling.slice_usec ? u64(st->scheduling.slice_usec) : NULL);
	json_object_object_add(o, "wait", json_object_new_string(st->scheduling.wait));
	json_object_object_add(o, "note", st->scheduling.note ? json_object_new_string(st->scheduling.note) : NULL);
	json_object_object_add(o, "rttime_exceeded", u64(st->scheduling.rttime_exceeded));
	return o;
}

json_object *status_learned_json(const struct ccxd_status *st, bool paths) {
	json_object *o = json_object_new_object(), *list = json_object_new_array();

	for (size_t i = 0; i < st->n_learned; i++) {
		json_object *x = json_object_new_object();
		json_object_object_add(x, "programs", programs_json(st->learned[i].programs, paths));
		json_object_object_add(x, "seating", json_object_new_string(st->learned[i].seating));
		json_object_array_add(list, x);
	}
	json_object_object_add(o, "learned", list);
	return o;
}

json_object *status_json(const struct ccxd_status *st, bool paths) {
	json_object *o, *w, *counters, *procs;

	o = json_object_new_object();
	w = json_object_new_object();
	counters = json_object_new_object();
	procs = json_object_new_array();
	json_object_object_add(o, "version", json_object_new_string(CCXD_VERSION));
	json_object_object_add(o, "mode", json_object_new_string(config_mode_to_string(st->config->mode)));
	json_object_object_add(o, "automatic", json_object_new_boolean(st->config->automatic));
	json_object_object_add(o, "config", st->config->path ? json_object_new_string(st->config->path) : NULL);
	json_object_object_add(o, "topology", json_object_new_string(st->topology->source));
	/* The machine's own cache policies, as read at start and reload (null: not there). */
	json_object_object_add(o, "x3d_mode", st->topology->x3d_mode[0] ? json_object_new_string(st->topology->x3d_mode) : NULL);
	json_object_object_add(o, "llc_balancing",
			       st->topology->llc_balancing >= 0 ? json_object_new_boolean(st->topology->llc_balancing) : NULL);
	json_object_object_add(o, "started_usec", u64(st->started_usec));
	json_object_object_add(o, "bpf_capabilities", json_object_new_string(st->bpf_capabilities));
	json_object_object_add(o, "scheduling", scheduling_json(st));
	json_object_object_add(o, "cmdlines", cmdlines_json(st));

	json_object_object_add(w, "source", json_object_new_string(st->watcher_source));
	json_object_object_add(w, "note", st->watcher_note ? json_object_new_string(st->watcher_note) : NULL);
	json_object_object_add(w, "execs", execs_json(st));
	json_object_object_add(o, "watcher", w);

	json_object_object_add(counters, "events", u64(st->events));
	json_object_object_add(counters, "lost_events", u64(st->lost_events));
	json_object_object_add(counters, "rescans", u64(st->rescans));
	json_object_object_add(counters, "pins", u64(st->placements.pins));
	json_object_object_add(counters, "restores", u64(st->placements.restores));
	json_object_object_add(counters, "pin_failures", u64(st->placements.pin_failures));
	json_object_object_add(counters, "readopted", u64(st->placements.readopted));
	json_object_object_add(counters, "reloads", u64(st->reloads));
	json_object_object_add(counters, "reload_failures", u64(st->reload_failures));
	json_object_object_add(counters, "spills", u64(st->spills));
	json_object_object_add(counters, "spill_returns", u64(st->spill_returns));
	json_object_object_add(o, "counters", counters);
	json_object_object_add(o, "exec_pins", exec_pins_json(&st->exec_pins));

	for (size_t i = 0; i < st->n_processes; i++)
		json_object_array_add(procs, status_process_json(&st->processes[i]));
	json_object_object_add(o, "processes", procs);
	if (st->probe) {
		json_object *probe = json_object_get(st->probe);
		/* What the figures decide now, as the next cycle will use them. */
		if (st->have_decision)
			json_object_object_add(probe, "decision", probe_evidence_json(&st->decision));
		json_object_object_add(o, "probe", probe);
	}
	if (st->have_sampling) {
		json_object *sampling = sampling_json(&st->sampling);
		json_object_object_add(sampling, "ccx_load", ccx_load_json(st));
		json_object_object_add(o, "sampling", sampling);
		json_object_object_add(o, "groups", groups_json(st, paths));
		json_object_object_add(o, "cut", cut_json(st));
	}
	return o;
}
