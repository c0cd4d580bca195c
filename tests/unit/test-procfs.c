/* The /proc parsers behind the readers, and the readers on this machine's own /proc. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cpulist.h"
#include "cgroup.h"
#include "procfs.h"
#include "sysfs.h"
#include "fixture.h"
#include "test.h"

/* How far up the tree the walks of these tests look. */
#define ANCESTORS_MAX 8

static void io_needs_all_four_counters(void) {
	struct procfs_io io;

	CHECK_INT(procfs_parse_io("rchar: 10\nwchar: 20\nsyscr: 3\nsyscw: 4\nread_bytes: 0\n", &io), 0);
	CHECK_INT(io.rchar, 10);
	CHECK_INT(io.wchar, 20);
	CHECK_INT(io.syscr, 3);
	CHECK_INT(io.syscw, 4);
	CHECK_INT(procfs_parse_io("rchar: 10\nwchar: 20\nsyscr: 3\n", &io), -EINVAL);
	CHECK_INT(procfs_parse_io("", &io), -EINVAL);
}

static void fd_targets_of_pipes_and_sockets(void) {
	uint64_t inode = 0;

	CHECK_INT(procfs_parse_fd_target("pipe:[123]", &inode), PROCFS_FD_PIPE);
	CHECK_INT(inode, 123);
	CHECK_INT(procfs_parse_fd_target("socket:[77]", &inode), PROCFS_FD_SOCKET);
	CHECK_INT(inode, 77);
	CHECK_INT(procfs_parse_fd_target("pipe:[123", &inode), PROCFS_FD_OTHER);
	CHECK_INT(procfs_parse_fd_target("pipe:[]", &inode), PROCFS_FD_OTHER);
	CHECK_INT(procfs_parse_fd_target("/dev/null", &inode), PROCFS_FD_OTHER);
}

static void cgroup_v1_cpuset_wins_over_v2(void) {
	char buf[] = "12:cpuset:/box\n11:cpu,cpuacct:/\n0::/user.slice\n";
	const char *path;
	bool v1;

	CHECK_INT(cgroup_parse(buf, &path, &v1), 0);
	CHECK_STR(path, "/box");
	CHECK(v1);
}

static void cgroup_v2_alone(void) {
	char buf[] = "0::/system.slice/x.service\n";
	const char *path;
	bool v1 = true;

	CHECK_INT(cgroup_parse(buf, &path, &v1), 0);
	CHECK_STR(path, "/system.slice/x.service");
	CHECK(!v1);
}


static const char *cpuset_of(const char *root) {
	static char buf[CPULIST_MAX];
	cpu_set_t set;
	int r = cgroup_read_cpuset(root, 42, &set);

	if (r < 0)
		snprintf(buf, sizeof(buf), "%d", r);
	else
		cpulist_format(&set, buf, sizeof(buf));
	return buf;
}

/* Where each hierarchy keeps a process's cpuset, read from a tree of
 * fixture files, whichever this machine mounts: v1's effective set (or its
 * cpus where a kernel lacks that file), v2's, at /sys/fs/cgroup or, on a
 * hybrid machine, /sys/fs/cgroup/unified. */
static void cpusets_of_cgroup_v1_and_v2(void) {
	char root[] = "/tmp/ccxd-test-cgroup-XXXXXX", rm[64 + sizeof(root)];

	CHECK(mkdtemp(root) != NULL);
	fixture_file(root, "/proc/42/cgroup", "7:cpuset:/box\n0::/user.slice\n");
	fixture_file(root, "/sys/fs/cgroup/cpuset/box/cpuset.effective_cpus", "2-3\n");
	fixture_file(root, "/sys/fs/cgroup/cpuset/box/cpuset.cpus", "0-3\n");
	CHECK_STR(cpuset_of(root), "2-3");
	fixture_file(root, "/proc/42/cgroup", "7:cpuset:/old\n");
	fixture_file(root, "/sys/fs/cgroup/cpuset/old/cpuset.cpus", "1\n");
	CHECK_STR(cpuset_of(root), "1");
	fixture_file(root, "/proc/42/cgroup", "0::/app.slice/x.service\n");
	fixture_file(root, "/sys/fs/cgroup/app.slice/x.service/cpuset.cpus.effective", "0,4-5\n");
	CHECK_STR(cpuset_of(root), "0,4-5");
	fixture_file(root, "/proc/42/cgroup", "0::/hybrid\n1:name=systemd:/hybrid\n");
	fixture_file(root, "/sys/fs/cgroup/unified/hybrid/cpuset.cpus.effective", "6-7\n");
	CHECK_STR(cpuset_of(root), "6-7");
	/* No cpuset controller anywhere: no bound but the online CPUs. */
	fixture_file(root, "/proc/42/cgroup", "0::/bare\n");
	CHECK_STR(cpuset_of(root), "-2");
	snprintf(rm, sizeof(rm), "rm -rf '%s'", root);
	CHECK_INT(system(rm), 0);
}

