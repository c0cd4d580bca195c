/* The one place that reads /proc (sysfs.h reads /sys, cgroup.h the cgroup
 * files, through procfs_read_file()). Every function takes
 * the file-system root ("" for the real one) so that tests can point it at a
 * fixture tree. A process that vanishes mid-read is -ESRCH, which callers
 * treat as normal: processes come and go. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROCFS_COMM_MAX 16     /* TASK_COMM_LEN */

struct procfs_stat {
	pid_t pid;
	char comm[PROCFS_COMM_MAX];
	char state;
	pid_t ppid;
	unsigned long flags;       /* PF_* */
	uint64_t utime, stime;     /* clock ticks */
	unsigned long threads;     /* how many it has */
	uint64_t start_time;       /* clock ticks after boot */
	int processor;             /* the CPU it ran on last; -1 when the line stops before it */
};

/* PF_KTHREAD: kernel threads have no program to place. */
#define PROCFS_PF_KTHREAD 0x00200000UL

/* /proc/PID/stat. Returns 0, -ESRCH when the process is gone, -EINVAL when the
 * file does not parse. */
int procfs_read_stat(const char *root, pid_t pid, struct procfs_stat *ret);

/* Reading the same files again and again: the sampler reads an active
 * process's files every sample. An fd kept open and read afresh with
 * pread() (or listed afresh, for a directory) costs a third of opening,
 * reading and closing each time. It stays bound to that very process: once
 * it exits, reads fail with -ESRCH, even if its pid is reused. */
/* Opens /proc/PID/NAME, or /proc/PID/task/TID/NAME when tid > 0: a file or
 * a directory. -ESRCH when the process or thread is gone. */
int procfs_open(const char *root, pid_t pid, pid_t tid, const char *name);
int procfs_pread_stat(int fd, pid_t pid, struct procfs_stat *ret);

/* The text of a stat file. -EINVAL when it does not parse. */
int procfs_parse_stat(const char *buf, pid_t pid, struct procfs_stat *ret);

/* /proc/PID/task/TID/schedstat (or /proc/PID/schedstat, the main
 * thread's): how long one thread ran and how long it waited, runnable, for
 * a CPU, both in nanoseconds since it started; and how many times it was
 * put on a CPU, which every wake-up does. */
struct procfs_schedstat {
	uint64_t run_ns, wait_ns;
	uint64_t runs;             /* 0 where the kernel writes two figures only */
};

/* The text of a schedstat file: 0, or -EINVAL without the first two figures. */
int procfs_parse_schedstat(const char *buf, struct procfs_schedstat *ret);
/* Through an open /proc/PID/task/TID/schedstat (procfs_open(); the file is
 * there with CONFIG_SCHED_INFO). -ESRCH once the thread is gone. */
int procfs_pread_schedstat(int fd, struct procfs_schedstat *ret);

/* Context switches of one thread since it started, from its status file. */
struct procfs_switches {
	uint64_t voluntary;        /* it blocked, so each ended in a wake-up */
	uint64_t involuntary;      /* the scheduler took the CPU from it */
};

/* The text of a status file: 0, or -EINVAL without both _ctxt_switches lines. */
int procfs_parse_switches(const char *buf, struct procfs_switches *ret);
/* Through an open /proc/PID/task/TID/status: -ESRCH once the thread is gone. */
int procfs_pread_switches(int fd, struct procfs_switches *ret);

/* One CPU's line of /proc/stat, in clock ticks since boot. */
struct procfs_cpu_time {
	unsigned cpu;              /* its number */
	uint64_t busy;             /* user, nice, system, irq, softirq and steal (guest is inside user) */
	uint64_t total;            /* busy, idle and iowait */
};

/* The per-CPU lines ("cpuN ...") of the text of /proc/stat, at most max of
 * them, in file order; the "cpu" line of all CPUs and every other line are
 * skipped, and so is a line cut short (a buffer too small). Returns how many,
 * or -EINVAL when a cpuN line does not parse. */
int procfs_parse_cpu_times(const char *buf, struct procfs_cpu_time *ret, size_t max);

/* /proc/stat's per-CPU lines as a malloc'd array (offline CPUs have none). */
int procfs_read_cpu_times(const char *root, struct procfs_cpu_time **ret, size_t *n);

/* /proc/PID/comm: far cheaper than stat for the kernel to produce. */
int procfs_read_comm(const char *root, pid_t pid, char comm[PROCFS_COMM_MAX]);

/* /proc/PID/exe as a malloc'd path (" (deleted)" kept as the kernel shows it).
 * -ESRCH when gone, -ENOENT for kernel threads, -EACCES without privilege. */
int procfs_read_exe(const char *root, pid_t pid, char **ret);

/* The exe of the process st describes, as procfs_read_exe() reads it, and
 * only if that process still has its pid after the read: -ESRCH when the
 * stat file then shows another start time (the pid was reused, and the link
 * read may be the newcomer's) or is gone. */
int procfs_read_exe_of(const char *root, const struct procfs_stat *st, char **ret);

/* The owner of process pid: its /proc/PID directory's. */
int procfs_read_uid(const char *root, pid_t pid, uid_t *ret);

/* /proc/PID/cmdline with arguments joined by single spaces, malloc'd; at most
 * max bytes of it are read. "" for kernel threads and zombies. */
