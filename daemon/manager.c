#include "manager-internal.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "caps.h"
#include "config-file.h"
#include "autoplace.h"
#include "cmdlines.h"
#include "control.h"
#include "execs.h"
#include "log.h"
#include "metrics.h"
#include "placements.h"
#include "placer.h"
#include "setup.h"
#include "priority.h"
#include "prober.h"
#include "procfs.h"
#include "sysfs.h"
#include "ruler.h"
#include "spills.h"
#include "latencies.h"
#include "status.h"
#include "watcher.h"
#include "x3d.h"
#include "util.h"

/* Process events that ccxd needs: renames always; execs unless the exec
 * programs tell of them; forks only while a spread process must place each
 * new thread (inheritance is found by the interval's sweep); exits never:
 * every entry's pidfd tells of its exit. */
void manager_update_subscription(struct manager *m, bool spreading) {
	uint32_t events = (m->execs ? 0 : WATCHER_EXEC) | WATCHER_COMM | (spreading ? WATCHER_FORK : 0);

	if (m->watcher && events != m->subscribed) {
		m->subscribed = events;
		watcher_subscribe(m->watcher, events);
	}
}

static void decide_rules(struct manager *m, pid_t pid, enum ruling_trigger trigger) {
	if (ruler_evaluate(m->ruler, pid, trigger) > 0)
		manager_update_subscription(m, true);
}

/* A command line some rule needed is read: the decision it waited for, or
 * the explains. */
static void on_cmdline(void *userdata, pid_t pid, int trigger) {
	if (trigger != RULING_EXPLAIN)
		decide_rules(userdata, pid, (enum ruling_trigger)trigger);
	/* Whatever the read was made for: an explain may wait for it too. */
	manager_explain_ready(userdata, pid);
}

/* ---- process events --------------------------------------------------- */

static void on_fork(void *userdata, pid_t parent_tgid, pid_t child_pid, pid_t child_tgid) {
	struct manager *m = userdata;

	ruler_fork(m->ruler, parent_tgid, child_pid, child_tgid);
}

/* From the kernel's event at at_ns to the pin, before the rest of the
 * decision (the clock read in microseconds may fall short of the event's ns). */
static void note_exec_pin(struct manager *m, uint64_t at_ns) {
	uint64_t now_ns = util_usec(CLOCK_MONOTONIC) * 1000;

	latencies_add(&m->exec_pins, now_ns > at_ns ? (now_ns - at_ns) / 1000 : 0);
}

/* A pin at exec: how soon after the kernel's event, and, told by a record
 * (seen), which, for the exec's end to look for (execs_pinned_first()). */
static void pinned_at_exec(struct manager *m, const struct placement_seen *seen, uint64_t at_ns) {
	note_exec_pin(m, at_ns);
	if (seen && seen->pid_ino)
		execs_expect(m->execs, seen->pid_ino, seen->exec_ns, &placements_early(m->placements)->cpus);
}

/* Whether tgid, pinned early, ran its new program only with the pin, as
 * its exec's record (seen; NULL: the proc connector's event) can tell:
 * then the record stands for /proc. Asked once, after the pin: once so,
 * it stays so. */
static bool pinned_first(struct manager *m, pid_t tgid, const struct placement_seen *seen) {
	const struct placement_early *early = placements_early(m->placements);

	return seen && seen->pid_ino && early && early->pid == tgid && execs_pinned_first(m->execs, tgid, seen->pid_ino);
}

/* The decision at tgid's exec, after its pin: from the exec's record seen
 * where its program ran only with the pin (first), from /proc otherwise.
 * At real-time priority (one record a wake-up) the pin is all: the
 * decision, which walks the table, waits for the normal policy. */
static void decide_exec(struct manager *m, pid_t tgid, const struct placement_seen *seen, bool first) {
	if (m->pin_only) {
		m->decide_later = tgid;
		m->decide_seen = seen ? *seen : (struct placement_seen){ .start_time = 0 };
		m->decide_first = first;
		return;
	}
	if (ruler_evaluate_exec(m->ruler, tgid, seen, first) > 0)
		manager_update_subscription(m, true);
}

/* comm: the new program's, and seen, what else the event told of the
 * process, when it did. */
