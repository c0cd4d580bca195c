/* The real machines' topologies that the project keeps for its tests
 * (tests/data/topologies, where each came from is in its README). Tests run
 * from the top of the tree (tests/run); a file that is missing or does not
 * load fails the test. */
#pragma once

#include <stdio.h>
#include <stdlib.h>

#include "test.h"
#include "topology.h"

#define TEST_TOPOLOGIES_DIR "tests/data/topologies"

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

	snprintf(spec, sizeof(spec), "xml:%s/%s", TEST_TOPOLOGIES_DIR, file);
	return test_topology(spec);
}
