/* /etc/ccxd.conf read into a fresh config (config.h): the [daemon] section
 * and the rules, parsed with inih, and the rules of its drop-ins: the
 * NAME.conf files of /etc/ccxd.conf.d and the packages' presets in
 * PREFIX/share/ccxd/ccxd.conf.d (config_presets_for()). Each key's value is
 * checked and set by config-keys.h. */
#pragma once

#include <stdbool.h>

#include "config.h"

/* Where a config is read from. */
struct config_sources {
	const char *path;         /* the main file */
	const char *dropins;      /* its drop-ins' directory; NULL: path + ".d" */
	const char *presets;      /* packaged drop-ins, each masked by a same-named file of
				   * dropins; NULL: none */
	bool path_optional;       /* a main file that is not there reads as an empty one */
	bool keep_on_errors;      /* with -EINVAL, *ret is still what parsed (a value in error
				   * left at its default), to be checked further */
};

/* Parses the main file and then every NAME.conf of the drop-in directories,
 * in the byte order of their names, into a fresh config; the rules keep that
 * order. Drop-ins hold [program:NAME] sections only. Returns 0 and sets
 * *ret; or, when a file has errors, returns -EINVAL (with keep_on_errors, *ret
 * set all the same) and sets *errors to a
 * NULL-terminated, malloc'd array of every error found, each
 * "FILE:LINE: message" ("FILE: strerror" for a drop-in or directory that
 * cannot be read); or returns -errno when the main file cannot be read, with
 * *errors holding "FILE: strerror". */
int config_load_from(const struct config_sources *src, struct config **ret, char ***errors);

/* The presets read with path: for CONFIG_DEFAULT_PATH the packaged drop-ins
 * where the build's PREFIX puts them (the Makefile's PRESETSDIR:
 * /usr/share/ccxd/ccxd.conf.d with PREFIX=/usr), none (NULL) for any other
 * path, so that a config given by path (tests, trials) is read whole from
 * where it names. */
const char *config_presets_for(const char *path);

/* path, its drop-ins in path.d/, and config_presets_for(path). */
int config_load(const char *path, struct config **ret, char ***errors);

void config_errors_free(char **errors);
