#include "config.h"

#include "config-parse.h"
#include "groups.h"
#include "validator.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#define USEC_PER_MSEC  UINT64_C(1000)
#define USEC_PER_SEC   UINT64_C(1000000)
#define USEC_PER_HOUR  (3600 * USEC_PER_SEC)

#define INTERVAL_MIN   (10 * USEC_PER_MSEC)
#define INTERVAL_MAX   USEC_PER_HOUR

/* A config is a few KiB. The cap keeps a wrong path (a log, /dev/zero) from
 * taking all memory before it is rejected. */
#define CONFIG_MAX_SIZE (16u << 20)

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

static const char *const mode_names[] = {
	[CONFIG_MODE_ENFORCE] = "enforce",
	[CONFIG_MODE_DRY_RUN] = "dry-run",
	[CONFIG_MODE_OFF] = "off",
};

const char *config_mode_to_string(enum config_mode m) {
	return (unsigned)m < ELEMENTSOF(mode_names) ? mode_names[m] : NULL;
}

/* The bpf key's values, by the reading they allow at best. */
static const char *const bpf_names[] = {
	[SAMPLER_READ_BATCH] = "auto",
	[SAMPLER_READ_EACH] = "per-process",
	[SAMPLER_READ_PROC] = "no",
};

const char *config_bpf_to_string(enum sampler_reading r) {
	return (unsigned)r < ELEMENTSOF(bpf_names) ? bpf_names[r] : NULL;
}

/* ---- the parser ---- */

enum section {
	SECTION_NONE,             /* before the first header */
	SECTION_DAEMON,
	SECTION_PROGRAM,
	SECTION_UNKNOWN,          /* reported at its header; its keys are not */
};

struct config_error {
	unsigned line;
	size_t seq;               /* keeps errors of one line in the order found */
	char *text;
};

/* Enough for the largest key table; see the static asserts below. */
#define SECTION_KEYS_MAX 16

struct parser {
	const char *path;
	struct config *config;
	size_t rules_alloc;

	const char *buf;          /* the whole file */
	size_t size, pos;
	unsigned line;            /* the line last handed to inih */
	const char *key_line;     /* that line as handed, when it is a key = value line */
	bool expect_handler;      /* ... for which inih has not called the handler yet */

	enum section section;
	unsigned seen[SECTION_KEYS_MAX]; /* line of each key of this section, 0 = not yet */
	unsigned daemon_line;     /* of the first [daemon], 0 = none yet */

	struct config_error *errors;
	size_t n_errors, errors_alloc;
	bool oom;
};

static void *grow(void *p, size_t *alloc, size_t need, size_t elem) {
	size_t n = *alloc ? *alloc : 8;

	if (need <= *alloc)
		return p;
	while (n < need)
		n *= 2;
	p = reallocarray(p, n, elem);
	if (p)
		*alloc = n;
	return p;
}

__attribute__((format(printf, 3, 4)))
static void parser_error(struct parser *p, unsigned line, const char *fmt, ...) {
	struct config_error *e;
	char *msg, *text;
	va_list ap;
	int r;

	e = grow(p->errors, &p->errors_alloc, p->n_errors + 1, sizeof(*e));
	if (!e) {
		p->oom = true;
		return;
	}
	p->errors = e;
	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0) {
		p->oom = true;
		return;
	}
	r = asprintf(&text, "%s:%u: %s", p->path, line, msg);
	free(msg);
	if (r < 0) {
		p->oom = true;
		return;
	}
	p->errors[p->n_errors] = (struct config_error) { line, p->n_errors, text };
	p->n_errors++;
}

static struct rule *current_rule(struct parser *p) {
	return &p->config->rules[p->config->n_rules - 1];
}

static void set_string(struct parser *p, char **field, const char *value) {
	char *s = strdup(value);

	if (!s) {
		p->oom = true;
		return;
	}
	free(*field);
	*field = s;
}

/* Joins the names that name(0), name(1), ... return into "a, b or c". */
static void join_names(const char *(*name)(int), char *buf, size_t size) {
	size_t len = 0, n = 0;

	while (name((int)n))
		n++;
	buf[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
		int r = snprintf(buf + len, size - len, "%s%s", sep, name((int)i));

		if (r < 0)
			break;
		len += (size_t)r;
	}
}