static void exec_of(struct manager *m, pid_t tgid, const char *comm, const struct placement_seen *seen,
		    uint64_t at_ns) {
	bool pinned;

	/* Most programs are neither ccxd's already nor named by any rule: for
	 * them comm is all there is to read. (A child that inherited a pinned
	 * placement is adopted by the interval's sweep.) */
	if (!ruler_exec(m->ruler, tgid, comm, seen, m->pin_only, &pinned))
		return;
	if (pinned)
		pinned_at_exec(m, seen, at_ns);
	decide_exec(m, tgid, seen, pinned_first(m, tgid, seen));
}

static void on_exec(void *userdata, pid_t tgid, uint64_t at_ns) {
	struct manager *m = userdata;

	/* Kernels before 6.6 send every kind of event, asked for or not. */
	if (!m->execs)
		exec_of(m, tgid, NULL, NULL, at_ns);
}

static void on_exec_record(void *userdata, const struct execs_exec *e) {
	struct manager *m = userdata;
	bool first;
	struct placement_seen seen = { .mask = e->mask, .start_time = e->start_time, .pid_ino = e->pid_ino,
				       .exec_ns = e->exec_ns, .ppid = e->ppid };

	snprintf(seen.comm, sizeof(seen.comm), "%s", e->comm);

	if (!e->entering) {
		/* The rename's record of an exec decided as it began, come all
		 * the same (the pin came after the rename): nothing new. */
		if (e->tgid == m->decided.tgid && e->exec_ns == m->decided.exec_ns &&
		    strcmp(e->comm, m->decided.comm) == 0)
			return;
		exec_of(m, e->tgid, e->comm, &seen, e->at_ns);
		return;
	}
	/* The exec has begun: the pin now, while it runs, and the decision,
	 * by the rule that the comm it will have decided ahead, where the
	 * record stands for /proc; the exec programs then leave out its
	 * rename's record (execs_expect()). Where that record came all the
	 * same (the pin came late), it decides, as it does for the others;
	 * where it did not, /proc does now. */
	if (!ruler_exec_entering(m->ruler, e->tgid, e->comm, &seen))
		return;
	pinned_at_exec(m, &seen, e->at_ns);
	first = pinned_first(m, e->tgid, &seen);
	if (!first && !(seen.pid_ino && execs_left_out(m->execs, e->tgid, seen.pid_ino)))
		return;
	decide_exec(m, e->tgid, &seen, first);
	m->decided.tgid = e->tgid;
	m->decided.exec_ns = e->exec_ns;
	snprintf(m->decided.comm, sizeof(m->decided.comm), "%s", e->comm);
}

static void on_tracked(void *userdata, pid_t pid, bool in) {
	struct manager *m = userdata;

	execs_track(m->execs, pid, in);
}

/* Whether ccxd holds BPF objects, which it then uses with bpf(). */
static bool bpf_loaded(const struct manager *m) {
	struct autoplace_stats st;

	if (m->execs)
		return true;
	if (!m->autoplace)
		return false;
	st = autoplace_stats(m->autoplace);
	return strcmp(st.source, "bpf") == 0 || strcmp(st.counted, "none") != 0;
}

/* The exec programs where the kernel takes them and the config allows. */
static void start_execs(struct manager *m) {
	int r;

	if (m->config->exec_events == CONFIG_EXECS_CONNECTOR || m->config->bpf == SAMPLER_READ_PROC) {
		snprintf(m->execs_note, sizeof(m->execs_note), "%s",
			 m->config->exec_events == CONFIG_EXECS_CONNECTOR ? "exec_events = connector" : "bpf = no");
		return;
	}
	r = execs_new(m->event, on_exec_record, m, &m->execs, m->execs_note, sizeof(m->execs_note));
	if (r < 0) {
		log_info("Execs come from the proc connector: %s", m->execs_note);
		return;
	}
	execs_set_rules(m->execs, m->config->rules, m->config->n_rules);
	placements_observe(m->placements, on_tracked, m);
	log_debug("Execs come from BPF programs, filtered in the kernel");
}

static void on_comm(void *userdata, pid_t pid, pid_t tgid) {
	if (pid == tgid)
		decide_rules(userdata, tgid, RULING_COMM);
}

static void on_exit_event(void *userdata, pid_t pid, pid_t tgid) {
	struct manager *m = userdata;

	if (pid == tgid)
		placements_remove(m->placements, tgid);
}

