#include "prober.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomicfile.h"
#include "cpulist.h"
#include "log.h"
#include "regfile.h"
#include "probeworker.h"
#include "protocol.h"
#include "util.h"

#define PROBER_CACHE_VERSION 1
/* Far above what the largest machine's figures take (a latency matrix of
 * 512 CPUs is about 2 MiB). */
#define PROBER_CACHE_MAX (16 * 1024 * 1024)

enum prober_kind {
	PROBER_CALIBRATION,       /* the daemon's own, quick */
	PROBER_CLIENT,            /* asked for through io.ccxd.Probe */
};

struct prober {
	sd_event *event;
	const struct topology *topology;
	cpu_set_t online;
	char fingerprint[PROBER_FINGERPRINT_SIZE];
	char *state_dir;
	bool calibrate;
	/* the figures in use */
	struct probe_results *results;
	json_object *results_json;
	char figures_fingerprint[PROBER_FINGERPRINT_SIZE];
	char *source;             /* "cache", "calibration", "probe" */
	uint64_t measured_usec;   /* CLOCK_REALTIME */
	char note[256];           /* why there are none, or what last went wrong */
	/* the worker */
	struct probeworker *worker;
	enum prober_kind kind;
	char worker_fingerprint[PROBER_FINGERPRINT_SIZE];
	struct control_deferred *client;
	unsigned done, total;     /* its last progress */
	bool calibration_wanted;  /* once the running worker ends */
};

/* ---- fingerprint and cache ------------------------------------------------ */

static void fnv1a(uint64_t *h, const char *s) {
	for (; *s; s++) {
		*h ^= (unsigned char)*s;
		*h *= UINT64_C(0x100000001b3);
	}
}

void prober_fingerprint(const struct topology *t, char ret[PROBER_FINGERPRINT_SIZE]) {
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	char list[CPULIST_MAX], item[128];

	fnv1a(&h, "online=");
	fnv1a(&h, cpulist_format(&t->online, list, sizeof(list)));
	for (unsigned i = 0; i < t->n_ccx; i++) {
		const struct topology_ccx *c = &t->ccx[i];
		snprintf(item, sizeof(item), "\nccx level=%u size=%llu numa=%d package=%d cpus=", c->cache_level,
			 (unsigned long long)c->cache_size, c->numa_node, c->package);
		fnv1a(&h, item);
		fnv1a(&h, cpulist_format(&c->cpus, list, sizeof(list)));
		for (unsigned k = 0; k < c->n_cores; k++) {
			fnv1a(&h, " core=");
			fnv1a(&h, cpulist_format(&c->cores[k].pus, list, sizeof(list)));
		}
	}
	snprintf(ret, PROBER_FINGERPRINT_SIZE, "%016llx", (unsigned long long)h);
}

