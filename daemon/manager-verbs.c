/* What clients and signals ask of the manager: a reload, a pin or unpin by
 * hand, the status snapshot, a probe (methods.c and the SIGHUP handler). */
#include "manager-internal.h"

#include <errno.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "autoplace.h"
#include "config-keys.h"
#include "execs.h"
#include "log.h"
#include "placements.h"
#include "priority.h"
#include "prober.h"
#include "ruler.h"
#include "seatings.h"
#include "setup.h"
#include "spills.h"
#include "status.h"
#include "util.h"
#include "watcher.h"

int manager_reload(struct manager *m, char ***errors) {
	char notes[8][CONFIG_NOTE_MAX];
	struct config *c;
	struct topology *t;
	bool topology_changed;
	size_t n;
	int r;

	/* Type=notify-reload wants the time of the reload with it. */
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu", (unsigned long long)util_usec(CLOCK_MONOTONIC));
	r = setup_load(m->config_path, m->config_path_explicit, &c, &t, errors);
	if (r < 0) {
		m->stats.reload_failures++;
		log_error("Reload failed, keeping the running configuration:");
		for (char **e = *errors; e && *e; e++)
			log_error("%s", *e);
		sd_notify(0, "READY=1");
		return r;
	}

	topology_changed = strcmp(c->topology, m->config->topology) != 0;
	/* CCX numbers of another topology mean other CPUs; another mode may forbid pinning. */
	if (topology_changed || c->mode != CONFIG_MODE_ENFORCE) {
		ruler_restore_all(m->ruler, false);
		if (m->autoplace)
			autoplace_release_all(m->autoplace);
	} else if (!c->automatic && m->autoplace)
		autoplace_release_all(m->autoplace);   /* rules only from now on */
	n = config_keys_at_next_start(c, m->config, notes, sizeof(notes) / sizeof(notes[0]));
	for (size_t i = 0; i < n; i++)
		log_notice("%s", notes[i]);
	config_free(m->config);
	m->config = c;
	manager_warn_idle_keys(m);
	topology_free(m->topology);
	m->topology = t;
	manager_apply_x3d(m);
	priority_allow(m->config->realtime_wait);
	ruler_use(m->ruler, m->config, m->topology);
	if (m->execs)
		execs_set_rules(m->execs, m->config->rules, m->config->n_rules);
	/* The prober holds the topology: it must hear of the new one at once. */
	if (m->prober)
		prober_update(m->prober, m->topology, &m->online, c->state_dir, c->calibrate);

	/* Processes whose rule is gone get their original back; the rest are
	 * decided again under the new rules. */
	if (ruler_redecide(m->ruler) > 0)
		manager_update_subscription(m, true);
	manager_scan_all(m, RULING_SCAN);
	manager_arm_interval(m);
	m->stats.reloads++;
	log_info("Reloaded %s: %zu rules, mode %s", c->path ? c->path : "defaults", c->n_rules,
		 config_mode_to_string(c->mode));
	sd_notify(0, "READY=1");
	manager_notify_status(m);
	return 0;
}

int manager_pin(struct manager *m, pid_t pid, unsigned ccx, struct status_process *ret) {
	const struct placement *p;
	int r = ruler_pin(m->ruler, pid, ccx, &p);

	if (r >= 0)
		status_process_of(m->topology, p, ret);
	return r;
}

int manager_unpin(struct manager *m, pid_t pid, struct status_process *ret) {
	const struct placement *p;
	int r = ruler_unpin(m->ruler, pid, &p);

	if (r >= 0)
		status_process_of(m->topology, p, ret);
	return r;
}

/* An explain waiting for a command line. */
struct explain_wait {
	struct manager *m;
	pid_t pid;
	manager_explained_fn done;
	void *userdata;
	sd_event_source *timer;   /* answers without the command line, at last */
	struct explain_wait *next;
};

static void explain_unlink(struct explain_wait *w) {
	struct explain_wait **p = &w->m->explains;

	while (*p != w)
		p = &(*p)->next;
	*p = w->next;
	w->m->n_explains--;
	sd_event_source_disable_unref(w->timer);
}

/* Explains w's process, if its command line is there or settle says not
 * to wait for it any longer, and lets w go. */
static void explain_answer(struct explain_wait *w, bool settle) {
	struct rules_explanation e;
	int r = ruler_explain(w->m->ruler, w->pid, settle, &e);

	if (r == -EINPROGRESS)
		return;   /* read again for another decision: wait for that */
	explain_unlink(w);
	w->done(w->userdata, r, r >= 0 ? &e : NULL);
	if (r >= 0)
		rules_explanation_done(&e);
	free(w);
}

static int on_explain_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
	(void)s;
	(void)usec;
	explain_answer(userdata, true);
	return 0;
}

