/* [daemon] x3d_mode on a fixture tree's amd_x3d_vcache: set, recorded,
 * put back, and what a killed ccxd left behind. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "fixture.h"
#include "procfs.h"
#include "sysfs.h"
#include "test.h"
#include "x3d.h"

#define RUN "/run/ccxd"

static const char *mode_of(const char *root) {
	static char mode[SYSFS_X3D_MODE_MAX];

	if (sysfs_read_x3d_mode(root, mode) < 0)
		snprintf(mode, sizeof(mode), "(none)");
	return mode;
}

static const char *recorded(const char *root) {
	static char buf[64];
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s" RUN "/" X3D_ORIGINAL_FILE, root);
	if (procfs_read_file(path, buf, sizeof(buf)) < 0)
		return "(none)";
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static void without_the_driver_nothing_happens(void) {
	char root[PATH_MAX];

	fixture_root(root);
	fixture_file(root, RUN "/placeholder", "");
	CHECK_INT(x3d_apply(root, RUN, CONFIG_X3D_CACHE), -ENOENT);
	CHECK_INT(x3d_apply(root, RUN, CONFIG_X3D_KEEP), -ENOENT);
	CHECK_INT(x3d_restore(root, RUN), -ENOENT);
	CHECK_STR(recorded(root), "(none)");
	fixture_remove(root);
}

static void sets_the_mode_and_puts_the_old_one_back(void) {
	char root[PATH_MAX];

	fixture_root(root);
	fixture_file(root, RUN "/placeholder", "");
	fixture_file(root, FIXTURE_X3D, "frequency\n");
	CHECK_INT(x3d_apply(root, RUN, CONFIG_X3D_KEEP), 0);
	CHECK_STR(mode_of(root), "frequency");
	CHECK_STR(recorded(root), "(none)");
	CHECK_INT(x3d_apply(root, RUN, CONFIG_X3D_CACHE), 1);
	CHECK_STR(mode_of(root), "cache");
	CHECK_STR(recorded(root), "frequency");
	/* A reload to the other mode keeps the first record. */
	CHECK_INT(x3d_apply(root, RUN, CONFIG_X3D_FREQUENCY), 1);
	CHECK_INT(x3d_apply(root, RUN, CONFIG_X3D_CACHE), 1);
	CHECK_STR(recorded(root), "frequency");
	CHECK_INT(x3d_restore(root, RUN), 1);
	CHECK_STR(mode_of(root), "frequency");
	CHECK_STR(recorded(root), "(none)");
	CHECK_INT(x3d_restore(root, RUN), 0);
	/* Already what is asked: nothing written, but still recorded. */
	CHECK_INT(x3d_apply(root, RUN, CONFIG_X3D_FREQUENCY), 0);
	CHECK_STR(recorded(root), "frequency");
	fixture_remove(root);
}

/* A ccxd that was killed left its mode set and the record: the next start
 * takes the record, not the mode it finds, for the administrator's. */
static void a_killed_ccxd_is_undone_at_the_next_start(void) {
	char root[PATH_MAX];

	fixture_root(root);
	fixture_file(root, FIXTURE_X3D, "cache\n");
	fixture_file(root, RUN "/" X3D_ORIGINAL_FILE, "frequency\n");
	CHECK_INT(x3d_apply(root, RUN, CONFIG_X3D_CACHE), 0);
	CHECK_STR(recorded(root), "frequency");
	CHECK_INT(x3d_apply(root, RUN, CONFIG_X3D_KEEP), 1);
	CHECK_STR(mode_of(root), "frequency");
	CHECK_STR(recorded(root), "(none)");
	/* A record that is no mode is no evidence: the mode found is the original. */
	fixture_file(root, FIXTURE_X3D, "cache\n");
	fixture_file(root, RUN "/" X3D_ORIGINAL_FILE, "turbo\n");
	CHECK_INT(x3d_apply(root, RUN, CONFIG_X3D_KEEP), 0);
	CHECK_STR(mode_of(root), "cache");
	CHECK_INT(x3d_apply(root, RUN, CONFIG_X3D_FREQUENCY), 1);
	CHECK_STR(recorded(root), "cache");
	CHECK_INT(x3d_restore(root, RUN), 1);
	CHECK_STR(mode_of(root), "cache");
	fixture_remove(root);
}

#define BOOT_MODE "/sys/module/amd_x3d_vcache/parameters/x3d_mode"

/* What user ccxd may put in place of root's record, in the directory it
 * owns: a link (to a file of the mode it wants, to a device) or a FIFO. None
 * is opened (a FIFO would hang the unit's stop); the mode the driver was
 * loaded with stands for the original, and is put back. */
