/* The daemon: one struct that owns the event loop, the config, the topology,
 * the process table, the watcher and the control socket. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "proctable.h"
#include "topology.h"

struct watcher;
struct control;
struct autoplace;
struct prober;
struct control_method;

struct manager_stats {
	uint64_t rescans;          /* full /proc scans */
	uint64_t pins;             /* affinities set */
	uint64_t restores;         /* original affinities put back */
	uint64_t pin_failures;
	uint64_t reloads, reload_failures;
	uint64_t readopted;        /* processes found again after a restart */
};

struct manager {
	sd_event *event;
	const char *root;          /* where /proc and /sys are: "" but in tests */
	char *config_path;
	bool config_path_explicit; /* a missing file is an error only when named */
	struct config *config;
	struct topology *topology;
	struct proctable *procs;
	struct watcher *watcher;
	struct control *control;
	struct autoplace *autoplace;  /* NULL when it could not start */
	struct prober *prober;     /* the probe figures and workers; NULL when it could not start */
	bool socket_activated;
	char *socket_path;         /* the socket file we created, removed at exit */
	cpu_set_t online;          /* the kernel's online CPUs */
	bool polling;              /* no proc connector: scanning /proc every interval */
	uint32_t subscribed;       /* the process events asked of the watcher */
	char watcher_note[256];
	sd_event_source *sig_term, *sig_int, *sig_hup;
	sd_event_source *interval_timer;
	sd_event_source *rescan;   /* a pending full scan, coalesced */
	sd_event_source *ledger_sync;  /* writes the originals owed, once per burst of changes */
	uint64_t ledger_usec;      /* CLOCK_MONOTONIC of the last write */
	char *runtime_dir;         /* where they are written: fixed at start, like the socket */
	char *ledger_text;         /* what was last written, NULL when nothing is owed */
	int ledger_error;          /* of the last write, 0 or -errno: logged when it changes */
	uint64_t started_usec;     /* CLOCK_REALTIME */
	struct manager_stats stats;
	int metrics_file_error;    /* of the last write of metrics_file, 0 or -errno */
};

/* Reads the config (path NULL: CONFIG_DEFAULT_PATH, where a missing file means
 * defaults) and the topology it names. On -EINVAL, *errors lists every error. */
int manager_new(const char *config_path, struct manager **ret, char ***errors);
/* Binds the control socket, subscribes to process events, applies the rules
 * to what is already running, and tells systemd it is ready. */
int manager_start(struct manager *m);
int manager_run(struct manager *m);
void manager_free(struct manager *m);

/* Loads config and topology into fresh structs and checks that the rules fit
 * the topology, without touching any running daemon: --check-config and
 * reload share it. */
int manager_load_config(const char *path, bool explicit_path, struct config **ret_config,
			struct topology **ret_topology, char ***errors);

/* Parses the config again and swaps it in only when it is valid; a bad file
 * leaves everything as it was and returns -EINVAL with *errors set. */
int manager_reload(struct manager *m, char ***errors);

/* By hand: pin pid to one CCX, or put back its original affinity. Return 0 or
 * -ESRCH (no such process), -ENOENT (no such CCX), -EPERM (kernel thread),
 * -EXDEV (its cgroup cpuset excludes that CCX), -ENOTCONN (not pinned),
 * -ECANCELED (mode = off), other -errno from the kernel. */
int manager_pin(struct manager *m, pid_t pid, unsigned ccx, struct proc **ret);
int manager_unpin(struct manager *m, pid_t pid, struct proc **ret);

/* The CCX indexes a CPU set lies on, as "1" or "0,2". */
char *manager_ccx_list(const struct manager *m, const cpu_set_t *cpus, char *buf, size_t size);

/* Methods of the control socket (methods.c). */
extern const struct control_method *const manager_methods;
extern const size_t manager_n_methods;
