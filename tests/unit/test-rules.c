#include <errno.h>

#include "config.h"
#include "rules.h"
#include "test.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The rule that id matches, checking that nothing more was asked for. */
static const struct rule *match(const struct rule *rules, size_t n, const char *comm,
				const char *exe, const char *cmdline) {
	struct rule_identity id = { .comm = comm, .exe = exe, .cmdline = cmdline };
	unsigned need = 99;
	const struct rule *r = rules_match(rules, n, &id, &need);

	CHECK_INT(need, 0);
	return r;
}

static void matches_name_as_glob_on_comm(void) {
	struct rule rules[] = {
		{ .name = "x265" },
		{ .name = "ffmpeg*" },
		{ .name = "kworker/[0-9]*" },
	};

	CHECK(match(rules, N(rules), "x265", NULL, NULL) == &rules[0]);
	CHECK(match(rules, N(rules), "x2650", NULL, NULL) == NULL);
	CHECK(match(rules, N(rules), "x26", NULL, NULL) == NULL);
	CHECK(match(rules, N(rules), "ffmpeg", NULL, NULL) == &rules[1]);
	CHECK(match(rules, N(rules), "ffmpeg-worker", NULL, NULL) == &rules[1]);
	CHECK(match(rules, N(rules), "kworker/3:1", NULL, NULL) == &rules[2]);
	CHECK(match(rules, N(rules), "kworker/u8:0", NULL, NULL) == NULL);
	CHECK(match(rules, N(rules), "bash", NULL, NULL) == NULL);
}

static void long_plain_name_matches_truncated_comm(void) {
	struct rule rules[] = {
		{ .name = "x265-encoder-main" },        /* 17 bytes: comm shows 15 */
	};

	CHECK(match(rules, N(rules), "x265-encoder-ma", NULL, NULL) == &rules[0]);
	CHECK(match(rules, N(rules), "x265-encoder-mb", NULL, NULL) == NULL);
	/* Only a full-length comm can be a cut one. */
	CHECK(match(rules, N(rules), "x265-encoder-m", NULL, NULL) == NULL);
	CHECK(match(rules, N(rules), "x265-encoder-main", NULL, NULL) == &rules[0]);
}

static void name_of_fifteen_bytes_is_not_cut(void) {
	struct rule rules[] = {
		{ .name = "abcdefghijklmno" },          /* exactly 15 */
	};

	CHECK(match(rules, N(rules), "abcdefghijklmno", NULL, NULL) == &rules[0]);
	CHECK(match(rules, N(rules), "abcdefghijklmn", NULL, NULL) == NULL);
}

static void long_glob_is_not_cut(void) {
	struct rule rules[] = {
		{ .name = "x265-encoder-mai*" },
	};

	/* Where a glob should be cut is not defined: it must match as it is. */
	CHECK(match(rules, N(rules), "x265-encoder-ma", NULL, NULL) == NULL);
	CHECK(match(rules, N(rules), "x265-encoder-main2", NULL, NULL) == &rules[0]);
}

static void exe_glob_matches_path_and_name_is_a_label(void) {
	struct rule rules[] = {
		{ .name = "encoder", .exe = "/usr/bin/x265*" },
		{ .name = "anything", .exe = "*/steamapps/*.exe" },
	};

	CHECK(match(rules, N(rules), "x265", "/usr/bin/x265", NULL) == &rules[0]);
	CHECK(match(rules, N(rules), "whatever", "/usr/bin/x265-10bit", NULL) == &rules[0]);
	CHECK(match(rules, N(rules), "encoder", "/usr/local/bin/x265", NULL) == NULL);
	/* '*' crosses '/' (no FNM_PATHNAME). */
	CHECK(match(rules, N(rules), "game", "/home/u/.steam/steamapps/common/G/bin/g.exe", NULL) == &rules[1]);
	CHECK(match(rules, N(rules), "anything", "/usr/bin/anything", NULL) == NULL);
}

static void cmdline_glob_must_match_too(void) {
	struct rule rules[] = {
		{ .name = "x265", .cmdline = "*--preset slow*" },
		{ .name = "x265" },
	};

	CHECK(match(rules, N(rules), "x265", NULL, "x265 --preset slow -o out.hevc in.y4m") == &rules[0]);
	CHECK(match(rules, N(rules), "x265", NULL, "x265 --preset fast in.y4m") == &rules[1]);
	CHECK(match(rules, N(rules), "ffmpeg", NULL, "ffmpeg --preset slow") == NULL);
}