/* The cgroup that names a process's unit: v2's, or systemd's own v1
 * hierarchy's on legacy systems, and where v2's says only "/" (containers
 * on hybrid hosts). */
static const char *cgroup_path_of(const char *text) {
	static char buf[512];
	const char *path;

	snprintf(buf, sizeof(buf), "%s", text);
	return cgroup_parse_path(buf, &path) == 0 ? path : NULL;
}

static void cgroup_path_of_v2_v1_and_hybrid(void) {
	/* Unified. */
	CHECK_STR(cgroup_path_of("0::/system.slice/nginx.service\n"), "/system.slice/nginx.service");
	/* Legacy: v1 alone. */
	CHECK_STR(cgroup_path_of("12:cpuset:/\n3:cpu,cpuacct:/system.slice/a.service\n"
				 "1:name=systemd:/system.slice/a.service\n"), "/system.slice/a.service");
	/* Hybrid: systemd mirrors its tree into the unified one. */
	CHECK_STR(cgroup_path_of("1:name=systemd:/user.slice/user-0.slice/session-1.scope\n"
				 "0::/user.slice/user-0.slice/session-1.scope\n"), "/user.slice/user-0.slice/session-1.scope");
	/* A container on a hybrid host: the unified line shows its root. */
	CHECK_STR(cgroup_path_of("9:name=systemd:/ccxd-test\n4:memory:/x\n0::/\n"), "/ccxd-test");
	/* A unified host with a name=systemd hierarchy mounted for old
	 * containers: the unified path is the process's. */
	CHECK_STR(cgroup_path_of("1:name=systemd:/\n0::/kubepods/burstable/pod1/c0ffee\n"),
		  "/kubepods/burstable/pod1/c0ffee");
	CHECK_STR(cgroup_path_of("0::/\n"), "/");
	/* Shown as it is, ".." of a cgroup namespace included: it is matched,
	 * never opened. */
	CHECK_STR(cgroup_path_of("0::/../../outside\n"), "/../../outside");
	CHECK(cgroup_path_of("4:memory:/x\n3:cpuset:/y\n") == NULL);
	CHECK(cgroup_path_of("garbage\n\n::\n") == NULL);
	CHECK(cgroup_path_of("") == NULL);
	/* Controllers named like systemd's hierarchy are not it. */
	CHECK(cgroup_path_of("2:name=systemd2:/a\n5:name=elogind:/b\n") == NULL);
}

static void cgroup_path_read_from_a_fixture_tree(void) {
	char root[] = "/tmp/ccxd-test-cgpath-XXXXXX", rm[64 + sizeof(root)];
	char *path = NULL;

	CHECK(mkdtemp(root) != NULL);
	fixture_file(root, "/proc/42/cgroup", "9:name=systemd:/system.slice/ccxd.service\n0::/\n");
	CHECK_INT(cgroup_read_path(root, 42, &path), 0);
	CHECK_STR(path, "/system.slice/ccxd.service");
	free(path);
	fixture_file(root, "/proc/43/cgroup", "4:memory:/x\n");
	CHECK_INT(cgroup_read_path(root, 43, &path), -ENOENT);
	CHECK_INT(cgroup_read_path(root, 44, &path), -ESRCH);
	snprintf(rm, sizeof(rm), "rm -rf '%s'", root);
	CHECK_INT(system(rm), 0);
}

