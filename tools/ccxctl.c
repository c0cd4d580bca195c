/* ccxctl: asks ccxd over its control socket; tables for people, JSON for programs. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ccxctl-print.h"
#include "ccxctl.h"
#include "cpulist.h"
#include "protocol.h"
#include "topology.h"

#define CALL_TIMEOUT_MS (30 * 1000)


struct command {
	const char *name;
	const char *args;
	const char *help;
	int min_args, max_args;   /* OWN_OPTIONS: parses argv itself, from its own name on */
	int (*run)(const struct options *o, int argc, char **argv);
};

#define OWN_OPTIONS (-1)

/* ---- talking to the daemon -------------------------------------------- */

/* The exit status of the last call that failed. */
static int call_failed = EXIT_FAILURE;

/* Why nothing answered on path (r, from connect() or what follows), and
 * what to do about it, in one line. Returns the exit status. */
static int say_no_answer(const char *path, int r) {
	struct stat st;

	if (r == -ENOENT) {
		fprintf(stderr, "ccxctl: ccxd is not running: no socket %s (start it: systemctl start ccxd.socket; "
				"or name another with --socket)\n", path);
		return EXIT_NOT_RUNNING;
	}
	if (r == -ECONNREFUSED && stat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		fprintf(stderr, "ccxctl: %s is not a socket (--socket names ccxd's)\n", path);
		return EXIT_FAILURE;
	}
	if (r == -ECONNREFUSED) {
		fprintf(stderr, "ccxctl: ccxd is not running: nothing listens on %s (start it: systemctl start ccxd)\n",
			path);
		return EXIT_NOT_RUNNING;
	}
	if (r == -EACCES || r == -EPERM) {
		fprintf(stderr, "ccxctl: permission denied on %s: ccxd answers root and the members of group ccxd "
				"(usermod -aG ccxd USER, then log in again)\n", path);
		return EXIT_FAILURE;
	}
	fprintf(stderr, "ccxctl: talking to ccxd on %s failed: %s\n", path, strerror(-r));
	return EXIT_FAILURE;
}

json_object *ctl_call(const struct options *o, const char *method, json_object *params, bool quiet) {
	json_object *reply = NULL;
	char *error = NULL;
	int r = protocol_call(o->socket, method, params, CALL_TIMEOUT_MS, &reply, &error);

	json_object_put(params);
	call_failed = EXIT_FAILURE;
	if (r < 0) {
		call_failed = quiet ? EXIT_FAILURE : say_no_answer(o->socket, r);
		return NULL;
	}
	if (error) {
		if (!quiet)
			print_error(stderr, "ccxctl", reply, error);
		free(error);
		json_object_put(reply);
		return NULL;
	}
	return reply;
}

int ctl_failed(void) {
	return call_failed;
}

static json_object *call(const struct options *o, const char *method, json_object *params) {
	return ctl_call(o, method, params, false);
}

/* --json: pretty, or with --json=short one line, for a program to read. */
static int json_style = JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED;

