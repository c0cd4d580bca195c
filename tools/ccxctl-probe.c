/* ccxctl probe: what placement costs on this machine (probe/probe.h), as the
 * tables of docs/reference-figures.md, as JSON, or as an SVG heatmap of
 * the CPU x CPU latency matrix.
 *
 * Everything printed is rendered from the probe's JSON, whether the probe
 * ran in ccxd (the default: a worker of the daemon, progress streamed over
 * Varlink), here (--local) or was saved earlier (--input): one renderer,
 * whatever the source. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "ccxctl-json.h"
#include "ccxctl-print.h"
#include "ccxctl-svg.h"
#include "ccxctl.h"
#include "cpulist.h"
#include "probe.h"
#include "protocol.h"
#include "topology.h"

struct cmd_probe_args {
	bool local, plan, quick, matrix, json;
	const char *topology, *svg, *input;
	unsigned threads;
};

static void cmd_probe_usage(FILE *f) {
	fprintf(f, "Usage: ccxctl probe [--quick] [--matrix] [--svg FILE] [--json] [--threads N]\n"
		   "       ccxctl probe --local [--quick] [--matrix] [--svg FILE] [--json] [--topology SPEC] [--threads N]\n"
		   "       ccxctl probe --plan [--topology SPEC] [--threads N] [--json]\n"
		   "       ccxctl probe --input FILE [--svg FILE] [--json]\n\n"
		   "Measures pipe throughput and cache-line latency between CPU pairs of each relation\n"
		   "(same CPU, SMT siblings, same CCX, other CCX, other NUMA node, other package) and a\n"
		   "multi-threaded lossless codec under CPU masks derived from the topology.\n\n"
		   "Without --local, ccxd runs it in a worker process (root only) and ccxctl shows its progress.\n\n"
		   "  -l, --local          run the probe here, in ccxctl, without ccxd\n"
		   "  -p, --plan           print the CPU pairs and codec masks, measure nothing\n"
		   "  -q, --quick          relations only, few repeats (a calibration of a second or two)\n"
		   "  -m, --matrix         also the latency between every two CPUs\n"
		   "      --svg FILE       write the latency matrix as an SVG heatmap (implies --matrix)\n"
		   "  -j, --json           print JSON\n"
		   "  -t, --topology SPEC  system (default), xml:PATH or synthetic:STRING; --local needs\n"
		   "                       one whose CPUs this machine has\n"
		   "      --threads N      codec worker threads (default 4); the mask shapes scale with N\n"
		   "  -i, --input FILE     print a probe saved with --json instead of measuring\n");
}

/* Returns -1 to go on, or the exit status. */
static int cmd_probe_parse_args(int argc, char **argv, struct cmd_probe_args *a) {
	static const struct option long_options[] = {
		{ "local", no_argument, NULL, 'l' },
		{ "plan", no_argument, NULL, 'p' },
		{ "quick", no_argument, NULL, 'q' },
		{ "matrix", no_argument, NULL, 'm' },
		{ "svg", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "topology", required_argument, NULL, 't' },
		{ "threads", required_argument, NULL, 'T' },
		{ "input", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int opt;

	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "lpqmjt:i:h", long_options, NULL)) >= 0) {
		char *end;
		unsigned long n;

		switch (opt) {
		case 'l': a->local = true; break;
		case 'p': a->plan = true; break;
		case 'q': a->quick = true; break;
		case 'm': a->matrix = true; break;
		case 'S': a->svg = optarg; break;
		case 'j': a->json = true; break;
		case 't': a->topology = optarg; break;
		case 'i': a->input = optarg; break;
		case 'T':
			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || n < 1 || n > CPU_SETSIZE) {
				fprintf(stderr, "ccxctl probe: invalid thread count '%s' (1-%d)\n", optarg, CPU_SETSIZE);
				return 2;
			}
			a->threads = (unsigned)n;
			break;
		case 'h':
			cmd_probe_usage(stdout);
			return 0;
		default:
			fprintf(stderr, "ccxctl probe: invalid option '%s'\n", argv[optind - 1]);
			cmd_probe_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ccxctl probe: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if ((a->plan + a->local + (a->input != NULL)) > 1) {
		fprintf(stderr, "ccxctl probe: --plan, --local and --input exclude each other\n");
		return 2;
	}
	return -1;
}

/* ---- reading the JSON -------------------------------------------------- */