/* /proc/PID/stat of a fixture process: its comm, parent and start time. */
static void fixture_stat(const char *root, pid_t pid, const char *comm, pid_t ppid, unsigned start) {
	char path[64], text[256];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	snprintf(text, sizeof(text), "%d (%s) S %d %d %d 0 -1 4194560 0 0 0 0 7 3 0 0 20 0 1 0 %u 0 0\n", (int)pid,
		 comm, (int)ppid, (int)pid, (int)pid, start);
	fixture_file(root, path, text);
}

static size_t ancestors_of(const char *root, pid_t pid, size_t max, struct procfs_stat *ret) {
	struct procfs_stat st;

	CHECK_INT(procfs_read_stat(root, pid, &st), 0);
	return procfs_read_ancestors(root, &st, max, ret);
}

static void ancestors_up_to_init(void) {
	char root[] = "/tmp/ccxd-test-tree-XXXXXX", rm[64 + sizeof(root)];
	struct procfs_stat a[ANCESTORS_MAX];

	CHECK(mkdtemp(root) != NULL);
	fixture_stat(root, 1, "systemd", 0, 1);
	fixture_stat(root, 30, "bash", 1, 300);
	fixture_stat(root, 40, "launcher", 30, 400);
	fixture_stat(root, 50, "target", 40, 500);
	CHECK_INT(ancestors_of(root, 50, ANCESTORS_MAX, a), 3);
	CHECK_INT(a[0].pid, 40);
	CHECK_STR(a[0].comm, "launcher");
	CHECK_INT(a[1].pid, 30);
	CHECK_INT(a[2].pid, 1);
	CHECK_STR(a[2].comm, "systemd");
	/* The parent alone. */
	CHECK_INT(ancestors_of(root, 50, 1, a), 1);
	CHECK_INT(a[0].pid, 40);
	/* pid 1 has none. */
	CHECK_INT(ancestors_of(root, 1, ANCESTORS_MAX, a), 0);

	/* A parent that exited meanwhile ends the walk. */
	fixture_stat(root, 60, "orphan", 59, 600);
	CHECK_INT(ancestors_of(root, 60, ANCESTORS_MAX, a), 0);
	/* So does a pid reused by a process younger than its "child". */
	fixture_stat(root, 30, "stranger", 1, 450);
	CHECK_INT(ancestors_of(root, 50, ANCESTORS_MAX, a), 1);
	/* A stat that does not parse, too. */
	fixture_file(root, "/proc/30/stat", "garbage\n");
	CHECK_INT(ancestors_of(root, 50, ANCESTORS_MAX, a), 1);

	/* A loop no real tree has is bounded all the same. */
	fixture_stat(root, 70, "ping", 71, 700);
	fixture_stat(root, 71, "pong", 70, 700);
	CHECK_INT(ancestors_of(root, 70, ANCESTORS_MAX, a), ANCESTORS_MAX);
	snprintf(rm, sizeof(rm), "rm -rf '%s'", root);
	CHECK_INT(system(rm), 0);
}

/* An ancestor's exe counts only while its pid is still the process whose
 * stat the walk read: a pid reused meanwhile shows another start time. */
static void ancestor_exe_only_of_the_process_read(void) {
	char root[PATH_MAX], link[PATH_MAX], *exe = NULL;
	struct procfs_stat a[ANCESTORS_MAX];

	fixture_root(root);
	fixture_stat(root, 1, "systemd", 0, 1);
	fixture_stat(root, 40, "launcher", 1, 400);
	fixture_stat(root, 50, "target", 40, 500);
	snprintf(link, sizeof(link), "%s/proc/40/exe", root);
	CHECK_INT(symlink("/usr/bin/launcher", link), 0);
	CHECK_INT(ancestors_of(root, 50, ANCESTORS_MAX, a), 2);
	CHECK_INT(procfs_read_exe_of(root, &a[0], &exe), 0);
	CHECK_STR(exe, "/usr/bin/launcher");
	free(exe);
	exe = NULL;

	/* The launcher exited after the walk, and a stranger took pid 40. */
	fixture_stat(root, 40, "stranger", 1, 900);
	CHECK_INT(procfs_read_exe_of(root, &a[0], &exe), -ESRCH);
	CHECK(exe == NULL);
	/* Or it is gone by the time the stat is read again. */
	fixture_stat(root, 40, "launcher", 1, 400);
	snprintf(link, sizeof(link), "%s/proc/40/stat", root);
	CHECK_INT(unlink(link), 0);
	CHECK_INT(procfs_read_exe_of(root, &a[0], &exe), -ESRCH);
	CHECK(exe == NULL);
	fixture_remove(root);
}

