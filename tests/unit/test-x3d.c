/* [daemon] x3d_mode on a fixture tree's amd_x3d_vcache: set, recorded,
 * put back, and what a killed ccxd left behind. */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "fixture.h"
#include "procfs.h"
#include "test.h"
#include "x3d.h"

#define RUN "/run/ccxd"

static const char *mode_of(const char *root) {
	static char mode[PROCFS_X3D_MODE_MAX];

	if (procfs_read_x3d_mode(root, mode) < 0)
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

/* No runtime directory to record in: the mode is left alone. */
static void no_record_no_change(void) {
	char root[PATH_MAX];

	fixture_root(root);
	fixture_file(root, FIXTURE_X3D, "frequency\n");
	CHECK(x3d_apply(root, "/missing", CONFIG_X3D_CACHE) < 0);
	CHECK_STR(mode_of(root), "frequency");
	fixture_remove(root);
}

TEST_MAIN(T(without_the_driver_nothing_happens), T(sets_the_mode_and_puts_the_old_one_back),
	  T(a_killed_ccxd_is_undone_at_the_next_start), T(no_record_no_change))
