#include <errno.h>

#include "test.h"
#include "util.h"

enum colour { RED, GREEN, BLUE, UNNAMED, VIOLET };

/* UNNAMED is a hole: a table need not name every value. */
static const char *const colour_names[] = {
	[RED] = "red",
	[GREEN] = "green",
	[BLUE] = "blue",
	[VIOLET] = "violet",
};

static void names_each_value(void) {
	CHECK_STR(NAME_OF(colour_names, RED), "red");
	CHECK_STR(NAME_OF(colour_names, BLUE), "blue");
	CHECK_STR(NAME_OF(colour_names, VIOLET), "violet");
}

static void names_no_value_past_the_end_or_in_a_hole(void) {
	CHECK(NAME_OF(colour_names, UNNAMED) == NULL);
	CHECK(NAME_OF(colour_names, VIOLET + 1) == NULL);
	CHECK(NAME_OF(colour_names, -1) == NULL);
	CHECK(util_name_of(colour_names, 0, RED) == NULL);
}

static void finds_the_value_of_a_name(void) {
	CHECK_INT(INDEX_OF(colour_names, "red"), RED);
	CHECK_INT(INDEX_OF(colour_names, "green"), GREEN);
	CHECK_INT(INDEX_OF(colour_names, "violet"), VIOLET);
}

static void refuses_a_name_it_does_not_have(void) {
	CHECK_INT(INDEX_OF(colour_names, "Red"), -EINVAL);
	CHECK_INT(INDEX_OF(colour_names, ""), -EINVAL);
	CHECK_INT(INDEX_OF(colour_names, NULL), -EINVAL);
	CHECK_INT(util_index_of(colour_names, BLUE, "blue"), -EINVAL);
}

TEST_MAIN(T(names_each_value), T(names_no_value_past_the_end_or_in_a_hole), T(finds_the_value_of_a_name),
	  T(refuses_a_name_it_does_not_have))