void manager_scan_all(struct manager *m, enum ruling_trigger trigger) {
	pid_t *pids;
	size_t n;
	int r;

	r = procfs_list_pids(m->root, &pids, &n);
	if (r < 0) {
		log_error_errno(r, "Failed to list processes: %m");
		return;
	}
	/* Parents first (lower pids, mostly), so children can be seen as inheriting. */
	for (size_t i = 0; i < n; i++)
		decide_rules(m, pids[i], trigger);
	free(pids);
	m->stats.rescans++;
}

static int on_rescan(sd_event_source *s, void *userdata) {
	struct manager *m = userdata;

	(void)s;
	m->rescan = sd_event_source_disable_unref(m->rescan);
	log_info("Rescanning /proc after lost process events");
	manager_scan_all(m, RULING_SCAN);
	return 0;
}

static void on_lost(void *userdata) {
	struct manager *m = userdata;

	/* Many overflows in one burst need one scan, after the burst is read. */
	if (!m->rescan && sd_event_add_defer(m->event, &m->rescan, on_rescan, m) >= 0)
		sd_event_source_set_priority(m->rescan, SD_EVENT_PRIORITY_IDLE);
}

static void on_unavailable(void *userdata, const char *why) {
	struct manager *m = userdata;

	m->polling = true;
	snprintf(m->watcher_note, sizeof(m->watcher_note), "%s; scanning /proc every interval instead", why);
	log_warning("No process events: %s", m->watcher_note);
}

static const struct watcher_ops watcher_ops = {
	.fork = on_fork,
	.exec = on_exec,
	.comm = on_comm,
	.exit = on_exit_event,
	.lost = on_lost,
	.unavailable = on_unavailable,
};

/* ---- the originals owed, kept across restarts ------------------------- */

static const char *keep_on_restart(void *userdata, const struct ledger_entry *e) {
	struct manager *m = userdata;

	return ruler_keep_on_restart(m->ruler, e);
}

static void decide_on_restart(void *userdata, pid_t pid) {
	decide_rules(userdata, pid, RULING_RELOAD);
}

/* Takes back what a killed ccxd left placed, and decides the rules' again
 * under the rules as they are now: a changed rule moves it, its original
 * stays. */
static void readopt(struct manager *m) {
	static const struct placements_readopt_ops ops = { keep_on_restart, decide_on_restart };

	placements_readopt(m->placements, &ops, m);
}

/* ---- housekeeping ----------------------------------------------------- */

void manager_notify_status(struct manager *m) {
	sd_notifyf(0, "STATUS=%s, %zu processes pinned, mode %s", m->polling ? "Polling /proc" : "Watching process events",
		   ruler_pinned(m->ruler), config_mode_to_string(m->config->mode));
}

/* metrics_file, rewritten every interval; a failure is logged once, and
 * again when writing works again. */
static void update_metrics_file(struct manager *m) {
	struct ccxd_status st;
	struct metrics x;
	char *text = NULL;
	int r;

	if (!m->config->metrics_file)
		return;
	r = manager_status(m, &st);
	if (r >= 0) {
		metrics_collect(&st, &x);
		r = metrics_format(&x, &text);
		status_release(&st);
	}
	if (r >= 0)
		r = metrics_write_file(m->config->metrics_file, text);
	free(text);
	if (r < 0 && r != m->metrics_file_error)
		log_warning_errno(r, "Failed to write %s, trying again every interval: %m", m->config->metrics_file);
	else if (r >= 0 && m->metrics_file_error < 0)
		log_info("Writing %s again", m->config->metrics_file);
	m->metrics_file_error = r < 0 ? r : 0;
}

/* recheck in samples of the interval: at least one, where asked. */
static unsigned recheck_samples(const struct config *c) {
	uint64_t n = c->interval_usec ? c->recheck_usec / c->interval_usec : 0;

	return c->recheck_usec == 0 ? 0 : n < 1 ? 1 : n > UINT_MAX ? UINT_MAX : (unsigned)n;
}

