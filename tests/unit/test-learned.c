/* What won, per set of programs: the key a group's programs make, and the
 * file that keeps what won across restarts. */
#include <limits.h>
#include <unistd.h>

#include "fixture.h"
#include "groups.h"
#include "learned.h"
#include "sample.h"
#include "test.h"

/* A fixture /proc/PID/exe: the link the kernel shows. */
static void exe(const char *root, pid_t pid, const char *target) {
	char dir[PATH_MAX], link[PATH_MAX + 8];

	snprintf(dir, sizeof(dir), "%s/proc", root);
	mkdir(dir, 0755);   /* made by the first */
	snprintf(dir, sizeof(dir), "%s/proc/%d", root, (int)pid);
	CHECK_INT(mkdir(dir, 0755), 0);
	snprintf(link, sizeof(link), "%s/exe", dir);
	CHECK_INT(symlink(target, link), 0);
}

/* Sorted executables, whatever the members' order; a process whose
 * executable cannot be read goes by the name the sample gave it, or "?". */
static void the_key_is_the_sorted_programs(void) {
	char root[PATH_MAX];
	pid_t pair[] = { 100, 200 }, three[] = { 100, 300, 400 };
	struct sampler_process procs[] = { { .pid = 300, .comm = "worker" } };
	struct sampler_result s = { .procs = procs, .n_procs = 1 };
	struct group g = { .pids = pair, .n_pids = 2 };
	char *key;

	fixture_root(root);
	exe(root, 100, "/usr/bin/yes");
	exe(root, 200, "/usr/bin/pv");
	key = learned_programs(root, &g, &s);
	CHECK_STR(key, "/usr/bin/pv|/usr/bin/yes");
	free(key);
	g = (struct group){ .pids = three, .n_pids = 3 };
	key = learned_programs(root, &g, &s);
	CHECK_STR(key, "/usr/bin/yes|?|worker");
	free(key);
	key = learned_programs(root, &g, NULL);
	CHECK_STR(key, "/usr/bin/yes|?|?");
	free(key);
	fixture_remove(root);
}

/* What won is read back by the next start; a missing file is no error. */
static void what_won_is_kept_across_restarts(void) {
	char root[PATH_MAX], path[PATH_MAX + 32];
	struct learned *l;

	fixture_root(root);
	snprintf(path, sizeof(path), "%s/placements.json", root);
	CHECK_INT(learned_new(path, &l), 0);
	CHECK_INT(learned_seating(l, "/usr/bin/pv|/usr/bin/yes"), _SEATING_MAX);
	learned_keep(l, "/usr/bin/pv|/usr/bin/yes", SEATING_SHARED);
	learned_free(l);
	CHECK_INT(learned_new(path, &l), 0);
	CHECK_INT(learned_seating(l, "/usr/bin/pv|/usr/bin/yes"), SEATING_SHARED);
	CHECK_INT(learned_seating(l, "/usr/bin/yes"), _SEATING_MAX);
	learned_free(l);
	fixture_remove(root);
}

TEST_MAIN(T(the_key_is_the_sorted_programs), T(what_won_is_kept_across_restarts))
