/* What ccxd starts, reloads and checks (--check-config) with: the
 * configuration and the topology it names, loaded into fresh structs, the
 * rules' CCXs checked against that topology. Touches no running daemon. */
#pragma once

#include <stdbool.h>

#include "config.h"
#include "topology.h"

/* path is the config file; explicit_path says it was named on the command
 * line, where a missing file is an error. Every error goes into *errors,
 * NULL-terminated, as "FILE:LINE: message" ("FILE: topology ..." for the
 * topology); -EINVAL then. */
int setup_load(const char *path, bool explicit_path, struct config **ret_config, struct topology **ret_topology,
	       char ***errors);

/* What in c's rules can do nothing (rules_idle_keys()), as "FILE:LINE:
 * warning: KEY does nothing: WHY", NULL-terminated, into *warnings (NULL
 * when there is none; config_errors_free() frees it). 0, or -ENOMEM. */
int setup_warnings(const struct config *c, char ***warnings);