static int on_interval(sd_event_source *s, uint64_t usec, void *userdata) {
	struct manager *m = userdata;
	int r;

	(void)s;
	placements_reap(m->placements);
	/* A pin as an exec began whose rename never came: its original back. */
	placements_settle_early(m->placements);
	if (m->execs)
		execs_catch_up(m->execs);
	if (m->execs && execs_dropped(m->execs) > 0) {
		m->stats.exec_drops++;
		on_lost(m);
	}
	if (m->polling)
		manager_scan_all(m, RULING_SCAN);
	manager_update_subscription(m, ruler_sweep(m->ruler));
	if (m->autoplace && m->config->mode != CONFIG_MODE_OFF && m->config->automatic) {
		struct autoplace_options options = {
			.min_rate = m->config->min_rate,
			.min_message_rate = m->config->min_message_rate,
			.min_gain = m->config->min_gain,
			.window = m->config->window,
			.seatings = m->config->seatings,
			.n_seatings = m->config->n_seatings,
			.crowding = { .max_wait = m->config->crowded_wait, .samples = m->config->crowded_samples },
			.recheck_after = recheck_samples(m->config),
		};
		struct seatings_ranking probe;
		/* Measured costs rank the seatings where there are figures. */
		if (m->prober && prober_results(m->prober) &&
		    seatings_rank(prober_results(m->prober), m->config->seatings, m->config->n_seatings,
					 &probe) >= 0) {
			options.seatings = probe.order;
			options.n_seatings = probe.n_order;
			options.probe = &probe;
		}
		r = autoplace_cycle(m->autoplace, m->topology, m->config->mode, &options, usec);
		if (r < 0)
			log_warning_errno(r, "Sampling failed, trying again next interval: %m");
	}
	/* The sample's CPU load tells whether a rule's crowded CCX has room. */
	if (m->config->mode == CONFIG_MODE_ENFORCE)
		spills_watch(m->spills, m->placements, m->config, m->topology,
			     m->autoplace && m->config->automatic ? autoplace_sample(m->autoplace) : NULL, m->config->window,
			     util_usec(CLOCK_MONOTONIC));
	placements_owe_changed(m->placements);   /* exits */
	manager_notify_status(m);
	update_metrics_file(m);
	return manager_arm_interval(m);
}

int manager_arm_interval(struct manager *m) {
	uint64_t now;
	int r = sd_event_now(m->event, CLOCK_MONOTONIC, &now);

	if (r < 0)
		return r;
	if (m->interval_timer) {
		r = sd_event_source_set_time(m->interval_timer, now + m->config->interval_usec);
		if (r >= 0)
			r = sd_event_source_set_enabled(m->interval_timer, SD_EVENT_ONESHOT);
		return r;
	}
	/* An explicit accuracy: with 0, sd-event allows itself 250 ms of slack. */
	return sd_event_add_time(m->event, &m->interval_timer, CLOCK_MONOTONIC, now + m->config->interval_usec,
				 m->config->interval_usec / 20 + 1, on_interval, m);
}

/* [daemon] x3d_mode on this machine's amd_x3d_vcache driver
 * (x3d_apply_config()): in enforce mode on the system's topology the mode
 * asked for, otherwise, and for keep, the one a killed ccxd left set goes
 * back. Under the shipped unit ExecStartPre= and ExecReload= have set it
 * already, as root (ccxd --x3d-mode=apply), and nothing is left to write
 * here, where /sys is read-only. The topology then shows the mode as it is. */
void manager_apply_x3d(struct manager *m) {
	char mode[SYSFS_X3D_MODE_MAX];

	if (x3d_apply_config(m->root, m->runtime_dir, m->config, m->topology) == -ENOENT)
		return;
	if (strcmp(m->topology->source, "system") == 0 && sysfs_read_x3d_mode(m->root, mode) == 0)
		snprintf(m->topology->x3d_mode, sizeof(m->topology->x3d_mode), "%s", mode);
}

/* ---- life cycle ------------------------------------------------------- */

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
	struct manager *m = userdata;

	(void)s;
	if (si->ssi_signo == SIGHUP) {
		char **errors = NULL;
		manager_reload(m, &errors);
		config_errors_free(errors);
		return 0;
	}
	log_info("Received %s, shutting down", strsignal((int)si->ssi_signo));
	return sd_event_exit(m->event, 0);
}

/* Root writes the ledger and other files in the runtime directory by name:
 * in one that another user owns (the service's, user ccxd's, when ccxd is
 * then started by hand as root) that user could put links in their place. */