/* "12.3" with the given decimals, or "-" */
static const char *jfmt(json_object *o, const char *key, int decimals, char *buf, size_t size) {
	double v;

	if (!jnum(o, key, &v))
		return "-";
	snprintf(buf, size, "%.*f", decimals, v);
	return buf;
}

/* "11.9-12.4": the spread of key over the repeats */
static const char *jspread(json_object *o, const char *key, int decimals, char *buf, size_t size) {
	char k[64];
	double lo, hi;

	snprintf(k, sizeof(k), "%s_min", key);
	if (!jnum(o, k, &lo))
		return "-";
	snprintf(k, sizeof(k), "%s_max", key);
	if (!jnum(o, k, &hi))
		return "-";
	snprintf(buf, size, "%.*f-%.*f", decimals, lo, decimals, hi);
	return buf;
}

/* ---- tables ------------------------------------------------------------ */

static void cmd_probe_print_absent(const char *what, json_object *list, const char *key,
			       const char *(*label)(const char *name)) {
	if (jlen(list) == 0)
		return;
	printf("%s", what);
	for (size_t i = 0; i < jlen(list); i++) {
		json_object *x = json_object_array_get_idx(list, i);
		printf("%s%s (%s)", i ? "; " : " ", label(jstr(x, key)), jshow(x, "reason"));
	}
	printf("\n");
}

static const char *relation_label(const char *name) {
	int r = probe_relation_from_name(name);

	return r >= 0 ? probe_relation_label(r) : name;
}

static const char *pattern_label(const char *name) {
	return name;
}

static void cmd_probe_print_relations(json_object *j) {
	json_object *rel = jget(j, "relations");
	struct table t = { .n_columns = 9 };
	char repeats[16] = "?";

	if (jlen(rel) > 0)
		snprintf(repeats, sizeof(repeats), "%s", jshow(json_object_array_get_idx(rel, 0), "repeats"));
	printf("Pipe throughput (writer and reader pinned) and cache-line latency (one way), median of %s:\n\n",
	       repeats);
	table_add(&t, "RELATION", "CPUS", "PIPE GiB/s", "SPREAD", "SMALL WRITES MiB/s", "LATENCY ns", "SPREAD",
		  "PIPE/BEST", "LATENCY/BEST");
	for (size_t i = 0; i < jlen(rel); i++) {
		json_object *x = json_object_array_get_idx(rel, i), *cpus = jget(x, "cpus");
		char c[32], b[7][32];
		snprintf(c, sizeof(c), "%d,%d", json_object_get_int(json_object_array_get_idx(cpus, 0)),
			 json_object_get_int(json_object_array_get_idx(cpus, 1)));
		table_add(&t, relation_label(jstr(x, "relation")), c, jfmt(x, "pipe_gib_s", 2, b[0], 32),
			  jspread(x, "pipe_gib_s", 2, b[1], 32), jfmt(x, "pipe_small_mib_s", 0, b[2], 32),
			  jfmt(x, "latency_ns", 1, b[3], 32), jspread(x, "latency_ns", 1, b[4], 32),
			  jfmt(x, "pipe_ratio", 2, b[5], 32), jfmt(x, "latency_ratio", 2, b[6], 32));
	}
	table_print_free(stdout, &t);
	cmd_probe_print_absent("Not on this machine:", jget(j, "relations_absent"), "relation", relation_label);
}

static void cmd_probe_print_codec(json_object *j) {
	json_object *codec = jget(j, "codec");
	struct table t = { .n_columns = 9 };
	double ratio = 0;

	jnum(j, "codec_compression", &ratio);
	printf("\nLossless codec, 1280x720 YUY2, %s threads (compressed to %.1f%%), frames per second, median:\n\n",
	       jshow(j, "threads"), ratio * 100);
	table_add(&t, "PATTERN", "MASK", "CPUS", "ENCODE fps", "SPREAD", "DECODE fps", "SPREAD", "ENCODE/BEST",
		  "DECODE/BEST");
	for (size_t i = 0; i < jlen(codec); i++) {
		json_object *x = json_object_array_get_idx(codec, i);
		char b[6][32], error[128];
		if (jstr(x, "error")) {
			snprintf(error, sizeof(error), "not run: %s", jshow(x, "error"));
			table_add(&t, jstr(x, "pattern"), jstr(x, "mask"), jstr(x, "cpus"), error, "", "", "", "", "");
			continue;
		}
		table_add(&t, jstr(x, "pattern"), jstr(x, "mask"), jstr(x, "cpus"), jfmt(x, "encode_fps", 1, b[0], 32),
			  jspread(x, "encode_fps", 1, b[1], 32), jfmt(x, "decode_fps", 1, b[2], 32),
			  jspread(x, "decode_fps", 1, b[3], 32), jfmt(x, "encode_ratio", 2, b[4], 32),
			  jfmt(x, "decode_ratio", 2, b[5], 32));
	}
	table_print_free(stdout, &t);
	cmd_probe_print_absent("Not on this machine:", jget(j, "codec_absent"), "pattern", pattern_label);
}

