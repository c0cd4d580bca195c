/* ccxctl's text for people: text_escape() and the views of replies that
 * hold names made to reach a terminal. */
#include <json-c/json.h>
#include <stdbool.h>

#include "ccxctl-print.h"
#include "ccxctl-text.h"
#include "test.h"

static void escaped(const char *in, const char *out) {
	char *s = text_escape(in);

	CHECK_STR(s, out);
	free(s);
}

static void escapes_control_characters(void) {
	escaped("\033[2J", "\\x1b[2J");
	escaped("ccxt-esc\033[2J\nx", "ccxt-esc\\x1b[2J\\nx");
	escaped("a\nb", "a\\nb");
	escaped("a\tb", "a\\tb");
	escaped("a\rb", "a\\rb");
	escaped("back\\slash", "back\\\\slash");
	escaped("\\x1b", "\\\\x1b");   /* a name that only looks escaped stays apart */
	escaped("del\x7f", "del\\x7f");
	escaped("\x01\x1f ~", "\\x01\\x1f ~");
	escaped("ccxt-victim 1-2,4 [x] \"q\" 'q' %s", "ccxt-victim 1-2,4 [x] \"q\" 'q' %s");
}

static void passes_utf8_through(void) {
	escaped("na\xc3\xafve \xe2\x82\xac", "na\xc3\xafve \xe2\x82\xac");
	escaped("\xf0\x9f\x90\xa7 \xef\xbf\xbd", "\xf0\x9f\x90\xa7 \xef\xbf\xbd");   /* U+1F427, U+FFFD */
}

/* Bytes that are not UTF-8, each written out: lone continuation bytes (the
 * raw C1 range 0x80-0x9f among them), overlong forms, surrogates, past
 * U+10FFFF, a sequence cut short. */
static void escapes_what_is_not_utf8(void) {
	escaped("\x80\xff", "\\x80\\xff");
	escaped("a\x9b[2Jb", "a\\x9b[2Jb");
	escaped("\xc0\xaf", "\\xc0\\xaf");               /* "/", overlong */
	escaped("\xe0\x80\xaf", "\\xe0\\x80\\xaf");
	escaped("\xed\xa0\x80", "\\xed\\xa0\\x80");         /* U+D800 */
	escaped("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");   /* U+110000 */
	escaped("\xe2\x82", "\\xe2\\x82");
	escaped("\xe2\x82x", "\\xe2\\x82x");
}

/* C1 controls as characters (U+009B is CSI to some terminals), and the
 * marks that reorder what follows (a name that shows as another). */
static void escapes_c1_controls_and_bidi_marks(void) {
	escaped("a\xc2\x9b" "2Jb", "a\\u009b2Jb");
	escaped("\xc2\x80\xc2\x9f\xc2\xa0", "\\u0080\\u009f\xc2\xa0");
	escaped("evil\xe2\x80\xaetxt.exe", "evil\\u202etxt.exe");   /* RIGHT-TO-LEFT OVERRIDE */
	escaped("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", "\\u202a\\u202b\\u202c\\u202d");
	escaped("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", "\\u2066\\u2067\\u2068\\u2069");
	escaped("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", "\\u200e\\u200f\\u061c");
}

static void escapes_the_empty_string(void) {
	escaped("", "");
}

/* Every byte that grows grows by its escape's length, with nothing cut. */
static void escapes_long_strings_whole(void) {
	size_t n = 100000;
	char *in = malloc(n + 1), *out;

	for (size_t i = 0; i < n; i++)
		in[i] = "\033a\n\\"[i % 4];
	in[n] = '\0';
	out = text_escape(in);
	CHECK(out != NULL);
	CHECK_INT(strlen(out), n / 4 * (4 + 1 + 2 + 2));
	for (size_t i = 0; out && i < n / 4; i++)
		if (memcmp(out + i * 9, "\\x1ba\\n\\\\", 9) != 0) {
			CHECK(!"every group of four escaped alike");
			break;
		}
	free(out);
	memset(in, 'a', n);
	out = text_escape(in);
	CHECK(out && strcmp(out, in) == 0);
	free(out);
	free(in);
}

static void escapes_every_string_of_a_reply(void) {
	json_object *o = json_tokener_parse("{\"a\": \"\\n\", \"b\": [1, \"\\u001b\", {\"c\": \"\\t\"}], \"d\": 2.5, "
					    "\"e\": null, \"f\": true}");

	text_escape_json(o);
	CHECK_STR(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
		  "{\"a\":\"\\\\n\",\"b\":[1,\"\\\\x1b\",{\"c\":\"\\\\t\"}],\"d\":2.5,\"e\":null,\"f\":true}");
	json_object_put(o);
}

