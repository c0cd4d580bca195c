#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/stat.h>

#include "config-file.h"
#include "config-keys.h"
#include "config-parse.h"
#include "test.h"

/* Writes text (len bytes, so that it may hold NUL bytes) to a fresh temp
 * file and returns its malloc'd path. */
static char *fixture_n(const char *text, size_t len) {
	const char *dir = getenv("TMPDIR");
	char *path;
	int fd;

	if (asprintf(&path, "%s/ccxd-test-config-XXXXXX", dir && *dir ? dir : "/tmp") < 0)
		abort();
	fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		abort();
	}
	for (size_t done = 0; done < len;) {
		ssize_t n = write(fd, text + done, len - done);

		if (n <= 0)
			abort();
		done += (size_t)n;
	}
	close(fd);
	return path;
}

static char *fixture(const char *text) {
	return fixture_n(text, strlen(text));
}

/* Loads text as a config file that must be valid. */
static struct config *load_ok(const char *text) {
	char *path = fixture(text), **errors = NULL;
	struct config *c = NULL;
	int r = config_load(path, &c, &errors);

	CHECK_INT(r, 0);
	CHECK(errors == NULL);
	for (char **e = errors; e && *e; e++)
		printf("# unexpected error: %s\n", *e);
	config_errors_free(errors);
	if (c)
		CHECK_STR(c->path, path);
	unlink(path);
	free(path);
	return c;
}

/* Loads len bytes of text, which must fail with exactly the errors given
 * after it ("LINE: message", the file name left out), in that order. */
static void check_errors_n(const char *text, size_t len, ...) {
	char *path = fixture_n(text, len), **errors = NULL;
	struct config *c = (struct config *)1;
	size_t n = 0;
	va_list ap;

	CHECK_INT(config_load(path, &c, &errors), -EINVAL);
	CHECK(c == NULL);
	CHECK(errors != NULL);

	va_start(ap, len);
	for (const char *want; (want = va_arg(ap, const char *)); n++) {
		char *full;

		if (asprintf(&full, "%s:%s", path, want) < 0)
			abort();
		CHECK_STR(errors ? errors[n] : NULL, full);
		free(full);
		if (!errors || !errors[n])
			break;
	}
	va_end(ap);
	if (errors && errors[n]) {
		test_failed = 1;
		for (; errors[n]; n++)
			printf("# unexpected error: %s\n", errors[n]);
	}
	config_errors_free(errors);
	unlink(path);
	free(path);
}

#define check_errors(text, ...) check_errors_n(text, strlen(text), __VA_ARGS__)

/* ---- defaults and valid files ---- */

static void check_defaults(const struct config *c) {
	CHECK_STR(c->socket, "/run/ccxd/ccxd.sock");
	CHECK_STR(c->topology, "system");
	CHECK_INT(c->mode, CONFIG_MODE_ENFORCE);
	CHECK_INT(c->interval_usec, 1000000);
	CHECK(c->restore_on_exit);
	CHECK(c->automatic);
	CHECK_STR(c->state_dir, "/var/lib/ccxd");
	CHECK_STR(c->runtime_dir, "/run/ccxd");
	CHECK(c->calibrate);
	CHECK(c->realtime_wait);
	/* BPF, the counters and the exec programs: whatever the kernel allows. */
	CHECK_INT(c->bpf, SAMPLER_READ_BATCH);
	CHECK_INT(c->traffic, SAMPLER_COUNT_AUTO);
	CHECK_INT(c->exec_events, CONFIG_EXECS_AUTO);
	CHECK(c->metrics_file == NULL);
	CHECK(c->min_rate == 1048576.0);
	CHECK(c->min_gain == 0.05);
	CHECK_INT(c->window, 3);
	CHECK_INT(c->n_seatings, 3);
	CHECK_INT(c->seatings[0], SEATING_CORES);
	CHECK_INT(c->seatings[1], SEATING_SMT);
	CHECK_INT(c->seatings[2], SEATING_SHARED);
	CHECK_INT(c->x3d_mode, CONFIG_X3D_KEEP);
	CHECK_INT(c->n_rules, 0);
	CHECK(c->rules == NULL);
}

static void default_config_has_documented_defaults(void) {
	struct config *c = config_new_default();

	CHECK(c != NULL);
	CHECK(c->path == NULL);
	check_defaults(c);
	config_free(c);
}

static void empty_file_gives_defaults(void) {
	struct config *c = load_ok("");

	if (c)
		check_defaults(c);
	config_free(c);
}

static void comments_and_blank_lines_give_defaults(void) {
	struct config *c = load_ok("; a comment\n# another\n\n   \n\t; indented comment\n[daemon]\n");

	if (c)
		check_defaults(c);
	config_free(c);
}

static void parses_x3d_mode(void) {
	static const struct {
		const char *value;
		enum config_x3d mode;
	} cases[] = {
		{ "keep", CONFIG_X3D_KEEP },
		{ "cache", CONFIG_X3D_CACHE },
		{ "frequency", CONFIG_X3D_FREQUENCY },
	};
	struct config *c = config_new_default();

	CHECK(c && c->x3d_mode == CONFIG_X3D_KEEP);
	config_free(c);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[64];
		snprintf(text, sizeof(text), "[daemon]\nx3d_mode = %s\n", cases[i].value);
		c = load_ok(text);
		if (c)
			CHECK_INT(c->x3d_mode, cases[i].mode);
		config_free(c);
	}
}

static void rejects_bad_x3d_mode(void) {
	check_errors("[daemon]\nx3d_mode = turbo\n",
		     "2: invalid value 'turbo' for x3d_mode (expected keep, cache or frequency)", NULL);
	check_errors("[daemon]\nx3d_mode = Cache\n",
		     "2: invalid value 'Cache' for x3d_mode (expected keep, cache or frequency)", NULL);
	check_errors("[daemon]\nx3d_mode =\n",
		     "2: invalid value '' for x3d_mode (expected keep, cache or frequency)", NULL);
	check_errors("[daemon]\nx3d_mode = cache\nx3d_mode = frequency\n", "3: duplicate key 'x3d_mode' (first at line 2)",
		     NULL);
}

static void calibrate_can_be_turned_off(void) {
	struct config *c = load_ok("[daemon]\ncalibrate = no\n");

	if (!c)
		return;
	CHECK(!c->calibrate);
	config_free(c);
}

static void realtime_wait_can_be_turned_off(void) {
	struct config *c = load_ok("[daemon]\nrealtime_wait = no\n");

	if (c) {
		CHECK(!c->realtime_wait);
		config_free(c);
	}
	check_errors("[daemon]\nrealtime_wait = sometimes\n",
		     "2: invalid value 'sometimes' for realtime_wait (expected yes, no, true, false, on, off, 1 or 0)", NULL);
}

