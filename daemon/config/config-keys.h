/* The keys of the [daemon] and [program:NAME] sections, and the values each
 * accepts. */
#pragma once

#include <stddef.h>

#include "config.h"

enum config_keys_section {
	CONFIG_KEYS_DAEMON,
	CONFIG_KEYS_PROGRAM,      /* its keys go to the config's last rule */
};

/* As many keys as a section may have, at most. */
#define CONFIG_KEYS_MAX 24

/* The index of key among section s's keys, or -ENOENT. */
int config_keys_find(enum config_keys_section s, const char *key);

/* The names of section s's keys, "socket, topology, ...", into buf. */
void config_keys_list(enum config_keys_section s, char *buf, size_t size);

/* Sets the key of that index (config_keys_find()), found at line, to value.
 * Returns 0; -EINVAL with *error set to a malloc'd message when the key takes
 * no such value; or -ENOMEM. */
int config_keys_set(enum config_keys_section s, int index, struct config *c, unsigned line, const char *value,
		    char **error);

/* The keys a running ccxd takes only at its next start: the socket (bound
 * already), the runtime directory (where the originals owed are), and bpf,
 * traffic and exec_events (whose BPF objects are loaded at the start). next,
 * read by a reload, keeps running's values of them, and each key that
 * differed is said in notes ("bpf changes from auto to no at the next
 * start"), at most max of them. Returns how many notes. */
#define CONFIG_NOTE_MAX 512
size_t config_keys_at_next_start(struct config *next, const struct config *running, char (*notes)[CONFIG_NOTE_MAX],
				 size_t max);