/* Returns the index whose name(index) is value, or -1 after reporting it. */
static int parse_enum(struct parser *p, const char *key, const char *value,
		      const char *(*name)(int)) {
	char expected[128];

	for (int i = 0; name(i); i++)
		if (strcmp(value, name(i)) == 0)
			return i;
	join_names(name, expected, sizeof(expected));
	parser_error(p, p->line, "invalid value '%s' for %s (expected %s)", value, key, expected);
	return -1;
}

/* Adapters so that one parse_enum() serves every enum type. */
static const char *mode_name(int i) { return config_mode_to_string((enum config_mode)i); }
static const char *bpf_name(int i) { return config_bpf_to_string((enum sampler_reading)i); }
static const char *policy_name(int i) { return rule_policy_to_string((enum rule_policy)i); }
static const char *smt_name(int i) { return rule_smt_to_string((enum rule_smt)i); }
static const char *prefer_name(int i) { return rule_prefer_to_string((enum rule_prefer)i); }

static void parse_bool_key(struct parser *p, const char *key, const char *value, bool *b) {
	if (config_parse_bool(value, b) < 0)
		parser_error(p, p->line, "invalid value '%s' for %s (expected yes, no, true, false, on, off, 1 or 0)",
			     value, key);
}

static void parse_path_key(struct parser *p, const char *key, const char *value, char **field) {
	if (value[0] != '/') {
		parser_error(p, p->line, "invalid value '%s' for %s (expected an absolute path)", value, key);
		return;
	}
	set_string(p, field, value);
}

static void set_socket(struct parser *p, const char *key, const char *value) {
	size_t max = sizeof(((struct sockaddr_un *)NULL)->sun_path) - 1;

	/* Caught here, since bind() would only fail on it much later, at start-up. */
	if (value[0] == '/' && strlen(value) > max) {
		parser_error(p, p->line, "%s path too long (%zu bytes, at most %zu)", key, strlen(value), max);
		return;
	}
	parse_path_key(p, key, value, &p->config->socket);
}

static bool topology_spec_valid(const char *s) {
	if (strcmp(s, "system") == 0)
		return true;
	if (strncmp(s, "xml:", 4) == 0)
		return s[4] != '\0';
	if (strncmp(s, "synthetic:", 10) == 0)
		return s[10] != '\0';
	return false;
}

static void set_topology(struct parser *p, const char *key, const char *value) {
	if (!topology_spec_valid(value)) {
		parser_error(p, p->line, "invalid value '%s' for %s (expected system, xml:PATH or synthetic:STRING)",
			     value, key);
		return;
	}
	set_string(p, &p->config->topology, value);
}

static void set_mode(struct parser *p, const char *key, const char *value) {
	int i = parse_enum(p, key, value, mode_name);

	if (i >= 0)
		p->config->mode = (enum config_mode)i;
}

static void set_interval(struct parser *p, const char *key, const char *value) {
	uint64_t usec;
	int r = config_parse_duration(value, &usec);

	if (r == -EINVAL) {
		parser_error(p, p->line, "invalid value '%s' for %s (expected a duration such as 500ms, 1s or 2m)",
			     value, key);
		return;
	}
	if (r < 0 || usec < INTERVAL_MIN || usec > INTERVAL_MAX) {
		parser_error(p, p->line, "%s %s out of range (10ms..1h)", key, value);
		return;
	}
	p->config->interval_usec = usec;
}

static void set_restore_on_exit(struct parser *p, const char *key, const char *value) {
	parse_bool_key(p, key, value, &p->config->restore_on_exit);
}

static void set_calibrate(struct parser *p, const char *key, const char *value) {
	parse_bool_key(p, key, value, &p->config->calibrate);
}

static void set_bpf(struct parser *p, const char *key, const char *value) {
	int i = parse_enum(p, key, value, bpf_name);

	if (i >= 0)
		p->config->bpf = (enum sampler_reading)i;
}

static void set_state_dir(struct parser *p, const char *key, const char *value) {
	parse_path_key(p, key, value, &p->config->state_dir);
}

static void set_runtime_dir(struct parser *p, const char *key, const char *value) {
	parse_path_key(p, key, value, &p->config->runtime_dir);
}

/* Caught here rather than at the first interval's write, which would only
 * log it. (The line length limit keeps any path far below PATH_MAX.) */