static int check_runtime_dir(const char *dir) {
	struct stat st;

	if (geteuid() != 0 || stat(dir, &st) < 0 || st.st_uid == 0)
		return 0;
	return log_error_errno(-EPERM,
			       "Running as root, ccxd does not write in %s, which belongs to uid %u: another "
			       "runtime_dir in the configuration, or ccxd as that user (the service's way)",
			       dir, (unsigned)st.st_uid);
}

void manager_warn_idle_keys(const struct manager *m) {
	char **warnings;

	if (setup_warnings(m->config, &warnings) < 0)
		return;
	for (char **w = warnings; w && *w; w++)
		log_warning("%s", *w);
	config_errors_free(warnings);
}

int manager_new(const char *config_path, struct manager **ret, char ***errors) {
	struct manager *m = calloc(1, sizeof(*m));
	int r;

	*errors = NULL;
	if (!m)
		return -ENOMEM;
	m->root = "";
	m->config_path_explicit = config_path != NULL;
	m->config_path = strdup(config_path ? config_path : CONFIG_DEFAULT_PATH);
	if (!m->config_path) {
		manager_free(m);
		return -ENOMEM;
	}
	r = setup_load(m->config_path, m->config_path_explicit, &m->config, &m->topology, errors);
	if (r < 0) {
		manager_free(m);
		return r;
	}
	manager_warn_idle_keys(m);
	r = sysfs_read_online_cpus(m->root, &m->online);
	if (r < 0) {
		log_warning_errno(r, "Failed to read the online CPUs, using this process's affinity: %m");
		placements_affinity(0, &m->online);
	}
	m->started_usec = util_usec(CLOCK_REALTIME);
	*ret = m;
	return 0;
}

/* The event loop, with the signals it stops and reloads on. */
static int start_loop(struct manager *m) {
	sigset_t mask;
	int r = sd_event_new(&m->event);

	if (r < 0)
		return log_error_errno(r, "Failed to create the event loop: %m");
	/* sd-event takes only blocked signals. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if ((r = sd_event_add_signal(m->event, &m->sig_term, SIGTERM, on_signal, m)) < 0 ||
	    (r = sd_event_add_signal(m->event, &m->sig_int, SIGINT, on_signal, m)) < 0 ||
	    (r = sd_event_add_signal(m->event, &m->sig_hup, SIGHUP, on_signal, m)) < 0)
		return log_error_errno(r, "Failed to watch signals: %m");
	/* Sends WATCHDOG=1 by itself when systemd asks for it. */
	r = sd_event_set_watchdog(m->event, true);
	if (r < 0)
		log_warning_errno(r, "Failed to enable the watchdog: %m");
	return 0;
}

/* The control socket: systemd's, or one of ccxd's own, removed at exit. */
static int start_control(struct manager *m) {
	int r, fd = control_listen(m->config->socket, &m->socket_activated);

	if (fd < 0)
		return log_error_errno(fd, "Failed to listen on %s: %m", m->config->socket);
	if (!m->socket_activated) {
		m->socket_path = strdup(m->config->socket);
		if (!m->socket_path) {
			close(fd);
			return -ENOMEM;
		}
	}
	r = control_new(m->event, fd, manager_methods, manager_n_methods, m, &m->control);
	return r < 0 ? log_error_errno(r, "Failed to serve the control socket: %m") : 0;
}

/* The table of placements, with the originals it owes kept in the runtime
 * directory, and the rules that use it. */
static int start_placements(struct manager *m) {
	int r;

	/* One that cannot be made only means the originals would not
	 * survive a crash. */
	m->runtime_dir = strdup(m->config->runtime_dir);
	if (!m->runtime_dir)
		return -ENOMEM;
	if (mkdir(m->runtime_dir, 0755) < 0 && errno != EEXIST)
		log_warning_errno(-errno, "Failed to create %s: %m", m->runtime_dir);
	r = check_runtime_dir(m->runtime_dir);
	if (r < 0)
		return r;
	manager_apply_x3d(m);
	priority_allow(m->config->realtime_wait);
	r = placements_new(m->event, m->root, m->runtime_dir, &m->placements);
	if (r >= 0)
		r = ruler_new(m->root, m->placements, &m->online, &m->ruler);
	if (r >= 0)
		r = cmdlines_new(m->event, m->root, on_cmdline, m, &m->cmdlines);
	if (r >= 0)
		r = spills_new(m->root, &m->spills);
	if (r < 0)
		return log_error_errno(r, "Failed to set up the table of placements: %m");
	ruler_use(m->ruler, m->config, m->topology);
	ruler_read_cmdlines_with(m->ruler, m->cmdlines);
	return 0;
}

