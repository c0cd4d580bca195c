/* What the rules say for one process, case by case, from struct literals:
 * ignore, hand over, pin, dry-run, hand-set masks and force, cgroup cpuset
 * bounds, spread, CCXs that do not exist, the load ccx = auto balances; and
 * which events are a reason to decide at all (known, released). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "ruling.h"
#include "test.h"
#include "topologies.h"

/* Two CCXs of two cores, no SMT: CPUs 0-1 and 2-3. */
#define TWO_BY_TWO "synthetic:pack:1 l3:2 core:2 pu:1"

static cpu_set_t cpus(const char *list) {
	cpu_set_t set;

	CHECK_INT(cpulist_parse(list, &set), 0);
	return set;
}

static const char *list(const cpu_set_t *set) {
	static char buf[CPULIST_MAX];

	return cpulist_format(set, buf, sizeof(buf));
}

/* A process a rule matched, not placed by ccxd, with every CPU. */
static struct ruling_subject stranger(void) {
	return (struct ruling_subject){ .ours = false, .mask = cpus("0-3"), .allowed = cpus("0-3") };
}

static struct ruling decide(const struct rule *rule, const struct ruling_subject *s, bool dry_run,
			    const unsigned *load) {
	static const unsigned none[2];
	struct topology *t = test_topology(TWO_BY_TWO);
	struct ruling_context ctx = { .topology = t, .dry_run = dry_run, .load = load ? load : none, .bounded = true };
	struct ruling r;

	CHECK_INT(ruling_decide(rule, s, &ctx, &r), 0);
	topology_free(t);
	return r;
}

static unsigned one[] = { 1 };

static void ignore_is_noted_and_nothing_set(void) {
	struct rule rule = { .name = "x", .policy = RULE_POLICY_IGNORE };
	struct ruling_subject s = stranger();
	struct ruling r = decide(&rule, &s, false, NULL);

	CHECK_INT(r.action, RULING_IGNORE);
	CHECK_STR(r.reason, "rule x: policy = ignore");
	CHECK(!r.sets);
}

static void pair_and_auto_are_handed_over(void) {
	struct rule pair = { .name = "p", .policy = RULE_POLICY_PAIR, .ccx_auto = true };
	struct rule automatic = { .name = "a", .policy = RULE_POLICY_AUTO, .ccx_auto = true };
	struct ruling_subject s = stranger();

	CHECK_INT(decide(&pair, &s, false, NULL).action, RULING_HAND_OVER);
	CHECK_INT(decide(&automatic, &s, false, NULL).action, RULING_HAND_OVER);
}

static void pin_takes_the_named_ccx(void) {
	struct rule rule = { .name = "x", .policy = RULE_POLICY_PIN, .ccx = one, .n_ccx = 1 };
	struct ruling_subject s = stranger();
	struct ruling r = decide(&rule, &s, false, NULL);

	CHECK_INT(r.action, RULING_PIN);
	CHECK_STR(list(&r.cpus), "2-3");
	CHECK_STR(r.reason, "rule x");
}

static void dry_run_would_pin(void) {
	struct rule rule = { .name = "x", .policy = RULE_POLICY_PIN, .ccx = one, .n_ccx = 1 };
	struct ruling_subject s = stranger();
	struct ruling r = decide(&rule, &s, true, NULL);

	CHECK_INT(r.action, RULING_WOULD_PIN);
	CHECK_STR(list(&r.cpus), "2-3");
	CHECK_STR(r.reason, "rule x: would pin to CCX 1");
}

static void a_hand_set_mask_is_left_alone_unless_forced(void) {
	struct rule rule = { .name = "x", .policy = RULE_POLICY_PIN, .ccx = one, .n_ccx = 1 };
	struct ruling_subject s = stranger();
	struct ruling r;

	s.mask = cpus("0");   /* narrower than the cpuset: taskset, numactl... */
	r = decide(&rule, &s, false, NULL);
	CHECK_INT(r.action, RULING_LEAVE_ALONE);
	CHECK_STR(r.reason, "rule x: affinity 0 was set by someone else (force = no)");
	rule.force = true;
	r = decide(&rule, &s, false, NULL);
	CHECK_INT(r.action, RULING_PIN);
	CHECK_STR(list(&r.cpus), "2-3");
}

static void ccxd_own_narrow_mask_is_no_hand(void) {
	struct rule rule = { .name = "x", .policy = RULE_POLICY_PIN, .ccx = one, .n_ccx = 1 };
	struct ruling_subject s = { .ours = true, .mask = cpus("0-1"), .allowed = cpus("0-3") };

	CHECK_INT(decide(&rule, &s, false, NULL).action, RULING_PIN);
}

