/* ccxd: keeps processes that talk to each other on one CCX. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "config-file.h"
#include "log.h"
#include "manager.h"
#include "placements.h"
#include "priority.h"
#include "setup.h"
#include "sysfs.h"
#include "topology.h"
#include "x3d.h"

/* Options with no short form. */
enum {
	OPT_X3D_MODE = 0x100,
	OPT_GIVE_BACK,
};

static void usage(FILE *f) {
	fprintf(f,
		"Usage: ccxd [OPTIONS]\n"
		"Keeps processes that talk to each other on one CCX (last-level-cache domain).\n\n"
		"  -c, --config FILE        read FILE and FILE.d/*.conf instead of " CONFIG_DEFAULT_PATH "\n"
		"  -n, --check-config FILE  check FILE and the topology it names, print\n"
		"                           \"configuration OK\" or every error, and exit\n"
		"      --x3d-mode=apply     set the AMD X3D mode that x3d_mode asks for, recording\n"
		"                           the one found in runtime_dir, and exit\n"
		"      --x3d-mode=restore   put back the X3D mode recorded there, and exit\n"
		"      --give-back          give every process that a ccxd which stopped for good\n"
		"                           left placed its original CPU affinity back, and exit\n"
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

	r = setup_load(path, true, &c, &t, &errors);
	if (r < 0) {
		for (char **e = errors; e && *e; e++)
			fprintf(stderr, "%s\n", *e);
		if (!errors)
			fprintf(stderr, "%s: %s\n", path, strerror(-r));
		config_errors_free(errors);
		return 1;
	}
	/* Keys that can do nothing are no error: said, and the file is good. */
	if (setup_warnings(c, &errors) == 0)
		for (char **e = errors; e && *e; e++)
			fprintf(stderr, "%s\n", *e);
	config_errors_free(errors);
	printf("configuration OK\n");
	config_free(c);
	topology_free(t);
	return 0;
}

static void log_errors(char **errors, const char *path, int r) {
	for (char **e = errors; e && *e; e++)
		log_error("%s", *e);
	if (!errors)
		log_error_errno(r, "%s: %m", path);
}

/* ccxd --x3d-mode=apply: what ccxd would set at its start, set by a process
 * that may write /sys (the unit runs it as root, outside the sandbox, before
 * ccxd and at each reload). The configuration is read as ccxd reads it, and
 * its errors fail the command as they would fail ccxd; a missing driver, or
 * a mode the driver refuses, does not: ccxd runs without the mode then too. */
static int x3d_mode_apply(const char *config_path) {
	const char *path = config_path ? config_path : CONFIG_DEFAULT_PATH;
	struct config *c = NULL;
	struct topology *t = NULL;
	char **errors = NULL;
	int r;

	r = setup_load(path, config_path != NULL, &c, &t, &errors);
	if (r < 0) {
		log_errors(errors, path, r);
		config_errors_free(errors);
		return 1;
	}
	if (mkdir(c->runtime_dir, 0755) < 0 && errno != EEXIST)
		log_warning_errno(-errno, "Failed to create %s: %m", c->runtime_dir);
	x3d_apply_config("", c->runtime_dir, c, t);
	config_free(c);
	topology_free(t);
	return 0;
}

/* ccxd --x3d-mode=restore: the mode recorded put back after ccxd stopped,
 * however it stopped (the unit's ExecStopPost=). Not with restore_on_exit =
 * no, which keeps the mode as ccxd itself would. A configuration with errors
 * (their list is for whatever uses it, ccxd or --x3d-mode=apply) names no
 * runtime directory: the default one's record is put back, as the mode is
 * owed all the same. Always 0: the command runs after ccxd, whose failures,
 * if any, are its own. */
static int x3d_mode_restore(const char *config_path) {
	const char *path = config_path ? config_path : CONFIG_DEFAULT_PATH;
	const char *runtime_dir = CONFIG_DEFAULT_RUNTIME;
	struct config *c = NULL;
	char mode[SYSFS_X3D_MODE_MAX];
	int r;

	r = config_load_from(&(struct config_sources){ .path = path, .presets = config_presets_for(path),
						       .path_optional = config_path == NULL },
			     &c, NULL);
	if (r < 0)
		log_warning("%s cannot be read or has errors: putting back the X3D mode recorded in %s", path,
			    runtime_dir);
	else if (!c->restore_on_exit) {
		log_info("restore_on_exit = no: the X3D mode stays as it is");
		config_free(c);
		return 0;
	} else
		runtime_dir = c->runtime_dir;
	r = x3d_restore("", runtime_dir);
	if (r < 0 && r != -ENOENT)
		log_warning_errno(r, "Failed to put the X3D mode back: %m");
	else if (r > 0)
		log_info("X3D mode (amd_x3d_vcache) put back to %s", sysfs_read_x3d_mode("", mode) == 0 ? mode : "?");
	config_free(c);
	return 0;
}

/* ccxd --give-back: after ccxd stopped for good (the unit's OnFailure=
 * runs it, as root, once the restarts are used up), what its ledger in
 * runtime_dir owes is put back, whatever stopped it (SIGKILL, the
 * watchdog, SIGXCPU, the OOM killer), so that no process stays where it
 * put it. Not with restore_on_exit = no, which keeps placements as ccxd
 * itself would at its stop. A configuration with errors names no runtime
 * directory: the default one's ledger is owed all the same. */
static int give_back(const char *config_path) {
	const char *path = config_path ? config_path : CONFIG_DEFAULT_PATH;
	struct config *c = NULL;
	int r;

	log_to_stderr();
	r = config_load_from(&(struct config_sources){ .path = path, .presets = config_presets_for(path),
						       .path_optional = config_path == NULL },
			     &c, NULL);
	if (r < 0)
		log_warning("%s cannot be read or has errors: giving back what %s owes", path, CONFIG_DEFAULT_RUNTIME);
	else if (!c->restore_on_exit) {
		log_info("restore_on_exit = no: the processes ccxd placed stay where they are");
		config_free(c);
		return 0;
	}
	r = placements_give_back_owed("", r < 0 ? CONFIG_DEFAULT_RUNTIME : c->runtime_dir);
	config_free(c);
	return r < 0 ? 1 : 0;
}

/* The sampler keeps a /proc/PID/stat open per process: every fd the hard
 * limit allows (systemd's default soft limit is 1024). */
static void raise_fd_limit(void) {
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* ccxd's own scheduling (priority.h), before anything is forked: the probe
 * worker starts with the kernel's defaults. */
static void set_up_scheduling(void) {
	struct priority_setup ps;

	priority_setup(&ps);
	if (ps.slice < 0)
		log_notice("Running with the kernel's default time slice, so a pin at exec may wait for a program "
			   "computing on ccxd's CPU to use up its own: %s", ps.slice_why);
	if (ps.realtime < 0)
		log_notice("Waiting for execs at normal priority, so a pin at exec may wait for a program computing "
			   "on ccxd's CPU: %s", ps.realtime_why);
	if (ps.slice == 1)
		log_debug("Scheduling: left to the policy chosen for ccxd");
	else
		log_debug("Scheduling: time slice %s, waiting at %s priority",
			  ps.slice == 0 ? "0.1 ms" : "the kernel's", ps.realtime == 0 ? "real-time" : "normal");
}

int main(int argc, char **argv) {
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", required_argument, NULL, 'n' },
		{ "x3d-mode", required_argument, NULL, OPT_X3D_MODE },
		{ "give-back", no_argument, NULL, OPT_GIVE_BACK },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *config_path = NULL, *x3d_mode = NULL;
	bool giving_back = false;
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
		case OPT_X3D_MODE:
			if (strcmp(optarg, "apply") != 0 && strcmp(optarg, "restore") != 0) {
				fprintf(stderr, "ccxd: --x3d-mode takes apply or restore, not '%s'\n", optarg);
				return 2;
			}
			x3d_mode = optarg;
			break;
		case OPT_GIVE_BACK:
			giving_back = true;
			break;
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
	if (giving_back)
		return give_back(config_path);
	if (x3d_mode)
		return strcmp(x3d_mode, "apply") == 0 ? x3d_mode_apply(config_path) : x3d_mode_restore(config_path);

	raise_fd_limit();
	set_up_scheduling();
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
