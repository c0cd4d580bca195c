/* Files read by name where another user may have put something else
 * (regfile.h), and files replaced whole that must outlive a crash of the
 * machine (atomicfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomicfile.h"
#include "fixture.h"
#include "regfile.h"
#include "test.h"

/* regfile_read() of path: its error, or 0 with the text in text. */
static int read_as(const char *path, enum regfile_flags flags, size_t max, char *text, size_t size) {
	char *buf;
	size_t len;
	int r;

	alarm(10);   /* an open that blocked would fail here, not hang */
	r = regfile_read(path, flags, max, &buf, &len);
	alarm(0);
	if (r == 0) {
		CHECK_INT(len, strlen(buf));
		snprintf(text, size, "%s", buf);
		free(buf);
	}
	return r;
}

static void reads_a_regular_file_whole_and_no_more_than_asked(void) {
	char root[PATH_MAX], path[PATH_MAX + 16], text[64];

	fixture_root(root);
	fixture_file(root, "/a", "cache\n");
	snprintf(path, sizeof(path), "%s/a", root);
	CHECK_INT(read_as(path, 0, 6, text, sizeof(text)), 0);
	CHECK_STR(text, "cache\n");
	CHECK_INT(read_as(path, REGFILE_NOFOLLOW, 6, text, sizeof(text)), 0);
	CHECK_INT(read_as(path, 0, 5, text, sizeof(text)), -EFBIG);
	fixture_file(root, "/empty", "");
	snprintf(path, sizeof(path), "%s/empty", root);
	CHECK_INT(read_as(path, 0, 0, text, sizeof(text)), 0);
	CHECK_STR(text, "");
	snprintf(path, sizeof(path), "%s/missing", root);
	CHECK_INT(read_as(path, 0, 64, text, sizeof(text)), -ENOENT);
	fixture_remove(root);
}

/* A FIFO would block the open until a writer came, or the read until it
 * wrote; a device, a directory are no files of text. */
static void refuses_what_is_not_a_regular_file(void) {
	char root[PATH_MAX], path[PATH_MAX + 16], text[64];

	fixture_root(root);
	snprintf(path, sizeof(path), "%s/fifo", root);
	CHECK_INT(mkfifo(path, 0600), 0);
	CHECK_INT(read_as(path, 0, 64, text, sizeof(text)), -EINVAL);
	CHECK_STR(regfile_strerror(-EINVAL), "not a regular file");
	CHECK_INT(read_as("/dev/zero", 0, 64, text, sizeof(text)), -EINVAL);
	CHECK_INT(read_as("/dev/null", 0, 64, text, sizeof(text)), -EINVAL);
	CHECK_INT(read_as(root, 0, 64, text, sizeof(text)), -EISDIR);
	fixture_remove(root);
}

/* A link is followed where asked (an administrator's configuration), and
 * refused with REGFILE_NOFOLLOW (root reading a directory user ccxd owns). */
static void follows_a_link_only_where_asked(void) {
	char root[PATH_MAX], path[PATH_MAX + 16], target[PATH_MAX + 16], text[64];

	fixture_root(root);
	fixture_file(root, "/target", "frequency\n");
	snprintf(target, sizeof(target), "%s/target", root);
	snprintf(path, sizeof(path), "%s/link", root);
	CHECK_INT(symlink(target, path), 0);
	CHECK_INT(read_as(path, 0, 64, text, sizeof(text)), 0);
	CHECK_STR(text, "frequency\n");
	CHECK_INT(read_as(path, REGFILE_NOFOLLOW, 64, text, sizeof(text)), -ELOOP);
	CHECK(strstr(regfile_strerror(-ELOOP), "link") != NULL);
	/* Followed or not, a link to a FIFO never blocks. */
	CHECK_INT(unlink(target), 0);
	CHECK_INT(mkfifo(target, 0600), 0);
	CHECK_INT(read_as(path, 0, 64, text, sizeof(text)), -EINVAL);
	fixture_remove(root);
}

static void writes_whole_with_the_mode_asked(void) {
	char root[PATH_MAX], path[PATH_MAX + 16], text[64];
	struct stat st;

	fixture_root(root);
	snprintf(path, sizeof(path), "%s/state.json", root);
	CHECK_INT(atomicfile_write(path, "{}\n", 0640, true), 0);
	CHECK_INT(read_as(path, 0, 64, text, sizeof(text)), 0);
	CHECK_STR(text, "{}\n");
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0640);
	/* Over a link the link is replaced, not its target written. */
	fixture_file(root, "/target", "kept\n");
	CHECK_INT(unlink(path), 0);
	snprintf(text, sizeof(text), "%s/target", root);
	CHECK_INT(symlink(text, path), 0);
	CHECK_INT(atomicfile_write(path, "new\n", 0644, false), 0);
	CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
	CHECK_INT(read_as(text, 0, 64, text, sizeof(text)), 0);
	CHECK_STR(text, "kept\n");
	fixture_remove(root);
}

/* What a durable write asks of the kernel, seen by strace: the data synced
 * before the rename, and the directory synced after it. */
static void a_durable_write_syncs_its_directory_after_the_rename(void) {
	char root[PATH_MAX], cmd[3 * PATH_MAX], line[512];
	bool renamed = false, dir_open = false, dir_synced = false, data_synced = false;
	int dir_fd = -1;
	FILE *log;

	if (system("strace -V >/dev/null 2>&1") != 0)
		SKIP_TEST("strace is not installed");
	fixture_root(root);
	/* LeakSanitizer, in a sanitizer build, cannot run under ptrace. */
	snprintf(cmd, sizeof(cmd),
		 "ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" "
		 "strace -qq -f -e trace=openat,fsync,rename,renameat,renameat2 -o %s/trace "
		 "/proc/%d/exe write-durable %s/state.json",
		 root, (int)getpid(), root);
	CHECK_INT(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/trace", root);
	log = fopen(cmd, "r");
	CHECK(log != NULL);
	while (log && fgets(line, sizeof(line), log)) {
		int fd;
		if (strstr(line, "fsync(") && !renamed)
			data_synced = true;
		if (strstr(line, "rename") && strstr(line, "state.json\""))
			renamed = data_synced;
		if (renamed && strstr(line, "O_DIRECTORY") && strstr(line, root) && sscanf(strrchr(line, '='), "= %d", &fd) == 1) {
			dir_fd = fd;
			dir_open = true;
		}
		if (dir_open && sscanf(line, "%*d fsync(%d) = 0", &fd) == 1 && fd == dir_fd)
			dir_synced = true;
	}
	if (log)
		fclose(log);
	CHECK(data_synced);
	CHECK(renamed);
	CHECK(dir_synced);
	fixture_remove(root);
}

int main(int argc, char **argv) {
	static const struct test tests[] = { T(reads_a_regular_file_whole_and_no_more_than_asked),
					     T(refuses_what_is_not_a_regular_file), T(follows_a_link_only_where_asked),
					     T(writes_whole_with_the_mode_asked),
					     T(a_durable_write_syncs_its_directory_after_the_rename) };

	/* The traced writer of the last test. */
	if (argc == 3 && strcmp(argv[1], "write-durable") == 0)
		return atomicfile_write(argv[2], "{}\n", 0644, true) == 0 ? 0 : 1;
	return test_run_all(tests, sizeof(tests) / sizeof(tests[0]));
}