/* The automatic policy, remembering what won in state_dir; ccxd runs
 * without it where it cannot start. */
static void start_autoplace(struct manager *m) {
	char path[PATH_MAX];
	int r = autoplace_new(m->root, m->config->bpf, m->config->traffic, m->placements, &m->autoplace);

	if (r < 0) {
		log_warning_errno(r, "No automatic placement: %m");
		return;
	}
	/* What won before is tried first; a state_dir we cannot make only
	 * means it is not remembered across restarts. */
	if (mkdir(m->config->state_dir, 0755) < 0 && errno != EEXIST)
		log_warning_errno(-errno, "Failed to create %s: %m", m->config->state_dir);
	snprintf(path, sizeof(path), "%s/placements.json", m->config->state_dir);
	autoplace_set_memory(m->autoplace, path);
}

/* The process events, and what runs already: the placements a killed ccxd
 * left, and the programs the rules name. */
static int start_watching(struct manager *m) {
	int r;

	/* Watching even in mode = off: a reload may turn it on. */
	start_execs(m);
	/* Every BPF object ccxd loads is loaded now (a reload that changes bpf,
	 * traffic or exec_events waits for the next start): what stays is map
	 * reads and updates and the iterators of loaded programs, which the
	 * kernel gives without the capabilities that loading took. */
	m->bpf_caps = caps_drop_bpf(bpf_loaded(m));
	r = watcher_new(m->event, &watcher_ops, m, &m->watcher);
	if (r < 0)
		return log_error_errno(r, "Failed to watch processes: %m");
	manager_update_subscription(m, false);
	/* Before anything else is decided: what a killed ccxd left placed is
	 * ours, with the originals it kept. */
	readopt(m);
	/* Rules apply to programs already running, too. */
	manager_scan_all(m, RULING_SCAN);
	return 0;
}

int manager_start(struct manager *m) {
	int r = start_loop(m);

	if (r >= 0)
		r = start_control(m);
	if (r >= 0)
		r = start_placements(m);
	if (r < 0)
		return r;
	start_autoplace(m);
	r = start_watching(m);
	if (r < 0)
		return r;
	r = manager_arm_interval(m);
	if (r < 0)
		return log_error_errno(r, "Failed to start the interval timer: %m");

	log_info("ccxd %s started: %s, topology %s with %u CCX%s, %zu rules, mode %s, socket %s%s", CCXD_VERSION,
		 m->config->path ? m->config->path : "default configuration", m->topology->source,
		 m->topology->n_ccx, m->topology->n_ccx == 1 ? "" : "s", m->config->n_rules,
		 config_mode_to_string(m->config->mode), m->config->socket,
		 m->socket_activated ? " (socket-activated)" : "");
	sd_notify(0, "READY=1");
	manager_notify_status(m);
	/* After READY=1: a calibration runs in a worker, and nothing waits for it. */
	r = prober_new(m->event, &m->prober);
	if (r >= 0)
		r = prober_update(m->prober, m->topology, &m->online, m->config->state_dir, m->config->calibrate);
	if (r < 0)
		log_warning_errno(r, "No probe figures: %m");
	return 0;
}

/* Whether some event source is ready within timeout_ms (-1: however long
 * it takes): then there is work to do. */
static bool ready_within(sd_event *e, int timeout_ms) {
	struct pollfd p = { .fd = sd_event_get_fd(e), .events = POLLIN };

	return poll(&p, 1, timeout_ms) > 0;
}

/* The wake-up at real-time priority (priority.h): the pin of at most one
 * exec record there, the rest at the normal policy. It sleeps on the
 * loop's descriptor itself (the timers sd_event_prepare() armed wake it
 * too) and reads the ring at once: sd-event learns what woke it after the
 * pin. */
