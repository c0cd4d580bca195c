/* The daemon's probe: the measured figures that the automatic policy ranks
 * seatings by, where they come from, and the probes that clients ask for.
 *
 * Figures belong to a topology, named by its fingerprint. They are cached in
 * state_dir/probe.json; when none fit the topology (first start, another
 * machine, CPUs gone offline), the quick calibration runs in a worker process
 * (probeworker.h), never delaying anything else. A client's probe
 * (io.ccxd.Probe) runs in a worker too, streams its progress, and its
 * results become the figures in use. One worker at a time. */
#pragma once

#include <json-c/json.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "control.h"
#include "probe.h"
#include "topology.h"

#define PROBER_CACHE_FILE "probe.json"
#define PROBER_FINGERPRINT_SIZE 17    /* 16 hex digits and a NUL */

/* FNV-1a over what the measured relations depend on: every CCX's CPUs,
 * cache level and size, NUMA node and package, and which PUs share a core;
 * not the spec it was loaded from, so that an XML export of this machine is
 * this machine. Pure. */
void prober_fingerprint(const struct topology *t, char ret[PROBER_FINGERPRINT_SIZE]);

/* state_dir/probe.json: {version, fingerprint, topology, measured_usec,
 * source, results}. Read returns 0 with the results when they were measured
 * on fingerprint, -ESTALE when on another, -ENOENT when there is no cache,
 * -EBADMSG when it is not one. Write creates state_dir and replaces the
 * file atomically. */
int prober_cache_read(const char *state_dir, const char *fingerprint, json_object **ret_results,
		      uint64_t *ret_measured_usec, char **ret_source);
int prober_cache_write(const char *state_dir, const char *fingerprint, const char *topology, const char *source,
		       uint64_t measured_usec, json_object *results);

struct prober;

int prober_new(sd_event *e, struct prober **ret);
/* Kills and reaps a worker still running. */
void prober_free(struct prober *p);

/* Makes the figures fit t (borrowed until the next call or prober_free):
 * keeps those in use when their fingerprint is t's, else reads the cache,
 * else, with calibrate, starts the quick calibration (after the probe now
 * running, if any). online: this machine's CPUs; a topology with others is
 * another machine's and is not measured. Never waits on a probe. */
int prober_update(struct prober *p, const struct topology *t, const cpu_set_t *online, const char *state_dir,
		  bool calibrate);

/* A client's probe with options o on the topology of the last update: the
 * call is deferred and answered with {"progress": ...} replies while it runs
 * (when the client asked for more), then {"results": ...} or
 * io.ccxd.ProbeFailed; a client that goes away cancels it. Returns 0, or
 * -EBUSY when a probe runs already, -ENXIO when the topology is not this
 * machine's, other -errno: then the call is not deferred. */
int prober_run(struct prober *p, const struct probe_options *o, struct control_call *call);

/* The figures in use, NULL when there are none; and their JSON. */
const struct probe_results *prober_results(const struct prober *p);

/* {state, worker_pid, kind, progress, fingerprint, note, figures: {source,
 * date, age_s, mode, relations: [...]}} */
json_object *prober_status_json(const struct prober *p, uint64_t now_usec);
