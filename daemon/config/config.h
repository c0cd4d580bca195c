/* What ccxd runs with: the [daemon] section's settings and the rules, as
 * config-file.h reads them from /etc/ccxd.conf and its drop-ins. A config
 * is only ever swapped in whole and valid. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "placer.h"
#include "protocol.h"
#include "rules.h"
#include "sampler.h"

#define CONFIG_DEFAULT_PATH    "/etc/ccxd.conf"
#define CONFIG_DEFAULT_SOCKET  CCXD_DEFAULT_SOCKET
#define CONFIG_DEFAULT_RUNTIME "/run/ccxd"

enum config_mode {
	CONFIG_MODE_ENFORCE,      /* decide and pin */
	CONFIG_MODE_DRY_RUN,      /* decide and report, never pin */
	CONFIG_MODE_OFF,          /* watch and answer, decide nothing */
};

/* [daemon] exec_events: where ccxd hears of execs. */
enum config_execs {
	CONFIG_EXECS_AUTO,        /* BPF programs that filter them in the kernel, where it allows them
				   * (the default); the proc connector otherwise */
	CONFIG_EXECS_CONNECTOR,   /* the proc connector: every exec wakes ccxd */
};

/* [daemon] x3d_mode: what ccxd sets amd_x3d_vcache's mode to while it runs. */
enum config_x3d {
	CONFIG_X3D_KEEP,          /* leave it as it is (the default) */
	CONFIG_X3D_CACHE,
	CONFIG_X3D_FREQUENCY,
};

struct config {
	char *path;               /* the main file it was read from; NULL for built-in defaults */
	char **files;             /* every file read: the main one first, then the drop-ins in
				   * the order read; the rules' file points here */
	size_t n_files, allocated_files;
	char *socket;             /* default CONFIG_DEFAULT_SOCKET */
	char *topology;           /* default "system" */
	bool topology_invalid;    /* topology = had an error: the default stands in for it */
	enum config_mode mode;    /* default enforce */
	bool automatic;           /* the automatic policy places what no rule names; default yes */
	uint64_t interval_usec;   /* default 1 s */
	bool restore_on_exit;     /* default yes */
	char *state_dir;          /* default /var/lib/ccxd */
	char *runtime_dir;        /* the original affinities owed, across restarts; default /run/ccxd */
	bool realtime_wait;       /* wait for events at real-time priority (priority.h); default yes */
	bool calibrate;           /* run the probe's quick calibration when no cached figures fit; default yes */
	enum sampler_reading bpf; /* how far up active processes may be read: batch (auto, the default),
				   * each through BPF iterators (per-process), or /proc (no) */
	enum sampler_counting traffic; /* where the kernel counts traffic per channel: auto (default),
				   * syscalls (pipes at every system call's exit too), no */
	enum config_execs exec_events; /* default auto */
	char *metrics_file;       /* Prometheus text written every interval; NULL (default): none */
	double min_rate;          /* bytes/s for a channel to join a group; default 1 MiB/s */
	double min_message_rate;  /* or messages/s; default 200, 0: bytes alone */
	double min_gain;          /* a move is kept above this relative gain; default 0.05 */
	unsigned window;          /* samples before and after a move; default 3 */
	double crowded_wait;      /* a kept group is crowded above this share of time waiting; 0: never */
	unsigned crowded_samples; /* in this many samples in a row (crowding.h) */
	uint64_t recheck_usec;    /* a kept seating is checked again after this long; 0: never */
	enum seating seatings[_SEATING_MAX];   /* ways to seat a group, in the order tried */
	size_t n_seatings;        /* default: one-per-core, smt-siblings, shared-cpu */
	enum config_x3d x3d_mode; /* default keep */
	struct rule *rules;
	size_t n_rules;
};

/* A config with every default and no rules. Returns NULL only when out of memory. */
struct config *config_new_default(void);

void config_free(struct config *c);

const char *config_mode_to_string(enum config_mode m);
const char *config_bpf_to_string(enum sampler_reading r);
const char *config_traffic_to_string(enum sampler_counting c);
const char *config_x3d_to_string(enum config_x3d x);
const char *config_execs_to_string(enum config_execs e);
