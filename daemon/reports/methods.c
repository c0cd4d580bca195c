/* The io.ccxd Varlink methods: each takes validated parameters, asks the
 * manager (what it is doing comes as a snapshot, status.h), and answers
 * with plain JSON. Privilege is checked by control.c from the table at the
 * bottom. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-file.h"
#include "control.h"
#include "cpulist.h"
#include "manager.h"
#include "metrics.h"
#include "probe.h"
#include "rules.h"
#include "protocol.h"
#include "sample.h"
#include "status.h"
#include "status-json.h"

/* The status of the manager at userdata; false, with the call failed, when
 * out of memory. */
static bool status_of(void *userdata, struct control_call *call, struct ccxd_status *st) {
	if (manager_status(userdata, st) < 0) {
		control_call_fail(call, CCXD_ERROR_INTERNAL, "out of memory gathering the status");
		return false;
	}
	return true;
}

static void get_status(void *userdata, struct control_call *call) {
	struct ccxd_status st;

	if (!status_of(userdata, call, &st))
		return;
	call->reply = status_json(&st, call->uid == 0);
	status_release(&st);
}

static void get_topology(void *userdata, struct control_call *call) {
	struct ccxd_status st;

	if (!status_of(userdata, call, &st))
		return;
	call->reply = protocol_topology_json(st.topology);
	status_release(&st);
}

static void get_rules(void *userdata, struct control_call *call) {
	struct ccxd_status st;
	json_object *o, *rules, *files;

	if (!status_of(userdata, call, &st))
		return;
	o = json_object_new_object();
	rules = json_object_new_array();
	json_object_object_add(o, "config", st.config->path ? json_object_new_string(st.config->path) : NULL);
	for (size_t i = 0; i < st.config->n_rules; i++) {
		const struct rule *r = &st.config->rules[i];
		json_object *x = json_object_new_object(), *ccx;
		json_object_object_add(x, "name", json_object_new_string(r->name));
		json_object_object_add(x, "exe", r->exe ? json_object_new_string(r->exe) : NULL);
		json_object_object_add(x, "cmdline", r->cmdline ? json_object_new_string(r->cmdline) : NULL);
		json_object_object_add(x, "parent", r->parent ? json_object_new_string(r->parent) : NULL);
		json_object_object_add(x, "ancestor", r->ancestor ? json_object_new_string(r->ancestor) : NULL);
		json_object_object_add(x, "unit", r->unit ? json_object_new_string(r->unit) : NULL);
		json_object_object_add(x, "cgroup", r->cgroup ? json_object_new_string(r->cgroup) : NULL);
		if (r->ccx_auto)
			ccx = json_object_new_string("auto");
		else {
			ccx = json_object_new_array();
			for (size_t k = 0; k < r->n_ccx; k++)
				json_object_array_add(ccx, json_object_new_int((int)r->ccx[k]));
		}
		json_object_object_add(x, "ccx", ccx);
		json_object_object_add(x, "policy", json_object_new_string(rule_policy_to_string(r->policy)));
		json_object_object_add(x, "smt", json_object_new_string(rule_smt_to_string(r->smt)));
		json_object_object_add(x, "prefer", json_object_new_string(rule_prefer_to_string(r->prefer)));
		json_object_object_add(x, "force", json_object_new_boolean(r->force));
		json_object_object_add(x, "spill", json_object_new_boolean(r->spill));
		json_object_object_add(x, "file", r->file ? json_object_new_string(r->file) : NULL);
		json_object_object_add(x, "line", json_object_new_int((int)r->line));
		json_object_array_add(rules, x);
	}
	json_object_object_add(o, "rules", rules);
	files = json_object_new_array();
	for (size_t i = 0; i < st.config->n_files; i++)
		json_object_array_add(files, json_object_new_string(st.config->files[i]));
	json_object_object_add(o, "files", files);
	status_release(&st);
	call->reply = o;
}

static void get_version(void *userdata, struct control_call *call) {
	(void)userdata;
	call->reply = json_object_new_object();
	json_object_object_add(call->reply, "version", json_object_new_string(CCXD_VERSION));
	json_object_object_add(call->reply, "protocol", json_object_new_int(CCXD_PROTOCOL_VERSION));
}

/* The same text as metrics_file holds: Prometheus's exposition format. */
static void get_metrics(void *userdata, struct control_call *call) {
	struct ccxd_status st;
	struct metrics x;
	char *text = NULL;
	int r;

	if (!status_of(userdata, call, &st))
		return;
	metrics_collect(&st, &x);
	r = metrics_format(&x, &text);
	status_release(&st);
	if (r < 0) {
		control_call_fail(call, CCXD_ERROR_INTERNAL, "out of memory formatting the metrics");
		return;
	}
	call->reply = json_object_new_object();
	json_object_object_add(call->reply, "text", json_object_new_string(text));
	free(text);
}