static void set_metrics_file(struct parser *p, const char *key, const char *value) {
	size_t len = strlen(value);

	if (value[0] == '/' && value[len - 1] == '/') {
		parser_error(p, p->line, "invalid value '%s' for %s (expected the path of a file, not a directory)",
			     value, key);
		return;
	}
	parse_path_key(p, key, value, &p->config->metrics_file);
}

static void set_min_rate(struct parser *p, const char *key, const char *value) {
	uint64_t bytes;

	if (config_parse_size(value, &bytes) < 0) {
		parser_error(p, p->line, "invalid value '%s' for %s (expected a rate such as 512K, 1M or 4M/s)", value,
			     key);
		return;
	}
	p->config->min_rate = (double)bytes;
}

/* "5%" or "0.05" */
static void set_min_gain(struct parser *p, const char *key, const char *value) {
	char *end;
	double v;

	errno = 0;
	v = strtod(value, &end);
	if (end != value && *end == '%' && end[1] == '\0')
		v /= 100.0;
	else if (end == value || *end)
		v = -1;
	if (errno || !(v >= 0.0 && v <= 10.0)) {
		parser_error(p, p->line, "invalid value '%s' for %s (expected a gain such as 5%% or 0.05, at most 1000%%)",
			     value, key);
		return;
	}
	p->config->min_gain = v;
}

static void set_window(struct parser *p, const char *key, const char *value) {
	char *end;
	long v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (errno || end == value || *end || v < 1 || v > 8) {
		parser_error(p, p->line, "invalid value '%s' for %s (expected a number of samples, 1 to 8)", value, key);
		return;
	}
	p->config->window = (unsigned)v;
}

static void set_seatings(struct parser *p, const char *key, const char *value) {
	enum seating list[_SEATING_MAX];
	size_t n = 0;
	char *copy = strdup(value), *save = NULL;

	if (!copy) {
		p->oom = true;
		return;
	}
	for (char *w = strtok_r(copy, ", \t", &save); w; w = strtok_r(NULL, ", \t", &save)) {
		int found = -1;
		for (int s = 0; s < _SEATING_MAX; s++)
			if (strcmp(w, seating_to_string((enum seating)s)) == 0)
				found = s;
		if (found < 0) {
			parser_error(p, p->line, "invalid value '%s' for %s (expected one-per-core, smt-siblings, shared-cpu)",
				     w, key);
			free(copy);
			return;
		}
		for (size_t i = 0; i < n; i++)
			if (list[i] == (enum seating)found) {
				parser_error(p, p->line, "%s lists %s twice", key, w);
				free(copy);
				return;
			}
		list[n++] = (enum seating)found;
	}
	free(copy);
	if (n == 0) {
		parser_error(p, p->line, "empty value for %s (expected one-per-core, smt-siblings, shared-cpu)", key);
		return;
	}
	memcpy(p->config->seatings, list, n * sizeof(*list));
	p->config->n_seatings = n;
}

static void parse_glob_key(struct parser *p, const char *key, const char *value, char **field) {
	/* An empty glob matches only an empty string: a typo, never a rule. */
	if (!value[0]) {
		parser_error(p, p->line, "empty value for %s (expected a glob)", key);
		return;
	}
	set_string(p, field, value);
}

static void set_exe(struct parser *p, const char *key, const char *value) {
	parse_glob_key(p, key, value, &current_rule(p)->exe);
}

static void set_cmdline(struct parser *p, const char *key, const char *value) {
	parse_glob_key(p, key, value, &current_rule(p)->cmdline);
}

