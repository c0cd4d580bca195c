/* What manager.c (the event loop, its events, ccxd's start and stop) and
 * manager-verbs.c (what clients and signals ask of it: reload, pin, unpin,
 * status, probe) share. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "caps.h"
#include "cmdlines.h"
#include "config.h"
#include "latencies.h"
#include "manager.h"
#include "placements.h"
#include "ruling.h"
#include "topology.h"

struct manager_stats {
	uint64_t rescans;          /* full /proc scans */
	uint64_t exec_drops;       /* intervals that found exec records dropped */
	uint64_t reloads, reload_failures;
};

struct manager {
	sd_event *event;
	const char *root;          /* where /proc and /sys are: "" but in tests */
	char *config_path;
	bool config_path_explicit; /* a missing file is an error only when named */
	struct config *config;
	struct topology *topology;
	struct placements *placements;
	struct ruler *ruler;
	struct cmdlines *cmdlines; /* the command lines the rules need, read off the loop */
	struct watcher *watcher;
	struct execs *execs;       /* NULL: the proc connector tells of execs */
	char execs_note[256];      /* why not, then */
	struct latencies exec_pins;    /* from exec events to the pins at exec */
	bool pin_only;             /* at real-time priority: pin at exec as decided ahead, decide later */
	pid_t decide_later;        /* the process pinned so, to decide once back at the normal policy */
	struct placement_seen decide_seen;  /* its exec's record */
	bool decide_first;         /* its program ran only with the pin: the record stands for /proc */
	struct {
		pid_t tgid;
		uint64_t exec_ns;
		char comm[PROCFS_COMM_MAX];
	} decided;                 /* the last exec decided as it began (its rename's record adds nothing) */
	struct control *control;
	struct autoplace *autoplace;  /* NULL when it could not start */
	struct spills *spills;     /* the programs of rules that may spill */
	struct prober *prober;     /* the probe figures and workers; NULL when it could not start */
	enum caps_bpf bpf_caps;    /* CAP_BPF and CAP_PERFMON after the loads at start */
	bool socket_activated;
	char *socket_path;         /* the socket file we created, removed at exit */
	cpu_set_t online;          /* the kernel's online CPUs */
	bool polling;              /* no proc connector: scanning /proc every interval */
	uint32_t subscribed;       /* the process events asked of the watcher */
	char watcher_note[256];
	sd_event_source *sig_term, *sig_int, *sig_hup;
	sd_event_source *interval_timer;
	sd_event_source *rescan;   /* a pending full scan, coalesced */
	char *runtime_dir;         /* where the originals owed are written: fixed at start, like the socket */
	uint64_t started_usec;     /* CLOCK_REALTIME */
	struct manager_stats stats;
	int metrics_file_error;    /* of the last write of metrics_file, 0 or -errno */
	struct explain_wait *explains;    /* waiting for command lines (manager_explain()) */
	size_t n_explains;
};

/* pid's command line, which an explain waited for, is read: the explains
 * of it are answered. */
void manager_explain_ready(struct manager *m, pid_t pid);

/* The process events asked of the watcher (spreading: forks too). */
void manager_update_subscription(struct manager *m, bool spreading);

/* Every process decided again, trigger telling why. */
void manager_scan_all(struct manager *m, enum ruling_trigger trigger);

/* The interval timer, (re)armed at the config's interval. */
int manager_arm_interval(struct manager *m);

/* systemd's STATUS= line. */
void manager_notify_status(struct manager *m);

/* What in the config's rules can do nothing, logged as warnings. */
void manager_warn_idle_keys(const struct manager *m);

/* [daemon] x3d_mode on this machine's amd_x3d_vcache driver. */
void manager_apply_x3d(struct manager *m);
