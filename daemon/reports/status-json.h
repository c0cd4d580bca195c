/* The status snapshot (status.h) as the JSON io.ccxd.GetStatus replies with,
 * and one process as the pin and unpin methods answer. */
#pragma once

#include <stdbool.h>
#include <json-c/json.h>

#include "status.h"

/* paths: with the programs' executables (for root alone). NULL without
 * memory. */
json_object *status_json(const struct ccxd_status *st, bool paths);
json_object *status_process_json(const struct status_process *p);
/* What won per set of programs, as io.ccxd.GetLearned replies; paths as
 * for status_json(). */
json_object *status_learned_json(const struct ccxd_status *st, bool paths);