/* This very process's: the test runner's tree, read from the real /proc. */
static void ancestors_of_this_process(void) {
	struct procfs_stat a[ANCESTORS_MAX];
	size_t n = ancestors_of("", getpid(), ANCESTORS_MAX, a);

	CHECK(n >= 1);
	if (n >= 1)
		CHECK_INT(a[0].pid, getppid());
}

/* What /sys says of the CPUs' clocks, the X3D driver and the scheduler,
 * from fixture trees; odd contents are errors, never crashes. */
static void clocks_x3d_mode_and_llc_balancing_from_sys(void) {
	char root[] = "/tmp/ccxd-test-sysfs-XXXXXX", rm[64 + sizeof(root)], mode[SYSFS_X3D_MODE_MAX], path[PATH_MAX];
	static const char *const bad[] = { "", "\n", "-5\n", "0\n", "abc\n", "12abc\n", "99999999999999999999999\n" };
	uint64_t v = 0;

	CHECK(mkdtemp(root) != NULL);
	CHECK_INT(sysfs_read_cpu_max_khz(root, 0, &v), -ENOENT);
	fixture_file(root, "/sys/devices/system/cpu/cpu3/cpufreq/cpuinfo_max_freq", "5759000\n");
	CHECK_INT(sysfs_read_cpu_max_khz(root, 3, &v), 0);
	CHECK(v == 5759000);
	fixture_file(root, "/sys/devices/system/cpu/cpu3/acpi_cppc/highest_perf", "196\n");
	CHECK_INT(sysfs_read_cpu_highest_perf(root, 3, &v), 0);
	CHECK(v == 196);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fixture_file(root, "/sys/devices/system/cpu/cpu3/cpufreq/cpuinfo_max_freq", bad[i]);
		CHECK_INT(sysfs_read_cpu_max_khz(root, 3, &v), -EINVAL);
	}

	CHECK_INT(sysfs_find_x3d_mode(root, path, sizeof(path)), -ENOENT);
	CHECK_INT(sysfs_read_x3d_mode(root, mode), -ENOENT);
	CHECK_INT(sysfs_write_x3d_mode(root, "cache"), -ENOENT);
	fixture_file(root, "/sys/bus/platform/drivers/amd_x3d_vcache/AMDI0101:00/amd_x3d_mode", "frequency\n");
	CHECK_INT(sysfs_read_x3d_mode(root, mode), 0);
	CHECK_STR(mode, "frequency");
	CHECK_INT(sysfs_write_x3d_mode(root, "cache"), 0);
	CHECK_INT(sysfs_read_x3d_mode(root, mode), 0);
	CHECK_STR(mode, "cache");
	fixture_file(root, "/sys/bus/platform/drivers/amd_x3d_vcache/AMDI0101:00/amd_x3d_mode", "\n");
	CHECK_INT(sysfs_read_x3d_mode(root, mode), -EINVAL);
	fixture_file(root, "/sys/bus/platform/drivers/amd_x3d_vcache/AMDI0101:00/amd_x3d_mode", "a-very-long-mode-name\n");
	CHECK_INT(sysfs_read_x3d_mode(root, mode), -EINVAL);

	CHECK_INT(sysfs_read_llc_balancing(root), -ENOENT);
	fixture_file(root, "/sys/kernel/debug/sched/features", "GENTLE_FAIR_SLEEPERS START_DEBIT NO_SCHED_CACHE TTWU_QUEUE\n");
	CHECK_INT(sysfs_read_llc_balancing(root), 0);
	fixture_file(root, "/sys/kernel/debug/sched/features", "START_DEBIT SCHED_CACHE\n");
	CHECK_INT(sysfs_read_llc_balancing(root), 1);
	fixture_file(root, "/sys/kernel/debug/sched/features", "START_DEBIT SCHED_CACHE_X\n");
	CHECK_INT(sysfs_read_llc_balancing(root), -ENOENT);
	/* The switch of its own comes first. */
	fixture_file(root, "/sys/kernel/debug/sched/llc_balancing/enabled", "0\n");
	fixture_file(root, "/sys/kernel/debug/sched/features", "SCHED_CACHE\n");
	CHECK_INT(sysfs_read_llc_balancing(root), 0);
	fixture_file(root, "/sys/kernel/debug/sched/llc_balancing/enabled", "1\n");
	CHECK_INT(sysfs_read_llc_balancing(root), 1);
	CHECK_INT(sysfs_parse_sched_cache_feature(""), -ENOENT);
	snprintf(rm, sizeof(rm), "rm -rf '%s'", root);
	CHECK_INT(system(rm), 0);
}

