/* The real machines' topologies (../shared/topologies, or CCXD_TOPOLOGIES)
 * for unit tests: a checkout without them skips those tests; a file there
 * that does not load fails them. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "test.h"
#include "topology.h"

static inline const char *test_topologies_dir(void) {
	const char *dir = getenv("CCXD_TOPOLOGIES");
	struct stat st;

	if (!dir || !*dir)
		SKIP_TEST("CCXD_TOPOLOGIES is not set");
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		SKIP_TEST("CCXD_TOPOLOGIES is not a directory");
	return dir;
}

/* Loads spec, or reports why not and returns NULL. */
static inline struct topology *test_topology(const char *spec) {
	struct topology *t = NULL;
	char *error = NULL;
	int r = topology_load(spec, &t, &error);

	if (r < 0) {
		printf("# %s: %d %s\n", spec, r, error ? error : "(no message)");
		test_failed = 1;
	}
	free(error);
	return t;
}

/* One file of the directory, as "xml:DIR/FILE". */
static inline struct topology *test_topology_file(const char *file) {
	char spec[4096];

	snprintf(spec, sizeof(spec), "xml:%s/%s", test_topologies_dir(), file);
	return test_topology(spec);
}