int manager_explain(struct manager *m, pid_t pid, manager_explained_fn done, void *userdata) {
	struct rules_explanation e;
	struct explain_wait *w;
	int r = ruler_explain(m->ruler, pid, false, &e);

	if (r != -EINPROGRESS) {
		done(userdata, r, r >= 0 ? &e : NULL);
		if (r >= 0)
			rules_explanation_done(&e);
		return 0;
	}
	if (m->n_explains == MANAGER_EXPLAINS_MAX)
		return -EBUSY;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	*w = (struct explain_wait){ .m = m, .pid = pid, .done = done, .userdata = userdata, .next = m->explains };
	r = sd_event_add_time_relative(m->event, &w->timer, CLOCK_MONOTONIC, MANAGER_EXPLAIN_WAIT_USEC, 0,
				       on_explain_timeout, w);
	if (r < 0) {
		free(w);
		return r;
	}
	m->explains = w;
	m->n_explains++;
	return 1;
}

void manager_explain_cancel(struct manager *m, void *userdata) {
	for (struct explain_wait *w = m->explains; w; w = w->next)
		if (w->userdata == userdata) {
			explain_unlink(w);
			free(w);
			return;
		}
}

void manager_explain_ready(struct manager *m, pid_t pid) {
	struct explain_wait *w = m->explains, *next;

	for (; w; w = next) {
		next = w->next;
		if (w->pid == pid)
			explain_answer(w, false);
	}
}

int manager_forget(struct manager *m, const char *programs) {
	int r;

	if (!m->autoplace)
		return -ENOENT;
	r = autoplace_forget(m->autoplace, programs);
	if (r == -ENOENT)
		return r;
	log_info("Forgot what won for %s, by hand%s", programs, r < 0 ? " (the file was not written)" : "");
	return 0;
}

/* ---- what it is doing ------------------------------------------------ */

int manager_status(const struct manager *m, struct ccxd_status *ret) {
	struct ccxd_status *st = ret;
	struct watcher_stats ws = m->watcher ? watcher_stats(m->watcher) : (struct watcher_stats){ 0 };
	struct execs_stats xs = m->execs ? execs_stats(m->execs) : (struct execs_stats){ 0 };
	struct spills_stats ss = spills_stats(m->spills);
	struct seatings_ranking decision;
	int r = 0;

	*st = (struct ccxd_status){
		.config = m->config,
		.config_path = m->config_path,
		.topology = m->topology,
		.started_usec = m->started_usec,
		.watcher_source = m->polling ? "polling" : m->watcher && watcher_active(m->watcher) ? "netlink" : "starting",
		.watcher_note = m->polling ? m->watcher_note : NULL,
		.execs_note = m->execs ? NULL : m->execs_note,
		.execs = { .at_enter = xs.at_enter, .at_rename = xs.at_rename, .at_end = xs.at_end, .full = xs.full, .dropped = xs.dropped,
			   .share_spent = xs.share_spent, .pinned_first = xs.pinned_first },
		/* Execs told by the exec programs are events too; records they
		 * dropped are lost ones. */
		.events = ws.events + xs.at_rename + xs.at_end,
		.lost_events = ws.lost + m->stats.exec_drops,
		.rescans = m->stats.rescans,
		.exec_pins = latencies_summary(&m->exec_pins),
		.reloads = m->stats.reloads,
		.reload_failures = m->stats.reload_failures,
		.spills = ss.spills,
		.spill_returns = ss.returns,
		.probe_results = m->prober ? prober_results(m->prober) : NULL,
		.bpf_capabilities = caps_bpf_to_string(m->bpf_caps),
	};
	struct priority_state ps = priority_state();
	st->scheduling.slice_usec = ps.slice_usec;
	st->scheduling.wait = ps.wait;
	st->scheduling.note = ps.note;
	st->scheduling.rttime_exceeded = ps.rttime_exceeded;
	if (m->cmdlines) {
		struct cmdlines_stats cs = cmdlines_stats(m->cmdlines);
		st->cmdlines.read = cs.read;
		st->cmdlines.refused = cs.refused;
		st->cmdlines.blocked = cs.blocked;
	}
	status_states(st);
	if (m->placements)
		r = status_processes(m->placements, m->topology, st);
	if (r >= 0 && m->autoplace && m->config->automatic)
		r = status_sampling(m->autoplace, m->topology, st);
	if (r >= 0 && m->autoplace)
		r = status_learned(m->autoplace, st);
	if (r >= 0 && m->prober && !(st->probe = prober_status_json(m->prober, util_usec(CLOCK_REALTIME))))
		r = -ENOMEM;
	if (r < 0) {
		status_release(st);
		return r;
	}
	st->have_decision = st->probe_results &&
			    seatings_rank(st->probe_results, m->config->seatings, m->config->n_seatings,
					  &decision) >= 0;
	if (st->have_decision)
		status_ranking_of(&decision, &st->decision);
	return 0;
}

const struct topology *manager_topology(const struct manager *m) {
	return m->topology;
}

const char *manager_config_path(const struct manager *m) {
	return m->config_path;
}

size_t manager_n_rules(const struct manager *m) {
	return m->config->n_rules;
}

int manager_probe(struct manager *m, const struct probe_options *o, struct control_call *call) {
	return m->prober ? prober_run(m->prober, o, call) : -ENODEV;
}