static void set_ccx(struct parser *p, const char *key, const char *value) {
	struct rule *rule = current_rule(p);
	unsigned char used[CONFIG_PARSE_CCX_MAX] = { 0 };
	unsigned *list;
	size_t n = 1, count = 0;
	const char *s = value;

	if (strcmp(value, "auto") == 0) {
		free(rule->ccx);
		rule->ccx = NULL;
		rule->n_ccx = 0;
		rule->ccx_auto = true;
		rule->ccx_line = p->line;
		return;
	}
	for (const char *q = value; *q; q++)
		n += *q == ',';
	list = calloc(n, sizeof(*list));
	if (!list) {
		p->oom = true;
		return;
	}
	for (;;) {
		size_t len = strcspn(s, ",");
		const char *next = s[len] ? s + len + 1 : NULL;
		unsigned idx = 0;
		int r;

		while (len > 0 && isblank((unsigned char)*s))
			s++, len--;
		while (len > 0 && isblank((unsigned char)s[len - 1]))
			len--;
		r = config_parse_ccx_index(s, len, &idx);
		if (r == -ERANGE) {
			parser_error(p, p->line, "%s index %.*s out of range (0..%d)",
				     key, (int)len, s, CONFIG_PARSE_CCX_MAX - 1);
			goto fail;
		}
		if (r < 0) {
			parser_error(p, p->line, "invalid value '%s' for %s (expected auto or a comma-separated list of CCX indexes such as 1 or 0,2)",
				     value, key);
			goto fail;
		}
		if (used[idx]) {
			parser_error(p, p->line, "duplicate %s index %u in '%s'", key, idx, value);
			goto fail;
		}
		used[idx] = 1;
		list[count++] = idx;
		if (!next)
			break;
		s = next;
	}
	free(rule->ccx);
	rule->ccx = list;
	rule->n_ccx = count;
	rule->ccx_auto = false;
	rule->ccx_line = p->line;
	return;
fail:
	free(list);
}

static void set_policy(struct parser *p, const char *key, const char *value) {
	int i = parse_enum(p, key, value, policy_name);

	if (i >= 0)
		current_rule(p)->policy = (enum rule_policy)i;
}

static void set_smt(struct parser *p, const char *key, const char *value) {
	int i = parse_enum(p, key, value, smt_name);

	if (i >= 0)
		current_rule(p)->smt = (enum rule_smt)i;
}

static void set_prefer(struct parser *p, const char *key, const char *value) {
	int i = parse_enum(p, key, value, prefer_name);

	if (i >= 0)
		current_rule(p)->prefer = (enum rule_prefer)i;
}

static void set_force(struct parser *p, const char *key, const char *value) {
	parse_bool_key(p, key, value, &current_rule(p)->force);
}

struct key {
	const char *name;
	void (*set)(struct parser *p, const char *key, const char *value);
};

static const struct key daemon_keys[] = {
	{ "socket", set_socket },
	{ "topology", set_topology },
	{ "mode", set_mode },
	{ "interval", set_interval },
	{ "restore_on_exit", set_restore_on_exit },
	{ "state_dir", set_state_dir },
	{ "runtime_dir", set_runtime_dir },
	{ "calibrate", set_calibrate },
	{ "bpf", set_bpf },
	{ "metrics_file", set_metrics_file },
	{ "min_rate", set_min_rate },
	{ "min_gain", set_min_gain },
	{ "window", set_window },
	{ "seatings", set_seatings },
};

static const struct key program_keys[] = {
	{ "exe", set_exe },
	{ "cmdline", set_cmdline },
	{ "ccx", set_ccx },
	{ "policy", set_policy },
	{ "smt", set_smt },
	{ "prefer", set_prefer },
	{ "force", set_force },
};

_Static_assert(ELEMENTSOF(daemon_keys) <= SECTION_KEYS_MAX, "seen[] too small");
_Static_assert(ELEMENTSOF(program_keys) <= SECTION_KEYS_MAX, "seen[] too small");

static void apply_key(struct parser *p, const struct key *keys, size_t n_keys,
		      const char *section, const char *name, const char *key, const char *value) {
	char expected[160];
	size_t len = 0;

	for (size_t i = 0; i < n_keys; i++) {
		if (strcmp(key, keys[i].name) != 0)
			continue;
		if (p->seen[i]) {
			parser_error(p, p->line, "duplicate key '%s' (first at line %u)", key, p->seen[i]);
			return;
		}
		p->seen[i] = p->line;
		keys[i].set(p, key, value);
		return;
	}
	expected[0] = '\0';
	for (size_t i = 0; i < n_keys && len < sizeof(expected); i++) {
		int r = snprintf(expected + len, sizeof(expected) - len, "%s%s", i ? ", " : "", keys[i].name);

		if (r < 0)
			break;
		len += (size_t)r;
	}
	parser_error(p, p->line, "unknown key '%s' in [%s%s] (expected %s)",
		     key, section, name, expected);
}

#define SYNTAX_ERROR "syntax error (expected 'key = value', '[section]' or a comment)"

/* inih's handler. Its section argument is not used: read_line() takes the
 * section headers itself. */