int procfs_read_cmdline(const char *root, pid_t pid, size_t max, char **ret);

/* Numeric entries of /proc (processes) or /proc/PID/task (its threads), as a
 * malloc'd array. */
int procfs_list_pids(const char *root, pid_t **ret, size_t *n);
int procfs_list_tasks(const char *root, pid_t pid, pid_t **ret, size_t *n);
/* The same, of an open /proc/PID/task. */
int procfs_list_tasks_at(int dfd, pid_t **ret, size_t *n);
/* procfs_list_pids(), and in *offset what /proc adds to a pid to make the
 * position of its entry, or -1 where the positions do not tell (seekdir()
 * and lseek() take positions). */
int procfs_list_pids_offset(const char *root, pid_t **ret, size_t *n, off_t *offset);
/* The processes with pids from lo to hi, listed from lo's position: a few
 * among thousands cost a few entries, not thousands. */
int procfs_list_pids_range(const char *root, off_t offset, pid_t lo, pid_t hi, pid_t **ret, size_t *n);
/* The pid given out last in our pid namespace (/proc/sys/kernel/ns_last_pid):
 * Linux gives them out in rising order, from 300 again after pid_max. */
int procfs_read_last_pid(const char *root, pid_t *ret);

/* The children of every thread of the process (/proc/PID/task/TID/children). */
int procfs_list_children(const char *root, pid_t pid, pid_t **ret, size_t *n);

/* Calls visit for each child of the n processes of start, and for the
 * children of each child it returned true for, and so on down, breadth
 * first. -ENOMEM when the walk could not be kept. */
int procfs_walk_children(const char *root, const pid_t *start, size_t n, bool (*visit)(void *userdata, pid_t pid),
			 void *userdata);

enum procfs_fd_kind {
	PROCFS_FD_OTHER,
	PROCFS_FD_PIPE,            /* pipes and FIFOs: "pipe:[INODE]" */
	PROCFS_FD_SOCKET,          /* "socket:[INODE]" */
};

struct procfs_fd {
	int fd;
	enum procfs_fd_kind kind;
	uint64_t inode;
	bool readable, writable;   /* the fd's access mode */
};

/* The pipe and socket fds (others are left out) of the process whose
 * /proc/PID/fd is open at dfd, listed afresh from its start. A pipe's access
 * mode comes from the link's own permission bits, which the kernel sets from
 * the fd's mode, saving a read of fdinfo per fd. Sockets always read as both.
 * -EACCES when its fds are not ours to read (another user's process without
 * CAP_SYS_PTRACE, or one a security module guards), at the first of them. */
int procfs_list_fds_at(int dfd, struct procfs_fd **ret, size_t *n);

struct procfs_io {
	uint64_t rchar, wchar;     /* bytes through read(2)/write(2) and kin: pipes, not send/recv */
	uint64_t syscr, syscw;
};

/* Through an open /proc/PID/io (opening it needs ptrace-read access to the
 * process). */
int procfs_pread_io(int fd, struct procfs_io *ret);

/* The pure parsers behind the readers, for tests and fuzzing. */
/* The text of an io file: 0, or -EINVAL unless all four counters are there. */
int procfs_parse_io(const char *buf, struct procfs_io *ret);
/* The target of a /proc/PID/fd link ("pipe:[123]"); PROCFS_FD_OTHER for any other. */
enum procfs_fd_kind procfs_parse_fd_target(const char *target, uint64_t *inode);
/* /proc/PID/cgroup into buf (cgroup.h reads it); -ESRCH when the process
 * is gone. */
int procfs_read_cgroup(const char *root, pid_t pid, char *buf, size_t size);

/* The ancestors of the process st describes: its parent (stat's ppid) first,
 * then the parent's, and so on, each as its stat file reads, at most max of
 * them, into ret; returns how many. The walk ends after pid 1, at a parent
 * that has exited meanwhile (the process has a new parent by then, which the
 * next decision sees), and at one that started after its child: a pid reused
 * by another process. */
size_t procfs_read_ancestors(const char *root, const struct procfs_stat *st, size_t max, struct procfs_stat *ret);

/* The inode of this process's PID namespace, 0 for the initial one (whose
 * numbers are the kernel's own), or -errno. */
long long procfs_pid_namespace(void);
/* kernel.pid_max: every pid is below it. Or -errno. */
long procfs_pid_max(void);
/* The kernel's limit on pid_max (64-bit machines): no sysctl can raise it
 * further. */
#define PROCFS_PID_MAX_LIMIT (4 * 1024 * 1024)
/* 64-bit words for a bitmap of one bit per pid the kernel gives out now:
 * 512 for the usual pid_max of 32768, 65536 (512 KiB) at most. */
unsigned procfs_pid_words(void);

/* A task's start as the kernel keeps it (start_boottime: ns after boot,
 * as BPF programs read it) in the clock ticks of /proc/PID/stat's. */
uint64_t procfs_ticks_of_ns(uint64_t ns);

/* Reads a whole small file into buf (NUL-terminated). Returns its length or -errno. */
ssize_t procfs_read_file(const char *path, char *buf, size_t size);
/* A file that holds a CPU list (cpuset.cpus, /sys/devices/system/cpu/online). */
int procfs_read_cpulist(const char *path, cpu_set_t *ret);