static void get_info(void *userdata, struct control_call *call) {
	json_object *interfaces = json_object_new_array();

	(void)userdata;
	json_object_array_add(interfaces, json_object_new_string("org.varlink.service"));
	json_object_array_add(interfaces, json_object_new_string(CCXD_INTERFACE));
	call->reply = json_object_new_object();
	json_object_object_add(call->reply, "vendor", json_object_new_string("ccxd"));
	json_object_object_add(call->reply, "product", json_object_new_string("ccxd"));
	json_object_object_add(call->reply, "version", json_object_new_string(CCXD_VERSION));
	json_object_object_add(call->reply, "url", json_object_new_string("man:ccxd(8)"));
	json_object_object_add(call->reply, "interfaces", interfaces);
}

/* Varlink's InvalidParameter, naming it; returns false. */
static bool invalid_parameter(struct control_call *call, const char *name) {
	call->error = VARLINK_ERROR_INVALID_PARAMETER;
	call->error_parameters = json_object_new_object();
	json_object_object_add(call->error_parameters, "parameter", json_object_new_string(name));
	return false;
}

/* An integer parameter in [min, max]; on failure the call gets Varlink's
 * InvalidParameter naming it. */
static bool int_parameter(struct control_call *call, const char *name, long long min, long long max,
			  long long *ret) {
	json_object *v;

	if (!json_object_object_get_ex(call->parameters, name, &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < min || json_object_get_int64(v) > max) {
		return invalid_parameter(call, name);
	}
	*ret = json_object_get_int64(v);
	return true;
}

static void fail_errno(const struct topology *t, struct control_call *call, int r, long long pid, long long ccx) {
	switch (r) {
	case -ESRCH:
		control_call_fail(call, CCXD_ERROR_NO_SUCH_PROCESS, "no process %lld", pid);
		break;
	case -ENOENT:
		control_call_fail(call, CCXD_ERROR_NO_SUCH_CCX, "no usable CCX %lld (topology has %u)", ccx,
				  t->n_ccx);
		break;
	case -ENOTCONN:
		control_call_fail(call, CCXD_ERROR_NOT_PINNED, "process %lld is not placed by ccxd", pid);
		break;
	case -ECANCELED:
		control_call_fail(call, CCXD_ERROR_DISABLED, "mode = off: ccxd places nothing");
		break;
	case -EPERM:
		control_call_fail(call, CCXD_ERROR_PIN_FAILED, "process %lld is a kernel thread", pid);
		break;
	case -EXDEV:
		control_call_fail(call, CCXD_ERROR_PIN_FAILED, "the cgroup cpuset of process %lld excludes CCX %lld",
				  pid, ccx);
		break;
	default:
		control_call_fail(call, CCXD_ERROR_PIN_FAILED, "%s", strerror(-r));
	}
}

static void reply_process(struct control_call *call, const struct status_process *p) {
	call->reply = json_object_new_object();
	json_object_object_add(call->reply, "process", status_process_json(p));
}

static void pin(void *userdata, struct control_call *call) {
	struct manager *m = userdata;
	long long pid, ccx;
	struct status_process p;
	int r;

	if (!int_parameter(call, "pid", 1, INT_MAX, &pid) || !int_parameter(call, "ccx", 0, CPU_SETSIZE - 1, &ccx))
		return;
	r = manager_pin(m, (pid_t)pid, (unsigned)ccx, &p);
	if (r < 0)
		return fail_errno(manager_topology(m), call, r, pid, ccx);
	reply_process(call, &p);
}

static void unpin(void *userdata, struct control_call *call) {
	struct manager *m = userdata;
	long long pid;
	struct status_process p;
	int r;

	if (!int_parameter(call, "pid", 1, INT_MAX, &pid))
		return;
	r = manager_unpin(m, (pid_t)pid, &p);
	if (r < 0)
		return fail_errno(manager_topology(m), call, r, pid, -1);
	reply_process(call, &p);
}

static void reload(void *userdata, struct control_call *call) {
	struct manager *m = userdata;
	char **errors = NULL;
	json_object *list;
	int r;

	r = manager_reload(m, &errors);
	if (r < 0) {
		control_call_fail(call, CCXD_ERROR_CONFIG_INVALID, "%s is not valid; the running configuration stays",
				  manager_config_path(m));
		list = json_object_new_array();
		for (char **e = errors; e && *e; e++)
			json_object_array_add(list, json_object_new_string(*e));
		if (!errors)
			json_object_array_add(list, json_object_new_string(strerror(-r)));
		json_object_object_add(call->error_parameters, "errors", list);
		config_errors_free(errors);
		return;
	}
	call->reply = json_object_new_object();
	json_object_object_add(call->reply, "rules", json_object_new_int((int)manager_n_rules(m)));
}

/* A boolean parameter, false when absent. */
static bool bool_parameter(struct control_call *call, const char *name, bool *ret) {
	json_object *v;

	*ret = false;
	if (!json_object_object_get_ex(call->parameters, name, &v))
		return true;
	if (!json_object_is_type(v, json_type_boolean)) {
		return invalid_parameter(call, name);
	}
	*ret = json_object_get_boolean(v);
	return true;
}

/* Runs in a worker; the call is answered when it ends, with progress on the
 * way for a client that asked for more. */
static void probe(void *userdata, struct control_call *call) {
	struct manager *m = userdata;
	struct probe_options o;
	bool quick, matrix;
	long long threads = 4;
	int r;

	if (!bool_parameter(call, "quick", &quick) || !bool_parameter(call, "matrix", &matrix))
		return;
	if (json_object_object_get_ex(call->parameters, "threads", NULL) &&
	    !int_parameter(call, "threads", 1, CPU_SETSIZE, &threads))
		return;
	probe_options_init(&o, quick ? PROBE_QUICK : PROBE_FULL);
	o.matrix = matrix;
	o.threads = (unsigned)threads;
	r = manager_probe(m, &o, call);
	if (r == -ENODEV)
		control_call_fail(call, CCXD_ERROR_PROBE_FAILED, "the probe could not start with ccxd");
	else if (r == -EBUSY)
		control_call_fail(call, CCXD_ERROR_PROBE_RUNNING, "a probe is running already (see ccxctl status)");
	else if (r == -ENXIO)
		control_call_fail(call, CCXD_ERROR_PROBE_FAILED, "topology %s has CPUs this machine lacks: nothing to measure",
				  manager_topology(m)->source);
	else if (r < 0)
		control_call_fail(call, CCXD_ERROR_PROBE_FAILED, "the probe could not start: %s", strerror(-r));
}

static json_object *string_or_null(const char *s) {
	return s ? json_object_new_string(s) : NULL;
}

/* What the rules make of a process: what was read of it (its executable,
 * command line and cgroup for root alone, as status gives paths), and each
 * rule's verdict; the first that matches decides. */
static json_object *explanation_json(const struct config *c, const struct rules_explanation *e, pid_t pid,
				     bool paths) {
	json_object *o = json_object_new_object(), *rules = json_object_new_array();
	const char *decides = NULL;

	json_object_object_add(o, "pid", json_object_new_int(pid));
	json_object_object_add(o, "comm", json_object_new_string(e->comm));
	json_object_object_add(o, "parent", e->parent ? json_object_new_int(e->parent) : NULL);
	json_object_object_add(o, "parent_comm", e->parent ? json_object_new_string(e->parent_comm) : NULL);
	if (paths) {
		json_object_object_add(o, "exe", string_or_null(e->exe));
		json_object_object_add(o, "cmdline", string_or_null(e->cmdline));
		json_object_object_add(o, "cgroup", string_or_null(e->cgroup));
	}
	for (size_t i = 0; i < e->n_rules && i < c->n_rules; i++) {
		const struct rule *r = &c->rules[i];
		json_object *x = json_object_new_object();
		json_object_object_add(x, "name", json_object_new_string(r->name));
		json_object_object_add(x, "file", string_or_null(r->file));
		json_object_object_add(x, "line", json_object_new_int((int)r->line));
		json_object_object_add(x, "matches", json_object_new_boolean(e->matches[i]));
		json_object_object_add(x, "why", e->matches[i] ? NULL : json_object_new_string(e->why[i]));
		json_object_array_add(rules, x);
		if (e->matches[i] && !decides)
			decides = r->name;
	}
	json_object_object_add(o, "rules", rules);
	json_object_object_add(o, "rule", string_or_null(decides));
	return o;
}

/* An explain under way: answered now, or once the command line is read. */
struct explaining {
	struct manager *m;
	struct control_call *call;    /* answered now; NULL once deferred */
	struct control_deferred *d;
	pid_t pid;
	bool paths;
};

static void explained(void *userdata, int r, const struct rules_explanation *e) {
	struct explaining *x = userdata;
	struct ccxd_status st;
	json_object *reply = NULL;

	if (r >= 0 && manager_status(x->m, &st) >= 0) {
		reply = explanation_json(st.config, e, x->pid, x->paths);
		status_release(&st);
	}
	if (x->call && r == -ESRCH)
		control_call_fail(x->call, CCXD_ERROR_NO_SUCH_PROCESS, "no process %d (or a kernel thread)", (int)x->pid);
	else if (x->call && !reply)
		control_call_fail(x->call, CCXD_ERROR_INTERNAL, "out of memory explaining process %d", (int)x->pid);
	else if (x->call)
		x->call->reply = reply;
	else if (r == -ESRCH)
		control_fail(x->d, CCXD_ERROR_NO_SUCH_PROCESS, "process %d ended", (int)x->pid);
	else if (!reply)
		control_fail(x->d, CCXD_ERROR_INTERNAL, "out of memory explaining process %d", (int)x->pid);
	else {
		control_reply(x->d, reply, false);
		json_object_put(reply);
	}
	if (!x->call)
		free(x);
}

/* The client went away while the command line was read. */
static void explain_gone(void *userdata) {
	struct explaining *x = userdata;

	manager_explain_cancel(x->m, x);
	free(x);
}

static void explain(void *userdata, struct control_call *call) {
	struct explaining *x;
	long long pid;
	int r;

	if (!int_parameter(call, "pid", 1, INT_MAX, &pid))
		return;
	x = calloc(1, sizeof(*x));
	if (!x) {
		control_call_fail(call, CCXD_ERROR_INTERNAL, "out of memory explaining process %lld", pid);
		return;
	}
	*x = (struct explaining){ .m = userdata, .call = call, .pid = (pid_t)pid, .paths = call->uid == 0 };
	r = manager_explain(x->m, x->pid, explained, x);
	if (r == 1 && !(x->d = control_call_defer(call, explain_gone, x))) {
		manager_explain_cancel(x->m, x);
		control_call_fail(call, CCXD_ERROR_INTERNAL, "out of memory explaining process %lld", pid);
	} else if (r == 1) {
		x->call = NULL;   /* answered once the command line is read */
		return;
	} else if (r == -EBUSY)
		control_call_fail(call, CCXD_ERROR_INTERNAL, "%d explains wait for command lines already: ask again",
				  MANAGER_EXPLAINS_MAX);
	else if (r < 0)
		control_call_fail(call, CCXD_ERROR_INTERNAL, "explaining process %lld failed: %s", pid, strerror(-r));
	free(x);
}

static void get_learned(void *userdata, struct control_call *call) {
	struct ccxd_status st;

	if (!status_of(userdata, call, &st))
		return;
	call->reply = status_learned_json(&st, call->uid == 0);
	status_release(&st);
}

static void forget(void *userdata, struct control_call *call) {
	json_object *v;
	const char *programs;

	if (!json_object_object_get_ex(call->parameters, "programs", &v) || !json_object_is_type(v, json_type_string) ||
	    !*(programs = json_object_get_string(v))) {
		invalid_parameter(call, "programs");
		return;
	}
	if (manager_forget(userdata, programs) < 0) {
		control_call_fail(call, CCXD_ERROR_NOT_LEARNED, "nothing is remembered for %s (ccxctl learned lists "
				  "what is)", programs);
		return;
	}
	call->reply = json_object_new_object();
	json_object_object_add(call->reply, "programs", json_object_new_string(programs));
}

static const struct control_method methods[] = {
	{ VARLINK_METHOD_GET_INFO,  false, get_info },
	{ CCXD_METHOD_GET_STATUS,   false, get_status },
	{ CCXD_METHOD_GET_TOPOLOGY, false, get_topology },
	{ CCXD_METHOD_GET_RULES,    false, get_rules },
	{ CCXD_METHOD_GET_VERSION,  false, get_version },
	{ CCXD_METHOD_GET_METRICS,  false, get_metrics },
	{ CCXD_METHOD_GET_LEARNED,  false, get_learned },
	{ CCXD_METHOD_EXPLAIN,      false, explain },
	{ CCXD_METHOD_PIN,          true,  pin },
	{ CCXD_METHOD_UNPIN,        true,  unpin },
	{ CCXD_METHOD_RELOAD,       true,  reload },
	{ CCXD_METHOD_FORGET,       true,  forget },
	/* Loads the machine for seconds. */
	{ CCXD_METHOD_PROBE,        true,  probe },
};
const struct control_method *const manager_methods = methods;
const size_t manager_n_methods = sizeof(methods) / sizeof(methods[0]);
