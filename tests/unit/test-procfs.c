/* The pure /proc parsers behind the readers. */
#include <errno.h>
#include <string.h>

#include "procfs.h"
#include "test.h"

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

	CHECK_INT(procfs_parse_cgroup(buf, &path, &v1), 0);
	CHECK_STR(path, "/box");
	CHECK(v1);
}

static void cgroup_v2_alone(void) {
	char buf[] = "0::/system.slice/x.service\n";
	const char *path;
	bool v1 = true;

	CHECK_INT(procfs_parse_cgroup(buf, &path, &v1), 0);
	CHECK_STR(path, "/system.slice/x.service");
	CHECK(!v1);
}

static void cgroup_paths_that_climb_out_are_refused(void) {
	char buf[] = "3:cpuset:/../etc\n0::/a/../../b\n";
	char none[] = "garbage\n4:memory:/x\n";
	const char *path;
	bool v1;

	CHECK_INT(procfs_parse_cgroup(buf, &path, &v1), -ENOENT);
	CHECK_INT(procfs_parse_cgroup(none, &path, &v1), -ENOENT);
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

TEST_MAIN(T(io_needs_all_four_counters), T(fd_targets_of_pipes_and_sockets), T(cgroup_v1_cpuset_wins_over_v2),
	  T(cgroup_v2_alone), T(cgroup_paths_that_climb_out_are_refused), T(stat_with_parentheses_in_comm))
