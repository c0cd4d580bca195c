/* ccxt-fault ub|overflow|leak: does one deliberately wrong thing inside a
 * test of the unit-test harness (tests/unit/test.h), so that
 * tests/integration/test-sanitizers.sh can show a sanitizer build catches
 * it and fails the test. Prints the harness's TAP line. */
#include <limits.h>
#include <stdlib.h>

#include "../../tests/unit/test.h"

/* volatile, so that the compiler cannot see the faults coming and refuse to build them */
static volatile int big = INT_MAX;
static volatile size_t eight = 8;
static void *volatile kept;

static void signed_overflow(void) {
	volatile int v = big + 1;   /* undefined behaviour */
	(void)v;
}

static void heap_overflow(void) {
	volatile char *p = malloc(8);
	p[eight] = 1;               /* one past the end */
	free((void *)p);
}

static void leak(void) {
	kept = malloc(64);
	kept = NULL;                /* the last pointer to it is gone */
}

int main(int argc, char **argv) {
	static const struct test tests[] = { T(signed_overflow), T(heap_overflow), T(leak) };
	const char *which = argc > 1 ? argv[1] : "";

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (strcmp(tests[i].name, which) == 0)
			return test_run_all(&tests[i], 1);
	fprintf(stderr, "Usage: ccxt-fault signed_overflow|heap_overflow|leak\n");
	return 2;
}
