/* What ccxd is doing at one moment, for whoever reports it (the control
 * methods, the metrics): a snapshot of plain data that manager_status()
 * fills and status_release() frees. Nothing in it leads back to the
 * daemon's tables, so a report cannot change what it reports. Its strings,
 * and the arrays it points to without owning, are the daemon's and stay as
 * they are until the manager handles its next event: so long, and no
 * longer, the snapshot is valid. */
#pragma once

#include <json-c/json.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "latencies.h"
#include "probe.h"
#include "sample.h"
#include "topology.h"

/* The most states a table of states has. */
#define STATUS_STATES_MAX 16
/* The ways there are to seat a group (placer.h's enum seating). */
#define STATUS_SEATINGS 4

/* A process a rule or a hand placed, or that a rule names. */
struct status_process {
	pid_t pid;
	const char *comm;
	const char *state;        /* placement_state_to_string() */
	bool placed;              /* pinned, or would be (dry-run): cpus and ccxs hold */
	cpu_set_t cpus;
	cpu_set_t ccxs;           /* the indexes of the CCXs that cpus touches */
	const char *rule;         /* the rule's name; NULL when no rule's */
	const char *reason;
	bool have_original;
	cpu_set_t original;       /* its affinity before ccxd first touched it */
	pid_t inherited_from;     /* 0: inherited nothing */
};

/* A probe figure that a ranking cites. */
struct status_figure {
	const char *seating;      /* the seating it was measured for; NULL for apart */
	bool measured;
	const char *relation;     /* probe_relation_name() */
	double gib_s, min, max;   /* pipe throughput, large writes: median and spread */
};

/* What the probe's figures said of the seatings (seatings.h), by name. */
struct status_ranking {
	const char *order[STATUS_SEATINGS];          /* the seatings allowed, best first */
	size_t n_order;
	struct status_figure seatings[STATUS_SEATINGS];   /* those measured */
	size_t n_seatings;
	struct status_figure apart;
	bool no_gain;
	char date[32];
	char note[320];
};

/* One seating an experiment tried, and what came of it. */
struct status_trial {
	const char *seating;
	double before, after;     /* the group's rate, medians, bytes/s */
	double gain, noise;
	bool beat;                /* beat the rate before, gain and noise both */
};

/* A group of communicating processes, as the automatic policy has it. */
struct status_group {
	pid_t id;                 /* its lowest pid */
	const pid_t *pids;        /* sorted */
	size_t n_pids;
	const size_t *channels;   /* indexes into the sample's channels */
	size_t n_channels;
	const char *programs;     /* its members' executables; NULL when not known */
	const char *users;        /* groups_users_to_string() */
	const char *state;        /* experiment_state_to_string() */
	const char *reason;
	bool seen;                /* in the last sample */
	bool placed;              /* validating, kept or dry-run: ccx, cpus and seating hold */
	int ccx;                  /* -1: none */
	cpu_set_t cpus;
	const char *seating;
	bool guard;               /* kept without beating the rate before */
	double bytes_per_s, cpu, demand;
	bool split;
	bool turns;               /* a pair that takes turns (groups.h) */
	bool thinned;             /* kept, its calls counted one in 16 (autoplace_group) */
	double waited;            /* kept: its members' share of wanted time spent waiting for a
				   * CPU in the last sample; -1: not known */
	double waited_seated;     /* that share in its first samples in its seat; -1: not yet */
	double kept_bytes_per_cpu_s;  /* kept: what re-checks compare with; 0: not yet */
	struct status_trial trials[STATUS_SEATINGS];
	size_t n_trials;
	long last;                /* the trial whose evidence stands (a kept group's, of the
				   * seating it kept); -1: none */
	bool probe_used;          /* its last plan cited probe figures: */
	struct status_ranking probe;
};

/* What won for one set of programs, tried first when they meet again. */
struct status_learned {
	const char *programs;     /* "a|b": the sorted executables */
	const char *seating;
};

/* A process that communicates but is in no group: a split left it alone. */
struct status_cut {
	pid_t pid;
	size_t component;         /* how many processes the component it was cut from had */
	double demand;            /* and the CPUs that component needed */
};