static void cgroup_paths_that_climb_out_are_refused(void) {
	char buf[] = "3:cpuset:/../etc\n0::/a/../../b\n";
	char none[] = "garbage\n4:memory:/x\n";
	const char *path;
	bool v1;

	CHECK_INT(cgroup_parse(buf, &path, &v1), -ENOENT);
	CHECK_INT(cgroup_parse(none, &path, &v1), -ENOENT);
}

static void stat_with_parentheses_in_comm(void) {
	struct procfs_stat st;

	CHECK_INT(procfs_parse_stat("42 (a) b (c)) S 1 42 42 0 -1 4194560 0 0 0 0 7 3 0 0 20 0 1 0 999 0 0\n",
				    42, &st), 0);
	CHECK_STR(st.comm, "a) b (c)");
	CHECK_INT(st.ppid, 1);
	CHECK_INT(st.utime, 7);
	CHECK_INT(st.stime, 3);
	CHECK_INT(st.start_time, 999);
	CHECK_INT(procfs_parse_stat("42 (a) S 1", 42, &st), -EINVAL);
	CHECK_INT(procfs_parse_stat("42 a S 1", 42, &st), -EINVAL);
}

static void stat_tells_the_cpu_it_ran_on_last(void) {
	struct procfs_stat st;

	/* A whole line as the kernel writes it: processor is field 39. */
	CHECK_INT(procfs_parse_stat("7 (cat) R 5 5 4 0 -1 4194304 100 0 0 0 2 1 0 0 20 0 1 0 993548 3133440 340 "
				    "18446744073709551615 940 941 1407 0 0 0 0 0 0 0 0 0 17 13 0 0 0 0 0 9 9 9 1 1 1 1 0\n",
				    7, &st), 0);
	CHECK_INT(st.utime, 2);
	CHECK_INT(st.threads, 1);
	CHECK_INT(st.processor, 13);
	/* A line that stops before it still parses, without one. */
	CHECK_INT(procfs_parse_stat("42 (a) S 1 42 42 0 -1 4194560 0 0 0 0 7 3 0 0 20 0 1 0 999 0 0\n", 42, &st), 0);
	CHECK_INT(st.processor, -1);
}

static void cpu_lines_of_proc_stat(void) {
	struct procfs_cpu_time t[4];

	CHECK_INT(procfs_parse_cpu_times("cpu  9 9 9 9 9 9 9 9 0 0\n"
					 "cpu0 100 1 50 800 7 2 3 4 30 0\n"
					 "cpu3 10 0 5 85\n"
					 "intr 1 2 3\n"
					 "cpu7 1 1 1 1 1 1 1 1 0 0", t, 4), 2);
	/* guest time (30) is inside user already: not counted twice. */
	CHECK_INT(t[0].cpu, 0);
	CHECK_INT(t[0].busy, 100 + 1 + 50 + 2 + 3 + 4);
	CHECK_INT(t[0].total, 160 + 800 + 7);
	/* An old kernel's four fields are enough. */
	CHECK_INT(t[1].cpu, 3);
	CHECK_INT(t[1].busy, 15);
	CHECK_INT(t[1].total, 100);
	/* The last line was cut short: left out, not misread. */
	CHECK_INT(procfs_parse_cpu_times("cpu0 1 2\n", t, 4), -EINVAL);
	CHECK_INT(procfs_parse_cpu_times("cpu0 1 2 x 4\n", t, 4), -EINVAL);
	CHECK_INT(procfs_parse_cpu_times("cpu0 1 2 3 4\ncpu1 1 2 3 4\n", t, 1), 1);
	CHECK_INT(procfs_parse_cpu_times("", t, 4), 0);
}

