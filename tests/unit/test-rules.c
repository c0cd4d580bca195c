#include <errno.h>

#include "config-file.h"
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

/* What an exec filter in the kernel may go by: plain names, cut as comm
 * is, once each, with whether a rule that may name them reads the command
 * line; any rule by exe or glob lets every comm through. */
static void exec_names_are_the_plain_names(void) {
	struct rule plain[] = {
		{ .name = "x265", .cmdline = "*--preset slow*" },
		{ .name = "x265" },
		{ .name = "ffmpeg", .parent = "obs" },
		{ .name = "x265-encoder-main" },
	};
	struct rule any[] = {
		{ .name = "python3", .exe = "/usr/bin/python3*", .cmdline = "*train.py*" },
		{ .name = "gcc" },
		{ .name = "cc1*" },
	};
	struct rules_name *names;
	size_t n;
	bool every;

	CHECK_INT(rules_exec_names(plain, N(plain), &names, &n, &every), 0);
	CHECK(!every);
	CHECK_INT(n, 3);
	CHECK_STR(names[0].comm, "x265");
	CHECK(names[0].needs_cmdline);
	CHECK_STR(names[1].comm, "ffmpeg");
	CHECK(!names[1].needs_cmdline);
	CHECK_STR(names[2].comm, "x265-encoder-ma");
	CHECK(!names[2].needs_cmdline);
	free(names);

	/* A rule by exe may name gcc too, and reads the command line. */
	CHECK_INT(rules_exec_names(any, N(any), &names, &n, &every), 0);
	CHECK(every);
	CHECK_INT(n, 1);
	CHECK_STR(names[0].comm, "gcc");
	CHECK(names[0].needs_cmdline);
	free(names);

	CHECK_INT(rules_exec_names(NULL, 0, &names, &n, &every), 0);
	CHECK(!every);
	CHECK_INT(n, 0);
	free(names);
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

/* ---- parent, ancestor, unit, cgroup ---- */

/* A launcher (dash, as "launcher") started by a login shell under init. */
static const struct rule_ancestor family[] = {
	{ .pid = 40, .comm = "launcher", .exe = "/usr/bin/dash" },
	{ .pid = 30, .comm = "bash", .exe = "/usr/bin/bash" },
	{ .pid = 1, .comm = "systemd", .exe = "/usr/lib/systemd/systemd" },
};

#define EVERYTHING (RULE_NEED_PARENT | RULE_NEED_ANCESTORS | RULE_NEED_ANCESTOR_EXE | RULE_NEED_CGROUP)

/* The rule that a process named comm matches, with every fact read. */
static const struct rule *match_in(const struct rule *rules, size_t n, const char *comm, const char *cgroup) {
	struct rule_identity id = {
		.comm = comm, .exe = "", .cmdline = "", .read = EVERYTHING,
		.ancestors = family, .n_ancestors = N(family), .cgroup = cgroup,
	};
	unsigned need = 99;
	const struct rule *r = rules_match(rules, n, &id, &need);

	CHECK_INT(need, 0);
	return r;
}

static void parent_matches_the_parents_comm_or_exe(void) {
	struct rule by_comm[] = { { .name = "worker", .parent = "launch*" } };
	struct rule by_exe[] = { { .name = "worker", .parent = "*/bin/dash" } };
	struct rule by_other[] = { { .name = "worker", .parent = "dash" } };

	CHECK(match_in(by_comm, 1, "worker", NULL) == &by_comm[0]);
	CHECK(match_in(by_comm, 1, "other", NULL) == NULL);
	/* A '/' makes it a glob on the exe. */
	CHECK(match_in(by_exe, 1, "worker", NULL) == &by_exe[0]);
	/* Without one it is a glob on comm, which is "launcher" here. */
	CHECK(match_in(by_other, 1, "worker", NULL) == NULL);
}

static void parent_is_the_direct_parent_alone(void) {
	struct rule rules[] = { { .name = "worker", .parent = "bash" } };

	CHECK(match_in(rules, 1, "worker", NULL) == NULL);
}

static void ancestor_matches_at_any_height(void) {
	struct rule grand[] = { { .name = "worker", .ancestor = "bash" } };
	struct rule init[] = { { .name = "worker", .ancestor = "*/systemd" } };
	struct rule parent[] = { { .name = "worker", .ancestor = "launcher" } };
	struct rule none[] = { { .name = "worker", .ancestor = "sshd" } };

	CHECK(match_in(grand, 1, "worker", NULL) == &grand[0]);
	CHECK(match_in(init, 1, "worker", NULL) == &init[0]);
	CHECK(match_in(parent, 1, "worker", NULL) == &parent[0]);
	CHECK(match_in(none, 1, "worker", NULL) == NULL);
}

static void ancestors_beyond_the_bound_are_not_looked_at(void) {
	struct rule_ancestor chain[RULE_ANCESTORS_MAX + 2];
	struct rule rules[] = { { .name = "w", .ancestor = "top" } };
	struct rule_identity id = { .comm = "w", .read = EVERYTHING, .ancestors = chain, .n_ancestors = N(chain) };
	unsigned need;

	for (size_t i = 0; i < N(chain); i++)
		chain[i] = (struct rule_ancestor){ .pid = (pid_t)(1000 - i), .comm = "sh" };
	chain[RULE_ANCESTORS_MAX - 1].comm = "top";
	CHECK(rules_match(rules, 1, &id, &need) == &rules[0]);
	chain[RULE_ANCESTORS_MAX - 1].comm = "sh";
	chain[RULE_ANCESTORS_MAX].comm = "top";
	CHECK(rules_match(rules, 1, &id, &need) == NULL);
}

static void no_parent_matches_no_parent_glob(void) {
	struct rule rules[] = { { .name = "init", .parent = "*" }, { .name = "init", .ancestor = "*" } };
	struct rule_identity id = { .comm = "init", .read = RULE_NEED_ANCESTORS, .n_ancestors = 0 };
	unsigned need = 99;

	CHECK(rules_match(rules, N(rules), &id, &need) == NULL);
	CHECK_INT(need, 0);
}

static void an_unreadable_exe_matches_as_empty(void) {
	struct rule_ancestor parent[] = { { .pid = 2, .comm = "kthreadd", .exe = NULL } };
	struct rule rules[] = { { .name = "w", .parent = "/*" }, { .name = "w", .parent = "*" } };
	struct rule_identity id = { .comm = "w", .read = EVERYTHING, .ancestors = parent, .n_ancestors = 1 };
	unsigned need;

	CHECK(rules_match(rules, N(rules), &id, &need) == &rules[1]);
}

static void asks_for_the_parents_only_when_the_rest_fits(void) {
	struct rule rules[] = {
		{ .name = "worker", .parent = "launcher" },
		{ .name = "server", .ancestor = "*/sshd" },
	};
	struct rule_identity id = { .comm = "bash" };
	unsigned need = 99;

	/* No rule for this comm: nothing more to read. */
	CHECK(rules_match(rules, N(rules), &id, &need) == NULL);
	CHECK_INT(need, 0);

	id.comm = "worker";
	CHECK(rules_match(rules, N(rules), &id, &need) == NULL);
	CHECK_INT(need, RULE_NEED_PARENT);
	id.read = RULE_NEED_PARENT;
	id.ancestors = family;
	id.n_ancestors = 1;
	CHECK(rules_match(rules, N(rules), &id, &need) == &rules[0]);
	CHECK_INT(need, 0);

	/* By exe, up the whole tree. */
	id = (struct rule_identity){ .comm = "server" };
	CHECK(rules_match(rules, N(rules), &id, &need) == NULL);
	CHECK_INT(need, RULE_NEED_ANCESTORS | RULE_NEED_ANCESTOR_EXE);
	/* The parent alone is not enough for ancestor =. */
	id.read = RULE_NEED_PARENT | RULE_NEED_ANCESTOR_EXE;
	id.ancestors = family;
	id.n_ancestors = 1;
	CHECK(rules_match(rules, N(rules), &id, &need) == NULL);
	CHECK_INT(need, RULE_NEED_ANCESTORS);
	id.read |= RULE_NEED_ANCESTORS;
	id.n_ancestors = N(family);
	CHECK(rules_match(rules, N(rules), &id, &need) == NULL);
	CHECK_INT(need, 0);
}

static void the_whole_tree_holds_the_parent(void) {
	struct rule rules[] = { { .name = "worker", .parent = "launcher" } };
	struct rule_identity id = { .comm = "worker", .read = RULE_NEED_ANCESTORS, .ancestors = family, .n_ancestors = 3 };
	unsigned need = 99;

	CHECK(rules_match(rules, N(rules), &id, &need) == &rules[0]);
	CHECK_INT(need, 0);
}

static const char *unit(const char *cgroup) {
	static char buf[256];
	size_t len;
	const char *u = rules_unit_of(cgroup, &len);

	if (!u)
		return NULL;
	snprintf(buf, sizeof(buf), "%.*s", (int)len, u);
	return buf;
}

static void the_unit_is_the_innermost_service_or_scope(void) {
	CHECK_STR(unit("/system.slice/nginx.service"), "nginx.service");
	CHECK_STR(unit("/user.slice/user-1000.slice/session-2.scope"), "session-2.scope");
	/* A user's own units, under their manager's service. */
	CHECK_STR(unit("/user.slice/user-1000.slice/user@1000.service/app.slice/app-firefox-12.scope"),
		  "app-firefox-12.scope");
	CHECK_STR(unit("/user.slice/user-1000.slice/user@1000.service/init.scope"), "init.scope");
	/* A service's own sub-cgroups (Delegate=yes) are the service's. */
	CHECK_STR(unit("/system.slice/docker.service/payload"), "docker.service");
	CHECK_STR(unit("/kubepods.slice/kubepods-pod1.slice/cri-containerd-ab12.scope"), "cri-containerd-ab12.scope");
	CHECK_STR(unit("/init.scope"), "init.scope");
	/* Slices hold no process of their own; names only end in a suffix. */
	CHECK(unit("/system.slice") == NULL);
	CHECK(unit("/") == NULL);
	CHECK(unit("") == NULL);
	CHECK(unit(NULL) == NULL);
	CHECK(unit("/kubepods/burstable/pod1/abc") == NULL);
	CHECK(unit("/x/.service") == NULL);
	CHECK(unit("/x/a.services") == NULL);
}

static void unit_and_cgroup_match_globs(void) {
	struct rule rules[] = {
		{ .name = "*", .unit = "nginx.service" },
		{ .name = "*", .cgroup = "*/kubepods*/pod*/*" },
		{ .name = "*", .unit = "session-*.scope", .cgroup = "/user.slice/user-1000.slice/*" },
		{ .name = "*", .unit = "*" },
	};

	CHECK(match_in(rules, N(rules), "nginx", "/system.slice/nginx.service") == &rules[0]);
	CHECK(match_in(rules, N(rules), "pause", "/kubepods/besteffort/pod7/4f2a") == &rules[1]);
	CHECK(match_in(rules, N(rules), "bash", "/user.slice/user-1000.slice/session-2.scope") == &rules[2]);
	/* Both keys of rule 2 must match: user 1001's session goes on to rule 3. */
	CHECK(match_in(rules, N(rules), "bash", "/user.slice/user-1001.slice/session-2.scope") == &rules[3]);
	/* No unit, or no cgroup at all: unit = * does not match either. */
	CHECK(match_in(rules, N(rules), "x", "/") == NULL);
	CHECK(match_in(rules, N(rules), "x", NULL) == NULL);
	struct rule any_cgroup[] = { { .name = "x", .cgroup = "*" } };
	CHECK(match_in(any_cgroup, 1, "x", "/") == &any_cgroup[0]);
	CHECK(match_in(any_cgroup, 1, "x", NULL) == NULL);
}

static void keys_combine_and_the_first_rule_wins(void) {
	struct rule rules[] = {
		{ .name = "worker", .exe = "*/worker", .parent = "launcher", .ancestor = "bash", .unit = "a.service" },
		{ .name = "worker", .parent = "launcher", .cgroup = "/system.slice/*" },
		{ .name = "worker" },
	};
	struct rule_identity id = {
		.comm = "worker", .exe = "/opt/worker", .cmdline = "", .read = EVERYTHING,
		.ancestors = family, .n_ancestors = N(family), .cgroup = "/system.slice/a.service",
	};
	unsigned need;

	CHECK(rules_match(rules, N(rules), &id, &need) == &rules[0]);
	id.exe = "/opt/other";
	CHECK(rules_match(rules, N(rules), &id, &need) == &rules[1]);
	id.cgroup = "/user.slice/a.service";
	CHECK(rules_match(rules, N(rules), &id, &need) == &rules[2]);
}

static void asks_for_what_an_earlier_rule_lacks_first(void) {
	struct rule rules[] = {
		{ .name = "worker", .parent = "launcher", .unit = "a.service" },
		{ .name = "worker" },
	};
	struct rule_identity id = { .comm = "worker" };
	unsigned need;

	/* Rule 1 would match now, but rule 0 might once more is read. */
	CHECK(rules_match(rules, N(rules), &id, &need) == NULL);
	CHECK_INT(need, RULE_NEED_PARENT | RULE_NEED_CGROUP);
	/* A parent that fails decides rule 0 without the cgroup. */
	id.read = RULE_NEED_PARENT;
	id.ancestors = &family[1];
	id.n_ancestors = 1;
	CHECK(rules_match(rules, N(rules), &id, &need) == &rules[1]);
	CHECK_INT(need, 0);
}

static void explains_what_matched(void) {
	struct rule r = { .name = "w", .parent = "launch*", .ancestor = "*/bash", .unit = "*.service",
			  .cgroup = "/system.slice/*" };
	struct rule plain = { .name = "w", .cmdline = "*" };
	struct rule_identity id = {
		.comm = "w", .read = EVERYTHING, .ancestors = family, .n_ancestors = N(family),
		.cgroup = "/system.slice/a.service",
	};
	char buf[160];

	rules_explain(&r, &id, buf, sizeof(buf));
	CHECK_STR(buf, "parent launcher[40], ancestor /usr/bin/bash[30], unit a.service, cgroup /system.slice/a.service");
	rules_explain(&plain, &id, buf, sizeof(buf));
	CHECK_STR(buf, "");
	/* Cut to the buffer, never past it. */
	rules_explain(&r, &id, buf, 20);
	CHECK_INT(strlen(buf), 19);
}

/* Why a rule does not match, its first key that fails, in its own
 * pattern's words; and true exactly where rules_match() picks it. */
static void says_why_a_rule_does_not_match(void) {
	struct rule rules[] = {
		{ .name = "enc", .exe = "/usr/bin/x265*" },
		{ .name = "x265" },
		{ .name = "worker", .cmdline = "*--slow*" },
		{ .name = "worker", .parent = "make" },
		{ .name = "worker", .ancestor = "sshd" },
		{ .name = "worker", .cgroup = "/system.slice/*" },
		{ .name = "worker", .unit = "nginx.service" },
		{ .name = "worker", .parent = "launch*", .unit = "a.service" },
	};
	static const char *const why[] = {
		"its executable does not match exe = /usr/bin/x265*",
		"its name does not match [program:x265]",
		"its command line does not match cmdline = *--slow*",
		"its parent does not match parent = make",
		"no ancestor matches ancestor = sshd",
		"its cgroup does not match cgroup = /system.slice/*",
		"its unit does not match unit = nginx.service",
	};
	struct rule_identity id = {
		.comm = "worker", .exe = "/opt/worker", .cmdline = "worker --fast", .read = EVERYTHING,
		.ancestors = family, .n_ancestors = N(family), .cgroup = "/user.slice/a.scope/x/a.service",
	};
	char buf[160];
	unsigned need;

	for (size_t i = 0; i < N(why); i++) {
		CHECK(!rules_why_not(&rules[i], &id, buf, sizeof(buf)));
		CHECK_STR(buf, why[i]);
	}
	CHECK(rules_why_not(&rules[7], &id, buf, sizeof(buf)));
	CHECK(rules_match(rules, N(rules), &id, &need) == &rules[7]);
	id.cgroup = NULL;
	CHECK(!rules_why_not(&rules[6], &id, buf, sizeof(buf)));
	CHECK_STR(buf, "it is in no systemd unit (unit = nginx.service)");
	id.cmdline = NULL;   /* still being read */
	CHECK(!rules_why_not(&rules[2], &id, buf, sizeof(buf)));
	CHECK_STR(buf, "its command line is being read (cmdline = *--slow*): ask again");
}

static void rule_done_frees_and_clears(void) {
	struct rule r = {
		.name = strdup("a"), .exe = strdup("/b"), .cmdline = strdup("c"),
		.parent = strdup("p"), .ancestor = strdup("q"), .unit = strdup("u.service"), .cgroup = strdup("/c"),
		.ccx = calloc(2, sizeof(unsigned)), .n_ccx = 2,
	};

	rule_done(&r);
	CHECK(r.name == NULL && r.exe == NULL && r.cmdline == NULL && r.ccx == NULL);
	CHECK(r.parent == NULL && r.ancestor == NULL && r.unit == NULL && r.cgroup == NULL);
	CHECK_INT(r.n_ccx, 0);
	rule_done(&r);
	rule_done(NULL);
}

/* Keys that can do nothing under the rest of their rule. */
static void keys_that_can_do_nothing(void) {
	unsigned one[] = { 1 }, two[] = { 0, 1 };
	struct rules_idle idle[8];
	struct rule r;

	/* Placing keys under a policy that places nothing, or leaves it to
	 * the automatic policy. */
	r = (struct rule){ .name = "x", .policy = RULE_POLICY_IGNORE, .ccx = one, .n_ccx = 1, .smt = RULE_SMT_AVOID,
			   .force = true };
	CHECK_INT((int)rules_idle_keys(&r, idle, 8), 3);
	CHECK_STR(idle[0].key, "ccx");
	CHECK_STR(idle[1].key, "smt");
	CHECK_STR(idle[2].key, "force");
	CHECK_STR(idle[0].why, "policy = ignore never places the program");
	r.policy = RULE_POLICY_PAIR;
	CHECK_INT((int)rules_idle_keys(&r, idle, 8), 3);
	CHECK_STR(idle[0].why, "policy = pair leaves the program to the automatic policy");
	/* No more than there is room for. */
	CHECK_INT((int)rules_idle_keys(&r, idle, 1), 1);
	/* spill where the program is not pinned to one CCX. */
	r = (struct rule){ .name = "x", .policy = RULE_POLICY_PIN, .ccx = two, .n_ccx = 2, .spill = true };
	CHECK_INT((int)rules_idle_keys(&r, idle, 8), 1);
	CHECK_STR(idle[0].key, "spill");
	r.policy = RULE_POLICY_SPREAD;
	CHECK_INT((int)rules_idle_keys(&r, idle, 8), 1);
	/* A pin to one CCX, compact, or ccx = auto: spill does something. */
	r = (struct rule){ .name = "x", .policy = RULE_POLICY_PIN, .ccx = one, .n_ccx = 1, .spill = true };
	CHECK_INT((int)rules_idle_keys(&r, idle, 8), 0);
	r = (struct rule){ .name = "x", .policy = RULE_POLICY_COMPACT, .ccx = two, .n_ccx = 2, .spill = true,
			   .prefer = RULE_PREFER_CACHE };
	CHECK_INT((int)rules_idle_keys(&r, idle, 8), 0);
	r = (struct rule){ .name = "x", .policy = RULE_POLICY_PIN, .ccx_auto = true, .spill = true,
			   .prefer = RULE_PREFER_FREQUENCY };
	CHECK_INT((int)rules_idle_keys(&r, idle, 8), 0);
	/* prefer with no CCX to choose. */
	r = (struct rule){ .name = "x", .policy = RULE_POLICY_COMPACT, .ccx = one, .n_ccx = 1,
			   .prefer = RULE_PREFER_CACHE };
	CHECK_INT((int)rules_idle_keys(&r, idle, 8), 1);
	CHECK_STR(idle[0].key, "prefer");
	CHECK_STR(idle[0].why, "ccx names one CCX: there is none to choose");
}

TEST_MAIN(
	T(keys_that_can_do_nothing),
	T(says_why_a_rule_does_not_match),
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
	T(parent_matches_the_parents_comm_or_exe),
	T(parent_is_the_direct_parent_alone),
	T(ancestor_matches_at_any_height),
	T(ancestors_beyond_the_bound_are_not_looked_at),
	T(no_parent_matches_no_parent_glob),
	T(an_unreadable_exe_matches_as_empty),
	T(asks_for_the_parents_only_when_the_rest_fits),
	T(the_whole_tree_holds_the_parent),
	T(the_unit_is_the_innermost_service_or_scope),
	T(unit_and_cgroup_match_globs),
	T(keys_combine_and_the_first_rule_wins),
	T(asks_for_what_an_earlier_rule_lacks_first),
	T(explains_what_matched),
	T(rule_done_frees_and_clears),
	T(exec_names_are_the_plain_names)
)