/* Small matrices as text; larger ones only in JSON and SVG. */
#define CMD_PROBE_MATRIX_TEXT_MAX 16

static void cmd_probe_print_matrix(json_object *m) {
	json_object *cpus = jget(m, "cpus"), *rows = jget(m, "latency_ns");
	size_t n = jlen(cpus);

	printf("\nLatency matrix, ns (one way):\n\n");
	if (n > CMD_PROBE_MATRIX_TEXT_MAX) {
		printf("%zu x %zu CPUs: see --json or --svg\n", n, n);
		return;
	}
	printf("%5s", "CPU");
	for (size_t k = 0; k < n; k++)
		printf(" %7d", json_object_get_int(json_object_array_get_idx(cpus, k)));
	printf("\n");
	for (size_t i = 0; i < n; i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		printf("%5d", json_object_get_int(json_object_array_get_idx(cpus, i)));
		for (size_t k = 0; k < n; k++) {
			json_object *v = json_object_array_get_idx(row, k);
			if (v)
				printf(" %7.1f", json_object_get_double(v));
			else
				printf(" %7s", "-");
		}
		printf("\n");
	}
}

static void cmd_probe_print_results(json_object *j) {
	double duration = 0;

	jnum(j, "duration_s", &duration);
	printf("Probe of %s, %s, %s run, %.1f s\n\n", jshow(j, "topology"), jshow(j, "date"), jshow(j, "mode"), duration);
	cmd_probe_print_relations(j);
	if (strcmp(jstr(j, "mode") ? jstr(j, "mode") : "", "full") == 0)
		cmd_probe_print_codec(j);
	if (jget(j, "matrix"))
		cmd_probe_print_matrix(jget(j, "matrix"));
}

static void cmd_probe_print_plan(json_object *j) {
	json_object *rel = jget(j, "relations"), *codec = jget(j, "codec");
	struct table r = { .n_columns = 3 }, c = { .n_columns = 4 };

	printf("Plan for %s, codec with %s threads\n\n", jshow(j, "topology"), jshow(j, "threads"));
	table_add(&r, "RELATION", "CPUS", "NOTE");
	for (size_t i = 0; i < jlen(rel); i++) {
		json_object *x = json_object_array_get_idx(rel, i), *cpus = jget(x, "cpus");
		char pair[32] = "-";
		if (cpus)
			snprintf(pair, sizeof(pair), "%d,%d", json_object_get_int(json_object_array_get_idx(cpus, 0)),
				 json_object_get_int(json_object_array_get_idx(cpus, 1)));
		table_add(&r, jstr(x, "label"), pair, jstr(x, "absent") ? jstr(x, "absent") : "");
	}
	table_print_free(stdout, &r);
	printf("\n");
	table_add(&c, "PATTERN", "MASK", "CPUS", "SHAPE");
	for (size_t i = 0; i < jlen(codec); i++) {
		json_object *x = json_object_array_get_idx(codec, i);
		char absent[128];
		if (jstr(x, "absent")) {
			snprintf(absent, sizeof(absent), "absent: %s", jstr(x, "absent"));
			table_add(&c, jstr(x, "pattern"), "-", "-", absent);
		} else {
			table_add(&c, jstr(x, "pattern"), jstr(x, "mask"), jstr(x, "cpus"), jstr(x, "label"));
		}
	}
	table_print_free(stdout, &c);
}

/* ---- progress ---------------------------------------------------------- */

struct progress_view {
	bool tty;
	unsigned columns;
	unsigned last_percent;
	double last_draw;
	char phase[32];
};

