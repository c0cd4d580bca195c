#include "sysfs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs.h"

int sysfs_read_online_cpus(const char *root, cpu_set_t *ret) {
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/online", root);
	return procfs_read_cpulist(path, ret);
}

/* A file holding one positive decimal number and a newline. */
static int read_positive_number(const char *path, uint64_t *ret) {
	char buf[64], *end;
	unsigned long long v;
	ssize_t len = procfs_read_file(path, buf, sizeof(buf));

	if (len < 0)
		return (int)len;
	errno = 0;
	v = strtoull(buf, &end, 10);
	while (*end == '\n' || *end == ' ')
		end++;
	if (errno || end == buf || *end || buf[0] == '-' || v == 0)
		return -EINVAL;
	*ret = v;
	return 0;
}

int sysfs_read_cpu_max_khz(const char *root, unsigned cpu, uint64_t *ret) {
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%u/cpufreq/cpuinfo_max_freq", root, cpu);
	return read_positive_number(path, ret);
}

int sysfs_read_cpu_highest_perf(const char *root, unsigned cpu, uint64_t *ret) {
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%u/acpi_cppc/highest_perf", root, cpu);
	return read_positive_number(path, ret);
}

int sysfs_find_x3d_mode(const char *root, char *path, size_t size) {
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int r = -ENOENT;

	/* The device is named by its ACPI id (AMDI0101:00); there is one. */
	snprintf(dir, sizeof(dir), "%s/sys/bus/platform/drivers/amd_x3d_vcache", root);
	d = opendir(dir);
	if (!d)
		return -ENOENT;
	while (r < 0 && (de = readdir(d))) {
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, size, "%s/%s/amd_x3d_mode", dir, de->d_name) >= size)
			continue;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			r = 0;
	}
	closedir(d);
	return r;
}

/* One lower-case word, its newline dropped. */
static int read_x3d_word(const char *path, char mode[SYSFS_X3D_MODE_MAX]) {
	char buf[64];
	ssize_t len;
	size_t n;

	len = procfs_read_file(path, buf, sizeof(buf));
	if (len < 0)
		return (int)len;
	n = strcspn(buf, "\n");
	buf[n] = '\0';
	if (n == 0 || n >= SYSFS_X3D_MODE_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!islower((unsigned char)buf[i]))
			return -EINVAL;
	memcpy(mode, buf, n + 1);
	return 0;
}

int sysfs_read_x3d_mode(const char *root, char mode[SYSFS_X3D_MODE_MAX]) {
	char path[PATH_MAX];
	int r = sysfs_find_x3d_mode(root, path, sizeof(path));

	return r < 0 ? r : read_x3d_word(path, mode);
}

int sysfs_read_x3d_boot_mode(const char *root, char mode[SYSFS_X3D_MODE_MAX]) {
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/sys/module/amd_x3d_vcache/parameters/x3d_mode", root);
	return read_x3d_word(path, mode);
}

int sysfs_write_x3d_mode(const char *root, const char *mode) {
	char path[PATH_MAX];
	size_t len = strlen(mode);
	ssize_t n;
	int fd, r = sysfs_find_x3d_mode(root, path, sizeof(path));

	if (r < 0)
		return r;
	/* O_TRUNC: a fixture tree's plain file must read back as just this word. */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	n = write(fd, mode, len);
	r = n < 0 ? -errno : (size_t)n == len ? 0 : -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

int sysfs_parse_sched_cache_feature(const char *buf) {
	const char *p = buf;

	/* Space-separated words; NO_X says that X is off. */
	while (*p) {
		size_t n;
		p += strspn(p, " \t\n");
		n = strcspn(p, " \t\n");
		if (n == strlen("SCHED_CACHE") && strncmp(p, "SCHED_CACHE", n) == 0)
			return 1;
		if (n == strlen("NO_SCHED_CACHE") && strncmp(p, "NO_SCHED_CACHE", n) == 0)
			return 0;
		p += n;
	}
	return -ENOENT;
}

int sysfs_read_llc_balancing(const char *root) {
	char path[PATH_MAX], buf[4096];
	ssize_t len;

	snprintf(path, sizeof(path), "%s/sys/kernel/debug/sched/llc_balancing/enabled", root);
	len = procfs_read_file(path, buf, sizeof(buf));
	if (len > 0)
		return buf[0] == '1' || buf[0] == 'Y' || buf[0] == 'y' ? 1 : 0;
	snprintf(path, sizeof(path), "%s/sys/kernel/debug/sched/features", root);
	len = procfs_read_file(path, buf, sizeof(buf));
	if (len < 0)
		return -ENOENT;
	return sysfs_parse_sched_cache_feature(buf);
}