static int handle_key(void *user, const char *section, const char *key, const char *value) {
	struct parser *p = user;
	const char *sep = p->key_line + strlen(key);

	(void)section;
	p->expect_handler = false;
	/* inih also splits at ':' (key: value, for Python's configparser);
	 * ccxd's format has only '='. The key starts the line, so white space
	 * and then what inih split at follow it there. */
	while (isspace((unsigned char)*sep))
		sep++;
	if (*sep != '=') {
		parser_error(p, p->line, SYNTAX_ERROR);
		return 1;
	}
	if (!key[0]) {
		parser_error(p, p->line, "missing key before '='");
		return 1;
	}
	switch (p->section) {
	case SECTION_NONE:
		parser_error(p, p->line, "key '%s' outside a section (expected [daemon] or [program:NAME] above it)", key);
		break;
	case SECTION_DAEMON:
		apply_key(p, daemon_keys, ELEMENTSOF(daemon_keys), "daemon", "", key, value);
		break;
	case SECTION_PROGRAM:
		apply_key(p, program_keys, ELEMENTSOF(program_keys), "program:",
			  current_rule(p)->name, key, value);
		break;
	case SECTION_UNKNOWN:
		break;
	}
	/* Errors are collected here rather than returned to inih, which would
	 * only keep the line of the first. */
	return 1;
}

static void begin_section(struct parser *p, const char *name) {
	memset(p->seen, 0, sizeof(p->seen));

	if (strcmp(name, "daemon") == 0) {
		p->section = SECTION_DAEMON;
		if (p->daemon_line)
			parser_error(p, p->line, "duplicate [daemon] section (first at line %u)", p->daemon_line);
		else
			p->daemon_line = p->line;
		return;
	}

	if (strncmp(name, "program:", 8) == 0) {
		struct config *c = p->config;
		struct rule *rules;
		const char *prog = name + 8;

		while (isblank((unsigned char)*prog))
			prog++;
		rules = grow(c->rules, &p->rules_alloc, c->n_rules + 1, sizeof(*rules));
		if (!rules) {
			p->oom = true;
			p->section = SECTION_UNKNOWN;
			return;
		}
		c->rules = rules;
		c->rules[c->n_rules] = (struct rule) {
			.name = strdup(prog),
			.ccx_auto = true,
			.policy = RULE_POLICY_PIN,
			.smt = RULE_SMT_ALLOW,
			.prefer = RULE_PREFER_ANY,
			.line = p->line,
			.ccx_line = p->line,
		};
		if (!c->rules[c->n_rules].name) {
			p->oom = true;
			p->section = SECTION_UNKNOWN;
			return;
		}
		c->n_rules++;
		p->section = SECTION_PROGRAM;
		/* Kept as a rule all the same, so that its keys are checked too. */
		if (!prog[0])
			parser_error(p, p->line, "empty program name in [%s]", name);
		return;
	}

	p->section = SECTION_UNKNOWN;
	parser_error(p, p->line, "unknown section [%s] (expected [daemon] or [program:NAME])", name);
}