static void parses_every_key(void) {
	struct config *c = load_ok(
		"[daemon]\n"
		"socket = /tmp/ccxd.sock\n"
		"topology = synthetic:package:1 l3cache:2 core:4 pu:2\n"
		"mode = dry-run\n"
		"automatic = no\n"
		"interval = 250ms\n"
		"restore_on_exit = no\n"
		"state_dir = /tmp/ccxd-state\n"
		"runtime_dir = /tmp/ccxd-run\n"
		"metrics_file = /var/lib/node-exporter/ccxd.prom\n"
		"\n"
		"[program:x265]\n"
		"exe = /usr/bin/x265*\n"
		"cmdline = *--preset*\n"
		"ccx = 1\n"
		"policy = compact\n"
		"smt = avoid\n"
		"prefer = cache\n"
		"force = yes\n"
		"\n"
		"[program:ffmpeg]\n"
		"policy = spread\n"
		"spill = on\n");

	if (!c)
		return;
	CHECK_STR(c->socket, "/tmp/ccxd.sock");
	CHECK_STR(c->topology, "synthetic:package:1 l3cache:2 core:4 pu:2");
	CHECK_INT(c->mode, CONFIG_MODE_DRY_RUN);
	CHECK(!c->automatic);
	CHECK_INT(c->interval_usec, 250000);
	CHECK(!c->restore_on_exit);
	CHECK_STR(c->state_dir, "/tmp/ccxd-state");
	CHECK_STR(c->runtime_dir, "/tmp/ccxd-run");
	CHECK_STR(c->metrics_file, "/var/lib/node-exporter/ccxd.prom");
	CHECK_INT(c->n_rules, 2);

	const struct rule *r = &c->rules[0];
	CHECK_STR(r->name, "x265");
	CHECK_STR(r->exe, "/usr/bin/x265*");
	CHECK_STR(r->cmdline, "*--preset*");
	CHECK(!r->ccx_auto);
	CHECK_INT(r->n_ccx, 1);
	CHECK_INT(r->ccx[0], 1);
	CHECK_INT(r->policy, RULE_POLICY_COMPACT);
	CHECK_INT(r->smt, RULE_SMT_AVOID);
	CHECK_INT(r->prefer, RULE_PREFER_CACHE);
	CHECK(r->force);
	CHECK(!r->spill);
	CHECK_INT(r->line, 12);
	CHECK_INT(r->ccx_line, 15);

	r = &c->rules[1];
	CHECK_STR(r->name, "ffmpeg");
	CHECK(r->exe == NULL);
	CHECK(r->cmdline == NULL);
	CHECK(r->ccx_auto);
	CHECK_INT(r->n_ccx, 0);
	CHECK(r->ccx == NULL);
	CHECK_INT(r->policy, RULE_POLICY_SPREAD);
	CHECK_INT(r->smt, RULE_SMT_ALLOW);
	CHECK_INT(r->prefer, RULE_PREFER_ANY);
	CHECK(!r->force);
	CHECK(r->spill);
	CHECK_INT(r->line, 21);
	CHECK_INT(r->ccx_line, 21);
	config_free(c);
}

static void program_section_without_keys_is_a_rule(void) {
	struct config *c = load_ok("[program:a]\n[program:b]\n");

	if (!c)
		return;
	CHECK_INT(c->n_rules, 2);
	CHECK_STR(c->rules[0].name, "a");
	CHECK_INT(c->rules[0].policy, RULE_POLICY_PIN);
	CHECK_STR(c->rules[1].name, "b");
	CHECK_INT(c->rules[1].line, 2);
	config_free(c);
}

static void parses_each_accepted_spelling(void) {
	static const struct {
		const char *line;
		enum config_mode mode;
	} modes[] = {
		{ "mode = enforce", CONFIG_MODE_ENFORCE },
		{ "mode = dry-run", CONFIG_MODE_DRY_RUN },
		{ "mode = off", CONFIG_MODE_OFF },
	};
	static const struct {
		const char *line;
		enum sampler_reading reading;
	} bpfs[] = {
		{ "", SAMPLER_READ_BATCH },
		{ "bpf = auto", SAMPLER_READ_BATCH },
		{ "bpf = per-process", SAMPLER_READ_EACH },
		{ "bpf = no", SAMPLER_READ_PROC },
	};
	static const char *const policies[] = { "pin", "compact", "spread", "pair", "auto", "ignore" };
	static const char *const prefers[] = { "any", "cache", "frequency" };

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		char *text;

		if (asprintf(&text, "[daemon]\n%s\n", modes[i].line) < 0)
			abort();
		struct config *c = load_ok(text);
		if (c)
			CHECK_INT(c->mode, modes[i].mode);
		config_free(c);
		free(text);
	}
	for (size_t i = 0; i < sizeof(bpfs) / sizeof(bpfs[0]); i++) {
		char *text;

		if (asprintf(&text, "[daemon]\n%s\n", bpfs[i].line) < 0)
			abort();
		struct config *c = load_ok(text);
		if (c)
			CHECK_INT(c->bpf, bpfs[i].reading);
		config_free(c);
		free(text);
	}
	for (size_t i = 0; i < 6; i++) {
		char *text;

		if (asprintf(&text, "[program:p]\npolicy = %s\nprefer = %s\nsmt = %s\n",
			     policies[i], prefers[i % 3], i % 2 ? "avoid" : "allow") < 0)
			abort();
		struct config *c = load_ok(text);
		if (c && c->n_rules == 1) {
			CHECK_INT(c->rules[0].policy, (int)i);
			CHECK_INT(c->rules[0].prefer, (int)(i % 3));
			CHECK_INT(c->rules[0].smt, i % 2 ? RULE_SMT_AVOID : RULE_SMT_ALLOW);
		}
		config_free(c);
		free(text);
	}
}

static void parses_topology_specs(void) {
	static const char *const specs[] = { "system", "xml:/tmp/t.xml", "xml:relative.xml",
					     "synthetic:core:2 pu:2" };

	for (size_t i = 0; i < 4; i++) {
		char *text;

		if (asprintf(&text, "[daemon]\ntopology = %s\n", specs[i]) < 0)
			abort();
		struct config *c = load_ok(text);
		if (c)
			CHECK_STR(c->topology, specs[i]);
		config_free(c);
		free(text);
	}
}

static void parses_ignore_policy(void) {
	struct config *c = load_ok("[program:restic]\npolicy = ignore\n");

	if (c && c->n_rules == 1)
		CHECK_INT(c->rules[0].policy, RULE_POLICY_IGNORE);
	config_free(c);
}

static void parses_ccx_lists_in_order_given(void) {
	struct config *c = load_ok(
		"[program:a]\nccx = 2,0, 5 ,1023\n"
		"[program:b]\nccx = auto\n"
		"[program:c]\nccx = 0\n");

	if (!c || c->n_rules != 3)
		return;
	CHECK(!c->rules[0].ccx_auto);
	CHECK_INT(c->rules[0].n_ccx, 4);
	CHECK_INT(c->rules[0].ccx[0], 2);
	CHECK_INT(c->rules[0].ccx[1], 0);
	CHECK_INT(c->rules[0].ccx[2], 5);
	CHECK_INT(c->rules[0].ccx[3], 1023);
	CHECK_INT(c->rules[0].ccx_line, 2);
	CHECK(c->rules[1].ccx_auto);
	CHECK_INT(c->rules[1].n_ccx, 0);
	CHECK_INT(c->rules[1].ccx_line, 4);
	CHECK(!c->rules[2].ccx_auto);
	CHECK_INT(c->rules[2].n_ccx, 1);
	CHECK_INT(c->rules[2].ccx[0], 0);
	config_free(c);
}

/* ---- lexical details ---- */

static void cuts_inline_comments_only_after_white_space(void) {
	struct config *c = load_ok(
		"[program:x265]             ; NAME matches comm\n"
		"exe = /usr/bin/a;b ; the ';' in the path stays\n"
		"cmdline = *#* # is no comment after a value\n"
		"ccx = 1\t; after a tab too\n");

	if (!c)
		goto out;
	CHECK_STR(c->rules[0].exe, "/usr/bin/a;b");
	CHECK_STR(c->rules[0].cmdline, "*#* # is no comment after a value");
	CHECK_INT(c->rules[0].n_ccx, 1);
out:
	config_free(c);
	/* "policy=pin;" is the value "pin;", "cmdline = ; ..." an empty one. */
	check_errors("[program:x]\npolicy=pin;\ncmdline = ; only a comment\n",
		     "2: invalid value 'pin;' for policy (expected pin, compact, spread, pair, auto or ignore)",
		     "3: empty value for cmdline (expected a glob)", NULL);
}

/* inih would take an indented line as more of the value before it; here
 * indentation means nothing, so an indented key is just a key and an
 * indented non-key is a syntax error. */