static double cmd_probe_clock(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A bar redrawn in place on a terminal; otherwise plain lines, one a step
 * (every tenth for the matrix, which has a step per CPU pair). */
static int cmd_probe_show_progress(const struct probe_progress *p, void *userdata) {
	struct progress_view *v = userdata;
	unsigned percent = p->total ? p->done * 100 / p->total : 100;
	bool new_phase = strcmp(v->phase, p->phase) != 0;
	double now = cmd_probe_clock();

	snprintf(v->phase, sizeof(v->phase), "%s", p->phase);
	if (!v->tty) {
		bool matrix = strcmp(p->phase, "matrix") == 0;
		if (p->done == p->total)
			fprintf(stderr, "probe: [%u/%u] done\n", p->done, p->total);
		else if (!matrix || new_phase || percent / 10 != v->last_percent / 10)
			fprintf(stderr, "probe: [%u/%u] %s: %s\n", p->done + 1, p->total, p->phase, p->step);
		v->last_percent = percent;
		return 0;
	}
	if (p->done == p->total) {
		fprintf(stderr, "\r\033[K");
		return 0;
	}
	if (!new_phase && percent == v->last_percent && now - v->last_draw < 0.1)
		return 0;
	{
		char line[512];
		int filled = (int)(percent * 30 / 100), n;
		n = snprintf(line, sizeof(line), "[%.*s%.*s] %3u%% %s: %s", filled,
			     "##############################", 30 - filled, "..............................", percent,
			     p->phase, p->step);
		if (n > 0 && v->columns > 1 && (unsigned)n >= v->columns)
			line[v->columns - 1] = '\0';
		fprintf(stderr, "\r%s\033[K", line);
	}
	v->last_percent = percent;
	v->last_draw = now;
	return 0;
}

/* ---- the command ------------------------------------------------------- */

static struct topology *cmd_probe_load_topology(const char *spec) {
	struct topology *t = NULL;
	char *error = NULL;
	int r = topology_load(spec, &t, &error);

	if (r < 0)
		fprintf(stderr, "ccxctl probe: %s\n", error ? error : strerror(-r));
	free(error);
	return t;
}

/* A topology other than the system's is fine to measure with only if its
 * CPUs are this machine's (a synthetic split of it, say): else the pairs it
 * names would be labelled with relations they do not have here. */
static bool cmd_probe_topology_is_here(const struct topology *t) {
	struct topology *sys;
	bool here;
	char a[CPULIST_MAX], b[CPULIST_MAX];

	if (strcmp(t->source, "system") == 0)
		return true;
	sys = cmd_probe_load_topology("system");
	if (!sys)
		return false;
	here = cpulist_is_subset(&t->online, &sys->online);
	if (!here)
		fprintf(stderr, "ccxctl probe: topology %s has CPUs %s, this machine %s: it cannot be measured here "
				"(--plan shows its pairs and masks)\n", t->source,
			cpulist_format(&t->online, a, sizeof(a)), cpulist_format(&sys->online, b, sizeof(b)));
	topology_free(sys);
	return here;
}

static int cmd_probe_plan(const struct cmd_probe_args *a) {
	struct topology *t = cmd_probe_load_topology(a->topology ? a->topology : "system");
	struct probe_plan plan;
	json_object *j;
	int r;

	if (!t)
		return 1;
	r = probe_plan(t, a->threads, NULL, &plan);
	if (r < 0) {
		fprintf(stderr, "ccxctl probe: cannot plan: %s\n", strerror(-r));
		topology_free(t);
		return 1;
	}
	j = probe_plan_json(t, &plan);
	if (a->json)
		print_json(j);
	else
		cmd_probe_print_plan(j);
	json_object_put(j);
	topology_free(t);
	return 0;
}

static int cmd_probe_output(const struct cmd_probe_args *a, json_object *j) {
	if (a->json) {
		print_json(j);
	} else {
		text_escape_json(j);
		cmd_probe_print_results(j);
	}
	if (a->svg && svg_write_heatmap(a->svg, j) < 0)
		return 1;
	return 0;
}

static int cmd_probe_input(const struct cmd_probe_args *a) {
	json_object *j = json_object_from_file(a->input);
	struct probe_results *check = NULL;
	int r;

	if (!j) {
		fprintf(stderr, "ccxctl probe: cannot read %s: %s\n", a->input, json_util_get_last_err());
		return 1;
	}
	/* only what the probe could have written is printed */
	r = probe_results_from_json(j, &check);
	if (r < 0) {
		fprintf(stderr, "ccxctl probe: %s is not a probe's JSON: %s\n", a->input, strerror(-r));
		json_object_put(j);
		return 1;
	}
	probe_results_free(check);
	r = cmd_probe_output(a, j);
	json_object_put(j);
	return r;
}

static int cmd_probe_local(const struct cmd_probe_args *a) {
	struct progress_view view = { .tty = isatty(STDERR_FILENO) };
	struct topology *t = cmd_probe_load_topology(a->topology ? a->topology : "system");
	struct probe_results *res = NULL;
	struct probe_options o;
	struct winsize ws;
	json_object *j;
	int r;

	if (!t)
		return 1;
	if (!cmd_probe_topology_is_here(t)) {
		topology_free(t);
		return 1;
	}
	if (view.tty && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0)
		view.columns = ws.ws_col;
	probe_options_init(&o, a->quick ? PROBE_QUICK : PROBE_FULL);
	o.matrix = a->matrix;
	o.threads = a->threads;
	o.progress = cmd_probe_show_progress;
	o.userdata = &view;
	r = probe_run(t, &o, &res);
	topology_free(t);
	if (r == -EBADMSG) {
		fprintf(stderr, "ccxctl probe: the codec decoded something other than its input: no figures\n");
		return 1;
	}
	if (r == -ENXIO) {
		fprintf(stderr, "ccxctl probe: none of the topology's CPUs may be used by this process\n");
		return 1;
	}
	if (r < 0) {
		fprintf(stderr, "ccxctl probe: %s\n", strerror(-r));
		return 1;
	}
	j = probe_results_json(res);
	probe_results_free(res);
	r = cmd_probe_output(a, j);
	json_object_put(j);
	return r;
}

/* Longest wait for any one reply of ccxd: a codec step of the full probe
 * takes seconds; a daemon that says nothing for this long is stuck. */
#define CMD_PROBE_REPLY_TIMEOUT_MS (120 * 1000)

static int cmd_probe_on_progress(json_object *params, void *userdata) {
	json_object *p = jget(params, "progress");
	double done = 0, total = 0;
	struct probe_progress pr;

	if (!p)
		return 0;
	text_escape_json(p);
	jnum(p, "done", &done);
	jnum(p, "total", &total);
	pr = (struct probe_progress){ .phase = jstr(p, "phase") ? jstr(p, "phase") : "?",
				      .step = jstr(p, "step") ? jstr(p, "step") : "",
				      .done = (unsigned)done, .total = (unsigned)total };
	return cmd_probe_show_progress(&pr, userdata);
}

static int cmd_probe_daemon(const struct options *opts, const struct cmd_probe_args *a) {
	struct progress_view view = { .tty = isatty(STDERR_FILENO) };
	json_object *params = json_object_new_object(), *reply = NULL, *results;
	char *error = NULL;
	struct winsize ws;
	int r;

	if (view.tty && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0)
		view.columns = ws.ws_col;
	json_object_object_add(params, "quick", json_object_new_boolean(a->quick));
	json_object_object_add(params, "matrix", json_object_new_boolean(a->matrix));
	json_object_object_add(params, "threads", json_object_new_int((int)a->threads));
	r = protocol_call_more(opts->socket, CCXD_METHOD_PROBE, params, CMD_PROBE_REPLY_TIMEOUT_MS,
			       cmd_probe_on_progress, &view, &reply, &error);
	json_object_put(params);
	if (view.tty)
		fprintf(stderr, "\r\033[K");
	if (r == -ENOENT || r == -ECONNREFUSED) {
		fprintf(stderr, "ccxctl probe: ccxd is not running (no answer on %s); --local runs the probe here\n",
			opts->socket);
		return EXIT_NOT_RUNNING;
	}
	if (r < 0) {
		fprintf(stderr, "ccxctl probe: talking to ccxd on %s failed: %s\n", opts->socket, strerror(-r));
		return 1;
	}
	if (error) {
		print_error(stderr, "ccxctl probe", reply, error);
		free(error);
		json_object_put(reply);
		return 1;
	}
	results = jget(reply, "results");
	r = results ? cmd_probe_output(a, results) : 1;
	if (!results)
		fprintf(stderr, "ccxctl probe: ccxd answered without results\n");
	json_object_put(reply);
	return r;
}

int cmd_probe(const struct options *o, int argc, char **argv) {
	struct cmd_probe_args a = { .json = o->json, .topology = o->topology, .threads = 4 };
	int r = cmd_probe_parse_args(argc, argv, &a);

	if (r >= 0)
		return r;
	if (a.svg)
		a.matrix = true;
	if (a.plan)
		return cmd_probe_plan(&a);
	if (a.input)
		return cmd_probe_input(&a);
	if (!a.local) {
		/* ccxd measures its own topology: another one is for --plan and --local. */
		if (a.topology) {
			fprintf(stderr, "ccxctl probe: --topology needs --local or --plan (ccxd probes its own)\n");
			return 2;
		}
		return cmd_probe_daemon(o, &a);
	}
	return cmd_probe_local(&a);
}
