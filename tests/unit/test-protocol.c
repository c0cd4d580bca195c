/* protocol_parse_call(): what the control server accepts as a call. */
#include <errno.h>
#include <string.h>

#include "protocol.h"
#include "test.h"

static int parse(const char *text, struct protocol_call *call) {
	return protocol_parse_call(text, strlen(text), call);
}

static void a_call_with_parameters(void) {
	struct protocol_call c;

	CHECK_INT(parse("{\"method\":\"io.ccxd.Pin\",\"parameters\":{\"pid\":42,\"ccx\":1}}", &c), 0);
	CHECK_STR(c.method, "io.ccxd.Pin");
	CHECK(c.parameters && json_object_is_type(c.parameters, json_type_object));
	CHECK(!c.oneway);
	protocol_call_done(&c);
	CHECK(!c.message && !c.method);
}

static void parameters_and_oneway_are_optional(void) {
	struct protocol_call c;

	CHECK_INT(parse("{\"method\":\"io.ccxd.Reload\",\"oneway\":true}", &c), 0);
	CHECK(!c.parameters);
	CHECK(c.oneway);
	protocol_call_done(&c);
}

static void text_that_is_not_one_json_object_is_ebadmsg(void) {
	struct protocol_call c;

	CHECK_INT(parse("", &c), -EBADMSG);
	CHECK_INT(parse("{\"method\":", &c), -EBADMSG);
	CHECK_INT(parse("{\"method\":\"a.B\"} x", &c), -EBADMSG);
	CHECK_INT(parse("{\"method\":\"a.B\"}{}", &c), -EBADMSG);
	CHECK_INT(parse("{'method':'a.B'}", &c), -EBADMSG);   /* strict: no single quotes */
	CHECK(!c.message);
}

static void nesting_deeper_than_the_limit_is_ebadmsg(void) {
	char deep[256], ok[256];
	struct protocol_call c;
	int n = CCXD_JSON_DEPTH_MAX;   /* the object itself is one level */

	snprintf(deep, sizeof(deep), "{\"method\":\"a.B\",\"parameters\":{\"x\":%.*s1%.*s}}",
		 n, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", n, "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]");
	CHECK_INT(parse(deep, &c), -EBADMSG);
	snprintf(ok, sizeof(ok), "{\"method\":\"a.B\",\"parameters\":{\"x\":%.*s1%.*s}}",
		 n - 3, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", n - 3, "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]");
	CHECK_INT(parse(ok, &c), 0);
	protocol_call_done(&c);
}

static void json_of_the_wrong_shape_is_einval(void) {
	struct protocol_call c;

	CHECK_INT(parse("[1]", &c), -EINVAL);
	CHECK_INT(parse("{}", &c), -EINVAL);
	CHECK_INT(parse("{\"method\":42}", &c), -EINVAL);
	CHECK_INT(parse("{\"method\":\"a.B\",\"parameters\":[]}", &c), -EINVAL);
	CHECK(!c.message);
}

static void longer_than_a_request_is_ebadmsg(void) {
	struct protocol_call c;

	CHECK_INT(protocol_parse_call("{}", (size_t)CCXD_REQUEST_MAX + 1, &c), -EBADMSG);
}

TEST_MAIN(T(a_call_with_parameters), T(parameters_and_oneway_are_optional),
	  T(text_that_is_not_one_json_object_is_ebadmsg), T(nesting_deeper_than_the_limit_is_ebadmsg),
	  T(json_of_the_wrong_shape_is_einval), T(longer_than_a_request_is_ebadmsg))