static void indented_lines_are_not_continuations(void) {
	struct config *c = load_ok("[daemon]\n  mode = off\n\tinterval = 2s\n  [program:a]\n    policy = ignore\n");

	if (c) {
		CHECK_INT(c->mode, CONFIG_MODE_OFF);
		CHECK_INT(c->interval_usec, 2000000);
		CHECK_INT(c->n_rules, 1);
		CHECK_INT(c->rules[0].policy, RULE_POLICY_IGNORE);
	}
	config_free(c);
	check_errors("[program:a]\ncmdline = *--preset\n  slow*\n",
		     "3: syntax error (expected 'key = value', '[section]' or a comment)", NULL);
}

static void accepts_bom_and_crlf(void) {
	struct config *c = load_ok("\xef\xbb\xbf[daemon]\r\nmode = off\r\n[program:a]\r\nexe = /bin/a\r\n");

	if (c) {
		CHECK_INT(c->mode, CONFIG_MODE_OFF);
		CHECK_INT(c->n_rules, 1);
		CHECK_STR(c->rules[0].exe, "/bin/a");
	}
	config_free(c);
	/* Only at the very start: elsewhere it is text like any other. */
	check_errors("[daemon]\n\xef\xbb\xbfmode = off\n",
		     "2: unknown key '\xef\xbb\xbfmode' in [daemon] (expected socket, topology, mode, automatic, interval, restore_on_exit, state_dir, runtime_dir, realtime_wait, calibrate, bpf, traffic, exec_events, metrics_file, min_rate, min_message_rate, min_gain, window, crowded_wait, crowded_samples, recheck, seatings, x3d_mode)",
		     NULL);
}

static void last_line_needs_no_newline(void) {
	struct config *c = load_ok("[daemon]\nmode = off");

	if (c)
		CHECK_INT(c->mode, CONFIG_MODE_OFF);
	config_free(c);
}

/* inih's section buffer holds 49 bytes; the name must still arrive whole. */
static void keeps_long_section_names(void) {
	const char *name = "a-program-name-that-is-much-longer-than-inih-keeps-for-a-section";
	char *text;

	if (asprintf(&text, "[program:%s]\npolicy = ignore\n", name) < 0)
		abort();
	struct config *c = load_ok(text);
	if (c && c->n_rules == 1) {
		CHECK_STR(c->rules[0].name, name);
		CHECK_INT(c->rules[0].policy, RULE_POLICY_IGNORE);
	}
	config_free(c);
	free(text);
}

static void trims_white_space_in_section_headers(void) {
	struct config *c = load_ok("[ daemon ]\nmode = off\n[program: x265 ]\n");

	if (c) {
		CHECK_INT(c->mode, CONFIG_MODE_OFF);
		CHECK_INT(c->n_rules, 1);
		CHECK_STR(c->rules[0].name, "x265");
	}
	config_free(c);
}

/* ---- errors, each with its line ---- */

static void rejects_lines_that_are_no_key_value(void) {
	check_errors("[daemon]\nmode\n", "2: syntax error (expected 'key = value', '[section]' or a comment)", NULL);
}

static void rejects_colon_as_separator(void) {
	check_errors("[daemon]\nmode: off\n", "2: syntax error (expected 'key = value', '[section]' or a comment)", NULL);
}

static void rejects_missing_key(void) {
	check_errors("[daemon]\n = off\n", "2: missing key before '='", NULL);
}

static void rejects_unterminated_section_header(void) {
	/* The keys after it are not blamed on the section before. */
	check_errors("[daemon]\nmode = off\n[program:a\nmode = off\n", "3: missing ']' in section header", NULL);
	check_errors("[program:a ;b]\n", "1: missing ']' in section header", NULL);
}

static void rejects_text_after_section_header(void) {
	check_errors("[daemon] mode = off\n",
		     "1: unexpected 'mode = off' after section header [daemon]", NULL);
}

static void reports_every_syntax_error(void) {
	check_errors("[daemon]\nfoo\nmode = off\nbar\n\n[x\nbaz\n",
		     "2: syntax error (expected 'key = value', '[section]' or a comment)",
		     "4: syntax error (expected 'key = value', '[section]' or a comment)",
		     "6: missing ']' in section header",
		     "7: syntax error (expected 'key = value', '[section]' or a comment)", NULL);
}

static void rejects_long_lines_and_keeps_counting(void) {
	char text[1024];
	int n = snprintf(text, sizeof(text), "[program:a]\ncmdline = %0300d\nfoo\n", 0);

	CHECK(n > 0 && (size_t)n < sizeof(text));
	check_errors(text, "2: line too long (310 bytes, at most 198)",
		     "3: syntax error (expected 'key = value', '[section]' or a comment)", NULL);
}

static void accepts_longest_line(void) {
	char text[512];
	/* "cmdline = " is 10 bytes: 188 more make 198. */
	snprintf(text, sizeof(text), "[program:a]\ncmdline = %0188d\n", 7);
	struct config *c = load_ok(text);

	if (c && c->n_rules == 1)
		CHECK_INT(strlen(c->rules[0].cmdline), 188);
	config_free(c);
	snprintf(text, sizeof(text), "[program:a]\ncmdline = %0189d\n", 7);
	check_errors(text, "2: line too long (199 bytes, at most 198)", NULL);
}

static void accepts_long_comment_lines(void) {
	char text[4096];

	memset(text, '-', sizeof(text));
	memcpy(text, "[daemon]\n  ; ", 13);
	memcpy(text + 3000, "\nmode = off\n", 13);
	struct config *c = load_ok(text);

	if (c)
		CHECK_INT(c->mode, CONFIG_MODE_OFF);
	config_free(c);
}

static void survives_a_huge_line(void) {
	size_t len = 4 << 20;
	char *text = malloc(len + 32);

	if (!text)
		abort();
	memcpy(text, "[daemon]\nmode = ", 16);
	memset(text + 16, 'x', len - 16);
	memcpy(text + len, "\nfoo\n", 6);
	char msg[80];
	snprintf(msg, sizeof(msg), "2: line too long (%zu bytes, at most 198)", len - 9);
	check_errors(text, msg, "3: syntax error (expected 'key = value', '[section]' or a comment)", NULL);
	free(text);
}

static void rejects_nul_bytes(void) {
	static const char text[] = "[daemon]\nmode = o\0ff\nfoo\n";

	check_errors_n(text, sizeof(text) - 1, "2: NUL byte in line",
		       "3: syntax error (expected 'key = value', '[section]' or a comment)", NULL);
}

static void rejects_unknown_section(void) {
	/* Its keys are not reported one by one: the header says it all. */
	check_errors("[deamon]\nmode = off\n[Daemon]\n[program]\n",
		     "1: unknown section [deamon] (expected [daemon] or [program:NAME])",
		     "3: unknown section [Daemon] (expected [daemon] or [program:NAME])",
		     "4: unknown section [program] (expected [daemon] or [program:NAME])", NULL);
}

static void rejects_keys_outside_sections(void) {
	check_errors("; comment\nmode = off\ninterval = 2s\n[daemon]\n",
		     "2: key 'mode' outside a section (expected [daemon] or [program:NAME] above it)",
		     "3: key 'interval' outside a section (expected [daemon] or [program:NAME] above it)", NULL);
}

static void rejects_unknown_daemon_key(void) {
	check_errors("[daemon]\nsockets = /a\n",
		     "2: unknown key 'sockets' in [daemon] (expected socket, topology, mode, automatic, interval, restore_on_exit, state_dir, runtime_dir, realtime_wait, calibrate, bpf, traffic, exec_events, metrics_file, min_rate, min_message_rate, min_gain, window, crowded_wait, crowded_samples, recheck, seatings, x3d_mode)",
		     NULL);
}

