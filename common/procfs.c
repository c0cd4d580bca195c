#include "procfs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cpulist.h"

ssize_t procfs_read_file(const char *path, char *buf, size_t size) {
	size_t len = 0;
	int fd;

	if (size == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			int r = -errno;
			if (r == -EINTR)
				continue;
			close(fd);
			return r;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == size - 1)
			break;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

/* A /proc file made by one show() call, which one read returns whole (a read
 * more to see its end would cost a system call per exec event). */
static ssize_t read_shown(const char *path, char *buf, size_t size) {
	ssize_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	do
		len = read(fd, buf, size - 1);
	while (len < 0 && errno == EINTR);
	if (len < 0)
		len = -errno;
	else
		buf[len] = '\0';
	close(fd);
	return len;
}

/* A /proc/PID file that cannot be opened because the process is gone reads as
 * ENOENT (directory gone) or ESRCH (exiting): both mean "vanished". */
static int vanished(int r) {
	return r == -ENOENT || r == -ESRCH ? -ESRCH : r;
}

int procfs_read_stat(const char *root, pid_t pid, struct procfs_stat *ret) {
	char path[PATH_MAX], buf[1024];
	ssize_t len;

	snprintf(path, sizeof(path), "%s/proc/%d/stat", root, (int)pid);
	len = read_shown(path, buf, sizeof(buf));
	if (len < 0)
		return vanished((int)len);
	return procfs_parse_stat(buf, pid, ret);
}

int procfs_open(const char *root, pid_t pid, pid_t tid, const char *name) {
	char path[PATH_MAX];
	int fd;

	if (tid > 0)
		snprintf(path, sizeof(path), "%s/proc/%d/task/%d/%s", root, (int)pid, (int)tid, name);
	else
		snprintf(path, sizeof(path), "%s/proc/%d/%s", root, (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	return fd < 0 ? vanished(-errno) : fd;
}

/* The whole of a kept /proc file, read afresh from its start. Each of the
 * files read this way is made by one show() call, so one read has it all. */
static ssize_t pread_text(int fd, char *buf, size_t size) {
	ssize_t len = pread(fd, buf, size - 1, 0);

	if (len < 0)
		return vanished(-errno);
	buf[len] = '\0';
	return len;
}

int procfs_pread_stat(int fd, pid_t pid, struct procfs_stat *ret) {
	char buf[1024];
	ssize_t len = pread_text(fd, buf, sizeof(buf));

	return len < 0 ? (int)len : procfs_parse_stat(buf, pid, ret);
}

int procfs_pread_schedstat(int fd, struct procfs_schedstat *ret) {
	char buf[128];
	ssize_t len = pread_text(fd, buf, sizeof(buf));

	return len < 0 ? (int)len : procfs_parse_schedstat(buf, ret);
}

int procfs_pread_switches(int fd, struct procfs_switches *ret) {
	char buf[8192];
	ssize_t len = pread_text(fd, buf, sizeof(buf));

	return len < 0 ? (int)len : procfs_parse_switches(buf, ret);
}

int procfs_read_cpu_times(const char *root, struct procfs_cpu_time **ret, size_t *n) {
	/* The per-CPU lines come first; the interrupt counts after them can
	 * run to hundreds of KiB on big machines and are not needed. About
	 * 100 bytes a CPU line. */
	size_t size = 128 * (CPU_SETSIZE + 1);
	char path[PATH_MAX], *buf = malloc(size);
	struct procfs_cpu_time *times = calloc(CPU_SETSIZE, sizeof(*times));
	ssize_t len;
	int r;

	if (!buf || !times) {
		free(buf);
		free(times);
		return -ENOMEM;
	}
	snprintf(path, sizeof(path), "%s/proc/stat", root);
	len = procfs_read_file(path, buf, size);
	r = len < 0 ? (int)len : procfs_parse_cpu_times(buf, times, CPU_SETSIZE);
	free(buf);
	if (r < 0) {
		free(times);
		return r;
	}
	*ret = times;
	*n = (size_t)r;
	return 0;
}

int procfs_read_comm(const char *root, pid_t pid, char comm[PROCFS_COMM_MAX]) {
	char path[PATH_MAX];
	ssize_t len;

	snprintf(path, sizeof(path), "%s/proc/%d/comm", root, (int)pid);
	len = read_shown(path, comm, PROCFS_COMM_MAX);
	if (len < 0)
		return vanished((int)len);
	if (len > 0 && comm[len - 1] == '\n')
		comm[len - 1] = '\0';
	return 0;
}

int procfs_read_exe(const char *root, pid_t pid, char **ret) {
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/proc/%d/exe", root, (int)pid);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0) {
		/* A kernel thread's exe link exists but points nowhere (ENOENT); a
		 * vanished process has no directory (also ENOENT): tell them apart. */
		int r = -errno;
		if (r == -ENOENT) {
			snprintf(path, sizeof(path), "%s/proc/%d", root, (int)pid);
			if (access(path, F_OK) < 0)
				return -ESRCH;
		}
		return r;
	}
	target[n] = '\0';
	*ret = strdup(target);
	return *ret ? 0 : -ENOMEM;
}

int procfs_read_exe_of(const char *root, const struct procfs_stat *st, char **ret) {
	struct procfs_stat now;
	char *exe;
	int r = procfs_read_exe(root, st->pid, &exe);

	if (r < 0)
		return r;
	/* The start time read after the link: the same one means the same
	 * process had the pid all along, so the link was its. */
	r = procfs_read_stat(root, st->pid, &now);
	if (r < 0 || now.start_time != st->start_time) {
		free(exe);
		return -ESRCH;
	}
	*ret = exe;
	return 0;
}

int procfs_read_uid(const char *root, pid_t pid, uid_t *ret) {
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/proc/%d", root, (int)pid);
	if (stat(path, &st) < 0)
		return vanished(-errno);
	*ret = st.st_uid;
	return 0;
}

int procfs_read_cmdline(const char *root, pid_t pid, size_t max, char **ret) {
	char path[PATH_MAX], *buf;
	ssize_t len;

	if (max == 0)
		return -EINVAL;
	buf = malloc(max + 1);
	if (!buf)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/proc/%d/cmdline", root, (int)pid);
	len = procfs_read_file(path, buf, max + 1);
	if (len < 0) {
		free(buf);
		return vanished((int)len);
	}
	/* Arguments are NUL-separated; the last one ends in NUL too. */
	while (len > 0 && buf[len - 1] == '\0')
		len--;
	for (ssize_t i = 0; i < len; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[len] = '\0';
	*ret = buf;
	return 0;
}

/* A decimal number of at least min and at most INT_MAX, the whole of s. */
static int parse_number(const char *s, long min, long *ret) {
	long v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return -ERANGE;
	}
	if (v < min)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int push_pid(pid_t **pids, size_t *n, size_t *allocated, pid_t pid) {
	if (*n == *allocated) {
		size_t na = *allocated ? *allocated * 2 : 16;
		pid_t *np = realloc(*pids, na * sizeof(*np));
		if (!np)
			return -ENOMEM;
		*pids = np;
		*allocated = na;
	}
	(*pids)[(*n)++] = pid;
	return 0;
}

/* The numeric entries, min or more, of the /proc directory open at dfd,
 * listed from its start, so that an fd kept open lists afresh each time.
 * getdents64() on the fd, where opendir() would open and stat it again and
 * allocate a buffer. With offset, what /proc adds to a number to make the
 * position of its entry (seekdir()'s), or -1 when the positions do not
 * tell: an entry's position is the d_off of the entry before it. */
static int list_numeric_at(int dfd, long min, pid_t **ret, size_t *n, off_t *offset) {
	char buf[16384] __attribute__((aligned(8)));
	pid_t *numbers = NULL;
	size_t count = 0, allocated = 0;
	off_t learned = -1, here = -1;
	bool consistent = true;
	ssize_t len;

	if (lseek(dfd, 0, SEEK_SET) < 0)
		return vanished(-errno);
	while ((len = getdents64(dfd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < len;) {
			const struct dirent64 *de = (const struct dirent64 *)(buf + off);
			off_t at = here;
			long v;

			off += de->d_reclen;
			here = de->d_off;
			if (parse_number(de->d_name, min, &v) < 0)
				continue;
			if (push_pid(&numbers, &count, &allocated, (pid_t)v) < 0) {
				free(numbers);
				return -ENOMEM;
			}
			if (learned < 0)
				learned = at - v;
			consistent &= at - v == learned;
		}
	}
	if (len < 0) {
		int r = vanished(-errno);
		free(numbers);
		return r;
	}
	*ret = numbers;
	*n = count;
	if (offset)
		*offset = consistent && learned > 0 ? learned : -1;
	return 0;
}

static int list_numeric(const char *path, pid_t **ret, size_t *n, off_t *offset) {
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r;

	if (dfd < 0)
		return vanished(-errno);
	r = list_numeric_at(dfd, 1, ret, n, offset);
	close(dfd);
	return r;
}

int procfs_list_pids(const char *root, pid_t **ret, size_t *n) {
	return procfs_list_pids_offset(root, ret, n, NULL);
}

int procfs_list_pids_offset(const char *root, pid_t **ret, size_t *n, off_t *offset) {
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/proc", root);
	return list_numeric(path, ret, n, offset);
}

int procfs_list_pids_range(const char *root, off_t offset, pid_t lo, pid_t hi, pid_t **ret, size_t *n) {
	/* Small: /proc makes an entry for each process it lists, and what
	 * follows the range need not be listed. */
	char path[PATH_MAX], buf[1024] __attribute__((aligned(8)));
	pid_t *numbers = NULL;
	size_t count = 0, allocated = 0;
	bool past = false;
	ssize_t len;
	int dfd, r = 0;

	snprintf(path, sizeof(path), "%s/proc", root);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return vanished(-errno);
	if (lseek(dfd, (off_t)lo + offset, SEEK_SET) < 0)
		r = -errno;
	while (r == 0 && !past && (len = getdents64(dfd, buf, sizeof(buf))) != 0) {
		if (len < 0) {
			r = -errno;
			break;
		}
		for (ssize_t off = 0; off < len && !past && r == 0;) {
			const struct dirent64 *de = (const struct dirent64 *)(buf + off);
			long v;

			off += de->d_reclen;
			if (parse_number(de->d_name, lo, &v) < 0)
				continue;
			past = v > hi;
			if (!past)
				r = push_pid(&numbers, &count, &allocated, (pid_t)v);
		}
	}
	close(dfd);
	if (r < 0) {
		free(numbers);
		return vanished(r);
	}
	*ret = numbers;
	*n = count;
	return 0;
}

int procfs_read_last_pid(const char *root, pid_t *ret) {
	char path[PATH_MAX], buf[32];
	ssize_t len;
	long v;

	snprintf(path, sizeof(path), "%s/proc/sys/kernel/ns_last_pid", root);
	len = procfs_read_file(path, buf, sizeof(buf));
	if (len < 0)
		return (int)len;
	buf[strcspn(buf, "\n")] = '\0';
	if (parse_number(buf, 0, &v) < 0 || v > INT_MAX)
		return -EINVAL;
	*ret = (pid_t)v;
	return 0;
}

int procfs_list_tasks(const char *root, pid_t pid, pid_t **ret, size_t *n) {
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/proc/%d/task", root, (int)pid);
	return list_numeric(path, ret, n, NULL);
}

int procfs_list_tasks_at(int dfd, pid_t **ret, size_t *n) {
	return list_numeric_at(dfd, 1, ret, n, NULL);
}

int procfs_list_children(const char *root, pid_t pid, pid_t **ret, size_t *n) {
	pid_t *tasks, *kids = NULL;
	size_t n_tasks, n_kids = 0, allocated = 0;
	int r = procfs_list_tasks(root, pid, &tasks, &n_tasks);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n_tasks && r >= 0; i++) {
		char path[PATH_MAX], buf[16384], *p, *end;

		snprintf(path, sizeof(path), "%s/proc/%d/task/%d/children", root, (int)pid, (int)tasks[i]);
		/* A thread that exited meanwhile has no children to tell of. */
		if (procfs_read_file(path, buf, sizeof(buf)) < 0)
			continue;
		for (p = buf; r >= 0; p = end) {
			long v = strtol(p, &end, 10);
			if (end == p)
				break;
			if (v > 0 && v <= INT_MAX)
				r = push_pid(&kids, &n_kids, &allocated, (pid_t)v);
		}
	}
	free(tasks);
	if (r < 0) {
		free(kids);
		return r;
	}
	*ret = kids;
	*n = n_kids;
	return 0;
}

int procfs_walk_children(const char *root, const pid_t *start, size_t n, bool (*visit)(void *userdata, pid_t pid),
			 void *userdata) {
	size_t n_queue = n, allocated = n + 1;
	pid_t *queue = malloc(allocated * sizeof(*queue));
	int r = 0;

	if (!queue)
		return -ENOMEM;
	memcpy(queue, start, n * sizeof(*queue));
	for (size_t i = 0; i < n_queue && r == 0; i++) {
		pid_t *kids;
		size_t n_kids;

		if (procfs_list_children(root, queue[i], &kids, &n_kids) < 0)
			continue;   /* ended meanwhile */
		for (size_t k = 0; k < n_kids && r == 0; k++) {
			if (!visit(userdata, kids[k]))
				continue;
			if (n_queue == allocated) {
				pid_t *grown = realloc(queue, 2 * allocated * sizeof(*queue));
				if (!grown) {
					r = -ENOMEM;
					break;
				}
				queue = grown;
				allocated *= 2;
			}
			queue[n_queue++] = kids[k];
		}
		free(kids);
	}
	free(queue);
	return r;
}

int procfs_list_fds_at(int dfd, struct procfs_fd **ret, size_t *n) {
	struct procfs_fd *fds = NULL;
	size_t count = 0;
	pid_t *numbers;
	size_t n_numbers;
	int r = list_numeric_at(dfd, 0, &numbers, &n_numbers, NULL);

	if (r < 0)
		return r;
	if (n_numbers > 0 && !(fds = calloc(n_numbers, sizeof(*fds)))) {
		free(numbers);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n_numbers; i++) {
		char name[16], target[64];
		struct procfs_fd *f = &fds[count];
		struct stat st;
		ssize_t len;

		snprintf(name, sizeof(name), "%d", (int)numbers[i]);
		len = readlinkat(dfd, name, target, sizeof(target) - 1);
		if (len < 0 && (errno == EACCES || errno == EPERM)) {
			/* Access is decided per process, not per fd: the
			 * others would fail the same way. */
			free(numbers);
			free(fds);
			return -EACCES;
		}
		if (len < 0)
			continue;   /* closed meanwhile */
		target[len] = '\0';
		f->kind = procfs_parse_fd_target(target, &f->inode);
		if (f->kind == PROCFS_FD_OTHER)
			continue;
		f->fd = (int)numbers[i];
		f->readable = f->writable = true;
		if (f->kind == PROCFS_FD_PIPE) {
			if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			f->readable = (st.st_mode & S_IRUSR) != 0;
			f->writable = (st.st_mode & S_IWUSR) != 0;
		}
		count++;
	}
	free(numbers);
	*ret = fds;
	*n = count;
	return 0;
}

int procfs_pread_io(int fd, struct procfs_io *ret) {
	char buf[512];
	ssize_t len = pread_text(fd, buf, sizeof(buf));

	return len < 0 ? (int)len : procfs_parse_io(buf, ret);
}

int procfs_read_cpulist(const char *path, cpu_set_t *ret) {
	char buf[CPULIST_MAX];
	ssize_t len = procfs_read_file(path, buf, sizeof(buf));

	if (len < 0)
		return (int)len;
	return cpulist_parse(buf, ret);
}

int procfs_read_cgroup(const char *root, pid_t pid, char *buf, size_t size) {
	char path[PATH_MAX];
	ssize_t len;

	snprintf(path, sizeof(path), "%s/proc/%d/cgroup", root, (int)pid);
	len = procfs_read_file(path, buf, size);
	return len < 0 ? vanished((int)len) : 0;
}

size_t procfs_read_ancestors(const char *root, const struct procfs_stat *st, size_t max, struct procfs_stat *ret) {
	const struct procfs_stat *child = st;
	size_t n = 0;

	/* pid 0 is the kernel (the parent of pid 1 and kthreadd), no process. */
	while (n < max && child->ppid > 0 && child->pid != 1) {
		struct procfs_stat *parent = &ret[n];

		if (procfs_read_stat(root, child->ppid, parent) < 0)
			break;
		/* A parent starts before its child; one that did not is
		 * another process that took the exited parent's pid. */
		if (parent->start_time > child->start_time)
			break;
		n++;
		child = parent;
	}
	return n;
}

long long procfs_pid_namespace(void) {
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) < 0)
		return -errno;
	return st.st_ino == 0xEFFFFFFCU /* PROC_PID_INIT_INO */ ? 0 : (long long)st.st_ino;
}

long procfs_pid_max(void) {
	char buf[32], *end;
	ssize_t r = procfs_read_file("/proc/sys/kernel/pid_max", buf, sizeof(buf));
	long max;

	if (r < 0)
		return (long)r;
	errno = 0;
	max = strtol(buf, &end, 10);
	if (errno || end == buf || max <= 0)
		return -EINVAL;
	return max;
}

uint64_t procfs_ticks_of_ns(uint64_t ns) {
	static long ticks_per_s;

	if (ticks_per_s <= 0)
		ticks_per_s = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
	return ns / (1000000000 / (uint64_t)ticks_per_s);
}

unsigned procfs_pid_words(void) {
	long max = procfs_pid_max();

	if (max <= 0 || max > PROCFS_PID_MAX_LIMIT)
		max = PROCFS_PID_MAX_LIMIT;
	return (unsigned)((max + 63) / 64);
}
