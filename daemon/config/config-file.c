#include "config-file.h"

#include "config-keys.h"
#include "log.h"
#include "regfile.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* A config is a few KiB. The cap keeps a wrong path (a log, /dev/zero) from
 * taking all memory before it is rejected. */
#define CONFIG_MAX_SIZE (16u << 20)


/* ---- the parser ---- */

enum section {
	SECTION_NONE,             /* before the first header */
	SECTION_DAEMON,
	SECTION_PROGRAM,
	SECTION_UNKNOWN,          /* reported at its header; its keys are not */
};

struct config_error {
	size_t file;              /* index into config->files: errors go in the order files are read */
	unsigned line;
	size_t seq;               /* keeps errors of one line in the order found */
	char *text;
};

struct parser {
	const char *main_path;    /* the main file's, which [daemon] belongs in */
	const char *path;         /* the file being read: config->files[file] */
	size_t file;
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

/* Keeps text, an error of file index file at line (0: of the whole file). */
static void add_error(struct parser *p, size_t file, unsigned line, char *text) {
	struct config_error *e;

	if (!text) {
		p->oom = true;
		return;
	}
	e = util_grow(p->errors, &p->errors_alloc, p->n_errors + 1, sizeof(*e));
	if (!e) {
		free(text);
		p->oom = true;
		return;
	}
	p->errors = e;
	p->errors[p->n_errors] = (struct config_error) { file, line, p->n_errors, text };
	p->n_errors++;
}

/* "PATH:LINE: message", of file index file. */
__attribute__((format(printf, 5, 0)))
static void file_verror(struct parser *p, size_t file, const char *path, unsigned line, const char *fmt, va_list ap) {
	char *msg, *text;

	if (vasprintf(&msg, fmt, ap) < 0) {
		p->oom = true;
		return;
	}
	if (asprintf(&text, "%s:%u: %s", path, line, msg) < 0)
		text = NULL;
	free(msg);
	add_error(p, file, line, text);
}

__attribute__((format(printf, 5, 6)))
static void file_error(struct parser *p, size_t file, const char *path, unsigned line, const char *fmt, ...) {
	va_list ap;

	va_start(ap, fmt);
	file_verror(p, file, path, line, fmt, ap);
	va_end(ap);
}

/* An error at line of the file being read. */
__attribute__((format(printf, 3, 4)))
static void parser_error(struct parser *p, unsigned line, const char *fmt, ...) {
	va_list ap;

	va_start(ap, fmt);
	file_verror(p, p->file, p->path, line, fmt, ap);
	va_end(ap);
}

/* "PATH: strerror", for a file or directory that cannot be read at all. */
static void errno_error(struct parser *p, size_t file, const char *path, int error) {
	char *text;

	if (asprintf(&text, "%s: %s", path, regfile_strerror(error)) < 0)
		text = NULL;
	add_error(p, file, 0, text);
}

static bool in_dropin(const struct parser *p) {
	return p->path != p->main_path;
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
		parser_error(p, p->line, "key '%s' outside a section (expected %s above it)", key,
			     in_dropin(p) ? "[program:NAME]" : "[daemon] or [program:NAME]");
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

	if (strcmp(name, "daemon") == 0 && in_dropin(p)) {
		/* The settings stay in one file, where a person looks for them. */
		p->section = SECTION_UNKNOWN;
		parser_error(p, p->line, "[daemon] belongs in %s: a drop-in holds [program:NAME] sections only",
			     p->main_path);
		return;
	}
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
			.file = p->path,
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
	parser_error(p, p->line, "unknown section [%s] (expected %s)", name,
		     in_dropin(p) ? "[program:NAME]" : "[daemon] or [program:NAME]");
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

/* A configuration file is read only if it is a regular file (a link to one
 * is followed: configuration management links them), and without blocking:
 * a FIFO in its place is an error, not a hang. /dev/null, or a link to it,
 * is empty: a drop-in that masks a package's preset of its name. */
static int read_file(const char *path, char **ret, size_t *ret_size) {
	struct stat st;
	int r = regfile_read(path, 0, CONFIG_MAX_SIZE, ret, ret_size);

	if (r == -EINVAL && stat(path, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)) {
		*ret = strdup("");
		*ret_size = 0;
		return *ret ? 0 : -ENOMEM;
	}
	return r;
}

static int compare_errors(const void *a, const void *b) {
	const struct config_error *x = a, *y = b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* By name, then in the order read (the rules' array is in that order). */
static int compare_rules_by_name(const void *a, const void *b) {
	const struct rule *x = *(const struct rule *const *)a, *y = *(const struct rule *const *)b;
	int r = strcmp(x->name, y->name);

	if (r)
		return r;
	return x < y ? -1 : x > y;
}

static size_t file_index(const struct config *c, const char *path) {
	for (size_t i = 0; i < c->n_files; i++)
		if (c->files[i] == path)
			return i;
	return 0;
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
		if (!sorted[i]->name[0])
			continue;
		/* Rules are known by name (status, the ledger): one name, one
		 * rule, across every file. */
		if (sorted[i]->file == sorted[first]->file)
			file_error(p, file_index(c, sorted[i]->file), sorted[i]->file, sorted[i]->line,
				   "duplicate section [program:%s] (first at line %u)", sorted[i]->name,
				   sorted[first]->line);
		else
			file_error(p, file_index(c, sorted[i]->file), sorted[i]->file, sorted[i]->line,
				   "duplicate section [program:%s] (first at %s:%u)", sorted[i]->name,
				   sorted[first]->file, sorted[first]->line);
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
	if (asprintf(&list[0], "%s: %s", path, regfile_strerror(error)) < 0) {
		free(list);
		return NULL;
	}
	return list;
}

/* Registers path as the next file of the config: the rules read from it
 * point at the copy. Returns the copy, or NULL when out of memory. */
static const char *add_file(struct config *c, const char *path) {
	char **files = util_grow(c->files, &c->allocated_files, c->n_files + 1, sizeof(*files));
	char *copy;

	if (!files)
		return NULL;
	c->files = files;
	copy = strdup(path);
	if (!copy)
		return NULL;
	c->files[c->n_files++] = copy;
	return copy;
}

/* Parses path into p's config, after what it holds: as the main file, or as
 * a drop-in. Returns 0 (its errors are collected), or -errno when it cannot
 * be read at all. */
static int parse_file(struct parser *p, const char *path, bool main_file) {
	size_t errors_before = p->n_errors;
	char *buf = NULL;
	int r;

	r = read_file(path, &buf, &p->size);
	if (r < 0)
		return r;
	p->path = add_file(p->config, path);
	if (!p->path) {
		free(buf);
		return -ENOMEM;
	}
	if (main_file)
		p->main_path = p->path;
	p->file = p->config->n_files - 1;
	p->buf = buf;
	p->pos = 0;
	p->line = 0;
	p->expect_handler = false;
	p->section = SECTION_NONE;
	memset(p->seen, 0, sizeof(p->seen));

	r = ini_parse_stream(read_line, p, handle_key, p);
	if (r < 0)
		p->oom = true;
	/* The line inih rejects is one read_line() reported; but should inih
	 * stop there (INI_STOP_ON_FIRST_ERROR), the file is still no good. */
	else if (r > 0 && p->n_errors == errors_before)
		parser_error(p, (unsigned)r, SYNTAX_ERROR);
	p->buf = NULL;
	free(buf);
	return 0;
}

struct dropin {
	char *name;               /* NAME.conf */
	const char *dir;          /* where it is */
	bool preset;              /* a package's, which a same-named file of the admin's masks */
};

static bool is_dropin_name(const char *name) {
	size_t len = strlen(name);

	/* Hidden files are editors' and package managers' leftovers. */
	return name[0] != '.' && len > 5 && strcmp(name + len - 5, ".conf") == 0;
}

/* Whoever may write a directory of drop-ins may give ccxd rules, and a
 * rule moves any process: a directory that others than root (and the user
 * ccxd runs as) may write to is said, though read. */
static void warn_if_writable(const char *dir, int fd) {
	struct stat st;

	if (fstat(fd, &st) < 0)
		return;
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & S_IWOTH) ||
	    ((st.st_mode & S_IWGRP) && st.st_gid != 0 && st.st_gid != getegid()))
		log_warning("%s may be written by users other than root (owner %u, group %u, mode %04o): any of them "
			    "can give ccxd rules",
			    dir, (unsigned)st.st_uid, (unsigned)st.st_gid, (unsigned)(st.st_mode & 07777));
}

/* Adds the *.conf entries of dir to *list. A directory that is not there has
 * none; one that cannot be read is an error. */
static void list_dropins(struct parser *p, const char *dir, bool preset, struct dropin **list, size_t *n,
			 size_t *alloc) {
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d) {
		if (errno != ENOENT)
			errno_error(p, p->config->n_files, dir, -errno);
		return;
	}
	warn_if_writable(dir, dirfd(d));
	for (errno = 0; (de = readdir(d)); errno = 0) {
		struct dropin *l;

		if (!is_dropin_name(de->d_name))
			continue;
		l = util_grow(*list, alloc, *n + 1, sizeof(*l));
		if (!l) {
			p->oom = true;
			break;
		}
		*list = l;
		l[*n] = (struct dropin){ strdup(de->d_name), dir, preset };
		if (!l[*n].name) {
			p->oom = true;
			break;
		}
		(*n)++;
	}
	if (errno && !p->oom)
		errno_error(p, p->config->n_files, dir, -errno);
	closedir(d);
}

/* Byte order (not the locale's), as systemd sorts drop-ins; the admin's
 * file before the package's of the same name, which it masks. */
static int compare_dropins(const void *a, const void *b) {
	const struct dropin *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	if (r)
		return r;
	return (int)x->preset - (int)y->preset;
}

/* The drop-ins of dir and of presets (NULL: none), in the order of their
 * names, each name once. */
static void parse_dropins(struct parser *p, const char *dir, const char *presets) {
	struct dropin *list = NULL;
	size_t n = 0, alloc = 0;

	list_dropins(p, dir, false, &list, &n, &alloc);
	if (presets)
		list_dropins(p, presets, true, &list, &n, &alloc);
	if (n > 0)
		qsort(list, n, sizeof(*list), compare_dropins);
	for (size_t i = 0; i < n && !p->oom; i++) {
		char *path;
		int r;

		if (i > 0 && strcmp(list[i].name, list[i - 1].name) == 0)
			continue;   /* masked */
		if (asprintf(&path, "%s/%s", list[i].dir, list[i].name) < 0) {
			p->oom = true;
			break;
		}
		r = parse_file(p, path, false);
		if (r == -ENOMEM)
			p->oom = true;
		else if (r < 0)
			errno_error(p, p->config->n_files, path, r);
		free(path);
	}
	for (size_t i = 0; i < n; i++)
		free(list[i].name);
	free(list);
}

#ifndef CCXD_PRESETS_DIR
#error "CCXD_PRESETS_DIR, the Makefile's PRESETSDIR, is given to this file alone"
#endif

const char *config_presets_for(const char *path) {
	return strcmp(path, CONFIG_DEFAULT_PATH) == 0 ? CCXD_PRESETS_DIR : NULL;
}

int config_load_from(const struct config_sources *src, struct config **ret, char ***errors) {
	struct parser p = { .main_path = src->path };
	char **list = NULL, *dropins = NULL;
	int r;

	*ret = NULL;
	if (errors)
		*errors = NULL;

	p.config = config_new_default();
	if (!p.config)
		return -ENOMEM;
	r = parse_file(&p, src->path, true);
	if (r == -ENOENT && src->path_optional)
		r = 0;
	else if (r < 0) {
		if (r != -ENOMEM)
			list = single_error(src->path, r);
		goto out;
	} else if (!(p.config->path = strdup(src->path)))
		p.oom = true;

	if (!src->dropins && asprintf(&dropins, "%s.d", src->path) < 0)
		p.oom = true;
	else if (!p.oom)
		parse_dropins(&p, src->dropins ? src->dropins : dropins, src->presets);

	check_duplicate_programs(&p);

	if (p.oom) {
		r = -ENOMEM;
		goto out;
	}
	if (p.n_errors > 0) {
		list = take_errors(&p);
		r = list ? -EINVAL : -ENOMEM;
		if (list && src->keep_on_errors) {
			*ret = p.config;
			p.config = NULL;
		}
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
	free(dropins);
	return r;
}

int config_load(const char *path, struct config **ret, char ***errors) {
	struct config_sources src = { .path = path, .presets = config_presets_for(path) };

	return config_load_from(&src, ret, errors);
}

void config_errors_free(char **errors) {
	if (!errors)
		return;
	for (char **e = errors; *e; e++)
		free(*e);
	free(errors);
}
