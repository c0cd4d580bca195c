#include "setup.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-file.h"
#include "log.h"

static char *strdupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *strdupf(const char *fmt, ...) {
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	return r < 0 ? NULL : s;
}

static int strv_push(char ***strv, size_t *n, char *s) {
	char **p;

	if (!s)
		return -ENOMEM;
	p = realloc(*strv, (*n + 2) * sizeof(*p));
	if (!p) {
		free(s);
		return -ENOMEM;
	}
	p[(*n)++] = s;
	p[*n] = NULL;
	*strv = p;
	return 0;
}

/* Rules name CCXs by index; only the topology can say whether they exist. */
static int check_rules_fit(const struct config *c, const struct topology *t, char ***errors) {
	size_t n = 0;

	*errors = NULL;
	for (size_t i = 0; i < c->n_rules; i++) {
		const struct rule *r = &c->rules[i];
		const char *file = r->file ? r->file : c->path;
		for (size_t k = 0; k < r->n_ccx; k++) {
			char *msg;
			if (r->ccx[k] < t->n_ccx && t->ccx[r->ccx[k]].usable)
				continue;
			if (r->ccx[k] < t->n_ccx)
				msg = strdupf("%s:%u: ccx %u has no online CPU", file, r->ccx_line, r->ccx[k]);
			else
				msg = strdupf("%s:%u: ccx %u does not exist: topology %s has %u CCX%s (0-%u)",
					      file, r->ccx_line, r->ccx[k], t->source, t->n_ccx,
					      t->n_ccx == 1 ? "" : "s", t->n_ccx ? t->n_ccx - 1 : 0);
			if (strv_push(errors, &n, msg) < 0)
				return -ENOMEM;
		}
	}
	return n ? -EINVAL : 0;
}

/* Appends the strings of more (taken, and freed) to the list of n. */
static int strv_extend(char ***strv, size_t *n, char **more) {
	int r = 0;

	for (char **m = more; m && *m; m++)
		if (r >= 0)
			r = strv_push(strv, n, *m);
		else
			free(*m);
	free(more);
	return r;
}

static size_t strv_length(char **strv) {
	size_t n = 0;

	while (strv && strv[n])
		n++;
	return n;
}

/* The topology c names, and whether c's rules fit it: every error in
 * *errors (appended to what is there). */
static int load_topology(const struct config *c, const char *path, struct topology **ret, char ***errors) {
	size_t n = strv_length(*errors);
	char *error = NULL, **misfits = NULL;
	int r = topology_load(c->topology, ret, &error);

	if (r < 0) {
		char *msg = strdupf("%s: topology %s: %s", c->path ? c->path : path, c->topology,
				    error ? error : strerror(-r));
		free(error);
		return strv_push(errors, &n, msg) < 0 ? -ENOMEM : -EINVAL;
	}
	r = check_rules_fit(c, *ret, &misfits);
	if (strv_extend(errors, &n, misfits) < 0)
		r = -ENOMEM;
	if (r < 0) {
		topology_free(*ret);
		*ret = NULL;
	}
	return r;
}

int setup_load(const char *path, bool explicit_path, struct config **ret_config,
			struct topology **ret_topology, char ***errors) {
	struct config *c = NULL;
	struct topology *t = NULL;
	int r;

	*errors = NULL;
	/* The default file may be missing; its drop-ins and presets still
	 * count. A file named on the command line must be there. What parsed
	 * of a file with errors is checked against its topology too, so that
	 * every error comes at once. */
	r = config_load_from(&(struct config_sources){ .path = path, .presets = config_presets_for(path),
						       .path_optional = !explicit_path, .keep_on_errors = true },
			     &c, errors);
	if (r == -EINVAL && c) {
		if (!c->topology_invalid && load_topology(c, path, &t, errors) == -ENOMEM)
			r = -ENOMEM;
		topology_free(t);
		config_free(c);
		return r;
	}
	if (r < 0)
		return r;
	if (!c->path)
		log_notice("%s does not exist, running with the defaults and %s", path,
			   c->n_files ? "the rules of its drop-ins" : "no rules");
	r = load_topology(c, path, &t, errors);
	if (r < 0) {
		config_free(c);
		return r;
	}
	*ret_config = c;
	*ret_topology = t;
	return 0;
}

int setup_warnings(const struct config *c, char ***warnings) {
	size_t n = 0;

	*warnings = NULL;
	for (size_t i = 0; i < c->n_rules; i++) {
		const struct rule *r = &c->rules[i];
		struct rules_idle idle[8];
		size_t k = rules_idle_keys(r, idle, sizeof(idle) / sizeof(idle[0]));
		bool spill_said = false;

		for (size_t j = 0; j < k; j++)
			spill_said |= strcmp(idle[j].key, "spill") == 0;
		/* A crowd is judged from the sample the automatic policy takes. */
		if (r->spill && !c->automatic && !spill_said && k < sizeof(idle) / sizeof(idle[0]))
			idle[k++] = (struct rules_idle){ "spill", "automatic = no takes no sample to judge a crowd by" };
		for (size_t j = 0; j < k; j++) {
			unsigned line = strcmp(idle[j].key, "ccx") == 0 ? r->ccx_line : r->line;
			char *msg = strdupf("%s:%u: warning: %s does nothing: %s", r->file ? r->file : c->path, line,
					    idle[j].key, idle[j].why);
			if (strv_push(warnings, &n, msg) < 0) {
				config_errors_free(*warnings);
				*warnings = NULL;
				return -ENOMEM;
			}
		}
	}
	return 0;
}
