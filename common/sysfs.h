/* What /sys (and debugfs) says of the CPUs, the scheduler and AMD's X3D
 * driver; every path under root ("" for the real one), for tests. */
#pragma once

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

/* /sys/devices/system/cpu/online */
int sysfs_read_online_cpus(const char *root, cpu_set_t *ret);

/* The highest clock one CPU reaches, in kHz
 * (/sys/devices/system/cpu/cpuN/cpufreq/cpuinfo_max_freq). -ENOENT without
 * cpufreq; -EINVAL for anything but a positive number. */
int sysfs_read_cpu_max_khz(const char *root, unsigned cpu, uint64_t *ret);

/* The highest performance ACPI CPPC gives one CPU, in its own unit
 * (/sys/devices/system/cpu/cpuN/acpi_cppc/highest_perf). On AMD parts with
 * preferred cores this is the firmware's ranking of the core, which
 * amd_x3d_vcache's mode changes on X3D parts. */
int sysfs_read_cpu_highest_perf(const char *root, unsigned cpu, uint64_t *ret);

/* The modes amd_x3d_vcache knows, and the longest one with its NUL. */
#define SYSFS_X3D_MODE_MAX 16

/* The mode file of the AMD 3D V-Cache optimizer driver
 * (/sys/bus/platform/drivers/amd_x3d_vcache/DEVICE/amd_x3d_mode, Linux 6.13),
 * the first device's, into path. -ENOENT when the driver is not bound. */
int sysfs_find_x3d_mode(const char *root, char *path, size_t size);
/* Its mode, "cache" or "frequency" (whatever one word it says, newline
 * dropped). -ENOENT without the driver, -EINVAL for an empty or odd file. */
int sysfs_read_x3d_mode(const char *root, char mode[SYSFS_X3D_MODE_MAX]);
/* The mode the driver was loaded with, its x3d_mode parameter
 * (/sys/module/amd_x3d_vcache/parameters/x3d_mode; "frequency" unless the
 * administrator gave another), read the same way. */
int sysfs_read_x3d_boot_mode(const char *root, char mode[SYSFS_X3D_MODE_MAX]);
/* Sets it: -ENOENT without the driver, -EACCES without the right, -EINVAL
 * when the driver refuses the word. */
int sysfs_write_x3d_mode(const char *root, const char *mode);

/* Whether the kernel balances the threads of a process onto one LLC
 * (cache-aware scheduling, CONFIG_SCHED_CACHE; in debugfs, so only where
 * debugfs is mounted and readable): 1 enabled, 0 present and disabled,
 * -ENOENT when the kernel or the mount says nothing. Read from
 * /sys/kernel/debug/sched/llc_balancing/enabled, else from the SCHED_CACHE
 * feature in /sys/kernel/debug/sched/features. */
int sysfs_read_llc_balancing(const char *root);
/* The text of a sched features file: 1 when it lists SCHED_CACHE, 0 when
 * NO_SCHED_CACHE, -ENOENT when neither. */
int sysfs_parse_sched_cache_feature(const char *buf);
