/* ccxctl run: a launcher, as gamemoderun is for GameMode. It narrows its
 * own affinity to one CCX and executes the command, which so starts on
 * that CCX with its first instruction, and its children with it. No
 * privilege is needed (a process may narrow its own affinity), nothing is
 * left to give back (the affinity ends with the processes), and ccxd
 * leaves the program alone, as it does every process whose affinity
 * somebody else set (unless a rule says force = yes). */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ccxctl.h"
#include "cpulist.h"
#include "protocol.h"

static json_object *get(json_object *o, const char *key) {
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static void run_usage(FILE *f) {
	fprintf(f, "Usage: ccxctl run [--ccx N] [--] COMMAND [ARGS...]\n\n"
		   "Starts COMMAND on the CPUs of one CCX: N, or the least busy one as ccxd\n"
		   "last sampled them (the first usable one when it does not know). Its\n"
		   "children start there too; the affinity ends with them.\n\n"
		   "  -c, --ccx N    the CCX, an index as ccxctl topology numbers them\n"
		   "  -h, --help     print this help\n");
}

/* The usable CCX with the fewest busy CPUs at ccxd's last sample; the
 * first usable one where it has no sample (or cannot be asked). */
static long least_busy(const struct options *o, json_object *ccxs) {
	json_object *status = o->topology ? NULL : ctl_call(o, CCXD_METHOD_GET_STATUS, NULL, true);
	json_object *load = get(get(status, "sampling"), "ccx_load");
	long best = -1;

	for (size_t i = 0; i < json_object_array_length(ccxs); i++) {
		json_object *usable = get(json_object_array_get_idx(ccxs, i), "usable");
		json_object *l = json_object_is_type(load, json_type_array) ? json_object_array_get_idx(load, i) : NULL;
		if (usable && !json_object_get_boolean(usable))
			continue;
		if (best < 0 || (l && json_object_get_double(l) <
					      json_object_get_double(json_object_array_get_idx(load, (size_t)best))))
			best = (long)i;
	}
	json_object_put(status);
	return best;
}

/* The CPUs of CCX ccx (-1: the least busy) that this process may use. */
static int ccx_cpus(const struct options *o, long ccx, cpu_set_t *ret) {
	json_object *t = ctl_topology(o), *ccxs = get(t, "ccxs"), *x;
	cpu_set_t mine;
	size_t n = json_object_is_type(ccxs, json_type_array) ? json_object_array_length(ccxs) : 0;
	int r = EXIT_FAILURE;

	if (!t)
		return ctl_failed();
	if (ccx < 0)
		ccx = least_busy(o, ccxs);
	if (ccx < 0 || (size_t)ccx >= n) {
		fprintf(stderr, "ccxctl run: no usable CCX %ld (the topology has %zu)\n", ccx, n);
		goto out;
	}
	x = json_object_array_get_idx(ccxs, (size_t)ccx);
	if (!json_object_is_type(get(x, "cpus"), json_type_string) ||
	    cpulist_parse(json_object_get_string(get(x, "cpus")), ret) < 0 ||
	    sched_getaffinity(0, sizeof(mine), &mine) < 0) {
		fprintf(stderr, "ccxctl run: the CPUs of CCX %ld are not known\n", ccx);
		goto out;
	}
	CPU_AND(ret, ret, &mine);
	if (CPU_COUNT(ret) == 0) {
		fprintf(stderr, "ccxctl run: CCX %ld has no CPU this process may use (its cgroup or affinity)\n", ccx);
		goto out;
	}
	r = 0;
out:
	json_object_put(t);
	return r;
}

int cmd_run(const struct options *o, int argc, char **argv) {
	static const struct option options[] = {
		{ "ccx", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	long ccx = -1;
	cpu_set_t cpus;
	char *end;
	int opt, r;

	optind = 0;
	/* "+": the command's own options are its own. */
	while ((opt = getopt_long(argc, argv, "+c:h", options, NULL)) >= 0) {
		switch (opt) {
		case 'c':
			errno = 0;
			ccx = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || ccx < 0 || ccx >= CPU_SETSIZE) {
				fprintf(stderr, "ccxctl run: invalid CCX '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			run_usage(stdout);
			return 0;
		default:
			fprintf(stderr, "Try 'ccxctl help run'.\n");
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		run_usage(stderr);
		return EXIT_USAGE;
	}
	r = ccx_cpus(o, ccx, &cpus);
	if (r != 0)
		return r;
	if (sched_setaffinity(0, sizeof(cpus), &cpus) < 0) {
		fprintf(stderr, "ccxctl run: setting the affinity failed: %s\n", strerror(errno));
		return EXIT_FAILURE;
	}
	execvp(argv[optind], argv + optind);
	/* As env(1) and the shells: 127 not found, 126 found but not run. */
	fprintf(stderr, "ccxctl run: %s: %s\n", argv[optind], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
