/* Files that are replaced whole or not at all: written to a temporary file
 * beside the target and renamed over it, so that a reader, or a ccxd that
 * crashed halfway, only ever sees the old text or the new. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* Writes text to path with the given mode. With durable, the data reaches
 * the disk before the rename, and the rename before the return (the
 * directory is synced too: state kept across reboots); without, a crash
 * of the machine may lose it (runtime files, figures rewritten each
 * interval). The temporary file is path.XXXXXX: it never ends in the
 * target's suffix, which some readers (node_exporter's *.prom) look for.
 * Returns 0 or -errno; on failure the target is as it was. */
int atomicfile_write(const char *path, const char *text, mode_t mode, bool durable);