static void a_mask_as_wide_as_the_cpuset_is_no_hand(void) {
	struct rule rule = { .name = "x", .policy = RULE_POLICY_PIN, .ccx = one, .n_ccx = 1 };
	struct ruling_subject s = { .ours = false, .mask = cpus("1-3"), .allowed = cpus("1-3") };
	struct ruling r = decide(&rule, &s, false, NULL);

	CHECK_INT(r.action, RULING_PIN);
	CHECK_STR(list(&r.cpus), "2-3");
}

static void the_cgroup_cpuset_bounds_the_cpus(void) {
	struct rule rule = { .name = "x", .policy = RULE_POLICY_PIN, .ccx = one, .n_ccx = 1 };
	struct ruling_subject s = { .ours = false, .mask = cpus("0-2"), .allowed = cpus("0-2") };
	struct ruling r = decide(&rule, &s, false, NULL);

	CHECK_INT(r.action, RULING_PIN);
	CHECK_STR(list(&r.cpus), "2");
	s.mask = s.allowed = cpus("0-1");
	r = decide(&rule, &s, false, NULL);
	CHECK_INT(r.action, RULING_LEAVE_ALONE);
	CHECK_STR(r.reason, "rule x: its cgroup cpuset 0-1 excludes CCX 1");
}

static void another_machines_topology_is_not_bounded_here(void) {
	struct rule rule = { .name = "x", .policy = RULE_POLICY_PIN, .ccx = one, .n_ccx = 1 };
	struct ruling_subject s = { .ours = false, .mask = cpus("0-1"), .allowed = cpus("0-1") };
	struct topology *t = test_topology(TWO_BY_TWO);
	unsigned load[2] = { 0 };
	struct ruling_context ctx = { .topology = t, .dry_run = true, .load = load, .bounded = false };
	struct ruling r;

	CHECK_INT(ruling_decide(&rule, &s, &ctx, &r), 0);
	CHECK_INT(r.action, RULING_WOULD_PIN);
	CHECK_STR(list(&r.cpus), "2-3");
	topology_free(t);
}

static void spread_gives_a_set_per_ccx_within_the_cpuset(void) {
	struct rule rule = { .name = "s", .policy = RULE_POLICY_SPREAD, .ccx_auto = true };
	struct ruling_subject s = stranger();
	struct ruling r = decide(&rule, &s, false, NULL);

	CHECK_INT(r.action, RULING_PIN);
	CHECK_INT(r.n_sets, 2);
	CHECK_STR(list(&r.cpus), "0-3");
	free(r.sets);
	s.mask = s.allowed = cpus("0-1");
	r = decide(&rule, &s, false, NULL);
	CHECK_INT(r.action, RULING_PIN);
	CHECK_INT(r.n_sets, 1);
	CHECK(r.sets && strcmp(list(&r.sets[0]), "0-1") == 0);
	free(r.sets);
}

static void sets_go_only_with_a_pin(void) {
	struct rule rule = { .name = "s", .policy = RULE_POLICY_SPREAD, .ccx_auto = true };
	struct ruling_subject s = stranger();
	struct ruling r;

	s.mask = cpus("3");
	r = decide(&rule, &s, false, NULL);
	CHECK_INT(r.action, RULING_LEAVE_ALONE);
	CHECK(!r.sets);
	CHECK_INT(r.n_sets, 0);
}

static void a_ccx_that_does_not_exist_is_no_ccx(void) {
	unsigned five[] = { 5 };
	struct rule rule = { .name = "x", .policy = RULE_POLICY_PIN, .ccx = five, .n_ccx = 1 };
	struct ruling_subject s = stranger();
	struct ruling r = decide(&rule, &s, false, NULL);

	CHECK_INT(r.action, RULING_LEAVE_ALONE);
	CHECK_STR(r.reason, "rule x: no usable CCX among those it names");
}

static void ccx_auto_goes_where_the_rules_placed_least(void) {
	struct rule rule = { .name = "c", .policy = RULE_POLICY_COMPACT, .ccx_auto = true };
	struct ruling_subject s = stranger();
	unsigned busy_first[2] = { 3, 0 }, busy_second[2] = { 0, 2 };

	struct ruling r = decide(&rule, &s, false, busy_first);

	CHECK_STR(list(&r.cpus), "2-3");
	r = decide(&rule, &s, false, busy_second);
	CHECK_STR(list(&r.cpus), "0-1");
}