/* What a view prints of the reply in text (JSON), name put in its %s's. */
static char *view(void (*print)(FILE *, json_object *), const char *text, const char *name) {
	char json[4096], *out = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&out, &size);
	json_object *o;

	snprintf(json, sizeof(json), text, name, name, name, name, name);
	o = json_tokener_parse(json);
	CHECK(o != NULL || strcmp(json, "null") == 0);
	print(f, o);
	fclose(f);
	json_object_put(o);
	return out;
}

static size_t lines(const char *s) {
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static bool has_control(const char *s) {
	for (; *s; s++)
		if (((unsigned char)*s < 0x20 && *s != '\n') || *s == 0x7f)
			return true;
	return false;
}

/* The view prints name as ESC[2J and a newline escaped, with no control
 * character, and no more lines than for a harmless name. */
static void shown_as_text(void (*print)(FILE *, json_object *), const char *text) {
	char *hostile = view(print, text, "ccxt-esc\\u001b[2J\\nx\\u007f"), *plain = view(print, text, "ccxt-esc");

	CHECK(!has_control(hostile));
	CHECK(strstr(hostile, "ccxt-esc\\x1b[2J\\nx\\x7f") != NULL);
	CHECK_INT(lines(hostile), lines(plain));
	if (test_failed)
		printf("# printed:\n%s", hostile);
	free(hostile);
	free(plain);
}

static void print_pinned(FILE *f, json_object *o) {
	print_placed(f, o, "pinned");
}

static void print_an_error(FILE *f, json_object *o) {
	print_error(f, "ccxctl", o, "io.ccxd.NoSuchProcess\n\033[2J");
}

static void views_show_names_as_text(void) {
	shown_as_text(print_status,
		      "{\"version\": \"0.1.0\", \"mode\": \"enforce\", \"topology\": \"system\", "
		      "\"watcher\": {\"source\": \"netlink\"}, \"counters\": {\"events\": 1}, "
		      "\"processes\": [{\"pid\": 42, \"comm\": \"%s\", \"state\": \"pinned\", \"ccx\": [1], "
		      "\"cpus\": \"1\", \"rule\": \"%s\", \"reason\": \"rule %s\"}], "
		      "\"sampling\": {\"processes_scanned\": 9}, "
		      "\"groups\": [{\"id\": 7, \"pids\": [42, 43], \"members\": [{\"pid\": 42, \"comm\": \"%s\"}], "
		      "\"state\": \"kept\", \"reason\": \"kept\", "
		      "\"channels\": [{\"kind\": \"pipe\", \"from\": 42, \"to\": 43}]}], "
		      "\"cut\": [{\"pid\": 44, \"comm\": \"%s\", \"reason\": \"too big\"}]}");
	shown_as_text(print_rules, "{\"rules\": [{\"file\": \"/etc/ccxd.conf\", \"line\": 3, \"name\": \"%s\", "
				   "\"ccx\": [1], \"policy\": \"pin\", \"force\": false, \"cmdline\": \"%s\"}]}");
	shown_as_text(print_topology,
		      "{\"source\": \"%s\", \"ccxs\": [{\"index\": 0, \"cpus\": \"%s\", \"usable\": true}]}");
	shown_as_text(print_pinned, "{\"process\": {\"pid\": 42, \"comm\": \"%s\", \"reason\": \"by hand\"}}");
	shown_as_text(print_explained, "{\"pid\": 42, \"comm\": \"%s\", \"exe\": \"/x\", \"rules\": [{\"name\": \"%s\", "
					"\"file\": \"/etc/ccxd.conf\", \"line\": 1, \"matches\": false, \"why\": \"no\"}]}");
	shown_as_text(print_an_error, "{\"message\": \"no process %s\", \"errors\": [\"%s\"]}");
}

/* One of a thing is named in the singular, several in the plural. */
static void counts_read_as_words(void) {
	char *one = view(print_topology,
			 "{\"source\": \"%s\", \"packages\": 1, \"numa_nodes\": 1, \"cores\": 1, \"pus\": 1, "
			 "\"online\": \"0\", \"ccxs\": [{\"index\": 0, \"cpus\": \"0\", \"usable\": true}]}",
			 "system");
	char *two = view(print_topology,
			 "{\"source\": \"%s\", \"packages\": 2, \"numa_nodes\": 2, \"cores\": 2, \"pus\": 4, "
			 "\"online\": \"0-3\", \"ccxs\": [{\"index\": 0, \"cpus\": \"0-1\", \"usable\": true}, "
			 "{\"index\": 1, \"cpus\": \"2-3\", \"usable\": true}]}",
			 "system");

	CHECK(strstr(one, "system: 1 package, 1 NUMA node, 1 CCX, 1 core, 1 CPU (online 0)\n") != NULL);
	CHECK(strstr(two, "system: 2 packages, 2 NUMA nodes, 2 CCXs, 2 cores, 4 CPUs (online 0-3)\n") != NULL);
	if (test_failed)
		printf("# printed:\n%s%s", one, two);
	free(one);
	free(two);
}

static void print_recommend(FILE *f, json_object *status) {
	json_object *rules = recommend_rules(status);

	print_recommended(f, rules);
	json_object_put(rules);
}

/* The kept groups, and those alone, as rules: a program once, by its path
 * where status has it, by its name where not; what a rule cannot hold as
 * it is, left out with a word. */
static void kept_groups_become_rules(void) {
	char *out = view(print_recommend,
			 "{\"groups\": ["
			 "{\"id\": 10, \"state\": \"kept\", \"ccx\": 1, \"seating\": \"shared-cpu\", \"gain\": 0.23, "
			 "\"noise\": 0.04, \"programs\": \"/usr/bin/pv|/usr/bin/yes\"},"
			 "{\"id\": 20, \"state\": \"reverted\", \"ccx\": null, \"programs\": \"/usr/bin/cat|/usr/bin/tee\"},"
			 "{\"id\": 30, \"state\": \"kept\", \"ccx\": 0, \"seating\": \"one-per-core\", \"gain\": 0.1, "
			 "\"noise\": 0.02, \"programs\": \"/opt/x/pv|/usr/bin/yes|/tmp/a ;b|/tmp/*\"},"
			 "{\"id\": 40, \"state\": \"kept\", \"ccx\": 0, \"programs\": \"x265|x265\"}]}",
			 "");

	CHECK(strstr(out, "; group 10: shared-cpu on CCX 1, +23% (noise 4%)\n"
			  "[program:pv]\nexe = /usr/bin/pv\nccx = 1\n[program:yes]\nexe = /usr/bin/yes\nccx = 1\n") != NULL);
	CHECK(strstr(out, "cat") == NULL);
	CHECK(strstr(out, "[program:pv-2]\nexe = /opt/x/pv\nccx = 0\n") != NULL);
	CHECK(strstr(out, "[program:yes-2]") == NULL);   /* already in group 10's rules */
	CHECK(strstr(out, "; left out, not a plain name or path: /tmp/a ;b\n") != NULL);
	CHECK(strstr(out, "; left out, not a plain name or path: /tmp/*\n") != NULL);
	CHECK(strstr(out, "[program:x265]\nccx = 0\n") != NULL);
	CHECK(strstr(out, "[program:x265-2]") == NULL);
	free(out);
	out = view(print_recommend, "{\"groups\": []}", "");
	CHECK(strstr(out, "nothing to recommend") != NULL);
	free(out);
}

/* Replies of the wrong shape print what they can, and nothing breaks. */
static void views_take_any_reply(void) {
	static const char *const replies[] = {
		"{}", "[]", "null", "\"\\u001b\"", "{\"processes\": 3, \"groups\": {\"a\": 1}, \"cut\": \"x\"}",
		"{\"processes\": [null, 1, {\"comm\": {\"\\u001b\": 1}}], "
		"\"groups\": [[], {\"pids\": 1, \"channels\": [1]}]}",
		"{\"rules\": [{}], \"ccxs\": [{}, 1], \"process\": 1, \"watcher\": {\"execs\": []}, "
		"\"probe\": {\"figures\": 1}}",
	};
	static void (*const views[])(FILE *, json_object *) = {
		print_status, print_topology, print_rules, print_pinned, print_reloaded, print_version, print_an_error,
		print_learned, print_recommend, print_explained,
	};

	for (size_t i = 0; i < sizeof(replies) / sizeof(replies[0]); i++)
		for (size_t k = 0; k < sizeof(views) / sizeof(views[0]); k++) {
			char *out = view(views[k], replies[i], "");
			CHECK(!has_control(out));
			free(out);
		}
}

TEST_MAIN(T(escapes_control_characters), T(passes_utf8_through), T(escapes_what_is_not_utf8), T(escapes_c1_controls_and_bidi_marks), T(escapes_the_empty_string),
	  T(escapes_long_strings_whole), T(escapes_every_string_of_a_reply), T(views_show_names_as_text),
	  T(counts_read_as_words), T(kept_groups_become_rules), T(views_take_any_reply))
