/* Fixture trees: a temporary directory that stands for "/", with the files
 * of /sys a test needs, for the readers that take a root. */
#pragma once

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test.h"

/* Makes a fresh root in root (PATH_MAX long). */
static inline void fixture_root(char *root) {
	snprintf(root, PATH_MAX, "/tmp/ccxd-test-sysfs-XXXXXX");
	CHECK(mkdtemp(root) != NULL);
}

/* A file of the tree, its directories made on the way. */
static inline void fixture_file(const char *root, const char *path, const char *text) {
	char full[PATH_MAX];
	FILE *f;

	if ((size_t)snprintf(full, sizeof(full), "%s%s", root, path) >= sizeof(full)) {
		CHECK(!"fixture path too long");
		return;
	}
	for (char *slash = strchr(full + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(full, 0755);
		*slash = '/';
	}
	f = fopen(full, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* /sys/devices/system/cpu/cpuN/DIR/FILE for each CPU in first..last. */
static inline void fixture_cpus(const char *root, unsigned first, unsigned last, const char *file, const char *text) {
	for (unsigned cpu = first; cpu <= last; cpu++) {
		char path[256];
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u/%s", cpu, file);
		fixture_file(root, path, text);
	}
}

static inline void fixture_remove(const char *root) {
	char rm[PATH_MAX + 16];

	snprintf(rm, sizeof(rm), "rm -rf '%s'", root);
	CHECK_INT(system(rm), 0);
}

#define FIXTURE_X3D "/sys/bus/platform/drivers/amd_x3d_vcache/AMDI0101:00/amd_x3d_mode"