static void the_first_rule_that_matches_decides(void) {
	struct rule rules[] = {
		{ .name = "enc*", .policy = RULE_POLICY_IGNORE },
		{ .name = "encoder", .policy = RULE_POLICY_PIN, .ccx = one, .n_ccx = 1 },
	};
	struct rule_identity id = { .comm = "encoder", .exe = "", .cmdline = "" };
	unsigned need = 0;
	const struct rule *rule = rules_match(rules, 2, &id, &need);
	struct ruling_subject s = stranger();

	CHECK(rule == &rules[0]);
	CHECK_INT(decide(rule, &s, false, NULL).action, RULING_IGNORE);
}

static void what_is_a_reason_to_decide(void) {
	/* A stranger: every event. */
	CHECK_INT(ruling_look(NULL, false, "encoder", RULING_SCAN), RULING_DECIDE);
	CHECK_INT(ruling_look(NULL, false, "encoder", RULING_EXEC), RULING_DECIDE);
	/* Known: a scan passes over the same program, not a renamed one. */
	CHECK_INT(ruling_look("encoder", false, "encoder", RULING_SCAN), RULING_NOTHING);
	CHECK_INT(ruling_look("encoder", false, "decoder", RULING_SCAN), RULING_DECIDE);
	CHECK_INT(ruling_look("encoder", false, "encoder", RULING_RELOAD), RULING_DECIDE);
	CHECK_INT(ruling_look("encoder", false, "encoder", RULING_COMM), RULING_DECIDE);
	/* Released by hand: left alone until it executes a new program. */
	CHECK_INT(ruling_look("encoder", true, "decoder", RULING_SCAN), RULING_NOTHING);
	CHECK_INT(ruling_look("encoder", true, "encoder", RULING_RELOAD), RULING_NOTHING);
	CHECK_INT(ruling_look("encoder", true, "encoder", RULING_COMM), RULING_NOTHING);
	CHECK_INT(ruling_look("encoder", true, "encoder", RULING_EXEC), RULING_FORGET_DECIDE);
}

/* A rule with prefer = says what it chose, and on an X3D part how the
 * driver's mode bears on it. */
static void prefer_explains_itself_and_the_x3d_mode(void) {
	struct topology *t = test_topology_file("amd-ryzen9-7950x3d.xml");
	struct rule rule = { .name = "x", .policy = RULE_POLICY_COMPACT, .ccx_auto = true, .prefer = RULE_PREFER_CACHE };
	static const unsigned none[2];
	struct ruling_context ctx = { .topology = t, .load = none };
	struct ruling_subject s = stranger();
	struct ruling r;

	if (!t)
		return;
	s.allowed = s.mask = t->online;
	CHECK_INT(ruling_decide(&rule, &s, &ctx, &r), 0);
	CHECK_STR(r.reason, "rule x; prefer = cache: CCX 0, the largest L3");
	rule.prefer = RULE_PREFER_FREQUENCY;
	CHECK_INT(ruling_decide(&rule, &s, &ctx, &r), 0);
	CHECK_STR(r.reason, "rule x; prefer = frequency: CCX 1, the smallest L3, no clocks known");
	snprintf(t->x3d_mode, sizeof(t->x3d_mode), "cache");
	CHECK_INT(ruling_decide(&rule, &s, &ctx, &r), 0);
	CHECK_STR(r.reason, "rule x; prefer = frequency: CCX 1, the smallest L3, no clocks known; X3D mode cache "
			    "ranks the other die first for unpinned work, the pin holds");
	rule.prefer = RULE_PREFER_CACHE;
	ctx.dry_run = true;
	CHECK_INT(ruling_decide(&rule, &s, &ctx, &r), 0);
	CHECK_STR(r.reason, "rule x: would pin to CCX 0; prefer = cache: CCX 0, the largest L3; X3D mode cache ranks it "
			    "first too");
	topology_free(t);
}

TEST_MAIN(T(ignore_is_noted_and_nothing_set), T(pair_and_auto_are_handed_over), T(pin_takes_the_named_ccx),
	  T(dry_run_would_pin), T(prefer_explains_itself_and_the_x3d_mode), T(a_hand_set_mask_is_left_alone_unless_forced), T(ccxd_own_narrow_mask_is_no_hand),
	  T(a_mask_as_wide_as_the_cpuset_is_no_hand), T(the_cgroup_cpuset_bounds_the_cpus),
	  T(another_machines_topology_is_not_bounded_here), T(spread_gives_a_set_per_ccx_within_the_cpuset),
	  T(sets_go_only_with_a_pin), T(a_ccx_that_does_not_exist_is_no_ccx),
	  T(ccx_auto_goes_where_the_rules_placed_least), T(the_first_rule_that_matches_decides),
	  T(what_is_a_reason_to_decide))