static void parses_the_automatic_policy_keys(void) {
	struct config *c = load_ok("[daemon]\nmin_rate = 4M/s\nmin_gain = 12.5%\nwindow = 5\nseatings = shared-cpu,one-per-core\n");

	if (!c)
		return;
	CHECK(c->min_rate == 4.0 * 1048576);
	CHECK(c->min_gain == 0.125);
	CHECK_INT(c->window, 5);
	CHECK_INT(c->n_seatings, 2);
	CHECK_INT(c->seatings[0], SEATING_SHARED);
	CHECK_INT(c->seatings[1], SEATING_CORES);
	config_free(c);
	c = load_ok("[daemon]\nmin_gain = 0.2\n");
	if (c)
		CHECK(c->min_gain == 0.2);
	config_free(c);
}

static void rejects_bad_automatic_policy_values(void) {
	check_errors("[daemon]\nmin_rate = fast\nmin_gain = -5%\nmin_gain = 5%%\nwindow = 9\nseatings = spread\n"
		     "[program:x]\n[daemon]\nseatings = shared-cpu, shared-cpu\nwindow = 0\n",
		     "2: invalid value 'fast' for min_rate (expected a rate such as 512K, 1M or 4M/s)",
		     "3: invalid value '-5%' for min_gain (expected a gain such as 5% or 0.05, at most 1000%)",
		     "4: duplicate key 'min_gain' (first at line 3)",
		     "5: invalid value '9' for window (expected a number of samples, 1 to 8)",
		     "6: invalid value 'spread' for seatings (expected one-per-core, smt-siblings, shared-cpu, whole-ccx)",
		     "8: duplicate [daemon] section (first at line 1)",
		     "9: seatings lists shared-cpu twice",
		     "10: invalid value '0' for window (expected a number of samples, 1 to 8)", NULL);
	check_errors("[daemon]\nseatings = ,\n",
		     "2: empty value for seatings (expected one-per-core, smt-siblings, shared-cpu, whole-ccx)", NULL);
}

static void rejects_unknown_program_key(void) {
	check_errors("[program:x265]\npolicy = pin\nccxs = 1\n",
		     "3: unknown key 'ccxs' in [program:x265] (expected exe, cmdline, parent, ancestor, unit, cgroup, ccx, policy, smt, prefer, force, "
		     "spill)",
		     NULL);
	/* Keys of one section do not belong to the other. */
	check_errors("[daemon]\nexe = /bin/a\n",
		     "2: unknown key 'exe' in [daemon] (expected socket, topology, mode, automatic, interval, restore_on_exit, state_dir, runtime_dir, realtime_wait, calibrate, bpf, traffic, exec_events, metrics_file, min_rate, min_message_rate, min_gain, window, crowded_wait, crowded_samples, recheck, seatings, x3d_mode)",
		     NULL);
}

static void rejects_bad_enum_values(void) {
	check_errors("[daemon]\nmode = dryrun\n",
		     "2: invalid value 'dryrun' for mode (expected enforce, dry-run or off)", NULL);
	check_errors("[daemon]\nbpf = yes\n",
		     "2: invalid value 'yes' for bpf (expected auto, per-process or no)", NULL);
	check_errors("[program:a]\npolicy = Pin\nsmt = no\nprefer = l3\n",
		     "2: invalid value 'Pin' for policy (expected pin, compact, spread, pair, auto or ignore)",
		     "3: invalid value 'no' for smt (expected allow or avoid)",
		     "4: invalid value 'l3' for prefer (expected any, cache or frequency)", NULL);
}

static void rejects_bad_booleans(void) {
	check_errors("[daemon]\nrestore_on_exit = maybe\n[program:a]\nforce =\nspill = sometimes\n",
		     "2: invalid value 'maybe' for restore_on_exit (expected yes, no, true, false, on, off, 1 or 0)",
		     "4: invalid value '' for force (expected yes, no, true, false, on, off, 1 or 0)",
		     "5: invalid value 'sometimes' for spill (expected yes, no, true, false, on, off, 1 or 0)", NULL);
}

static void rejects_duplicate_keys(void) {
	check_errors("[daemon]\nmode = off\n\nmode = enforce\n[program:a]\nccx = 1\nccx = 2\n",
		     "4: duplicate key 'mode' (first at line 2)",
		     "7: duplicate key 'ccx' (first at line 6)", NULL);
}

static void same_key_in_two_programs_is_no_duplicate(void) {
	struct config *c = load_ok("[program:a]\nccx = 1\n[program:b]\nccx = 1\n");

	config_free(c);
}

static void rejects_duplicate_program_sections(void) {
	check_errors("[program:a]\n[program:b]\n[program:a]\n[program:a]\n",
		     "3: duplicate section [program:a] (first at line 1)",
		     "4: duplicate section [program:a] (first at line 1)", NULL);
}

static void rejects_empty_program_name(void) {
	check_errors("[program:]\npolicy = pin\n[program: ]\n",
		     "1: empty program name in [program:]",
		     "3: empty program name in [program:]", NULL);
}

static void rejects_duplicate_daemon_section(void) {
	/* The second one is still checked, as a section of its own. */
	check_errors("[daemon]\nmode = off\n[daemon]\nmode = on\n",
		     "3: duplicate [daemon] section (first at line 1)",
		     "4: invalid value 'on' for mode (expected enforce, dry-run or off)", NULL);
}

static void rejects_relative_socket(void) {
	check_errors("[daemon]\nsocket = run/ccxd.sock\nsocket2 = x\n",
		     "2: invalid value 'run/ccxd.sock' for socket (expected an absolute path)",
		     "3: unknown key 'socket2' in [daemon] (expected socket, topology, mode, automatic, interval, restore_on_exit, state_dir, runtime_dir, realtime_wait, calibrate, bpf, traffic, exec_events, metrics_file, min_rate, min_message_rate, min_gain, window, crowded_wait, crowded_samples, recheck, seatings, x3d_mode)",
		     NULL);
	check_errors("[daemon]\nsocket =\n", "2: invalid value '' for socket (expected an absolute path)", NULL);
}

static void rejects_socket_path_too_long_for_bind(void) {
	char text[256];

	snprintf(text, sizeof(text), "[daemon]\nsocket = /%0107d\n", 0);
	check_errors(text, "2: socket path too long (108 bytes, at most 107)", NULL);
	snprintf(text, sizeof(text), "[daemon]\nsocket = /%0106d\n", 0);
	config_free(load_ok(text));
}

static void rejects_relative_state_dir(void) {
	check_errors("[daemon]\nstate_dir = var/lib/ccxd\n",
		     "2: invalid value 'var/lib/ccxd' for state_dir (expected an absolute path)", NULL);
}

static void rejects_metrics_file_that_is_no_file_path(void) {
	check_errors("[daemon]\nmetrics_file = ccxd.prom\n",
		     "2: invalid value 'ccxd.prom' for metrics_file (expected an absolute path)", NULL);
	check_errors("[daemon]\nmetrics_file = /var/lib/node-exporter/\n",
		     "2: invalid value '/var/lib/node-exporter/' for metrics_file (expected the path of a file, not a directory)",
		     NULL);
	check_errors("[daemon]\nmetrics_file = /\n",
		     "2: invalid value '/' for metrics_file (expected the path of a file, not a directory)", NULL);
	check_errors("[daemon]\nmetrics_file =\n",
		     "2: invalid value '' for metrics_file (expected an absolute path)", NULL);
}

static void rejects_bad_topology_specs(void) {
	check_errors("[daemon]\ntopology = xml:\n", "2: invalid value 'xml:' for topology (expected system, xml:PATH or synthetic:STRING)", NULL);
	check_errors("[daemon]\ntopology = synthetic:\n", "2: invalid value 'synthetic:' for topology (expected system, xml:PATH or synthetic:STRING)", NULL);
	check_errors("[daemon]\ntopology = /tmp/t.xml\n", "2: invalid value '/tmp/t.xml' for topology (expected system, xml:PATH or synthetic:STRING)", NULL);
	check_errors("[daemon]\ntopology =\n", "2: invalid value '' for topology (expected system, xml:PATH or synthetic:STRING)", NULL);
}

