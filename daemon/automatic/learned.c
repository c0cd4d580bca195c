#include "learned.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "atomicfile.h"
#include "groups.h"
#include "log.h"
#include "procfs.h"
#include "regfile.h"
#include "sample.h"
#include "util.h"

/* The file: LEARNED_MAX keys of a few paths each, with room to spare. */
#define LEARNED_FILE_MAX (4 * 1024 * 1024)

struct learned {
	char *path;                /* NULL: not written */
	struct won {
		char *programs;
		enum seating seating;
	} *won;
	size_t n_won, allocated_won;
};

static int compare_names(const void *x, const void *y) {
	const char *a = *(char *const *)x, *b = *(char *const *)y;

	return strcmp(a ? a : "?", b ? b : "?");
}

char *learned_programs(const char *root, const struct group *grp, const struct sampler_result *s) {
	char **names = calloc(grp->n_pids ? grp->n_pids : 1, sizeof(*names)), *key = NULL;
	size_t len = 1;

	for (size_t i = 0; names && i < grp->n_pids; i++) {
		if (procfs_read_exe(root, grp->pids[i], &names[i]) < 0) {
			long k = s ? sampler_result_index(s, grp->pids[i]) : -1;
			names[i] = strdup(k >= 0 ? s->procs[k].comm : "?");
		}
		len += names[i] ? strlen(names[i]) + 1 : 2;
	}
	if (names) {
		qsort(names, grp->n_pids, sizeof(*names), compare_names);
		key = calloc(1, len);
		for (size_t i = 0; key && i < grp->n_pids; i++) {
			if (i)
				strcat(key, "|");
			strcat(key, names[i] ? names[i] : "?");
		}
		for (size_t i = 0; i < grp->n_pids; i++)
			free(names[i]);
	}
	free(names);
	return key;
}

/* Kept last, so that the first is the least recently kept, which goes
 * when the list is full. */
static void remember(struct learned *l, const char *programs, enum seating seating) {
	struct won *grown, won = { .programs = NULL, .seating = seating };

	for (size_t i = 0; i < l->n_won; i++)
		if (strcmp(l->won[i].programs, programs) == 0) {
			won.programs = l->won[i].programs;
			memmove(&l->won[i], &l->won[i + 1], (l->n_won - i - 1) * sizeof(*l->won));
			l->n_won--;
			break;
		}
	if (!won.programs && !(won.programs = strdup(programs)))
		return;
	if (l->n_won == LEARNED_MAX) {
		free(l->won[0].programs);
		memmove(&l->won[0], &l->won[1], (l->n_won - 1) * sizeof(*l->won));
		l->n_won--;
	}
	grown = util_grow(l->won, &l->allocated_won, l->n_won + 1, sizeof(*grown));
	if (!grown) {
		free(won.programs);
		return;
	}
	l->won = grown;
	l->won[l->n_won++] = won;
}

/* Written to a temporary file and renamed over the old one, so that a crash
 * never leaves half a file; readable by ccxd (and root) alone, since it
 * names other users' programs. */
static int save(const struct learned *l) {
	json_object *o = json_object_new_object(), *seatings = json_object_new_object();
	const char *text;
	int r;

	json_object_object_add(o, "version", json_object_new_int(1));
	for (size_t i = 0; i < l->n_won; i++)
		json_object_object_add(seatings, l->won[i].programs,
				       json_object_new_string(seating_to_string(l->won[i].seating)));
	json_object_object_add(o, "seatings", seatings);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	r = text ? atomicfile_write(l->path, text, 0600, true) : -ENOMEM;
	json_object_put(o);
	return r;
}

static void load(struct learned *l) {
	json_object *o, *seatings;

	int r = regfile_read_json(l->path, LEARNED_FILE_MAX, &o);

	if (r == -ENOENT)
		return;
	if (r < 0 && r != -EBADMSG) {
		log_warning("Ignoring %s: %s", l->path, regfile_strerror(r));
		return;
	}
	if (r < 0 || !json_object_object_get_ex(o, "seatings", &seatings) ||
	    !json_object_is_type(seatings, json_type_object)) {
		json_object_put(o);
		log_warning_errno(-EINVAL, "Ignoring %s: not what ccxd writes there", l->path);
		return;
	}
	json_object_object_foreach(seatings, programs, value) {
		for (int s = 0; s < _SEATING_MAX; s++)
			if (json_object_is_type(value, json_type_string) &&
			    strcmp(json_object_get_string(value), seating_to_string((enum seating)s)) == 0)
				remember(l, programs, (enum seating)s);
	}
	json_object_put(o);
}

int learned_new(const char *path, struct learned **ret) {
	struct learned *l = calloc(1, sizeof(*l));

	if (!l || (path && !(l->path = strdup(path)))) {
		free(l);
		return -ENOMEM;
	}
	if (l->path)
		load(l);
	*ret = l;
	return 0;
}

void learned_free(struct learned *l) {
	if (!l)
		return;
	for (size_t i = 0; i < l->n_won; i++)
		free(l->won[i].programs);
	free(l->won);
	free(l->path);
	free(l);
}

enum seating learned_seating(const struct learned *l, const char *programs) {
	for (size_t i = 0; programs && i < l->n_won; i++)
		if (strcmp(l->won[i].programs, programs) == 0)
			return l->won[i].seating;
	return _SEATING_MAX;
}

void learned_keep(struct learned *l, const char *programs, enum seating seating) {
	int r;

	remember(l, programs, seating);
	if (l->path && (r = save(l)) < 0)
		log_warning_errno(r, "Failed to write %s: %m", l->path);
}

int learned_forget(struct learned *l, const char *programs) {
	for (size_t i = 0; i < l->n_won; i++) {
		if (strcmp(l->won[i].programs, programs) != 0)
			continue;
		free(l->won[i].programs);
		memmove(&l->won[i], &l->won[i + 1], (l->n_won - i - 1) * sizeof(*l->won));
		l->n_won--;
		return l->path ? save(l) : 0;
	}
	return -ENOENT;
}

size_t learned_count(const struct learned *l) {
	return l->n_won;
}

const char *learned_entry(const struct learned *l, size_t i, enum seating *seating) {
	*seating = l->won[i].seating;
	return l->won[i].programs;
}