static char *skip_blanks(char *s) {
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

static void strip_blanks(char *s) {
	size_t len = strlen(s);

	while (len > 0 && isspace((unsigned char)s[len - 1]))
		s[--len] = '\0';
}

/* A "[name]" line, nul-terminated and trimmed. Taken here rather than by
 * inih, which cuts names at 49 bytes, says nothing of a section without keys
 * and ignores any text after the ']'. */
static void read_section_header(struct parser *p, char *s) {
	char *name = s + 1, *end, *rest;
	bool after_space = false;

	/* A ';' after white space starts a comment, as it does for inih. */
	for (end = name; *end && *end != ']' && !(after_space && *end == ';'); end++)
		after_space = isspace((unsigned char)*end);
	if (*end != ']') {
		parser_error(p, p->line, "missing ']' in section header");
		/* Its keys would otherwise land in the section before. */
		p->section = SECTION_UNKNOWN;
		return;
	}
	*end = '\0';
	name = skip_blanks(name);
	strip_blanks(name);
	rest = skip_blanks(end + 1);
	if (*rest && *rest != ';' && *rest != '#') {
		parser_error(p, p->line, "unexpected '%s' after section header [%s]", rest, name);
		p->section = SECTION_UNKNOWN;
		return;
	}
	begin_section(p, name);
}

/* Takes the next line of the file, without its '\n', a '\r' before that and,
 * on the first line, a UTF-8 BOM. Returns false at the end of the file. */
static bool next_line(struct parser *p, const char **ret, size_t *ret_len) {
	const char *s = p->buf + p->pos, *nl;
	size_t len;

	if (p->pos >= p->size)
		return false;
	nl = memchr(s, '\n', p->size - p->pos);
	len = nl ? (size_t)(nl - s) : p->size - p->pos;
	p->pos += len + (nl ? 1 : 0);
	p->line++;
	if (p->line == 1 && len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
		s += 3;
		len -= 3;
	}
	if (len > 0 && s[len - 1] == '\r')
		len--;
	*ret = s;
	*ret_len = len;
	return true;
}

/* inih's reader. It hands inih one line per call, so that p->line is the
 * line of the key the handler gets (Debian's inih is built without
 * INI_HANDLER_LINENO), and reports what inih cannot:
 * - a NUL byte, where inih would end the line without a word;
 * - a line longer than inih's buffer, which inih would parse as several;
 * - a line inih finds no key = value in: inih returns the line of the first
 *   only (and calls no handler for any);
 * - whatever is wrong in a section header (read_section_header()).
 * Only the lines that should be key = value reach inih, and without their
 * indentation, which inih would take for the continuation of the value
 * before them (INI_ALLOW_MULTILINE); every other line reaches it blank. */
static char *read_line(char *buf, int size, void *stream) {
	struct parser *p = stream;
	/* Room for the line, its '\n' and the '\0', as fgets() fills buf. */
	size_t max = (size_t)size - 2, len, indent = 0;
	const char *s;

	if (p->expect_handler)
		parser_error(p, p->line, SYNTAX_ERROR);
	p->expect_handler = false;
	if (p->oom || size < 2 || !next_line(p, &s, &len))
		return NULL;

	strcpy(buf, "\n");
	while (indent < len && isspace((unsigned char)s[indent]))
		indent++;
	if (memchr(s, '\0', len)) {
		parser_error(p, p->line, "NUL byte in line");
		return buf;
	}
	/* Blank, or a comment, which may be of any length. */
	if (indent == len || s[indent] == ';' || s[indent] == '#')
		return buf;
	if (len > max) {
		parser_error(p, p->line, "line too long (%zu bytes, at most %zu)", len, max);
		return buf;
	}

	memcpy(buf, s + indent, len - indent);
	buf[len - indent] = '\0';
	strip_blanks(buf);
	if (buf[0] == '[') {
		read_section_header(p, buf);
		return strcpy(buf, "\n");
	}
	p->key_line = s + indent;
	p->expect_handler = true;
	return strcat(buf, "\n");
}

static int read_file(const char *path, char **ret, size_t *ret_size) {
	char *buf = NULL;
	size_t size = 0, alloc = 0;
	int fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n;

		if (size == alloc) {
			char *b;

			if (alloc > CONFIG_MAX_SIZE) {
				r = -EFBIG;
				break;
			}
			alloc = alloc ? alloc * 2 : 4096;
			b = realloc(buf, alloc);
			if (!b) {
				r = -ENOMEM;
				break;
			}
			buf = b;
		}
		n = read(fd, buf + size, alloc - size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		size += (size_t)n;
	}
	close(fd);
	if (r == 0 && size > CONFIG_MAX_SIZE)
		r = -EFBIG;
	if (r < 0) {
		free(buf);
		return r;
	}
	*ret = buf;
	*ret_size = size;
	return 0;
}

static int compare_errors(const void *a, const void *b) {
	const struct config_error *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int compare_rules_by_name(const void *a, const void *b) {
	const struct rule *x = *(const struct rule *const *)a, *y = *(const struct rule *const *)b;
	int r = strcmp(x->name, y->name);

	if (r)
		return r;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Sorted rather than compared pair by pair: a generated config with
 * thousands of programs should not take quadratic time. */
static void check_duplicate_programs(struct parser *p) {
	struct config *c = p->config;
	const struct rule **sorted;

	if (c->n_rules < 2)
		return;
	sorted = calloc(c->n_rules, sizeof(*sorted));
	if (!sorted) {
		p->oom = true;
		return;
	}
	for (size_t i = 0; i < c->n_rules; i++)
		sorted[i] = &c->rules[i];
	qsort(sorted, c->n_rules, sizeof(*sorted), compare_rules_by_name);
	for (size_t i = 1, first = 0; i < c->n_rules; i++) {
		if (strcmp(sorted[i]->name, sorted[first]->name) != 0) {
			first = i;
			continue;
		}
		if (sorted[i]->name[0])
			parser_error(p, sorted[i]->line, "duplicate section [program:%s] (first at line %u)",
				     sorted[i]->name, sorted[first]->line);
	}
	free(sorted);
}

/* Moves the error texts, in line order, into a NULL-terminated array. */
static char **take_errors(struct parser *p) {
	char **list = calloc(p->n_errors + 1, sizeof(*list));

	if (!list)
		return NULL;
	qsort(p->errors, p->n_errors, sizeof(*p->errors), compare_errors);
	for (size_t i = 0; i < p->n_errors; i++) {
		list[i] = p->errors[i].text;
		p->errors[i].text = NULL;
	}
	return list;
}

static void parser_done(struct parser *p) {
	for (size_t i = 0; i < p->n_errors; i++)
		free(p->errors[i].text);
	free(p->errors);
}

static char **single_error(const char *path, int error) {
	char **list = calloc(2, sizeof(*list));

	if (!list)
		return NULL;
	errno = -error;
	if (asprintf(&list[0], "%s: %m", path) < 0) {
		free(list);
		return NULL;
	}
	return list;
}

int config_load(const char *path, struct config **ret, char ***errors) {
	struct parser p = { .path = path };
	char *buf = NULL, **list = NULL;
	int r;

	*ret = NULL;
	if (errors)
		*errors = NULL;

	r = read_file(path, &buf, &p.size);
	if (r < 0) {
		if (errors && r != -ENOMEM)
			*errors = single_error(path, r);
		return r;
	}
	p.buf = buf;
	p.config = config_new_default();
	if (!p.config || !(p.config->path = strdup(path))) {
		r = -ENOMEM;
		goto out;
	}

	r = ini_parse_stream(read_line, &p, handle_key, &p);
	if (r < 0)
		p.oom = true;
	/* The line inih rejects is one read_line() reported; but should inih
	 * stop there (INI_STOP_ON_FIRST_ERROR), the file is still no good. */
	else if (r > 0 && p.n_errors == 0)
		parser_error(&p, (unsigned)r, SYNTAX_ERROR);

	check_duplicate_programs(&p);

	if (p.oom) {
		r = -ENOMEM;
		goto out;
	}
	if (p.n_errors > 0) {
		list = take_errors(&p);
		r = list ? -EINVAL : -ENOMEM;
		goto out;
	}
	*ret = p.config;
	p.config = NULL;
	r = 0;
out:
	if (errors)
		*errors = list;
	else
		config_errors_free(list);
	config_free(p.config);
	parser_done(&p);
	free(buf);
	return r;
}

struct config *config_new_default(void) {
	struct config *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->socket = strdup(CONFIG_DEFAULT_SOCKET);
	c->topology = strdup("system");
	c->state_dir = strdup("/var/lib/ccxd");
	c->runtime_dir = strdup(CONFIG_DEFAULT_RUNTIME);
	c->mode = CONFIG_MODE_ENFORCE;
	c->interval_usec = USEC_PER_SEC;
	c->restore_on_exit = true;
	c->calibrate = true;
	c->bpf = SAMPLER_READ_BATCH;
	c->min_rate = GROUPS_DEFAULT_MIN_RATE;
	c->min_gain = VALIDATOR_DEFAULT_MIN_GAIN;
	c->window = 3;
	for (int i = 0; i < _SEATING_MAX; i++)
		c->seatings[c->n_seatings++] = (enum seating)i;
	if (!c->socket || !c->topology || !c->state_dir || !c->runtime_dir) {
		config_free(c);
		return NULL;
	}
	return c;
}

void config_free(struct config *c) {
	if (!c)
		return;
	for (size_t i = 0; i < c->n_rules; i++)
		rule_done(&c->rules[i]);
	free(c->rules);
	free(c->path);
	free(c->socket);
	free(c->topology);
	free(c->state_dir);
	free(c->runtime_dir);
	free(c->metrics_file);
	free(c);
}

void config_errors_free(char **errors) {
	if (!errors)
		return;
	for (char **e = errors; *e; e++)
		free(*e);
	free(errors);
}
