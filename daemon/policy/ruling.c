#include "ruling.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "placer.h"

enum ruling_look ruling_look(const char *known_comm, bool released, const char *comm, enum ruling_trigger trigger) {
	if (known_comm && trigger == RULING_SCAN && strcmp(known_comm, comm) == 0)
		return RULING_NOTHING;
	if (known_comm && released)
		return trigger == RULING_EXEC ? RULING_FORGET_DECIDE : RULING_NOTHING;
	return RULING_DECIDE;
}

static int rule_as(struct ruling *ret, enum ruling_action action, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int rule_as(struct ruling *ret, enum ruling_action action, const char *fmt, ...) {
	va_list ap;

	ret->action = action;
	va_start(ap, fmt);
	vsnprintf(ret->reason, sizeof(ret->reason), fmt, ap);
	va_end(ap);
	return 0;
}

/* The rule's CPUs, and with policy = spread the sets threads take in turn,
 * within what the cgroup cpuset allows where it bounds the choice. */
static int target(const struct rule *rule, const struct ruling_subject *s, const struct ruling_context *ctx,
		  struct ruling *ret, unsigned *ccx) {
	const struct topology *t = ctx->topology;
	struct placer_context pctx = { ctx->load, t->n_ccx, ctx->bounded ? &s->allowed : NULL };
	int r = placer_rule_cpus(t, rule, &pctx, &ret->cpus, ccx);

	if (r >= 0 && rule->policy == RULE_POLICY_SPREAD) {
		ret->sets = calloc(t->n_ccx ? t->n_ccx : 1, sizeof(*ret->sets));
		r = ret->sets ? placer_spread_sets(t, rule, &pctx, ret->sets) : -ENOMEM;
	}
	if (r < 0)
		return r;
	if (ctx->bounded)
		CPU_AND(&ret->cpus, &ret->cpus, &s->allowed);
	for (int i = 0; ret->sets && i < r; i++) {
		if (ctx->bounded)
			CPU_AND(&ret->sets[ret->n_sets], &ret->sets[i], &s->allowed);
		else
			ret->sets[ret->n_sets] = ret->sets[i];
		if (CPU_COUNT(&ret->sets[ret->n_sets]) > 0)
			ret->n_sets++;
	}
	return 0;
}

/* What prefer = chose, and on X3D parts how amd_x3d_vcache's mode bears on
 * it: the mode only orders the cores the scheduler fills first for
 * unpinned work; a pin holds the program on its CCX in either mode. */
static void explain_prefer(const struct rule *rule, const struct topology *t, unsigned ccx, char *buf,
			   size_t size) {
	const char *why, *mode = t->x3d_mode;
	bool same;

	buf[0] = '\0';
	if (rule->prefer == RULE_PREFER_CACHE)
		why = "the largest L3";
	else if (rule->prefer == RULE_PREFER_FREQUENCY)
		why = t->clock_source != TOPOLOGY_CLOCK_NONE ? "the highest clock" : "the smallest L3, no clocks known";
	else
		return;
	if (!mode[0]) {
		snprintf(buf, size, "; prefer = %s: CCX %u, %s", rule_prefer_to_string(rule->prefer), ccx, why);
		return;
	}
	same = strcmp(mode, rule_prefer_to_string(rule->prefer)) == 0;
	snprintf(buf, size, "; prefer = %s: CCX %u, %s; X3D mode %s %s", rule_prefer_to_string(rule->prefer), ccx, why,
		 mode, same ? "ranks it first too" : "ranks the other die first for unpinned work, the pin holds");
}

static int decide(const struct rule *rule, const struct ruling_subject *s, const struct ruling_context *ctx,
		  struct ruling *ret) {
	char list[CPULIST_MAX], prefer[256];
	unsigned ccx = 0;
	int r;

	if (rule->policy == RULE_POLICY_IGNORE)
		return rule_as(ret, RULING_IGNORE, "rule %s: policy = ignore", rule->name);
	r = target(rule, s, ctx, ret, &ccx);
	if (r == -ENOMEM)
		return r;
	if (r == -EOPNOTSUPP)
		/* The automatic policy seats it with whom it talks to. */
		return rule_as(ret, RULING_HAND_OVER, "rule %s: policy = %s", rule->name,
			       rule_policy_to_string(rule->policy));
	if (r < 0)
		return rule_as(ret, RULING_LEAVE_ALONE, "rule %s: no usable CCX among those it names", rule->name);
	if (CPU_COUNT(&ret->cpus) == 0)
		return rule_as(ret, RULING_LEAVE_ALONE, "rule %s: its cgroup cpuset %s excludes CCX %u", rule->name,
			       cpulist_format(&s->allowed, list, sizeof(list)), ccx);
	/* Narrower than everything it may use: somebody chose that by hand. */
	if (!s->ours && !cpulist_is_subset(&s->allowed, &s->mask) && !rule->force)
		return rule_as(ret, RULING_LEAVE_ALONE, "rule %s: affinity %s was set by someone else (force = no)",
			       rule->name, cpulist_format(&s->mask, list, sizeof(list)));
	explain_prefer(rule, ctx->topology, ccx, prefer, sizeof(prefer));
	if (ctx->dry_run)
		return rule_as(ret, RULING_WOULD_PIN, "rule %s: would pin to CCX %s%s", rule->name,
			       placer_ccx_list(ctx->topology, &ret->cpus, list, sizeof(list)), prefer);
	return rule_as(ret, RULING_PIN, "rule %s%s", rule->name, prefer);
}

int ruling_decide(const struct rule *rule, const struct ruling_subject *s, const struct ruling_context *ctx,
		  struct ruling *ret) {
	int r;

	*ret = (struct ruling){ .sets = NULL };
	r = decide(rule, s, ctx, ret);
	/* Sets only go with a pin. */
	if (r < 0 || (ret->action != RULING_PIN && ret->action != RULING_WOULD_PIN)) {
		free(ret->sets);
		ret->sets = NULL;
		ret->n_sets = 0;
	}
	return r;
}
