#include "x3d.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomicfile.h"
#include "log.h"
#include "regfile.h"
#include "sysfs.h"

static void original_path(const char *root, const char *runtime_dir, char *path, size_t size) {
	snprintf(path, size, "%s%s/%s", root, runtime_dir, X3D_ORIGINAL_FILE);
}

/* The mode recorded by an earlier run: 0, or -ENOENT when none (or what is
 * there is no mode the driver has: such a file is no evidence). Root reads
 * it in a directory that user ccxd owns: a link, a FIFO or a device put in
 * its place is not opened (-ELOOP, -EINVAL, -EISDIR, -EFBIG:
 * regfile_read()); -ENOMEM when memory ran out. */
static int read_original(const char *root, const char *runtime_dir, char mode[SYSFS_X3D_MODE_MAX]) {
	char path[PATH_MAX], *buf;
	size_t len, n;
	int r;

	original_path(root, runtime_dir, path, sizeof(path));
	r = regfile_read(path, REGFILE_NOFOLLOW, 64, &buf, &len);
	if (r < 0)
		return r;
	n = strcspn(buf, "\n");
	buf[n] = '\0';
	r = strcmp(buf, "cache") == 0 || strcmp(buf, "frequency") == 0 ? 0 : -ENOENT;
	if (r == 0)
		memcpy(mode, buf, n + 1);
	free(buf);
	return r;
}

/* The original, when the record is not a file root may read: what ccxd
 * changed is known, what it was is not, and the mode the driver was loaded
 * with stands for it (1). -ENOENT when there is no record, or when that
 * mode cannot be read either (the entry is then removed, and the mode
 * left); -ENOMEM, when what the record says is not known. */
static int find_original(const char *root, const char *runtime_dir, char mode[SYSFS_X3D_MODE_MAX]) {
	char path[PATH_MAX];
	int r = read_original(root, runtime_dir, mode);

	if (r == 0 || r == -ENOENT || r == -ENOMEM)
		return r;
	original_path(root, runtime_dir, path, sizeof(path));
	if (sysfs_read_x3d_boot_mode(root, mode) < 0) {
		log_warning("%s: %s, ignored and removed; the driver's initial mode is unknown, so the X3D mode "
			    "is left as it is", path, regfile_strerror(r));
		(void)unlink(path);
		return -ENOENT;
	}
	log_warning("%s: %s, ignored; the driver's initial mode, %s, stands for the original", path,
		    regfile_strerror(r), mode);
	return 1;
}

static int write_original(const char *root, const char *runtime_dir, const char *mode) {
	char path[PATH_MAX], text[SYSFS_X3D_MODE_MAX + 1];

	original_path(root, runtime_dir, path, sizeof(path));
	snprintf(text, sizeof(text), "%s\n", mode);
	return atomicfile_write(path, text, 0644, false);
}

static void forget_original(const char *root, const char *runtime_dir) {
	char path[PATH_MAX];

	original_path(root, runtime_dir, path, sizeof(path));
	(void)unlink(path);
}

/* Writes mode unless the driver says so already: 1 written, 0 not needed. */
static int set_mode(const char *root, const char *now, const char *mode) {
	int r;

	if (strcmp(now, mode) == 0)
		return 0;
	r = sysfs_write_x3d_mode(root, mode);
	return r < 0 ? r : 1;
}

int x3d_apply(const char *root, const char *runtime_dir, enum config_x3d want) {
	char now[SYSFS_X3D_MODE_MAX], original[SYSFS_X3D_MODE_MAX];
	bool recorded, rewrite;
	int r = sysfs_read_x3d_mode(root, now);

	if (r < 0)
		return r;
	r = find_original(root, runtime_dir, original);
	if (r == -ENOMEM)
		return r;   /* nothing changed: a record not read is not rewritten */
	recorded = r >= 0;
	rewrite = r != 0;
	if (want == CONFIG_X3D_KEEP) {
		if (!recorded)
			return 0;
		r = set_mode(root, now, original);
		if (r >= 0)
			forget_original(root, runtime_dir);
		return r;
	}
	/* Recorded before the change: a crash between the two leaves a record
	 * of the mode that is still set, which is harmless. A stand-in is
	 * written as the record that was not one. */
	if (rewrite) {
		r = write_original(root, runtime_dir, recorded ? original : now);
		if (r < 0)
			return r;
	}
	return set_mode(root, now, config_x3d_to_string(want));
}

int x3d_restore(const char *root, const char *runtime_dir) {
	return x3d_apply(root, runtime_dir, CONFIG_X3D_KEEP);
}

enum config_x3d x3d_wanted(const struct config *c, const struct topology *t) {
	if (c->mode != CONFIG_MODE_ENFORCE || strcmp(t->source, "system") != 0)
		return CONFIG_X3D_KEEP;
	return c->x3d_mode;
}

int x3d_apply_config(const char *root, const char *runtime_dir, const struct config *c, const struct topology *t) {
	enum config_x3d want = x3d_wanted(c, t);
	char mode[SYSFS_X3D_MODE_MAX];
	int r;

	if (want != c->x3d_mode)
		log_notice("x3d_mode = %s is not set: mode %s, topology %s", config_x3d_to_string(c->x3d_mode),
			   config_mode_to_string(c->mode), t->source);
	r = x3d_apply(root, runtime_dir, want);
	if (r == -ENOENT) {
		if (want != CONFIG_X3D_KEEP)
			log_notice("x3d_mode = %s, but no amd_x3d_vcache driver is bound: nothing to set",
				   config_x3d_to_string(want));
	} else if (r < 0)
		log_warning_errno(r, "Failed to set the X3D mode to %s: %m", config_x3d_to_string(want));
	else if (r > 0)
		log_info("X3D mode (amd_x3d_vcache) set to %s%s", want == CONFIG_X3D_KEEP ? "the one found before, " : "",
			 sysfs_read_x3d_mode(root, mode) == 0 ? mode : "?");
	return r;
}

bool x3d_writable(const char *root) {
	char path[PATH_MAX];

	return sysfs_find_x3d_mode(root, path, sizeof(path)) == 0 && access(path, W_OK) == 0;
}
