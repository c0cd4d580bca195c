/* The cgroup of a process (/proc/PID/cgroup) and what its cpuset allows
 * (the cgroup file system under /sys/fs/cgroup), v1, v2 and hybrid; every
 * path under root ("" for the real one), for tests. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <sys/types.h>

/* The text of /proc/PID/cgroup, cut up in place: the cgroup whose cpuset
 * applies, v1's cpuset hierarchy first (*v1 true) else v2's, as a pointer into
 * buf. -ENOENT when there is none, or it would climb out with "..". */
int cgroup_parse(char *buf, const char **path, bool *v1);

/* The text of /proc/PID/cgroup, cut up in place: the path of the cgroup that
 * names the process's systemd unit, as a pointer into buf. That is the
 * unified hierarchy's ("0::PATH"), but where that says only "/" and a v1
 * "name=systemd" hierarchy is there too, that one's: systemd keeps its units
 * there on legacy and hybrid systems (and mirrors them into the unified tree
 * on hybrid ones), and a container may show the host's unified root. -ENOENT
 * when there is neither line. */
int cgroup_parse_path(char *buf, const char **path);

/* That path of pid (cgroup_parse_path()), malloc'd. -ESRCH when the
 * process is gone, -ENOENT when it has no such cgroup. */
int cgroup_read_path(const char *root, pid_t pid, char **ret);

/* The CPUs the process's cgroup cpuset allows (cgroup v1 cpuset controller,
 * or v2 cpuset.cpus.effective). -ENOENT when no cpuset confines it. */
int cgroup_read_cpuset(const char *root, pid_t pid, cpu_set_t *ret);
