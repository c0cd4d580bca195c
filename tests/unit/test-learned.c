/* What won, per set of programs: the key a group's programs make, and the
 * file that keeps what won across restarts. */
#include <errno.h>
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

/* What is remembered can be listed, least recently kept first, and an
 * entry forgotten, in the file too. */
static void an_entry_is_listed_and_forgotten(void) {
	char root[PATH_MAX], path[PATH_MAX + 32];
	enum seating seating;
	struct learned *l;

	fixture_root(root);
	snprintf(path, sizeof(path), "%s/placements.json", root);
	CHECK_INT(learned_new(path, &l), 0);
	learned_keep(l, "/usr/bin/pv|/usr/bin/yes", SEATING_SHARED);
	learned_keep(l, "/usr/bin/a|/usr/bin/b", SEATING_CORES);
	CHECK_INT(learned_count(l), 2);
	CHECK_STR(learned_entry(l, 0, &seating), "/usr/bin/pv|/usr/bin/yes");
	CHECK_INT(seating, SEATING_SHARED);
	CHECK_STR(learned_entry(l, 1, &seating), "/usr/bin/a|/usr/bin/b");
	CHECK_INT(learned_forget(l, "/usr/bin/pv|/usr/bin/yes"), 0);
	CHECK_INT(learned_forget(l, "/usr/bin/pv|/usr/bin/yes"), -ENOENT);
	CHECK_INT(learned_forget(l, "/usr/bin/a"), -ENOENT);
	CHECK_INT(learned_count(l), 1);
	learned_free(l);
	CHECK_INT(learned_new(path, &l), 0);
	CHECK_INT(learned_seating(l, "/usr/bin/pv|/usr/bin/yes"), _SEATING_MAX);
	CHECK_INT(learned_seating(l, "/usr/bin/a|/usr/bin/b"), SEATING_CORES);
	learned_free(l);
	fixture_remove(root);
}

/* The file names other users' programs: ccxd's (and root's) alone. */
static void the_file_is_readable_by_ccxd_alone(void) {
	char root[PATH_MAX], path[PATH_MAX + 32];
	struct learned *l;
	struct stat st;

	fixture_root(root);
	snprintf(path, sizeof(path), "%s/placements.json", root);
	fixture_file(root, "/placements.json", "{\"version\": 1, \"seatings\": {}}");
	chmod(path, 0644);   /* as earlier versions wrote it */
	CHECK_INT(learned_new(path, &l), 0);
	learned_keep(l, "/home/a/bin/x|/usr/bin/y", SEATING_SHARED);
	learned_free(l);
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0600);
	fixture_remove(root);
}

/* Any user's programs may form groups: the list keeps LEARNED_MAX, losing
 * the least recently kept, in memory and across restarts. */
static void the_least_recently_kept_goes_first(void) {
	char root[PATH_MAX], path[PATH_MAX + 32], key[64];
	struct learned *l;

	fixture_root(root);
	snprintf(path, sizeof(path), "%s/placements.json", root);
	CHECK_INT(learned_new(path, &l), 0);
	for (int i = 0; i < LEARNED_MAX; i++) {
		snprintf(key, sizeof(key), "/p%d|/q", i);
		learned_keep(l, key, SEATING_SHARED);
	}
	learned_keep(l, "/p0|/q", SEATING_SMT);   /* kept again: now the most recent */
	learned_keep(l, "/new|/q", SEATING_SHARED);      /* one too many: /p1|/q goes */
	CHECK_INT(learned_seating(l, "/p0|/q"), SEATING_SMT);
	CHECK_INT(learned_seating(l, "/p1|/q"), _SEATING_MAX);
	CHECK_INT(learned_seating(l, "/p2|/q"), SEATING_SHARED);
	CHECK_INT(learned_seating(l, "/new|/q"), SEATING_SHARED);
	learned_free(l);
	CHECK_INT(learned_new(path, &l), 0);
	learned_keep(l, "/newer|/q", SEATING_SHARED);    /* the order survived the restart: /p2|/q goes */
	CHECK_INT(learned_seating(l, "/p2|/q"), _SEATING_MAX);
	CHECK_INT(learned_seating(l, "/p3|/q"), SEATING_SHARED);
	CHECK_INT(learned_seating(l, "/p0|/q"), SEATING_SMT);
	learned_free(l);
	fixture_remove(root);
}

/* Root reads it from a directory that ccxd's user owns: a link or a FIFO
 * put there is not followed nor opened (a FIFO would hang the start), and
 * nothing is learned from it. */
static void a_link_or_a_fifo_is_not_read(void) {
	char root[PATH_MAX], path[PATH_MAX + 32], target[PATH_MAX + 32];
	struct learned *l;

	fixture_root(root);
	snprintf(path, sizeof(path), "%s/placements.json", root);
	snprintf(target, sizeof(target), "%s/elsewhere.json", root);
	fixture_file(root, "/elsewhere.json", "{\"version\": 1, \"seatings\": {\"/a|/b\": \"shared-cpu\"}}");
	CHECK_INT(symlink(target, path), 0);
	CHECK_INT(learned_new(path, &l), 0);
	CHECK_INT(learned_seating(l, "/a|/b"), _SEATING_MAX);
	learned_free(l);
	CHECK_INT(unlink(path), 0);
	CHECK_INT(mkfifo(path, 0600), 0);
	CHECK_INT(learned_new(path, &l), 0);   /* returns at once */
	CHECK_INT(learned_seating(l, "/a|/b"), _SEATING_MAX);
	learned_free(l);
	fixture_remove(root);
}

TEST_MAIN(T(the_key_is_the_sorted_programs), T(what_won_is_kept_across_restarts), T(the_file_is_readable_by_ccxd_alone),
	  T(the_least_recently_kept_goes_first), T(a_link_or_a_fifo_is_not_read),
	  T(an_entry_is_listed_and_forgotten))