static int wait_at_real_time(struct manager *m) {
	uint64_t cpu = 0;

	if (m->execs) {
		ruler_decide_ahead(m->ruler);
		cpu = util_usec(CLOCK_THREAD_CPUTIME_ID);
	}
	priority_wait();
	if (ready_within(m->event, -1) && m->execs) {
		m->pin_only = true;
		execs_read_some(m->execs, PRIORITY_RT_RECORDS, cpu);
		m->pin_only = false;
	}
	priority_work();
	if (m->decide_later) {
		pid_t pid = m->decide_later;

		m->decide_later = 0;
		cpu = util_usec(CLOCK_THREAD_CPUTIME_ID);
		if (ruler_evaluate_exec(m->ruler, pid, &m->decide_seen, m->decide_first) > 0)
			manager_update_subscription(m, true);
		/* The record's work, wherever it is done, counts to its share. */
		execs_charge(m->execs, util_usec(CLOCK_THREAD_CPUTIME_ID) - cpu);
	}
	return sd_event_wait(m->event, 0);
}

/* sd_event_loop(), with ccxd's priorities around the wait (priority.h): it
 * raises its priority only where it is about to sleep, so that the wake-up
 * for an exec record preempts a program computing where it lands, and the
 * kernel, which counts real-time CPU time until a sleep, sees it sleep at
 * every raise. Where work is waiting already (a flood of execs, a client),
 * it never raises it. */
static int loop(struct manager *m) {
	sd_event *e = m->event;
	bool polled = false;
	int code, r;

	while (sd_event_get_state(e) != SD_EVENT_FINISHED) {
		r = sd_event_prepare(e);
		if (r == 0 && !polled && ready_within(e, 0)) {
			r = sd_event_wait(e, 0);
			/* Ready to epoll, but nothing for sd-event: sleep next. */
			polled = r == 0;
		} else if (r == 0) {
			r = wait_at_real_time(m);
			/* Its last look found nothing ready either: sleep next. */
			polled = r == 0;
		}
		if (r > 0)
			r = sd_event_dispatch(e);
		if (r < 0)
			return r;
	}
	r = sd_event_get_exit_code(e, &code);
	return r < 0 ? r : code;
}

int manager_run(struct manager *m) {
	int r = loop(m);

	sd_notify(0, "STOPPING=1");
	if (m->config->restore_on_exit) {
		placements_adopt_children(m->placements);   /* their originals are owed too */
		ruler_restore_all(m->ruler, true);
		if (m->autoplace)
			autoplace_release_all(m->autoplace);
		/* With restore_on_exit = no the mode stays, and so does the
		 * record of the one found, for the next start. A ccxd that may
		 * not write the mode (the shipped unit's: user ccxd, /sys
		 * read-only) leaves the record to whoever set the mode for it:
		 * the unit's ExecStopPost=+ccxd --x3d-mode=restore, which runs
		 * after a crash too. Trying here would only fail. */
		if (m->runtime_dir && x3d_writable(m->root)) {
			int r2 = x3d_restore(m->root, m->runtime_dir);
			if (r2 < 0 && r2 != -ENOENT)
				log_warning_errno(r2, "Failed to put the X3D mode back: %m");
		}
	}
	/* What is still owed (everything, with restore_on_exit = no) stays
	 * written for the next start; with nothing owed the file goes. */
	if (m->placements)
		placements_sync_ledger(m->placements);
	return r;
}

void manager_free(struct manager *m) {
	if (!m)
		return;
	sd_event_source_disable_unref(m->sig_term);
	sd_event_source_disable_unref(m->sig_int);
	sd_event_source_disable_unref(m->sig_hup);
	sd_event_source_disable_unref(m->interval_timer);
	sd_event_source_disable_unref(m->rescan);
	watcher_free(m->watcher);
	if (m->placements)
		placements_observe(m->placements, NULL, NULL);
	execs_free(m->execs);
	autoplace_free(m->autoplace);
	spills_free(m->spills);
	control_free(m->control);
	prober_free(m->prober);
	if (m->socket_path) {
		unlink(m->socket_path);
		free(m->socket_path);
	}
	ruler_free(m->ruler);
	cmdlines_free(m->cmdlines);
	placements_free(m->placements);
	topology_free(m->topology);
	config_free(m->config);
	free(m->config_path);
	free(m->runtime_dir);
	sd_event_unref(m->event);
	free(m);
}