static void exe_and_cmdline_both_must_match(void) {
	struct rule rules[] = {
		{ .name = "r", .exe = "/usr/bin/python3*", .cmdline = "python3 */train.py*" },
	};

	CHECK(match(rules, N(rules), "python3", "/usr/bin/python3.11", "python3 /srv/train.py --epochs 3") == &rules[0]);
	CHECK(match(rules, N(rules), "python3", "/usr/bin/python3.11", "python3 /srv/serve.py") == NULL);
	CHECK(match(rules, N(rules), "python3", "/opt/python3", "python3 /srv/train.py") == NULL);
}

static void first_matching_rule_wins(void) {
	struct rule rules[] = {
		{ .name = "specific", .exe = "/usr/bin/x265", .policy = RULE_POLICY_PIN },
		{ .name = "x26*", .policy = RULE_POLICY_SPREAD },
		{ .name = "x265", .policy = RULE_POLICY_IGNORE },
	};

	CHECK(match(rules, N(rules), "x265", "/usr/bin/x265", "") == &rules[0]);
	CHECK(match(rules, N(rules), "x265", "/opt/x265", "") == &rules[1]);
	/* Reordered, the general rule shadows the others. */
	struct rule reordered[] = { rules[1], rules[0], rules[2] };
	CHECK(match(reordered, N(reordered), "x265", "/usr/bin/x265", "") == &reordered[0]);
}

static void asks_for_exe_before_deciding(void) {
	struct rule rules[] = {
		{ .name = "encoder", .exe = "/usr/bin/x265*" },
		{ .name = "x265" },
	};
	struct rule_identity id = { .comm = "x265" };
	unsigned need = 0;

	/* Rule 0 might match once exe is known: rule 1 must not win yet. */
	CHECK(rules_match(rules, N(rules), &id, &need) == NULL);
	CHECK_INT(need, RULE_NEED_EXE);

	id.exe = "/usr/bin/x265";
	CHECK(rules_match(rules, N(rules), &id, &need) == &rules[0]);
	CHECK_INT(need, 0);

	id.exe = "/opt/bin/x265";
	CHECK(rules_match(rules, N(rules), &id, &need) == &rules[1]);
	CHECK_INT(need, 0);
}

static void asks_for_cmdline_only_when_comm_fits(void) {
	struct rule rules[] = {
		{ .name = "x265", .cmdline = "*--preset*" },
	};
	struct rule_identity id = { .comm = "bash" };
	unsigned need = 99;

	/* A comm that rules the rule out needs no cmdline read. */
	CHECK(rules_match(rules, N(rules), &id, &need) == NULL);
	CHECK_INT(need, 0);

	id.comm = "x265";
	CHECK(rules_match(rules, N(rules), &id, &need) == NULL);
	CHECK_INT(need, RULE_NEED_CMDLINE);

	id.cmdline = "x265 --preset slow";
	CHECK(rules_match(rules, N(rules), &id, &need) == &rules[0]);
	CHECK_INT(need, 0);
}

static void asks_for_everything_the_rule_lacks(void) {
	struct rule rules[] = {
		{ .name = "r", .exe = "*/x265", .cmdline = "*--preset*" },
	};
	struct rule_identity id = { .comm = "x265" };
	unsigned need = 0;

	CHECK(rules_match(rules, N(rules), &id, &need) == NULL);
	CHECK_INT(need, RULE_NEED_EXE | RULE_NEED_CMDLINE);

	/* A known exe that fails decides without the cmdline. */
	id.exe = "/usr/bin/ffmpeg";
	CHECK(rules_match(rules, N(rules), &id, &need) == NULL);
	CHECK_INT(need, 0);

	id.exe = "/usr/bin/x265";
	CHECK(rules_match(rules, N(rules), &id, &need) == NULL);
	CHECK_INT(need, RULE_NEED_CMDLINE);
}

static void no_rules_match_nothing(void) {
	struct rule_identity id = { .comm = "x265" };
	unsigned need = 99;

	CHECK(rules_match(NULL, 0, &id, &need) == NULL);
	CHECK_INT(need, 0);
}