static void checks_interval_range(void) {
	struct config *c = load_ok("[daemon]\ninterval = 10ms\n");

	if (c)
		CHECK_INT(c->interval_usec, 10000);
	config_free(c);
	c = load_ok("[daemon]\ninterval = 1h\n");
	if (c)
		CHECK_INT(c->interval_usec, 3600000000ull);
	config_free(c);
	check_errors("[daemon]\ninterval = 9ms\n", "2: interval 9ms out of range (10ms..1h)", NULL);
	check_errors("[daemon]\ninterval = 61m\n", "2: interval 61m out of range (10ms..1h)", NULL);
	check_errors("[daemon]\ninterval = 0\n", "2: interval 0 out of range (10ms..1h)", NULL);
	check_errors("[daemon]\ninterval = 99999999999999999999s\n",
		     "2: interval 99999999999999999999s out of range (10ms..1h)", NULL);
	check_errors("[daemon]\ninterval = fast\n",
		     "2: invalid value 'fast' for interval (expected a duration such as 500ms, 1s or 2m)", NULL);
}

static void rejects_bad_ccx_lists(void) {
	check_errors("[program:a]\n"
		     "ccx = one\n"
		     "[program:b]\nccx = 1,\n"
		     "[program:c]\nccx = 0,,2\n"
		     "[program:d]\nccx = -1\n"
		     "[program:e]\nccx = 1024\n"
		     "[program:f]\nccx = 0,2,0\n"
		     "[program:g]\nccx = auto,1\n"
		     "[program:h]\nccx =\n"
		     "[program:i]\nccx = 1 2\n"
		     "[program:j]\nccx = 0, 99999999999999999999999\n",
		     "2: invalid value 'one' for ccx (expected auto or a comma-separated list of CCX indexes such as 1 or 0,2)",
		     "4: invalid value '1,' for ccx (expected auto or a comma-separated list of CCX indexes such as 1 or 0,2)",
		     "6: invalid value '0,,2' for ccx (expected auto or a comma-separated list of CCX indexes such as 1 or 0,2)",
		     "8: invalid value '-1' for ccx (expected auto or a comma-separated list of CCX indexes such as 1 or 0,2)",
		     "10: ccx index 1024 out of range (0..1023)",
		     "12: duplicate ccx index 0 in '0,2,0'",
		     "14: invalid value 'auto,1' for ccx (expected auto or a comma-separated list of CCX indexes such as 1 or 0,2)",
		     "16: invalid value '' for ccx (expected auto or a comma-separated list of CCX indexes such as 1 or 0,2)",
		     "18: invalid value '1 2' for ccx (expected auto or a comma-separated list of CCX indexes such as 1 or 0,2)",
		     "20: ccx index 99999999999999999999999 out of range (0..1023)", NULL);
}

static void rejects_empty_globs(void) {
	check_errors("[program:a]\nexe =\ncmdline =   \n",
		     "2: empty value for exe (expected a glob)",
		     "3: empty value for cmdline (expected a glob)", NULL);
}

/* ---- what a rule matches on beyond the program ---- */

static void parses_parent_ancestor_unit_and_cgroup(void) {
	struct config *c = load_ok("[program:worker]\n"
				   "parent = launch*\n"
				   "ancestor = */sshd\n"
				   "unit = nginx.service\n"
				   "cgroup = */kubepods*/pod*/*\n"
				   "[program:plain]\n");

	if (!c)
		return;
	CHECK_INT(c->n_rules, 2);
	CHECK_STR(c->rules[0].parent, "launch*");
	CHECK_STR(c->rules[0].ancestor, "*/sshd");
	CHECK_STR(c->rules[0].unit, "nginx.service");
	CHECK_STR(c->rules[0].cgroup, "*/kubepods*/pod*/*");
	CHECK(c->rules[1].parent == NULL && c->rules[1].ancestor == NULL);
	CHECK(c->rules[1].unit == NULL && c->rules[1].cgroup == NULL);
	config_free(c);
}

static void rejects_globs_that_can_never_match(void) {
	check_errors("[program:a]\n"
		     "parent =\n"
		     "ancestor =  \n"
		     "unit = system.slice/nginx.service\n"
		     "cgroup = kubepods/*\n"
		     "[program:b]\n"
		     "unit =\n"
		     "cgroup =\n",
		     "2: empty value for parent (expected a glob)",
		     "3: empty value for ancestor (expected a glob)",
		     "4: invalid value 'system.slice/nginx.service' for unit (expected a glob on a unit name such as "
		     "foo.service or session-*.scope, without '/')",
		     "5: invalid value 'kubepods/*' for cgroup (expected a glob on a cgroup path, starting with / or *)",
		     "7: empty value for unit (expected a glob)",
		     "8: empty value for cgroup (expected a glob)", NULL);
}

/* ---- drop-ins ---- */

/* A directory of its own for a main file, its drop-ins and presets. */
struct tree {
	char dir[64];
	char main[128], dropins[128], presets[128];
};

static void tree_new(struct tree *t) {
	snprintf(t->dir, sizeof(t->dir), "/tmp/ccxd-test-dropins-XXXXXX");
	if (!mkdtemp(t->dir))
		abort();
	snprintf(t->main, sizeof(t->main), "%s/ccxd.conf", t->dir);
	snprintf(t->dropins, sizeof(t->dropins), "%s/ccxd.conf.d", t->dir);
	snprintf(t->presets, sizeof(t->presets), "%s/presets", t->dir);
	mkdir(t->dropins, 0755);
	mkdir(t->presets, 0755);
}

/* Writes text to dir/name ("" for the main file itself). */
static void put(const char *dir, const char *name, const char *text) {
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s%s", dir, name[0] ? "/" : "", name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
}

static void tree_free(struct tree *t) {
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	CHECK_INT(system(cmd), 0);
}

/* Loads t (its presets too when with_presets): 0 and a config, or the errors. */
static int load_tree(const struct tree *t, bool with_presets, struct config **c, char ***errors) {
	struct config_sources src = { .path = t->main, .presets = with_presets ? t->presets : NULL };

	return config_load_from(&src, c, errors);
}

static struct config *load_tree_ok(const struct tree *t, bool with_presets) {
	struct config *c = NULL;
	char **errors = NULL;

	CHECK_INT(load_tree(t, with_presets, &c, &errors), 0);
	for (char **e = errors; e && *e; e++)
		printf("# unexpected error: %s\n", *e);
	config_errors_free(errors);
	return c;
}

/* The rules' names, file names (without the tree's directory) and lines. */
static const char *rules_of(const struct tree *t, const struct config *c) {
	static char buf[1024];
	size_t len = 0, skip = strlen(t->dir) + 1;

	buf[0] = '\0';
	for (size_t i = 0; c && i < c->n_rules && len < sizeof(buf); i++) {
		const char *file = c->rules[i].file && strlen(c->rules[i].file) > skip ? c->rules[i].file + skip : "?";
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s@%s:%u", i ? " " : "", c->rules[i].name, file,
					c->rules[i].line);
	}
	return buf;
}

/* The errors of loading t, each with the tree's directory cut out. */
static void check_tree_errors(const struct tree *t, bool with_presets, ...) {
	struct config *c = (struct config *)1;
	char **errors = NULL;
	size_t n = 0, skip = strlen(t->dir) + 1;
	va_list ap;

	CHECK_INT(load_tree(t, with_presets, &c, &errors), -EINVAL);
	CHECK(c == NULL);
	va_start(ap, with_presets);
	for (const char *want; (want = va_arg(ap, const char *)); n++) {
		const char *got = errors && errors[n] && strlen(errors[n]) > skip ? errors[n] + skip : NULL;

		CHECK_STR(got, want);
		if (!errors || !errors[n])
			break;
	}
	va_end(ap);
	if (errors && errors[n]) {
		test_failed = 1;
		for (; errors[n]; n++)
			printf("# unexpected error: %s\n", errors[n]);
	}
	config_errors_free(errors);
}