void print_json(json_object *o) {
	printf("%s\n", json_object_to_json_string_ext(o, json_style | JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* ---- commands ---------------------------------------------------------- */

static int parse_number(const char *what, const char *s, long long max, long long *ret) {
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max) {
		fprintf(stderr, "ccxctl: invalid %s '%s'\n", what, s);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

/* What every command does with the daemon's reply r (NULL: the call failed,
 * and said why): its JSON with --json, else view's words. Frees r. */
static int show(const struct options *o, json_object *r, void (*view)(FILE *f, json_object *r)) {
	if (!r)
		return call_failed;
	if (o->json)
		print_json(r);
	else
		view(stdout, r);
	json_object_put(r);
	return 0;
}

/* status --watch: the status again every interval, until interrupted; on
 * a terminal in place of the last, elsewhere one after another, each
 * after a line with its time (with --json, the objects alone, one after
 * another, for a program to read). */
static int watch_status(const struct options *o) {
	bool terminal = isatty(STDOUT_FILENO);

	for (;;) {
		json_object *r = call(o, CCXD_METHOD_GET_STATUS, NULL);
		char when[64];
		time_t now = time(NULL);
		int e;

		if (!r)
			return call_failed;
		strftime(when, sizeof(when), "%F %T", localtime(&now));
		if (terminal && !o->json)
			printf("\033[H\033[2J");   /* home, then clear the screen */
		if (!o->json)
			printf("%s%s (every %.3g s; Ctrl-C ends)\n", terminal ? "" : "\n", when, o->watch_ms / 1000.0);
		if ((e = show(o, r, print_status)) != 0)
			return e;
		if (fflush(stdout) == EOF)
			return EXIT_FAILURE;   /* the reader went away */
		nanosleep(&(struct timespec){ o->watch_ms / 1000, (long)(o->watch_ms % 1000) * 1000000 }, NULL);
	}
}

static int cmd_status(const struct options *o, int argc, char **argv) {
	(void)argc;
	(void)argv;
	if (o->watch_ms)
		return watch_status(o);
	return show(o, call(o, CCXD_METHOD_GET_STATUS, NULL), print_status);
}

static int cmd_learned(const struct options *o, int argc, char **argv) {
	(void)argc;
	(void)argv;
	return show(o, call(o, CCXD_METHOD_GET_LEARNED, NULL), print_learned);
}

static void print_forgotten(FILE *f, json_object *r) {
	json_object *programs;

	text_escape_json(r);
	if (json_object_object_get_ex(r, "programs", &programs))
		fprintf(f, "forgot %s\n", json_object_get_string(programs));
}

static int cmd_forget(const struct options *o, int argc, char **argv) {
	json_object *params = json_object_new_object();

	(void)argc;
	json_object_object_add(params, "programs", json_object_new_string(argv[0]));
	return show(o, call(o, CCXD_METHOD_FORGET, params), print_forgotten);
}

/* The entry of status's list key whose pid (or one of whose pids) is pid;
 * NULL when none. */
static json_object *entry_of(json_object *status, const char *key, const char *pids, int pid) {
	json_object *list, *v;

	if (!json_object_object_get_ex(status, key, &list) || !json_object_is_type(list, json_type_array))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		json_object *x = json_object_array_get_idx(list, i);
		if (!json_object_object_get_ex(x, pids, &v))
			continue;
		if (json_object_is_type(v, json_type_int) && json_object_get_int(v) == pid)
			return x;
		for (size_t k = 0; json_object_is_type(v, json_type_array) && k < json_object_array_length(v); k++)
			if (json_object_get_int(json_object_array_get_idx(v, k)) == pid)
				return x;
	}
	return NULL;
}

/* ccxctl explain PID: the rules' verdicts (io.ccxd.Explain), with what
 * status holds of the process: its placement, its group, or why it is in
 * none. */
static int cmd_explain(const struct options *o, int argc, char **argv) {
	json_object *params = json_object_new_object(), *e, *status;
	long long pid;

	(void)argc;
	if (parse_number("PID", argv[0], INT_MAX, &pid) < 0) {
		json_object_put(params);
		return EXIT_USAGE;
	}
	json_object_object_add(params, "pid", json_object_new_int64(pid));
	if (!(e = call(o, CCXD_METHOD_EXPLAIN, params)))
		return call_failed;
	if (!(status = call(o, CCXD_METHOD_GET_STATUS, NULL))) {
		json_object_put(e);
		return call_failed;
	}
	json_object_object_add(e, "placement", json_object_get(entry_of(status, "processes", "pid", (int)pid)));
	json_object_object_add(e, "group", json_object_get(entry_of(status, "groups", "pids", (int)pid)));
	json_object_object_add(e, "alone", json_object_get(entry_of(status, "cut", "pid", (int)pid)));
	json_object_object_add(e, "automatic", json_object_get(json_object_object_get(status, "automatic")));
	json_object_object_add(e, "sampling", json_object_new_boolean(json_object_object_get(status, "groups") != NULL));
	json_object_put(status);
	return show(o, e, print_explained);
}

static int cmd_recommend(const struct options *o, int argc, char **argv) {
	json_object *status = call(o, CCXD_METHOD_GET_STATUS, NULL);
	json_object *rules;

	(void)argc;
	(void)argv;
	if (!status)
		return call_failed;
	rules = recommend_rules(status);
	json_object_put(status);
	return show(o, rules, print_recommended);
}

static json_object *local_topology(const char *spec) {
	struct topology *t;
	char *error = NULL;
	json_object *o;
	int r = topology_load(spec, &t, &error);

	if (r < 0) {
		fprintf(stderr, "ccxctl: topology %s: %s\n", spec, error ? error : strerror(-r));
		free(error);
		return NULL;
	}
	o = protocol_topology_json(t);
	topology_free(t);
	return o;
}

json_object *ctl_topology(const struct options *o) {
	if (o->topology) {
		json_object *t = local_topology(o->topology);
		call_failed = EXIT_FAILURE;
		return t;
	}
	return call(o, CCXD_METHOD_GET_TOPOLOGY, NULL);
}

static int cmd_topology(const struct options *o, int argc, char **argv) {
	(void)argc;
	(void)argv;
	return show(o, ctl_topology(o), print_topology);
}

static int cmd_rules(const struct options *o, int argc, char **argv) {
	(void)argc;
	(void)argv;
	return show(o, call(o, CCXD_METHOD_GET_RULES, NULL), print_rules);
}

static void print_pinned(FILE *f, json_object *r) {
	print_placed(f, r, "pinned");
}

static void print_unpinned(FILE *f, json_object *r) {
	print_placed(f, r, "unpinned");
}

static int cmd_pin(const struct options *o, int argc, char **argv) {
	long long pid, ccx;
	json_object *params;

	(void)argc;
	if (parse_number("PID", argv[0], INT_MAX, &pid) < 0 || parse_number("CCX", argv[1], CPU_SETSIZE - 1, &ccx) < 0)
		return EXIT_USAGE;
	params = json_object_new_object();
	json_object_object_add(params, "pid", json_object_new_int64(pid));
	json_object_object_add(params, "ccx", json_object_new_int64(ccx));
	return show(o, call(o, CCXD_METHOD_PIN, params), print_pinned);
}

static int cmd_unpin(const struct options *o, int argc, char **argv) {
	long long pid;
	json_object *params;

	(void)argc;
	if (parse_number("PID", argv[0], INT_MAX, &pid) < 0)
		return EXIT_USAGE;
	params = json_object_new_object();
	json_object_object_add(params, "pid", json_object_new_int64(pid));
	return show(o, call(o, CCXD_METHOD_UNPIN, params), print_unpinned);
}

static int cmd_reload(const struct options *o, int argc, char **argv) {
	(void)argc;
	(void)argv;
	return show(o, call(o, CCXD_METHOD_RELOAD, NULL), print_reloaded);
}

/* Prometheus text as it is, so that it can be piped or scraped: its labels
 * name states, relations and groups, whose programs' names ccxd writes in
 * printable ASCII. */
static void print_metrics(FILE *f, json_object *r) {
	json_object *text;

	if (json_object_object_get_ex(r, "text", &text) && json_object_is_type(text, json_type_string))
		fputs(json_object_get_string(text), f);
}

static int cmd_metrics(const struct options *o, int argc, char **argv) {
	(void)argc;
	(void)argv;
	return show(o, call(o, CCXD_METHOD_GET_METRICS, NULL), print_metrics);
}

static int cmd_version(const struct options *o, int argc, char **argv) {
	json_object *r = call(o, CCXD_METHOD_GET_VERSION, NULL);

	(void)argc;
	(void)argv;
	if (o->json) {
		json_object *out = json_object_new_object();
		json_object_object_add(out, "ccxctl", json_object_new_string(CCXD_VERSION));
		json_object_object_add(out, "ccxd", r ? json_object_get(r) : NULL);
		print_json(out);
		json_object_put(out);
	} else {
		printf("ccxctl %s\n", CCXD_VERSION);
		if (r)
			print_version(stdout, r);
	}
	json_object_put(r);
	return r ? 0 : call_failed;
}

static int cmd_help(const struct options *o, int argc, char **argv);

static const struct command commands[] = {
	{ "status",   "",        "what ccxd placed, why, and what it gained (--watch)", 0, 0, cmd_status },
	{ "topology", "",        "the CCXs of the machine (--topology SPEC: any topology, no daemon)", 0, 0, cmd_topology },
	{ "rules",    "",        "the rules in force",                      0, 0, cmd_rules },
	{ "pin",      "PID CCX", "pin a process to a CCX by hand (root)",   2, 2, cmd_pin },
	{ "unpin",    "PID",     "restore a process's original affinity (root)", 1, 1, cmd_unpin },
	{ "reload",   "",        "read the configuration again (root)",     0, 0, cmd_reload },
	{ "explain",  "PID",     "why a process is placed as it is, or not", 1, 1, cmd_explain },
	{ "learned",  "",        "what won for each set of programs", 0, 0, cmd_learned },
	{ "forget",   "PROGRAMS", "forget what was learned for PROGRAMS (root)", 1, 1, cmd_forget },
	{ "recommend", "",       "the kept groups as rules for a drop-in",  0, 0, cmd_recommend },
	{ "run",      "[OPTIONS] CMD...", "start a command on one CCX (--ccx N)", OWN_OPTIONS, OWN_OPTIONS, cmd_run },
	{ "metrics",  "",        "counters in Prometheus text format",      0, 0, cmd_metrics },
	{ "version",  "",        "versions of ccxctl and ccxd",             0, 0, cmd_version },
	{ "probe",    "[OPTIONS]", "measure what placement costs (--local; --help)", OWN_OPTIONS, OWN_OPTIONS, cmd_probe },
	{ "help",     "[COMMAND]", "this help, or a command's",             0, 1, cmd_help },
};

static void usage(FILE *f) {
	fprintf(f, "Usage: ccxctl [--socket PATH] [--json] COMMAND [ARGS]\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		char left[40];
		snprintf(left, sizeof(left), "%s %s", commands[i].name, commands[i].args);
		fprintf(f, "  %-22s %s\n", left, commands[i].help);
	}
	fprintf(f, "\nOptions:\n"
		   "  -s, --socket PATH       ccxd's socket (default $CCXD_SOCKET or /run/ccxd/ccxd.sock)\n"
		   "  -j, --json[=STYLE]      print the daemon's JSON: pretty, or short (one line)\n"
		   "  -t, --topology SPEC     with 'topology' and 'run': system, xml:PATH or synthetic:STRING\n"
		   "  -w, --watch[=SECS]      with 'status': again every SECS (default 2), until interrupted\n"
		   "  -h, --help              print this help (after a command: that command's)\n"
		   "  -V, --version           print ccxctl's version\n");
}

static const struct command *find_command(const char *name) {
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* A mistake on the command line: one line and where to look, not the
 * whole usage. */
static int misused(const char *fmt, const char *what) {
	fprintf(stderr, "ccxctl: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "; 'ccxctl help' lists the commands and options\n");
	return EXIT_USAGE;
}

static void command_help(FILE *f, const struct command *c) {
	fprintf(f, "Usage: ccxctl [OPTIONS] %s%s%s\n\n%s.\nccxctl --help lists the options; ccxctl(1) says more.\n",
		c->name, c->args[0] ? " " : "", c->args, c->help);
}

static int cmd_help(const struct options *o, int argc, char **argv) {
	const struct command *c = argc > 0 ? find_command(argv[0]) : NULL;

	if (argc == 0) {
		usage(stdout);
		return 0;
	}
	if (!c)
		return misused("no command '%s'", argv[0]);
	/* A command that parses its own options says its own help. */
	if (c->min_args == OWN_OPTIONS)
		return c->run(o, 2, (char *[]){ (char *)c->name, "--help", NULL });
	command_help(stdout, c);
	return 0;
}

/* --watch's SECS (NULL: the default) in ms, 100 ms to an hour. */
static int parse_interval(const char *s, unsigned *ret) {
	char *end;
	double secs = 2;

	if (s) {
		errno = 0;
		secs = strtod(s, &end);
		if (errno || end == s || *end || !(secs >= 0.1 && secs <= 3600))
			return -EINVAL;
	}
	*ret = (unsigned)(secs * 1000 + 0.5);
	return 0;
}

/* Returns -1 to go on, or the exit status. c: the command given, whose help
 * --help prints; NULL before it. */
static int parse_options(int argc, char **argv, const char *optstring, struct options *o,
			 const struct command *c) {
	static const struct option long_options[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", optional_argument, NULL, 'j' },
		{ "topology", required_argument, NULL, 't' },
		{ "watch", optional_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	int opt;

	while ((opt = getopt_long(argc, argv, optstring, long_options, NULL)) >= 0) {
		switch (opt) {
		case 's':
			o->socket = optarg;
			break;
		case 'j':
			o->json = true;
			if (optarg && strcmp(optarg, "short") == 0)
				json_style = JSON_C_TO_STRING_PLAIN;
			else if (optarg && strcmp(optarg, "pretty") != 0)
				return misused("--json is pretty or short, not '%s'", optarg);
			break;
		case 't':
			o->topology = optarg;
			break;
		case 'w':
			if (parse_interval(optarg, &o->watch_ms) < 0)
				return misused("--watch takes seconds from 0.1 to 3600, not '%s'", optarg);
			break;
		case 'h':
			if (c)
				command_help(stdout, c);
			else
				usage(stdout);
			return 0;
		case 'V':
			printf("ccxctl %s\n", CCXD_VERSION);
			return 0;
		default:
			/* getopt said what was wrong. */
			fprintf(stderr, "Try 'ccxctl help%s%s'.\n", c ? " " : "", c ? c->name : "");
			return EXIT_USAGE;
		}
	}
	return -1;
}

int main(int argc, char **argv) {
	struct options o = { .socket = getenv("CCXD_SOCKET") };
	const struct command *c;
	char **rest;
	int r, n;

	if (!o.socket || !*o.socket)
		o.socket = CCXD_DEFAULT_SOCKET;
	/* ccxctl's own options come before the command ("+": stop there) ... */
	r = parse_options(argc, argv, "+s:jt:w::hV", &o, NULL);
	if (r >= 0)
		return r;
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	c = find_command(argv[optind]);
	if (!c)
		return misused("unknown command '%s'", argv[optind]);
	if (c->min_args == OWN_OPTIONS)
		return c->run(&o, argc - optind, argv + optind);
	/* ... or anywhere after it ("topology --topology SPEC"). getopt
	 * starts afresh on the rest, with the program's name in front for
	 * its messages. */
	rest = argv + optind;
	n = argc - optind;
	rest[0] = argv[0];
	optind = 0;
	r = parse_options(n, rest, "s:jt:w::hV", &o, c);
	if (r >= 0)
		return r;
	n -= optind;
	if (o.watch_ms && c->run != cmd_status)
		return misused("--watch is for 'status', not '%s'", c->name);
	if (n < c->min_args || n > c->max_args) {
		fprintf(stderr, "Usage: ccxctl %s %s\n", c->name, c->args);
		return EXIT_USAGE;
	}
	return c->run(&o, n, rest + optind);
}
