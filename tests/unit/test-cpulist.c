#include <errno.h>

#include "cpulist.h"
#include "test.h"

static void roundtrip(const char *in, const char *out) {
	cpu_set_t set;
	char buf[CPULIST_MAX];

	CHECK_INT(cpulist_parse(in, &set), 0);
	CHECK_STR(cpulist_format(&set, buf, sizeof(buf)), out);
}

static void parses_and_formats_ranges(void) {
	roundtrip("0-3,8-11", "0-3,8-11");
	roundtrip("3,2,1,0", "0-3");
	roundtrip("5", "5");
	roundtrip("", "");
	roundtrip("0-1\n", "0-1");
	roundtrip("  7 ", "7");
	roundtrip("0,2,4,6", "0,2,4,6");
	roundtrip("1023", "1023");
	roundtrip("0-1023", "0-1023");
	/* Ranges across the words of 64 CPUs the sets are read in. */
	roundtrip("63-64", "63-64");
	roundtrip("0,63,64,127-128,1000-1023", "0,63-64,127-128,1000-1023");
	roundtrip("62-65,191,192", "62-65,191-192");
	roundtrip("64-127", "64-127");
}

/* Sets of every density, formatted and parsed back: the same set, and
 * the last CPU in it found. */
static void formats_what_it_parses(void) {
	unsigned seed = 1;

	for (unsigned i = 0; i < 2000; i++) {
		cpu_set_t set, back;
		char buf[8192];
		int last = -1;

		CPU_ZERO(&set);
		for (unsigned c = 0; c < CPU_SETSIZE; c++) {
			seed = seed * 1103515245 + 12345;
			if ((seed >> 16) % 64 < i % 65) {
				CPU_SET(c, &set);
				last = (int)c;
			}
		}
		CHECK_INT(cpulist_parse(cpulist_format(&set, buf, sizeof(buf)), &back), 0);
		CHECK(CPU_EQUAL(&set, &back));
		CHECK_INT(cpulist_last(&set), last);
	}
}

static void rejects_malformed_lists(void) {
	cpu_set_t set;

	CHECK_INT(cpulist_parse("a", &set), -EINVAL);
	CHECK_INT(cpulist_parse("1-", &set), -EINVAL);
	CHECK_INT(cpulist_parse("-1", &set), -EINVAL);
	CHECK_INT(cpulist_parse("3-1", &set), -EINVAL);
	CHECK_INT(cpulist_parse("1,", &set), -EINVAL);
	CHECK_INT(cpulist_parse(",1", &set), -EINVAL);
	CHECK_INT(cpulist_parse("1,,2", &set), -EINVAL);
	CHECK_INT(cpulist_parse("0-7:2", &set), -EINVAL);
	CHECK_INT(cpulist_parse("1 2", &set), -EINVAL);
	CHECK_INT(cpulist_parse("1024", &set), -ERANGE);
	CHECK_INT(cpulist_parse("99999999999999999999", &set), -ERANGE);
}

static void truncates_visibly(void) {
	cpu_set_t set;
	char buf[8];

	CHECK_INT(cpulist_parse("0,2,4,6,8,10", &set), 0);
	CHECK_STR(cpulist_format(&set, buf, sizeof(buf)), "0,2,...");
}

static void formats_hex_like_taskset(void) {
	cpu_set_t set;
	char buf[CPULIST_MAX];

	CHECK_INT(cpulist_parse("0-3", &set), 0);
	CHECK_STR(cpulist_format_hex(&set, buf, sizeof(buf)), "f");
	CHECK_INT(cpulist_parse("0,2,4,6", &set), 0);
	CHECK_STR(cpulist_format_hex(&set, buf, sizeof(buf)), "55");
	CHECK_INT(cpulist_parse("8-9,0-1", &set), 0);
	CHECK_STR(cpulist_format_hex(&set, buf, sizeof(buf)), "303");
	CPU_ZERO(&set);
	CHECK_STR(cpulist_format_hex(&set, buf, sizeof(buf)), "0");
}

static void subset_and_last(void) {
	cpu_set_t a, b;

	CHECK_INT(cpulist_parse("1-2", &a), 0);
	CHECK_INT(cpulist_parse("0-3", &b), 0);
	CHECK(cpulist_is_subset(&a, &b));
	CHECK(!cpulist_is_subset(&b, &a));
	CHECK_INT(cpulist_last(&b), 3);
	CPU_ZERO(&a);
	CHECK_INT(cpulist_last(&a), -1);
}

TEST_MAIN(T(parses_and_formats_ranges), T(formats_what_it_parses), T(rejects_malformed_lists), T(truncates_visibly),
	  T(formats_hex_like_taskset), T(subset_and_last))
