/* ccxd: keeps processes that talk to each other on one CCX. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "config.h"
#include "log.h"
#include "manager.h"
#include "topology.h"

static void usage(FILE *f) {
	fprintf(f,
		"Usage: ccxd [OPTIONS]\n"
		"Keeps processes that talk to each other on one CCX (last-level-cache domain).\n\n"
		"  -c, --config FILE        read FILE and FILE.d/*.conf instead of " CONFIG_DEFAULT_PATH "\n"
		"  -n, --check-config FILE  check FILE and the topology it names, print\n"
		"                           \"configuration OK\" or every error, and exit\n"
		"  -v, --verbose            log debug messages too\n"
		"  -V, --version            print the version and exit\n"
		"  -h, --help               print this help and exit\n\n"
		"With " CONFIG_DEFAULT_PATH " come the drop-ins of " CONFIG_DEFAULT_PATH ".d/ and the\n"
		"packages' presets in %s/.\n",
		config_presets_for(CONFIG_DEFAULT_PATH));
}

static int check_config(const char *path) {
	struct config *c = NULL;
	struct topology *t = NULL;
	char **errors = NULL;
	int r;

	r = manager_load_config(path, true, &c, &t, &errors);
	if (r < 0) {
		for (char **e = errors; e && *e; e++)
			fprintf(stderr, "%s\n", *e);
		if (!errors)
			fprintf(stderr, "%s: %s\n", path, strerror(-r));
		config_errors_free(errors);
		return 1;
	}
	printf("configuration OK\n");
	config_free(c);
	topology_free(t);
	return 0;
}

int main(int argc, char **argv) {
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", required_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *config_path = NULL;
	struct manager *m = NULL;
	char **errors = NULL;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "c:n:vVh", options, NULL)) >= 0) {
		switch (opt) {
		case 'c':
			config_path = optarg;
			break;
		case 'n':
			return check_config(optarg);
		case 'v':
			log_set_max_level(LOG_DEBUG);
			break;
		case 'V':
			printf("ccxd %s\n", CCXD_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ccxd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}

	/* The sampler keeps a /proc/PID/stat open per process: take every fd the
	 * hard limit allows (systemd's default soft limit is 1024). */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}

	r = manager_new(config_path, &m, &errors);
	if (r < 0) {
		for (char **e = errors; e && *e; e++)
			log_error("%s", *e);
		if (!errors)
			log_error_errno(r, "Failed to start: %m");
		config_errors_free(errors);
		return 1;
	}
	r = manager_start(m);
	if (r >= 0)
		r = manager_run(m);
	manager_free(m);
	return r < 0 ? 1 : 0;
}