static int cache_path(const char *state_dir, char *buf, size_t size) {
	int n = snprintf(buf, size, "%s/%s", state_dir, PROBER_CACHE_FILE);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int prober_cache_read(const char *state_dir, const char *fingerprint, json_object **ret_results,
		      uint64_t *ret_measured_usec, char **ret_source) {
	char path[PATH_MAX];
	json_object *o, *v, *results;
	struct probe_results *check = NULL;
	int r = cache_path(state_dir, path, sizeof(path));

	if (r < 0)
		return r;
	r = regfile_read_json(path, PROBER_CACHE_MAX, &o);
	if (r < 0)
		return r == -ENOENT ? r : -EBADMSG;
	if (!json_object_object_get_ex(o, "version", &v) || json_object_get_int(v) != PROBER_CACHE_VERSION ||
	    !json_object_object_get_ex(o, "fingerprint", &v) || !json_object_is_type(v, json_type_string) ||
	    !json_object_object_get_ex(o, "results", &results)) {
		json_object_put(o);
		return -EBADMSG;
	}
	if (strcmp(json_object_get_string(v), fingerprint) != 0) {
		json_object_put(o);
		return -ESTALE;
	}
	/* Only what a probe could have written is believed. */
	r = probe_results_from_json(results, &check);
	probe_results_free(check);
	if (r < 0) {
		json_object_put(o);
		return -EBADMSG;
	}
	*ret_measured_usec = json_object_object_get_ex(o, "measured_usec", &v) ? (uint64_t)json_object_get_int64(v) : 0;
	*ret_source = strdup(json_object_object_get_ex(o, "source", &v) && json_object_is_type(v, json_type_string)
				     ? json_object_get_string(v) : "calibration");
	*ret_results = json_object_get(results);
	json_object_put(o);
	return *ret_source ? 0 : -ENOMEM;
}

int prober_cache_write(const char *state_dir, const char *fingerprint, const char *topology, const char *source,
		       uint64_t measured_usec, json_object *results) {
	char path[PATH_MAX], *text;
	json_object *o;
	int r;

	if ((r = cache_path(state_dir, path, sizeof(path))) < 0)
		return r;
	if (mkdir(state_dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	o = json_object_new_object();
	json_object_object_add(o, "version", json_object_new_int(PROBER_CACHE_VERSION));
	json_object_object_add(o, "fingerprint", json_object_new_string(fingerprint));
	json_object_object_add(o, "topology", json_object_new_string(topology));
	json_object_object_add(o, "measured_usec", json_object_new_int64((int64_t)measured_usec));
	json_object_object_add(o, "source", json_object_new_string(source));
	json_object_object_add(o, "results", json_object_get(results));
	r = asprintf(&text, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	if (r < 0)
		return -ENOMEM;
	/* Replaced whole or not at all: a crash never leaves half a cache. */
	r = atomicfile_write(path, text, 0644, true);
	free(text);
	return r;
}

/* ---- the figures in use ------------------------------------------------------ */

static void drop_figures(struct prober *p) {
	probe_results_free(p->results);
	p->results = NULL;
	json_object_put(p->results_json);
	p->results_json = NULL;
	free(p->source);
	p->source = NULL;
	p->figures_fingerprint[0] = '\0';
}

/* Takes a reference to json. */
static int adopt(struct prober *p, json_object *json, const char *fingerprint, const char *source,
		 uint64_t measured_usec) {
	struct probe_results *res;
	char *s = strdup(source);
	int r = s ? probe_results_from_json(json, &res) : -ENOMEM;

	if (r < 0) {
		free(s);
		return r;
	}
	drop_figures(p);
	p->results = res;
	p->results_json = json_object_get(json);
	p->source = s;
	p->measured_usec = measured_usec;
	snprintf(p->figures_fingerprint, sizeof(p->figures_fingerprint), "%s", fingerprint);
	p->note[0] = '\0';
	return 0;
}

/* ---- workers ------------------------------------------------------------------ */

static int start_worker(struct prober *p, enum prober_kind kind, const struct probe_options *o);

static void on_worker_progress(void *userdata, json_object *progress) {
	struct prober *p = userdata;
	json_object *v, *params;

	if (json_object_object_get_ex(progress, "done", &v))
		p->done = (unsigned)json_object_get_int(v);
	if (json_object_object_get_ex(progress, "total", &v))
		p->total = (unsigned)json_object_get_int(v);
	if (!p->client)
		return;
	params = json_object_new_object();
	json_object_object_add(params, "progress", json_object_get(progress));
	control_reply(p->client, params, true);
	json_object_put(params);
}

static void start_calibration(struct prober *p) {
	struct probe_options o;
	int r;

	probe_options_init(&o, PROBE_QUICK);
	r = start_worker(p, PROBER_CALIBRATION, &o);
	if (r < 0) {
		snprintf(p->note, sizeof(p->note), "the calibration could not start: %s", strerror(-r));
		log_warning_errno(r, "Failed to start the probe calibration: %m");
	}
}

static void on_worker_done(void *userdata, int r, json_object *results) {
	struct prober *p = userdata;
	struct control_deferred *client = p->client;
	bool calibration = p->kind == PROBER_CALIBRATION;
	const char *source = calibration ? "calibration" : "probe";
	uint64_t now = util_usec(CLOCK_REALTIME);

	p->client = NULL;
	if (r >= 0 && strcmp(p->worker_fingerprint, p->fingerprint) == 0) {
		/* A client's probe measured the same machine, more thoroughly: its
		 * figures serve the policy as well as a calibration's. */
		r = adopt(p, results, p->worker_fingerprint, source, now);
		if (r >= 0) {
			int w = p->state_dir ? prober_cache_write(p->state_dir, p->fingerprint, p->topology->source, source,
								  now, results) : 0;
			if (w < 0)
				log_warning_errno(w, "Failed to cache the probe figures in %s: %m", p->state_dir);
			log_info("Probe figures from the %s of %s in use (fingerprint %s)", source,
				 p->topology->source, p->fingerprint);
		} else
			log_warning_errno(r, "The probe worker's results do not read back, ignoring them: %m");
	} else if (r >= 0)
		log_info("The topology changed while the probe ran: its figures are not used");
	else if (r != -ECANCELED) {
		snprintf(p->note, sizeof(p->note), "the %s failed: %s", source, strerror(-r));
		log_warning_errno(r, "The probe %s failed: %m", source);
	}

	if (client) {
		if (results) {
			json_object *params = json_object_new_object();
			json_object_object_add(params, "results", json_object_get(results));
			control_reply(client, params, false);
			json_object_put(params);
		} else
			control_fail(client, CCXD_ERROR_PROBE_FAILED, "the probe failed: %s", strerror(-r));
	}
	probeworker_free(p->worker);
	p->worker = NULL;
	if (p->calibration_wanted) {
		p->calibration_wanted = false;
		if (!p->results)
			start_calibration(p);
	}
}

static void on_client_gone(void *userdata) {
	struct prober *p = userdata;

	p->client = NULL;
	if (p->worker) {
		log_info("The client of probe worker %d went away: cancelling it", (int)probeworker_pid(p->worker));
		probeworker_cancel(p->worker);
	}
}

static const struct probeworker_ops worker_ops = {
	.progress = on_worker_progress,
	.done = on_worker_done,
};

static bool measurable(const struct prober *p) {
	return p->topology && cpulist_is_subset(&p->topology->online, &p->online);
}

static int start_worker(struct prober *p, enum prober_kind kind, const struct probe_options *o) {
	int r;

	if (p->worker)
		return -EBUSY;
	if (!measurable(p))
		return -ENXIO;
	r = probeworker_start(p->event, p->topology, o, &worker_ops, p, &p->worker);
	if (r < 0)
		return r;
	p->kind = kind;
	p->done = p->total = 0;
	memcpy(p->worker_fingerprint, p->fingerprint, sizeof(p->fingerprint));
	log_info("Probe %s started in worker %d", kind == PROBER_CALIBRATION ? "calibration" : "for a client",
		 (int)probeworker_pid(p->worker));
	return 0;
}

/* ---- the interface ---------------------------------------------------------------- */

int prober_new(sd_event *e, struct prober **ret) {
	struct prober *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->event = sd_event_ref(e);
	*ret = p;
	return 0;
}

void prober_free(struct prober *p) {
	if (!p)
		return;
	probeworker_free(p->worker);
	if (p->client)
		control_fail(p->client, CCXD_ERROR_PROBE_FAILED, "ccxd is shutting down");
	drop_figures(p);
	free(p->state_dir);
	sd_event_unref(p->event);
	free(p);
}

int prober_update(struct prober *p, const struct topology *t, const cpu_set_t *online, const char *state_dir,
		  bool calibrate) {
	char *dir = strdup(state_dir);
	json_object *cached = NULL;
	uint64_t measured = 0;
	char *source = NULL;
	int r;

	if (!dir)
		return -ENOMEM;
	free(p->state_dir);
	p->state_dir = dir;
	p->topology = t;
	p->online = *online;
	p->calibrate = calibrate;
	prober_fingerprint(t, p->fingerprint);
	if (p->results && strcmp(p->figures_fingerprint, p->fingerprint) == 0)
		return 0;
	/* Figures of another topology say nothing about this one. */
	drop_figures(p);
	if (!measurable(p)) {
		snprintf(p->note, sizeof(p->note), "topology %s has CPUs this machine lacks: nothing to measure",
			 t->source);
		return 0;
	}
	r = prober_cache_read(state_dir, p->fingerprint, &cached, &measured, &source);
	if (r >= 0) {
		r = adopt(p, cached, p->fingerprint, "cache", measured);
		json_object_put(cached);
		if (r >= 0) {
			log_info("Probe figures from %s/%s in use (the %s of fingerprint %s)", state_dir,
				 PROBER_CACHE_FILE, source, p->fingerprint);
			free(source);
			return 0;
		}
	}
	free(source);
	if (r != -ENOENT && r != -ESTALE)
		log_warning_errno(r, "Ignoring the probe cache in %s: %m", state_dir);
	if (!calibrate) {
		snprintf(p->note, sizeof(p->note), "calibrate = no and no cached figures for this topology");
		return 0;
	}
	if (p->worker)
		p->calibration_wanted = true;
	else
		start_calibration(p);
	return 0;
}

int prober_run(struct prober *p, const struct probe_options *o, struct control_call *call) {
	int r = start_worker(p, PROBER_CLIENT, o);

	if (r < 0)
		return r;
	p->client = control_call_defer(call, on_client_gone, p);
	if (!p->client) {
		probeworker_cancel(p->worker);
		return -ENOMEM;
	}
	return 0;
}

const struct probe_results *prober_results(const struct prober *p) {
	return p->results;
}

static json_object *figures_json(const struct prober *p, uint64_t now_usec) {
	json_object *o = json_object_new_object(), *rel = json_object_new_array(), *list, *v;

	json_object_object_add(o, "source", json_object_new_string(p->source));
	json_object_object_add(o, "fingerprint", json_object_new_string(p->figures_fingerprint));
	json_object_object_add(o, "date", json_object_new_string(p->results->date));
	json_object_object_add(o, "mode", json_object_new_string(p->results->mode == PROBE_FULL ? "full" : "quick"));
	json_object_object_add(o, "age_s", json_object_new_int64(p->measured_usec && now_usec > p->measured_usec
								 ? (int64_t)((now_usec - p->measured_usec) / 1000000) : 0));
	/* The relations as measured: what decisions cite. */
	if (json_object_object_get_ex(p->results_json, "relations", &list))
		for (size_t i = 0; i < json_object_array_length(list); i++) {
			json_object *x = json_object_array_get_idx(list, i), *y = json_object_new_object();
			static const char *const keys[] = { "relation", "cpus", "pipe_gib_s", "pipe_gib_s_min",
							    "pipe_gib_s_max", "latency_ns" };
			for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
				if (json_object_object_get_ex(x, keys[k], &v))
					json_object_object_add(y, keys[k], json_object_get(v));
			json_object_array_add(rel, y);
		}
	json_object_object_add(o, "relations", rel);
	return o;
}

json_object *prober_status_json(const struct prober *p, uint64_t now_usec) {
	json_object *o = json_object_new_object();

	json_object_object_add(o, "state", json_object_new_string(!p->worker ? "idle" :
		p->kind == PROBER_CALIBRATION ? "calibrating" : "probing"));
	json_object_object_add(o, "worker_pid", p->worker ? json_object_new_int(probeworker_pid(p->worker)) : NULL);
	json_object_object_add(o, "done", p->worker ? json_object_new_int((int)p->done) : NULL);
	json_object_object_add(o, "total", p->worker ? json_object_new_int((int)p->total) : NULL);
	json_object_object_add(o, "fingerprint", json_object_new_string(p->fingerprint));
	json_object_object_add(o, "calibrate", json_object_new_boolean(p->calibrate));
	json_object_object_add(o, "note", p->note[0] ? json_object_new_string(p->note) : NULL);
	json_object_object_add(o, "figures", p->results ? figures_json(p, now_usec) : NULL);
	return o;
}
