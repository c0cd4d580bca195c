/* One probe run in a worker process, so that the event loop never waits on
 * it: the daemon forks, the child runs probe_run() and writes a JSON line to
 * a pipe for every progress step and a last one with its results or its
 * error. The pipe and the child's pidfd are event sources of the loop; a
 * cancelled worker is killed and then reaped when its pidfd says it died,
 * and a worker whose daemon dies is killed by the kernel (PR_SET_PDEATHSIG). */
#pragma once

#include <json-c/json.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "probe.h"
#include "topology.h"

struct probeworker_ops {
	/* {phase, step, done, total} (borrowed) */
	void (*progress)(void *userdata, json_object *progress);
	/* The end, after the worker was reaped: r = 0 with the results
	 * (borrowed), or -ECANCELED (cancelled), the probe's own error, or
	 * -EPROTO when the worker died without an answer. The worker may be
	 * freed from inside. */
	void (*done)(void *userdata, int r, json_object *results);
};

struct probeworker;

/* Forks the worker, which runs probe_run(t, o) with o's callback replaced by
 * its own. Returns 0 or -errno (nothing left running then). */
int probeworker_start(sd_event *e, const struct topology *t, const struct probe_options *o,
		      const struct probeworker_ops *ops, void *userdata, struct probeworker **ret);

/* Kills the worker; done(-ECANCELED) follows from the loop once it is reaped. */
void probeworker_cancel(struct probeworker *w);

pid_t probeworker_pid(const struct probeworker *w);

/* Kills a worker still running and reaps it, waiting for that (a killed
 * process takes milliseconds): for shutdown. */
void probeworker_free(struct probeworker *w);