static void reads_dropins_after_the_file_in_the_order_of_their_names(void) {
	struct tree t;
	struct config *c;

	tree_new(&t);
	put(t.main, "", "[daemon]\nmode = dry-run\n\n[program:a]\nccx = 0\n");
	put(t.dropins, "20-c.conf", "; third\n[program:c]\n");
	put(t.dropins, "10-b.conf", "[program:b]\nparent = make\n");
	put(t.dropins, "9-z.conf", "[program:z]\n");          /* bytes: '9' sorts after '2' */
	put(t.dropins, "README", "[not a drop-in]\n");
	put(t.dropins, "old.conf.dpkg-old", "[program:old]\n");
	put(t.dropins, ".hidden.conf", "[program:hidden]\n");
	c = load_tree_ok(&t, false);
	CHECK_STR(rules_of(&t, c), "a@ccxd.conf:4 b@ccxd.conf.d/10-b.conf:1 c@ccxd.conf.d/20-c.conf:2 "
				   "z@ccxd.conf.d/9-z.conf:1");
	if (c) {
		CHECK_INT(c->mode, CONFIG_MODE_DRY_RUN);
		CHECK_STR(c->path, t.main);
		CHECK_INT(c->n_files, 4);
		CHECK_STR(c->rules[1].parent, "make");
	}
	config_free(c);
	tree_free(&t);
}

static void config_load_reads_file_dot_d(void) {
	struct tree t;
	struct config *c = NULL;
	char **errors = NULL;

	tree_new(&t);
	put(t.main, "", "[program:a]\n");
	put(t.dropins, "b.conf", "[program:b]\n");
	CHECK_INT(config_load(t.main, &c, &errors), 0);
	CHECK_STR(rules_of(&t, c), "a@ccxd.conf:1 b@ccxd.conf.d/b.conf:1");
	config_free(c);
	config_errors_free(errors);
	tree_free(&t);
}

static void presets_are_read_unless_a_dropin_of_that_name_masks_them(void) {
	struct tree t;
	struct config *c;
	char path[256];

	tree_new(&t);
	put(t.main, "", "[program:a]\n");
	put(t.presets, "10-vendor.conf", "[program:vendor]\n");
	put(t.presets, "30-pkg.conf", "\n[program:pkg]\n");
	put(t.presets, "40-gone.conf", "[program:gone]\n");
	put(t.dropins, "10-vendor.conf", "[program:mine]\n");
	put(t.dropins, "20-local.conf", "[program:local]\n");
	/* The admin's way to turn a preset off: a link to /dev/null. */
	snprintf(path, sizeof(path), "%s/40-gone.conf", t.dropins);
	CHECK_INT(symlink("/dev/null", path), 0);
	c = load_tree_ok(&t, true);
	CHECK_STR(rules_of(&t, c), "a@ccxd.conf:1 mine@ccxd.conf.d/10-vendor.conf:1 local@ccxd.conf.d/20-local.conf:1 "
				   "pkg@presets/30-pkg.conf:2");
	config_free(c);

	/* Presets only where asked for. */
	c = load_tree_ok(&t, false);
	CHECK_STR(rules_of(&t, c), "a@ccxd.conf:1 mine@ccxd.conf.d/10-vendor.conf:1 local@ccxd.conf.d/20-local.conf:1");
	config_free(c);
	tree_free(&t);
}

static void presets_go_with_the_default_file_alone(void) {
	const char *presets = config_presets_for(CONFIG_DEFAULT_PATH);
	size_t n = presets ? strlen(presets) : 0;

	/* Where PREFIX puts them: test-install.sh checks the installed ccxd's. */
	CHECK(presets && presets[0] == '/');
	CHECK(n > strlen("/ccxd/ccxd.conf.d") && strcmp(presets + n - strlen("/ccxd/ccxd.conf.d"), "/ccxd/ccxd.conf.d") == 0);
	CHECK(config_presets_for("/tmp/ccxd.conf") == NULL);
	CHECK(config_presets_for("/etc/ccxd.conf.d/x.conf") == NULL);
}

static void without_dropins_the_file_alone_counts(void) {
	struct tree t;
	struct config *c;

	tree_new(&t);
	put(t.main, "", "[program:a]\n");
	CHECK_INT(rmdir(t.dropins), 0);
	c = load_tree_ok(&t, true);
	CHECK_STR(rules_of(&t, c), "a@ccxd.conf:1");
	if (c)
		CHECK_INT(c->n_files, 1);
	config_free(c);
	tree_free(&t);
}

static void a_missing_file_may_leave_its_dropins(void) {
	struct tree t;
	struct config *c = NULL;
	char **errors = NULL;
	struct config_sources src;

	tree_new(&t);
	put(t.dropins, "b.conf", "[program:b]\n");
	src = (struct config_sources){ .path = t.main, .path_optional = true };
	CHECK_INT(config_load_from(&src, &c, &errors), 0);
	CHECK_STR(rules_of(&t, c), "b@ccxd.conf.d/b.conf:1");
	if (c)
		CHECK(c->path == NULL);
	config_free(c);
	c = NULL;

	/* Named, the file must be there. */
	src.path_optional = false;
	CHECK_INT(config_load_from(&src, &c, &errors), -ENOENT);
	CHECK(c == NULL);
	if (errors) {
		CHECK(strstr(errors[0], "/ccxd.conf: No such file or directory") != NULL);
		CHECK(errors[1] == NULL);
	}
	config_errors_free(errors);
	tree_free(&t);
}

static void each_error_names_its_own_file(void) {
	struct tree t;

	tree_new(&t);
	put(t.main, "", "[program:a]\n\npolicy = pinned\n");
	put(t.dropins, "20-y.conf", "[program:y]\nccx = x\n");
	put(t.dropins, "10-x.conf", "[program:x]\n\n\nsmt = never\n");
	put(t.presets, "30-z.conf", "garbage\n");
	check_tree_errors(&t, true,
			  "ccxd.conf:3: invalid value 'pinned' for policy (expected pin, compact, spread, pair, auto or ignore)",
			  "ccxd.conf.d/10-x.conf:4: invalid value 'never' for smt (expected allow or avoid)",
			  "ccxd.conf.d/20-y.conf:2: invalid value 'x' for ccx (expected auto or a comma-separated list of "
			  "CCX indexes such as 1 or 0,2)",
			  "presets/30-z.conf:1: syntax error (expected 'key = value', '[section]' or a comment)", NULL);
	tree_free(&t);
}

static void dropins_hold_program_sections_only(void) {
	struct tree t;
	char want[512];

	tree_new(&t);
	put(t.main, "", "[daemon]\nmode = off\n");
	put(t.dropins, "a.conf", "mode = enforce\n[daemon]\nmode = enforce\n[program:a]\n[whatever]\n");
	snprintf(want, sizeof(want), "ccxd.conf.d/a.conf:2: [daemon] belongs in %s: a drop-in holds [program:NAME] "
		 "sections only", t.main);
	check_tree_errors(&t, false,
			  "ccxd.conf.d/a.conf:1: key 'mode' outside a section (expected [program:NAME] above it)",
			  want,
			  "ccxd.conf.d/a.conf:5: unknown section [whatever] (expected [program:NAME])", NULL);
	tree_free(&t);
}