static void a_record_that_is_no_file_is_not_read(void) {
	static const char *kinds[] = { "link", "fifo", "link to a fifo" };
	char root[PATH_MAX], path[PATH_MAX], target[PATH_MAX];
	struct stat st;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		printf("# the record is a %s\n", kinds[i]);
		fixture_root(root);
		fixture_file(root, FIXTURE_X3D, "frequency\n");
		fixture_file(root, BOOT_MODE, "frequency\n");
		fixture_file(root, "/elsewhere/wanted", "cache\n");
		fixture_file(root, RUN "/placeholder", "");
		CHECK_INT(x3d_apply(root, RUN, CONFIG_X3D_CACHE), 1);
		snprintf(path, sizeof(path), "%s" RUN "/" X3D_ORIGINAL_FILE, root);
		CHECK_INT(unlink(path), 0);
		if (i == 0)
			snprintf(target, sizeof(target), "%s/elsewhere/wanted", root);
		else
			snprintf(target, sizeof(target), "%s/elsewhere/fifo", root);
		if (i > 0)
			CHECK_INT(mkfifo(target, 0600), 0);
		CHECK_INT(i == 1 ? rename(target, path) : symlink(target, path), 0);
		/* As the unit's ExecReload= would: cache stays, the record
		 * becomes a file again, with the stand-in. */
		alarm(10);
		CHECK_INT(x3d_apply(root, RUN, CONFIG_X3D_CACHE), 0);
		CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
		CHECK_STR(recorded(root), "frequency");
		/* Replaced again, then the unit's ExecStopPost=. */
		CHECK_INT(unlink(path), 0);
		CHECK_INT(symlink(target, path), 0);
		CHECK_INT(x3d_restore(root, RUN), 1);
		alarm(0);
		CHECK_STR(mode_of(root), "frequency");
		CHECK(lstat(path, &st) < 0 && errno == ENOENT);
		fixture_remove(root);
	}

	/* Without the driver's parameter the original is unknown: the entry
	 * is removed and the mode left. */
	fixture_root(root);
	fixture_file(root, FIXTURE_X3D, "cache\n");
	fixture_file(root, "/elsewhere/wanted", "frequency\n");
	fixture_file(root, RUN "/placeholder", "");
	snprintf(path, sizeof(path), "%s" RUN "/" X3D_ORIGINAL_FILE, root);
	snprintf(target, sizeof(target), "%s/elsewhere/wanted", root);
	CHECK_INT(symlink(target, path), 0);
	CHECK_INT(x3d_restore(root, RUN), 0);
	CHECK_STR(mode_of(root), "cache");
	CHECK(lstat(path, &st) < 0 && errno == ENOENT);
	fixture_remove(root);
}

/* No runtime directory to record in: the mode is left alone. */
static void no_record_no_change(void) {
	char root[PATH_MAX];

	fixture_root(root);
	fixture_file(root, FIXTURE_X3D, "frequency\n");
	CHECK(x3d_apply(root, "/missing", CONFIG_X3D_CACHE) < 0);
	CHECK_STR(mode_of(root), "frequency");
	fixture_remove(root);
}

/* Only enforce on the running system's topology changes the mode. */
static void only_enforce_on_this_machine_sets_a_mode(void) {
	struct config *c = config_new_default();
	struct topology t = { .source = (char *)"system" };

	CHECK(c != NULL);
	if (!c)
		return;
	CHECK_INT(x3d_wanted(c, &t), CONFIG_X3D_KEEP);
	c->x3d_mode = CONFIG_X3D_CACHE;
	CHECK_INT(x3d_wanted(c, &t), CONFIG_X3D_CACHE);
	c->mode = CONFIG_MODE_DRY_RUN;
	CHECK_INT(x3d_wanted(c, &t), CONFIG_X3D_KEEP);
	c->mode = CONFIG_MODE_OFF;
	CHECK_INT(x3d_wanted(c, &t), CONFIG_X3D_KEEP);
	c->mode = CONFIG_MODE_ENFORCE;
	t.source = (char *)"synthetic:pack:1 l3:2 core:1 pu:1";
	CHECK_INT(x3d_wanted(c, &t), CONFIG_X3D_KEEP);
	config_free(c);
}

/* Runs what as user nobody, in a child; its exit status, or -1. */
static int as_nobody(int (*what)(const char *root), const char *root) {
	int status = -1;
	pid_t child = fork();

	if (child == 0) {
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(100);
		_exit(what(root));
	}
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* The daemon of the shipped unit, after its ExecStartPre: 0 when it could
 * not write, found nothing to write and kept the record. */
static int daemon_under_the_unit(const char *root) {
	if (x3d_writable(root))
		return 1;
	if (x3d_apply(root, RUN, CONFIG_X3D_CACHE) != 0)
		return 2;
	/* A mode it would have to write, it cannot. */
	if (x3d_apply(root, RUN, CONFIG_X3D_FREQUENCY) >= 0)
		return 3;
	return strcmp(recorded(root), "frequency") == 0 && strcmp(mode_of(root), "cache") == 0 ? 0 : 4;
}

/* ccxd --x3d-mode=apply as root sets the mode; the daemon, which may not
 * write it, finds it set; --x3d-mode=restore puts the original back. */
static void set_by_root_found_set_by_a_daemon_that_may_not_write(void) {
	char root[PATH_MAX];

	if (geteuid() != 0)
		SKIP_TEST("needs root to become another user");
	fixture_root(root);
	CHECK_INT(chmod(root, 0755), 0);
	fixture_file(root, RUN "/placeholder", "");
	fixture_file(root, FIXTURE_X3D, "frequency\n");
	CHECK(x3d_writable(root));
	CHECK_INT(x3d_apply(root, RUN, CONFIG_X3D_CACHE), 1);
	CHECK_INT(as_nobody(daemon_under_the_unit, root), 0);
	CHECK_INT(x3d_restore(root, RUN), 1);
	CHECK_STR(mode_of(root), "frequency");
	CHECK_STR(recorded(root), "(none)");
	fixture_remove(root);

	/* Without the driver there is nothing to write. */
	fixture_root(root);
	CHECK(!x3d_writable(root));
	fixture_remove(root);
}

TEST_MAIN(T(without_the_driver_nothing_happens), T(sets_the_mode_and_puts_the_old_one_back),
	  T(a_killed_ccxd_is_undone_at_the_next_start), T(a_record_that_is_no_file_is_not_read), T(no_record_no_change),
	  T(only_enforce_on_this_machine_sets_a_mode), T(set_by_root_found_set_by_a_daemon_that_may_not_write))
