/* The AMD 3D V-Cache optimizer's mode (amd_x3d_vcache) for as long as ccxd
 * runs: set from [daemon] x3d_mode, and the mode found before put back at
 * exit. The mode found is written to RUNTIME_DIR/x3d-mode before the first
 * change, so that a ccxd that was killed still knows, at its next start,
 * which mode was the administrator's rather than its own. Every path is
 * under root ("" for the real one), for tests. */
#pragma once

#include "config.h"

#define X3D_ORIGINAL_FILE "x3d-mode"

/* Makes the mode what want says: for cache or frequency writes it (after
 * recording the original); for keep puts back an original recorded by an
 * earlier run, if there is one. Returns 1 when it wrote the mode, 0 when
 * nothing needed writing, -ENOENT without the driver, other -errno when
 * reading or writing failed (the mode is then as it was). */
int x3d_apply(const char *root, const char *runtime_dir, enum config_x3d want);

/* Puts back the recorded original, and forgets it. 0 when there was none. */
int x3d_restore(const char *root, const char *runtime_dir);