static void this_machines_cpus_in_proc_stat(void) {
	struct procfs_cpu_time *t;
	size_t n;

	CHECK_INT(procfs_read_cpu_times("", &t, &n), 0);
	CHECK_INT(n, sysconf(_SC_NPROCESSORS_ONLN));
	for (size_t i = 0; i < n; i++)
		CHECK(t[i].total > t[i].busy);
	free(t);
	CHECK_INT(procfs_read_cpu_times("/nonexistent", &t, &n), -ENOENT);
}

static atomic_int spun;   /* set by the thread once it has spun */

static void *spin(void *arg) {
	struct timespec start, now;

	(void)arg;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 60 * 1000000L);
	spun = 1;
	pause();
	return NULL;
}

/* The thread of this process that is not the main one. */
static pid_t other_thread(void) {
	pid_t *tasks, tid = -1;
	size_t n;

	if (procfs_list_tasks("", getpid(), &tasks, &n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (tasks[i] != getpid())
			tid = tasks[i];
	free(tasks);
	return tid;
}

static void schedstat_has_run_and_wait_time_and_runs(void) {
	struct procfs_schedstat ss;

	CHECK_INT(procfs_parse_schedstat("137532701 24235518 273\n", &ss), 0);
	CHECK_INT(ss.run_ns, 137532701);
	CHECK_INT(ss.wait_ns, 24235518);
	CHECK_INT(ss.runs, 273);
	CHECK_INT(procfs_parse_schedstat("5 6\n", &ss), 0);
	CHECK_INT(ss.runs, 0);
	CHECK_INT(procfs_parse_schedstat("5 6 7x\n", &ss), -EINVAL);
	CHECK_INT(procfs_parse_schedstat("5 6 x\n", &ss), -EINVAL);
	CHECK_INT(procfs_parse_schedstat("137532701\n", &ss), -EINVAL);
	CHECK_INT(procfs_parse_schedstat("1 2x 3\n", &ss), -EINVAL);
	CHECK_INT(procfs_parse_schedstat("", &ss), -EINVAL);
}

static void switches_from_status(void) {
	struct procfs_switches sw, later;
	const char *status = "Name:\tbash\nState:\tS (sleeping)\nCpus_allowed_list:\t0-1\n"
			     "voluntary_ctxt_switches:\t150\nnonvoluntary_ctxt_switches:\t7\n";

	CHECK_INT(procfs_parse_switches(status, &sw), 0);
	CHECK_INT(sw.voluntary, 150);
	CHECK_INT(sw.involuntary, 7);
	CHECK_INT(procfs_parse_switches("voluntary_ctxt_switches:\t150\n", &sw), -EINVAL);
	CHECK_INT(procfs_parse_switches("voluntary_ctxt_switches:\tx\nnonvoluntary_ctxt_switches:\t7\n", &sw), -EINVAL);
	CHECK_INT(procfs_parse_switches("", &sw), -EINVAL);

	/* Each sleep of this very thread is one voluntary switch more, and
	 * the fd kept open reads it afresh. */
	int fd = procfs_open("", getpid(), gettid(), "status");
	CHECK(fd >= 0);
	CHECK_INT(procfs_pread_switches(fd, &sw), 0);
	for (int i = 0; i < 5; i++)
		usleep(1000);
	CHECK_INT(procfs_pread_switches(fd, &later), 0);
	CHECK(later.voluntary >= sw.voluntary + 5);
	close(fd);
	CHECK_INT(procfs_open("", getpid(), 999999, "status"), -ESRCH);
}

static int read_schedstat(pid_t tid, struct procfs_schedstat *ss) {
	int fd = procfs_open("", getpid(), tid, "schedstat"), r;

	if (fd < 0)
		return fd;
	r = procfs_pread_schedstat(fd, ss);
	close(fd);
	return r;
}

/* A thread's own schedstat counts its own time, not the process's. */
static void a_threads_own_cpu_time(void) {
	struct procfs_schedstat main_ss, thread_ss;
	pthread_t th;
	pid_t tid;

	CHECK(pthread_create(&th, NULL, spin, NULL) == 0);
	/* Its 60 ms of CPU may take a while on a busy machine. */
	for (int i = 0; i < 1000 && !spun; i++)
		usleep(10 * 1000);
	CHECK(spun);
	tid = other_thread();
	CHECK(tid > 0);
	CHECK_INT(read_schedstat(tid, &thread_ss), 0);
	CHECK_INT(read_schedstat(getpid(), &main_ss), 0);
	CHECK(thread_ss.run_ns >= 60 * 1000000ULL);
	CHECK(main_ss.run_ns < thread_ss.run_ns);
	CHECK_INT(read_schedstat(999999, &thread_ss), -ESRCH);
}

/* A child that opens a pipe when told to (a byte on cmd), then waits. */
static pid_t spawn_opener(int cmd[2]) {
	pid_t pid;

	if (pipe(cmd) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int p[2];
		char c;
		close(cmd[1]);
		if (read(cmd[0], &c, 1) == 1 && pipe(p) == 0)
			pause();
		_exit(0);
	}
	close(cmd[0]);
	return pid;
}

/* Whether fds has both ends of a pipe that old (n_old) has not. */
static bool has_new_pipe(const struct procfs_fd *fds, size_t n, const struct procfs_fd *old, size_t n_old) {
	for (size_t i = 0; i < n; i++) {
		bool known = false;
		size_t ends = 0;
		for (size_t k = 0; k < n_old; k++)
			known |= old[k].inode == fds[i].inode;
		for (size_t k = 0; k < n; k++)
			ends += fds[k].kind == PROCFS_FD_PIPE && fds[k].inode == fds[i].inode;
		if (fds[i].kind == PROCFS_FD_PIPE && !known && ends == 2)
			return true;
	}
	return false;
}

/* Kept fds read afresh each time, and once their process is gone they fail,
 * even where its pid would be another's. */
static void kept_fds_read_afresh_until_the_process_is_gone(void) {
	struct procfs_fd *fds, *old = NULL;
	struct procfs_io io;
	struct procfs_stat st;
	size_t n, n_old = 0;
	bool found = false;
	int cmd[2], dir, io_fd, stat_fd;
	pid_t child = spawn_opener(cmd);

	CHECK(child > 0);
	dir = procfs_open("", child, 0, "fd");
	io_fd = procfs_open("", child, 0, "io");
	stat_fd = procfs_open("", child, 0, "stat");
	CHECK(dir >= 0 && io_fd >= 0 && stat_fd >= 0);
	CHECK_INT(procfs_list_fds_at(dir, &old, &n_old), 0);
	CHECK(write(cmd[1], "x", 1) == 1);
	for (int i = 0; i < 500 && !found; i++) {
		CHECK_INT(procfs_list_fds_at(dir, &fds, &n), 0);
		found = has_new_pipe(fds, n, old, n_old);
		free(fds);
		if (!found)
			usleep(10 * 1000);
	}
	CHECK(found);
	free(old);
	CHECK_INT(procfs_pread_io(io_fd, &io), 0);
	CHECK_INT(procfs_pread_stat(stat_fd, child, &st), 0);
	CHECK_INT(st.pid, child);

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	CHECK_INT(procfs_list_fds_at(dir, &fds, &n), -ESRCH);
	CHECK_INT(procfs_pread_io(io_fd, &io), -ESRCH);
	CHECK_INT(procfs_pread_stat(stat_fd, child, &st), -ESRCH);
	close(dir);
	close(io_fd);
	close(stat_fd);
	close(cmd[1]);
}

/* Another user's fds are refused as a whole, at the first one. */
static void another_users_fds_are_refused(void) {
	pid_t parent = getpid(), child;
	int status = -1;

	if (geteuid() != 0)
		SKIP_TEST("needs root to become another user");
	child = fork();
	if (child == 0) {
		struct procfs_fd *fds;
		size_t n;
		int dir;
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(2);
		dir = procfs_open("", parent, 0, "fd");
		_exit((dir < 0 ? dir : procfs_list_fds_at(dir, &fds, &n)) == -EACCES ? 0 : 1);
	}
	CHECK(waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A child that forks a grandchild, both waiting to be killed; the child's
 * pid in *child, the grandchild's read from the pipe. */
static pid_t family(pid_t *child) {
	int p[2];
	pid_t grandchild = -1;

	*child = -1;
	if (pipe(p) < 0)
		return -1;
	*child = fork();
	if (*child == 0) {
		pid_t g = fork();
		if (g == 0) {
			pause();
			_exit(0);
		}
		if (write(p[1], &g, sizeof(g)) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	if (read(p[0], &grandchild, sizeof(grandchild)) != sizeof(grandchild))
		grandchild = -1;
	close(p[0]);
	close(p[1]);
	return grandchild;
}

struct walk {
	pid_t seen[8];
	size_t n;
	pid_t descend;             /* the one to go below */
};

static bool note(void *userdata, pid_t pid) {
	struct walk *w = userdata;

	if (w->n < 8)
		w->seen[w->n++] = pid;
	return pid == w->descend;
}

static bool saw(const struct walk *w, pid_t pid) {
	for (size_t i = 0; i < w->n; i++)
		if (w->seen[i] == pid)
			return true;
	return false;
}

static void walks_down_where_asked(void) {
	pid_t self = getpid(), child, grandchild = family(&child);
	struct walk below = { .descend = child }, not_below = { .descend = 0 };

	CHECK(grandchild > 0);
	CHECK_INT(procfs_walk_children("", &self, 1, note, &below), 0);
	CHECK(saw(&below, child) && saw(&below, grandchild));
	CHECK_INT(procfs_walk_children("", &self, 1, note, &not_below), 0);
	CHECK(saw(&not_below, child) && !saw(&not_below, grandchild));
	kill(grandchild, SIGKILL);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

static bool listed(const pid_t *pids, size_t n, pid_t pid) {
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/* The pids given out since a listing, listed from the first one's position:
 * a child born since, and none from before the range. */
static void lists_a_range_of_pids(void) {
	pid_t *all, *born, before, after, child;
	size_t n_all, n_born;
	off_t offset;

	CHECK_INT(procfs_read_last_pid("", &before), 0);
	CHECK_INT(procfs_list_pids_offset("", &all, &n_all, &offset), 0);
	printf("# %zu processes, the last pid given out %d, positions at pid + %lld\n", n_all, (int)before,
	       (long long)offset);
	CHECK(n_all > 2 && offset > 0);
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	CHECK_INT(procfs_read_last_pid("", &after), 0);
	CHECK(child > 0 && child <= after);
	if (after >= before) {   /* else pid numbers wrapped around meanwhile */
		CHECK_INT(procfs_list_pids_range("", offset, before + 1, after, &born, &n_born), 0);
		CHECK(listed(born, n_born, child));
		for (size_t i = 0; i < n_born; i++)
			CHECK(born[i] > before && born[i] <= after);
		free(born);
	}
	/* All of them, from the lowest. */
	CHECK_INT(procfs_list_pids_range("", offset, 1, INT_MAX, &born, &n_born), 0);
	CHECK(n_born + 4 >= n_all && listed(born, n_born, 1) && listed(born, n_born, child));
	free(born);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	free(all);
}

TEST_MAIN(T(io_needs_all_four_counters), T(fd_targets_of_pipes_and_sockets), T(cgroup_v1_cpuset_wins_over_v2),
	  T(cgroup_v2_alone), T(cpusets_of_cgroup_v1_and_v2), T(cgroup_paths_that_climb_out_are_refused), T(stat_with_parentheses_in_comm),
	  T(stat_tells_the_cpu_it_ran_on_last), T(cpu_lines_of_proc_stat), T(this_machines_cpus_in_proc_stat), T(schedstat_has_run_and_wait_time_and_runs), T(switches_from_status),
	  T(a_threads_own_cpu_time), T(kept_fds_read_afresh_until_the_process_is_gone), T(another_users_fds_are_refused),
	  T(walks_down_where_asked), T(lists_a_range_of_pids), T(cgroup_path_of_v2_v1_and_hybrid),
	  T(cgroup_path_read_from_a_fixture_tree), T(ancestors_up_to_init), T(ancestor_exe_only_of_the_process_read),
	  T(ancestors_of_this_process),
	  T(clocks_x3d_mode_and_llc_balancing_from_sys))
