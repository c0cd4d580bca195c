#include "cgroup.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "procfs.h"

/* The cpuset files of a cgroup, under the conventional mount points: v1's
 * cpuset hierarchy at /sys/fs/cgroup/cpuset, v2's unified one at
 * /sys/fs/cgroup (or /sys/fs/cgroup/unified in the hybrid layout). */
static int read_cgroup_cpuset(const char *root, const char *controllers, const char *cg,
			      cpu_set_t *ret) {
	static const char *const v2_mounts[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	char path[PATH_MAX];

	if (strcmp(controllers, "") != 0) {
		/* v1: the effective set already accounts for the parents' limits. */
		snprintf(path, sizeof(path), "%s/sys/fs/cgroup/cpuset%s/cpuset.effective_cpus", root, cg);
		if (procfs_read_cpulist(path, ret) == 0)
			return 0;
		snprintf(path, sizeof(path), "%s/sys/fs/cgroup/cpuset%s/cpuset.cpus", root, cg);
		return procfs_read_cpulist(path, ret) == 0 ? 0 : -ENOENT;
	}
	for (size_t i = 0; i < sizeof(v2_mounts) / sizeof(v2_mounts[0]); i++) {
		snprintf(path, sizeof(path), "%s%s%s/cpuset.cpus.effective", root, v2_mounts[i], cg);
		if (procfs_read_cpulist(path, ret) == 0)
			return 0;
	}
	return -ENOENT;
}

/* The next line of /proc/PID/cgroup in buf (strtok_r() state in saveptr),
 * "ID:CONTROLLERS:PATH", split in place: v2's is "0::PATH" (v2 set), and
 * the lines that are not so are skipped. NULL at the end. */
static char *next_cgroup_line(char *buf, char **saveptr, char **controllers, char **path, bool *v2) {
	char *line;

	while ((line = strtok_r(*saveptr ? NULL : buf, "\n", saveptr))) {
		char *c = strchr(line, ':'), *cg;

		if (!c)
			continue;
		cg = strchr(++c, ':');
		if (!cg)
			continue;
		*cg++ = '\0';
		*controllers = c;
		*path = cg;
		*v2 = *c == '\0' && strcmp(line, "0:") == 0;
		return line;
	}
	return NULL;
}

int cgroup_parse(char *buf, const char **path, bool *v1) {
	char *saveptr = NULL, *v1_path = NULL, *v2_path = NULL, *controllers, *cg;
	bool v2;

	while (next_cgroup_line(buf, &saveptr, &controllers, &cg, &v2)) {
		if (v2)
			v2_path = cg;
		else {
			char *c, *save2 = NULL;
			for (c = strtok_r(controllers, ",", &save2); c; c = strtok_r(NULL, ",", &save2))
				if (strcmp(c, "cpuset") == 0)
					v1_path = cg;
		}
	}
	if (v1_path && strstr(v1_path, "..") == NULL) {
		*path = v1_path;
		*v1 = true;
		return 0;
	}
	if (v2_path && strstr(v2_path, "..") == NULL) {
		*path = v2_path;
		*v1 = false;
		return 0;
	}
	return -ENOENT;
}

int cgroup_read_cpuset(const char *root, pid_t pid, cpu_set_t *ret) {
	char buf[8192];
	const char *cg;
	bool v1;
	int r = procfs_read_cgroup(root, pid, buf, sizeof(buf));

	if (r < 0)
		return r;
	r = cgroup_parse(buf, &cg, &v1);
	if (r < 0)
		return r;
	return read_cgroup_cpuset(root, v1 ? "cpuset" : "", strcmp(cg, "/") == 0 ? "" : cg, ret);
}

int cgroup_parse_path(char *buf, const char **path) {
	char *saveptr = NULL, *v1_path = NULL, *v2_path = NULL, *controllers, *cg;
	bool v2;

	/* systemd's own v1 hierarchy's line is "ID:name=systemd:PATH". */
	while (next_cgroup_line(buf, &saveptr, &controllers, &cg, &v2)) {
		if (v2)
			v2_path = cg;
		else if (strcmp(controllers, "name=systemd") == 0)
			v1_path = cg;
	}
	if (v2_path && (!v1_path || strcmp(v2_path, "/") != 0))
		*path = v2_path;
	else if (v1_path)
		*path = v1_path;
	else
		return -ENOENT;
	return 0;
}

int cgroup_read_path(const char *root, pid_t pid, char **ret) {
	char buf[8192];
	const char *cg;
	int r = procfs_read_cgroup(root, pid, buf, sizeof(buf));

	if (r < 0)
		return r;
	r = cgroup_parse_path(buf, &cg);
	if (r < 0)
		return r;
	*ret = strdup(cg);
	return *ret ? 0 : -ENOMEM;
}