static void a_program_is_named_once_across_files(void) {
	struct tree t;
	char want[512];

	tree_new(&t);
	put(t.main, "", "\n[program:a]\n");
	put(t.dropins, "10.conf", "[program:b]\n[program:a]\n");
	put(t.dropins, "20.conf", "[program:b]\n");
	snprintf(want, sizeof(want), "ccxd.conf.d/10.conf:2: duplicate section [program:a] (first at %s:2)", t.main);
	char want2[512];
	snprintf(want2, sizeof(want2), "ccxd.conf.d/20.conf:1: duplicate section [program:b] (first at %s/10.conf:1)",
		 t.dropins);
	check_tree_errors(&t, false, want, want2, NULL);
	tree_free(&t);
}

static void unreadable_dropins_are_errors(void) {
	struct tree t;
	char path[256];

	tree_new(&t);
	put(t.main, "", "[program:a]\n");
	put(t.dropins, "10-ok.conf", "[program:ok]\n");
	snprintf(path, sizeof(path), "%s/20-dir.conf", t.dropins);
	CHECK_INT(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/30-dangling.conf", t.dropins);
	CHECK_INT(symlink("/nonexistent/ccxd-test", path), 0);
	/* A FIFO would hang the daemon's start until someone wrote to it; a
	 * link to a device is no file of rules (only /dev/null, which masks). */
	snprintf(path, sizeof(path), "%s/40-fifo.conf", t.dropins);
	CHECK_INT(mkfifo(path, 0644), 0);
	snprintf(path, sizeof(path), "%s/50-device.conf", t.dropins);
	CHECK_INT(symlink("/dev/zero", path), 0);
	alarm(10);
	check_tree_errors(&t, false, "ccxd.conf.d/20-dir.conf: Is a directory",
			  "ccxd.conf.d/30-dangling.conf: No such file or directory",
			  "ccxd.conf.d/40-fifo.conf: not a regular file", "ccxd.conf.d/50-device.conf: not a regular file",
			  NULL);
	alarm(0);

	/* A drop-in directory that is a file. */
	snprintf(path, sizeof(path), "rm -rf '%s'", t.dropins);
	CHECK_INT(system(path), 0);
	put(t.dropins, "", "[program:x]\n");
	check_tree_errors(&t, false, "ccxd.conf.d: Not a directory", NULL);
	tree_free(&t);
}

static void reports_all_errors_in_line_order(void) {
	/* The duplicate section is found only at the end, yet listed in place. */
	check_errors("mode = off\n"
		     "[daemon]\n"
		     "mode = fast\n"
		     "[program:a]\n"
		     "policy = pinned\n"
		     "[program:a]\n"
		     "junk\n"
		     "[nope]\n"
		     "whatever = 1\n"
		     "[daemon]\n"
		     "interval = 1ns\n",
		     "1: key 'mode' outside a section (expected [daemon] or [program:NAME] above it)",
		     "3: invalid value 'fast' for mode (expected enforce, dry-run or off)",
		     "5: invalid value 'pinned' for policy (expected pin, compact, spread, pair, auto or ignore)",
		     "6: duplicate section [program:a] (first at line 4)",
		     "7: syntax error (expected 'key = value', '[section]' or a comment)",
		     "8: unknown section [nope] (expected [daemon] or [program:NAME])",
		     "10: duplicate [daemon] section (first at line 2)",
		     "11: invalid value '1ns' for interval (expected a duration such as 500ms, 1s or 2m)", NULL);
}

static void handles_ten_thousand_sections(void) {
	size_t n = 10000, size = n * 48 + 64, len = 0;
	char *text = malloc(size);

	if (!text)
		abort();
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, size - len, "[program:p%zu]\nccx = %zu\n", i, i % 1024);
	struct config *c = load_ok(text);
	if (c) {
		CHECK_INT(c->n_rules, n);
		CHECK_STR(c->rules[9999].name, "p9999");
		CHECK_INT(c->rules[9999].line, 19999);
		CHECK_INT(c->rules[9999].ccx[0], 9999 % 1024);
	}
	config_free(c);

	/* The same again, with one name repeated at the end. */
	snprintf(text + len, size - len, "[program:p5]\n");
	check_errors(text, "20001: duplicate section [program:p5] (first at line 11)", NULL);
	free(text);
}

static void reports_unreadable_file(void) {
	char **errors = NULL;
	struct config *c = (struct config *)1;

	CHECK_INT(config_load("/nonexistent/ccxd.conf", &c, &errors), -ENOENT);
	CHECK(c == NULL);
	CHECK(errors != NULL);
	if (errors) {
		CHECK_STR(errors[0], "/nonexistent/ccxd.conf: No such file or directory");
		CHECK(errors[1] == NULL);
	}
	config_errors_free(errors);

	errors = NULL;
	CHECK_INT(config_load("/", &c, &errors), -EISDIR);
	if (errors) {
		CHECK_STR(errors[0], "/: Is a directory");
		CHECK(errors[1] == NULL);
	}
	config_errors_free(errors);

	/* A device is no configuration, nor read into all of memory. */
	errors = NULL;
	CHECK_INT(config_load("/dev/zero", &c, &errors), -EINVAL);
	if (errors)
		CHECK_STR(errors[0], "/dev/zero: not a regular file");
	config_errors_free(errors);
}

static void bundled_config_parses_and_pins_nothing(void) {
	char **errors = NULL;
	struct config *c = NULL;

	CHECK_INT(config_load("conf/ccxd.conf", &c, &errors), 0);
	for (char **e = errors; e && *e; e++)
		printf("# %s\n", *e);
	config_errors_free(errors);
	if (!c)
		return;
	/* What it sets is what the built-in defaults are. */
	check_defaults(c);
	config_free(c);
}

/* ---- value parsers ---- */

static uint64_t duration(const char *s) {
	uint64_t v = UINT64_C(0xdeadbeef);

	CHECK_INT(config_parse_duration(s, &v), 0);
	return v;
}

static void parses_durations(void) {
	CHECK_INT(duration("500ms"), 500000);
	CHECK_INT(duration("1s"), 1000000);
	CHECK_INT(duration("2m"), 120000000);
	CHECK_INT(duration("1h"), 3600000000ull);
	CHECK_INT(duration("1.5s"), 1500000);
	CHECK_INT(duration("0.25ms"), 250);
	CHECK_INT(duration("3"), 3000000);
	CHECK_INT(duration("2.5"), 2500000);
	CHECK_INT(duration("0"), 0);
	CHECK_INT(duration("7us"), 7);
	CHECK_INT(duration("0.5us"), 0);                  /* below the resolution */
	CHECK_INT(duration("1.0000000000001s"), 1000000);
	CHECK_INT(duration("18446744073709551615us"), UINT64_MAX);
	CHECK_INT(duration("5124095576h"), 5124095576ull * 3600000000ull);
}

static void rejects_bad_durations(void) {
	static const char *const bad[] = {
		"", "s", "1x", "-1s", "+1s", " 1s", "1s ", "1 s", "1.s", ".5s", "1..5s",
		"1.5.5s", "1S", "1sec", "1e3", "1ms5", "1m30s", "0x10",
		"99999999999999999999x",
	};
	uint64_t v = 42;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = config_parse_duration(bad[i], &v);

		if (r != -EINVAL)
			printf("# \"%s\"\n", bad[i]);
		CHECK_INT(r, -EINVAL);
	}
	CHECK_INT(v, 42);
	CHECK_INT(config_parse_duration("18446744073709551616us", &v), -ERANGE);
	CHECK_INT(config_parse_duration("99999999999999999999", &v), -ERANGE);
	CHECK_INT(config_parse_duration("5124095577h", &v), -ERANGE);
	CHECK_INT(config_parse_duration("18446744073709.6s", &v), -ERANGE);
	CHECK_INT(v, 42);
}

static uint64_t size(const char *s) {
	uint64_t v = UINT64_C(0xdeadbeef);

	CHECK_INT(config_parse_size(s, &v), 0);
	return v;
}

