/* The AMD 3D V-Cache optimizer's mode (amd_x3d_vcache) for as long as ccxd
 * runs: set from [daemon] x3d_mode, and the mode found before put back at
 * exit. The mode found is written to RUNTIME_DIR/x3d-mode before the first
 * change, so that a ccxd that was killed still knows, at its next start,
 * which mode was the administrator's rather than its own. Every path is
 * under root ("" for the real one), for tests. */
#pragma once

#include <stdbool.h>

#include "config.h"
#include "topology.h"

#define X3D_ORIGINAL_FILE "x3d-mode"

/* What c's x3d_mode asks of this machine's driver with t, the topology c
 * names: only enforce changes the mode, and only for the running system's
 * topology (the driver is this machine's); otherwise keep. */
enum config_x3d x3d_wanted(const struct config *c, const struct topology *t);

/* x3d_apply() for what c asks (x3d_wanted()), each outcome logged: the mode
 * set, a driver missing, a write that failed. Returns what x3d_apply() does. */
int x3d_apply_config(const char *root, const char *runtime_dir, const struct config *c, const struct topology *t);

/* Whether this process may write the mode: not without the driver, nor as
 * another user than root, nor in a sandbox that mounts /sys read-only. */
bool x3d_writable(const char *root);

/* Makes the mode what want says: for cache or frequency writes it (after
 * recording the original); for keep puts back an original recorded by an
 * earlier run, if there is one. Returns 1 when it wrote the mode, 0 when
 * nothing needed writing, -ENOENT without the driver, other -errno when
 * reading or writing failed (the mode is then as it was). */
int x3d_apply(const char *root, const char *runtime_dir, enum config_x3d want);

/* Puts back the recorded original, and forgets it. 0 when there was none. */
int x3d_restore(const char *root, const char *runtime_dir);
