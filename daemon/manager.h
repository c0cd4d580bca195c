/* The daemon: one struct that owns the event loop, its signals and timer,
 * the config and the topology, and the parts that do the work: the table
 * of placements, the watcher of process events, the automatic policy, the
 * probe and the control socket. It decides what the rules say, and
 * carries out reloads and what the control socket asks. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"
#include "topology.h"

struct control_method;
struct manager;
struct ccxd_status;
struct status_process;
struct probe_options;
struct control_call;
struct rules_explanation;

/* Reads the config (path NULL: CONFIG_DEFAULT_PATH, where a missing file means
 * defaults) and the topology it names. On -EINVAL, *errors lists every error. */
int manager_new(const char *config_path, struct manager **ret, char ***errors);
/* Binds the control socket, subscribes to process events, applies the rules
 * to what is already running, and tells systemd it is ready. */
int manager_start(struct manager *m);
int manager_run(struct manager *m);
void manager_free(struct manager *m);

/* Parses the config again and swaps it in only when it is valid; a bad file
 * leaves everything as it was and returns -EINVAL with *errors set. */
int manager_reload(struct manager *m, char ***errors);

/* By hand: pin pid to one CCX, or put back its original affinity. Return 0 or
 * -ESRCH (no such process), -ENOENT (no such CCX), -EPERM (kernel thread),
 * -EXDEV (its cgroup cpuset excludes that CCX), -ENOTCONN (not pinned),
 * -ECANCELED (mode = off), other -errno from the kernel. On success *ret
 * is the process as it is then (status.h). */
int manager_pin(struct manager *m, pid_t pid, unsigned ccx, struct status_process *ret);
int manager_unpin(struct manager *m, pid_t pid, struct status_process *ret);

/* What the rules make of pid, each rule's verdict (rules.h), given to done
 * with 0, or -ESRCH (no such process, or a kernel thread) or -ENOMEM; the
 * explanation is valid during the call. done comes at once (0 returned),
 * or, where the command line is read off the loop first, once it is there
 * or after MANAGER_EXPLAIN_WAIT_USEC without it (1 returned), unless
 * manager_explain_cancel(userdata) comes first. -EBUSY:
 * MANAGER_EXPLAINS_MAX wait already. */
#define MANAGER_EXPLAINS_MAX 16
#define MANAGER_EXPLAIN_WAIT_USEC (1000 * 1000)
typedef void (*manager_explained_fn)(void *userdata, int r, const struct rules_explanation *e);
int manager_explain(struct manager *m, pid_t pid, manager_explained_fn done, void *userdata);
void manager_explain_cancel(struct manager *m, void *userdata);

/* Forgets what won for a set of programs ("a|b", as status lists them for
 * root): -ENOENT when nothing was remembered for them. A file that could
 * not be written is logged; the entry is forgotten all the same. */
int manager_forget(struct manager *m, const char *programs);

/* What it is doing, as a snapshot for reports (status.h): valid until the
 * manager handles its next event. -ENOMEM, or 0; status_release() it then. */
int manager_status(const struct manager *m, struct ccxd_status *ret);

const struct topology *manager_topology(const struct manager *m);
const char *manager_config_path(const struct manager *m);
size_t manager_n_rules(const struct manager *m);

/* Starts the probe in a worker for call (prober_run()); -ENODEV when the
 * probe could not start with ccxd. */
int manager_probe(struct manager *m, const struct probe_options *o, struct control_call *call);

/* Methods of the control socket (methods.c). */
extern const struct control_method *const manager_methods;
extern const size_t manager_n_methods;