static void names_values_as_the_config_spells_them(void) {
	CHECK_STR(rule_policy_to_string(RULE_POLICY_PIN), "pin");
	CHECK_STR(rule_policy_to_string(RULE_POLICY_COMPACT), "compact");
	CHECK_STR(rule_policy_to_string(RULE_POLICY_SPREAD), "spread");
	CHECK_STR(rule_policy_to_string(RULE_POLICY_PAIR), "pair");
	CHECK_STR(rule_policy_to_string(RULE_POLICY_AUTO), "auto");
	CHECK_STR(rule_policy_to_string(RULE_POLICY_IGNORE), "ignore");
	CHECK(rule_policy_to_string((enum rule_policy)6) == NULL);
	CHECK_STR(rule_smt_to_string(RULE_SMT_ALLOW), "allow");
	CHECK_STR(rule_smt_to_string(RULE_SMT_AVOID), "avoid");
	CHECK(rule_smt_to_string((enum rule_smt)-1) == NULL);
	CHECK_STR(rule_prefer_to_string(RULE_PREFER_ANY), "any");
	CHECK_STR(rule_prefer_to_string(RULE_PREFER_CACHE), "cache");
	CHECK_STR(rule_prefer_to_string(RULE_PREFER_FREQUENCY), "frequency");
	CHECK(rule_prefer_to_string((enum rule_prefer)3) == NULL);
}

/* From the file to a decision: what config_load() builds, rules_match() uses. */
static void loaded_rules_match_in_file_order(void) {
	static const char text[] =
		"[program:restic]\n"
		"policy = ignore\n"
		"[program:x265-slow]\n"
		"exe = */x265\n"
		"cmdline = *--preset slow*\n"
		"ccx = 0,2\n"
		"[program:x265]\n"
		"ccx = 1\n";
	char path[] = "/tmp/ccxd-test-rules-XXXXXX";
	int fd = mkstemp(path);
	struct config *c = NULL;
	char **errors = NULL;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_INT(write(fd, text, sizeof(text) - 1), sizeof(text) - 1);
	close(fd);
	CHECK_INT(config_load(path, &c, &errors), 0);
	unlink(path);
	config_errors_free(errors);
	if (!c)
		return;
	CHECK_INT(c->n_rules, 3);

	const struct rule *r = match(c->rules, c->n_rules, "restic", "/usr/bin/restic", "restic backup");
	CHECK(r == &c->rules[0]);
	if (r)
		CHECK_STR(rule_policy_to_string(r->policy), "ignore");

	r = match(c->rules, c->n_rules, "x265", "/usr/bin/x265", "x265 --preset slow in.y4m");
	CHECK(r == &c->rules[1]);
	if (r && r->n_ccx == 2) {
		CHECK_INT(r->ccx[0], 0);
		CHECK_INT(r->ccx[1], 2);
	}

	r = match(c->rules, c->n_rules, "x265", "/usr/bin/x265", "x265 --preset fast in.y4m");
	CHECK(r == &c->rules[2]);
	if (r && r->n_ccx == 1)
		CHECK_INT(r->ccx[0], 1);
	config_free(c);
}

static void rule_done_frees_and_clears(void) {
	struct rule r = {
		.name = strdup("a"), .exe = strdup("/b"), .cmdline = strdup("c"),
		.ccx = calloc(2, sizeof(unsigned)), .n_ccx = 2,
	};

	rule_done(&r);
	CHECK(r.name == NULL && r.exe == NULL && r.cmdline == NULL && r.ccx == NULL);
	CHECK_INT(r.n_ccx, 0);
	rule_done(&r);
	rule_done(NULL);
}

TEST_MAIN(
	T(matches_name_as_glob_on_comm),
	T(long_plain_name_matches_truncated_comm),
	T(name_of_fifteen_bytes_is_not_cut),
	T(long_glob_is_not_cut),
	T(exe_glob_matches_path_and_name_is_a_label),
	T(cmdline_glob_must_match_too),
	T(exe_and_cmdline_both_must_match),
	T(first_matching_rule_wins),
	T(asks_for_exe_before_deciding),
	T(asks_for_cmdline_only_when_comm_fits),
	T(asks_for_everything_the_rule_lacks),
	T(no_rules_match_nothing),
	T(names_values_as_the_config_spells_them),
	T(loaded_rules_match_in_file_order),
	T(rule_done_frees_and_clears)
)