struct status_sampling {
	const char *source;       /* "bpf" or "proc" */
	const char *reading;      /* sampler_reading_to_string() */
	const char *note;         /* why not as the config asked; NULL */
	const char *counted;      /* what the kernel counts exactly */
	const char *counted_note; /* why not all; NULL */
	uint64_t cycles, last_cycle_usec, last_counting_usec, last_counts_lost;
	size_t last_scanned, last_active;
	uint64_t moves, kept, reverted;
	uint64_t crowded_moves, crowded_releases;   /* kept groups moved, or put back, off a crowded CCX */
	uint64_t rechecks;        /* kept seatings checked again */
};

struct ccxd_status {
	const struct config *config;
	const char *config_path;          /* what a reload reads */
	const struct topology *topology;
	uint64_t started_usec;            /* CLOCK_REALTIME */
	const char *bpf_capabilities;     /* "dropped", "kept" or "none" (caps_bpf_to_string()) */
	struct {
		unsigned slice_usec;      /* 0: the kernel's default */
		const char *wait;         /* "real-time", "normal" or "chosen" */
		const char *note;         /* why not real time; NULL */
		uint64_t rttime_exceeded; /* SIGXCPUs caught */
	} scheduling;                     /* ccxd's own (priority_state()) */

	const char *watcher_source;       /* "netlink", "polling" or "starting" */
	const char *watcher_note;         /* why polling; NULL otherwise */
	const char *execs_note;           /* why the proc connector tells of execs; NULL: the exec programs do */
	struct {
		uint64_t at_enter, at_rename, at_end, full, dropped, share_spent, pinned_first;
	} execs;                          /* the exec programs' (execs_stats()) */
	uint64_t events, lost_events, rescans, reloads, reload_failures;
	uint64_t spills, spill_returns;  /* rules' programs spilled to another CCX, and back (spills.h) */
	struct {
		uint64_t read, refused;
		unsigned blocked;
	} cmdlines;                       /* the command lines the rules needed (cmdlines_stats()) */
	struct latencies_summary exec_pins;   /* the last pins at exec, from the kernel's event */
	struct {
		uint64_t pins, restores, pin_failures, readopted;
	} placements;

	/* The processes a rule or a hand placed, or that a rule names, by pid;
	 * and every state's name, in order, for counts that show each one. */
	struct status_process *processes;
	size_t n_processes;
	const char *process_states[STATUS_STATES_MAX];
	size_t n_process_states;

	/* The automatic policy; have_sampling false when it could not start. */
	bool have_sampling;
	struct status_sampling sampling;
	struct status_group *groups;
	size_t n_groups;
	const char *group_states[STATUS_STATES_MAX];
	size_t n_group_states;
	const struct sampler_result *sample;  /* the channels groups name; NULL before the first */
	struct status_cut *cut;               /* by pid */
	size_t n_cut;
	struct status_learned *learned;       /* the least recently kept first */
	size_t n_learned;
	/* How many CPUs' worth of each CCX was busy at the last sample
	 * (topology->n_ccx of them); NULL before the second sample, without
	 * /proc/stat, or for an XML topology, whose CPUs are not these. */
	double *ccx_load;

	/* The probe: its state and figures (prober_status_json()), NULL when
	 * it could not start; the figures in use. decision: what they decide
	 * for the next cycle, when there are figures. */
	json_object *probe;
	const struct probe_results *probe_results;
	bool have_decision;
	struct status_ranking decision;
};

/* Frees what the snapshot owns. */
void status_release(struct ccxd_status *st);

/* ---- making it (status.c), for the manager alone ---- */

struct autoplace;
struct placement;
struct placements;
struct seatings_ranking;

/* "pv|yes" of a group's programs "/usr/bin/pv|/usr/bin/yes": each by its
 * file name alone, into buf, cut to size bytes. */
void status_program_names(const char *programs, char *buf, size_t size);

/* An entry of the table, as status and the replies to pin and unpin show it. */
void status_process_of(const struct topology *t, const struct placement *p, struct status_process *ret);
void status_ranking_of(const struct seatings_ranking *r, struct status_ranking *ret);
/* Every state's name, of processes and of groups. */
void status_states(struct ccxd_status *st);
/* The table's counters and the processes the rules own, by pid. */
int status_processes(const struct placements *pl, const struct topology *t, struct ccxd_status *st);
/* The automatic policy: its counters, groups, cut and each CCX's load. */
int status_sampling(const struct autoplace *a, const struct topology *t, struct ccxd_status *st);
/* What the automatic policy remembers, also while it is off (automatic = no). */
int status_learned(const struct autoplace *a, struct ccxd_status *st);