static void parses_sizes(void) {
	CHECK_INT(size("0"), 0);
	CHECK_INT(size("100"), 100);
	CHECK_INT(size("100B"), 100);
	CHECK_INT(size("64K"), 65536);
	CHECK_INT(size("64KB"), 65536);
	CHECK_INT(size("64KiB"), 65536);
	CHECK_INT(size("1M"), 1048576);
	CHECK_INT(size("2G"), 2147483648ull);
	CHECK_INT(size("3T"), 3ull << 40);
	CHECK_INT(size("1P"), 1ull << 50);
	CHECK_INT(size("15E"), 15ull << 60);
	CHECK_INT(size("10M/s"), 10485760);
	CHECK_INT(size("10MiB/s"), 10485760);
	CHECK_INT(size("10/s"), 10);
	CHECK_INT(size("18446744073709551615"), UINT64_MAX);
}

static void rejects_bad_sizes(void) {
	static const char *const bad[] = {
		"", "K", "1x", "-1", "1k", "1 K", " 1K", "1K ", "1iB", "1KiBB", "1Ki",
		"1.5K", "1KB/", "1K/m", "1/s/s", "1Bi", "0x10", "1e3",
	};
	uint64_t v = 42;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = config_parse_size(bad[i], &v);

		if (r != -EINVAL)
			printf("# \"%s\"\n", bad[i]);
		CHECK_INT(r, -EINVAL);
	}
	CHECK_INT(config_parse_size("16E", &v), -ERANGE);
	CHECK_INT(config_parse_size("18446744073709551616", &v), -ERANGE);
	CHECK_INT(config_parse_size("16777216T", &v), -ERANGE);
	CHECK_INT(v, 42);
}

static void parses_booleans(void) {
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	static const char *const bad[] = { "", "y", "n", "YES", "True", "2", "yes ", "enable", "01" };
	bool b;

	for (size_t i = 0; i < 4; i++) {
		b = false;
		CHECK_INT(config_parse_bool(yes[i], &b), 0);
		CHECK(b);
		b = true;
		CHECK_INT(config_parse_bool(no[i], &b), 0);
		CHECK(!b);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b = true;
		CHECK_INT(config_parse_bool(bad[i], &b), -EINVAL);
		CHECK(b);
	}
}

static void names_modes_as_the_config_spells_them(void) {
	CHECK_STR(config_mode_to_string(CONFIG_MODE_ENFORCE), "enforce");
	CHECK_STR(config_mode_to_string(CONFIG_MODE_DRY_RUN), "dry-run");
	CHECK_STR(config_mode_to_string(CONFIG_MODE_OFF), "off");
	CHECK(config_mode_to_string((enum config_mode)99) == NULL);
}

/* A reload keeps the keys taken only at the next start, saying so; the
 * others change at once. */
static void some_keys_wait_for_the_next_start(void) {
	struct config *running = config_new_default(), *next = config_new_default();
	char notes[8][CONFIG_NOTE_MAX];

	CHECK(running && next);
	if (!running || !next)
		goto out;
	CHECK_INT((int)config_keys_at_next_start(next, running, notes, 8), 0);
	free(next->socket);
	next->socket = strdup("/run/other.sock");
	free(next->runtime_dir);
	next->runtime_dir = strdup("/run/other");
	next->bpf = SAMPLER_READ_PROC;
	next->traffic = SAMPLER_COUNT_NO;
	next->exec_events = CONFIG_EXECS_CONNECTOR;
	next->mode = CONFIG_MODE_DRY_RUN;
	CHECK_INT((int)config_keys_at_next_start(next, running, notes, 8), 5);
	CHECK_STR(notes[0], "The socket path changes from /run/ccxd/ccxd.sock to /run/other.sock at the next start");
	CHECK_STR(notes[1], "The runtime directory changes from /run/ccxd to /run/other at the next start");
	CHECK_STR(notes[2], "bpf changes from auto to no at the next start");
	CHECK_STR(next->socket, running->socket);
	CHECK_STR(next->runtime_dir, running->runtime_dir);
	CHECK(next->bpf == running->bpf && next->traffic == running->traffic &&
	      next->exec_events == running->exec_events);
	CHECK(next->mode == CONFIG_MODE_DRY_RUN);   /* at once */
	/* No more notes than there is room for. */
	next->bpf = SAMPLER_READ_PROC;
	free(next->socket);
	next->socket = strdup("/run/third.sock");
	CHECK_INT((int)config_keys_at_next_start(next, running, notes, 1), 1);
out:
	config_free(running);
	config_free(next);
}

TEST_MAIN(
	T(some_keys_wait_for_the_next_start),
	T(calibrate_can_be_turned_off),
	T(realtime_wait_can_be_turned_off),
	T(default_config_has_documented_defaults),
	T(empty_file_gives_defaults),
	T(comments_and_blank_lines_give_defaults),
	T(parses_every_key),
	T(program_section_without_keys_is_a_rule),
	T(parses_each_accepted_spelling),
	T(parses_topology_specs),
	T(parses_ignore_policy),
	T(parses_ccx_lists_in_order_given),
	T(cuts_inline_comments_only_after_white_space),
	T(indented_lines_are_not_continuations),
	T(accepts_bom_and_crlf),
	T(last_line_needs_no_newline),
	T(keeps_long_section_names),
	T(trims_white_space_in_section_headers),
	T(rejects_lines_that_are_no_key_value),
	T(rejects_colon_as_separator),
	T(rejects_missing_key),
	T(rejects_unterminated_section_header),
	T(rejects_text_after_section_header),
	T(reports_every_syntax_error),
	T(rejects_long_lines_and_keeps_counting),
	T(accepts_longest_line),
	T(accepts_long_comment_lines),
	T(survives_a_huge_line),
	T(rejects_nul_bytes),
	T(rejects_unknown_section),
	T(rejects_keys_outside_sections),
	T(rejects_unknown_daemon_key),
	T(rejects_unknown_program_key),
	T(rejects_bad_enum_values),
	T(rejects_bad_booleans),
	T(rejects_duplicate_keys),
	T(same_key_in_two_programs_is_no_duplicate),
	T(rejects_duplicate_program_sections),
	T(rejects_empty_program_name),
	T(rejects_duplicate_daemon_section),
	T(rejects_relative_socket),
	T(rejects_socket_path_too_long_for_bind),
	T(rejects_relative_state_dir),
	T(rejects_metrics_file_that_is_no_file_path),
	T(rejects_bad_topology_specs),
	T(checks_interval_range),
	T(rejects_bad_ccx_lists),
	T(rejects_empty_globs),
	T(parses_parent_ancestor_unit_and_cgroup),
	T(rejects_globs_that_can_never_match),
	T(reads_dropins_after_the_file_in_the_order_of_their_names),
	T(config_load_reads_file_dot_d),
	T(presets_are_read_unless_a_dropin_of_that_name_masks_them),
	T(presets_go_with_the_default_file_alone),
	T(without_dropins_the_file_alone_counts),
	T(a_missing_file_may_leave_its_dropins),
	T(each_error_names_its_own_file),
	T(dropins_hold_program_sections_only),
	T(a_program_is_named_once_across_files),
	T(unreadable_dropins_are_errors),
	T(reports_all_errors_in_line_order),
	T(handles_ten_thousand_sections),
	T(reports_unreadable_file),
	T(bundled_config_parses_and_pins_nothing),
	T(parses_the_automatic_policy_keys),
	T(rejects_bad_automatic_policy_values),
	T(parses_durations),
	T(rejects_bad_durations),
	T(parses_sizes),
	T(rejects_bad_sizes),
	T(parses_booleans),
	T(names_modes_as_the_config_spells_them),
	T(parses_x3d_mode),
	T(rejects_bad_x3d_mode)
)
