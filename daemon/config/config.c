#include "config.h"

#include "config-keys.h"
#include "groups.h"
#include "validator.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define USEC_PER_SEC   UINT64_C(1000000)

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

static const char *const traffic_names[] = {
	[SAMPLER_COUNT_AUTO] = "auto",
	[SAMPLER_COUNT_SYSCALLS] = "syscalls",
	[SAMPLER_COUNT_NO] = "no",
};

const char *config_traffic_to_string(enum sampler_counting c) {
	return (unsigned)c < ELEMENTSOF(traffic_names) ? traffic_names[c] : NULL;
}

static const char *const x3d_names[] = {
	[CONFIG_X3D_KEEP] = "keep",
	[CONFIG_X3D_CACHE] = "cache",
	[CONFIG_X3D_FREQUENCY] = "frequency",
};

const char *config_x3d_to_string(enum config_x3d x) {
	return (unsigned)x < ELEMENTSOF(x3d_names) ? x3d_names[x] : NULL;
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
	unsigned seen[CONFIG_KEYS_MAX]; /* line of each key of this section, 0 = not yet */
	unsigned daemon_line;     /* of the first [daemon], 0 = none yet */

	struct config_error *errors;
	size_t n_errors, errors_alloc;
	bool oom;
};

__attribute__((format(printf, 3, 4)))
static void parser_error(struct parser *p, unsigned line, const char *fmt, ...) {
	struct config_error *e;
	char *msg, *text;
	va_list ap;
	int r;

	e = util_grow(p->errors, &p->errors_alloc, p->n_errors + 1, sizeof(*e));
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

/* Sets key in section s, whose header is [SECTION NAME] in messages, or
 * reports why not. */
static void apply_key(struct parser *p, enum config_keys_section s, const char *section, const char *name,
		      const char *key, const char *value) {
	char expected[512], *error = NULL;
	int i = config_keys_find(s, key), r;

	if (i < 0) {
		config_keys_list(s, expected, sizeof(expected));
		parser_error(p, p->line, "unknown key '%s' in [%s%s] (expected %s)", key, section, name, expected);
		return;
	}
	if (p->seen[i]) {
		parser_error(p, p->line, "duplicate key '%s' (first at line %u)", key, p->seen[i]);
		return;
	}
	p->seen[i] = p->line;
	r = config_keys_set(s, i, p->config, p->line, value, &error);
	if (r == -EINVAL)
		parser_error(p, p->line, "%s", error);
	else if (r < 0)
		p->oom = true;
	free(error);
}

#define SYNTAX_ERROR "syntax error (expected 'key = value', '[section]' or a comment)"

/* Whether inih split line at '=': it also splits at ':' (key: value, for
 * Python's configparser), which ccxd's format does not have. The key starts
 * the line, so white space and then what inih split at follow it there. */
static bool split_at_equals(const char *line, const char *key) {
	const char *s = line + strlen(key);

	while (isspace((unsigned char)*s))
		s++;
	return *s == '=';
}

/* inih's handler. Its section argument is not used: read_line() takes the
 * section headers itself. */
static int handle_key(void *user, const char *section, const char *key, const char *value) {
	struct parser *p = user;

	(void)section;
	p->expect_handler = false;
	/* No value: a line with neither '=' nor ':', from an inih built with
	 * INI_ALLOW_NO_VALUE. */
	if (!value || !split_at_equals(p->key_line, key)) {
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
		apply_key(p, CONFIG_KEYS_DAEMON, "daemon", "", key, value);
		break;
	case SECTION_PROGRAM:
		apply_key(p, CONFIG_KEYS_PROGRAM, "program:", p->config->rules[p->config->n_rules - 1].name, key, value);
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
		rules = util_grow(c->rules, &p->rules_alloc, c->n_rules + 1, sizeof(*rules));
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
	c->min_message_rate = GROUPS_DEFAULT_MIN_MESSAGE_RATE;
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
