/* The records that the BPF iterators of bpf/taskiter.bpf.c write and
 * taskiter.c reads: the threads iterator one per thread of the process its
 * link is bound to; the files iterator one for the thread whose files they
 * are, then one per pipe or socket fd (nothing for a process without
 * files); the batch iterator, for each pid of its map that a process has,
 * a batch record and its pipe and socket fds' records. */
#pragma once
#include <linux/types.h>

struct taskiter_thread_record {
	__u64 leader_start_ns;     /* the process's start, since boot: who it is */
	__u64 run_ns, wait_ns;     /* on a CPU, and runnable waiting for one */
	__u64 ended_run_ns;        /* on a CPU, of the process's threads that ended */
	__u64 voluntary, involuntary;   /* context switches */
	__u64 rchar, wchar;        /* this thread's read(2)/write(2) bytes */
	__u32 tid;
	__u32 threads;             /* the process's */
};

struct taskiter_file_record {
	__u64 leader_start_ns;
	__u64 inode;
	__u32 fd;
	__u32 socket;              /* 1: a socket; 0: a pipe */
	__u32 f_mode;              /* FMODE_READ 0x1, FMODE_WRITE 0x2 */
	__u32 pad;
};

/* The batch iterator's maps hold this many pids at most (wanted_4096, the
 * largest), and it writes this many pipe and socket fds of one process at
 * most: a record and its fds must fit in the 32 KiB the kernel buffers for
 * one map element. */
#define TASKITER_BATCH_MAX 4096
#define TASKITER_BATCH_FDS 1000

/* An element of those maps, arrays: a pid (0: none) and what to read of it. */
struct taskiter_wanted {
	__u32 pid;                 /* as the reader's pid namespace numbers it */
	__u32 flags;
};
#define TASKITER_BATCH_STAT_ONLY 0x1   /* not its pipes and sockets */

struct taskiter_batch_record {
	struct taskiter_thread_record thread;   /* the process's first thread */
	__u32 pid;                 /* the map's key */
	__u32 cpu;                 /* the first thread's last CPU, as /proc/PID/stat has it */
	__u32 n_fds;               /* file records that follow */
	__u32 truncated;           /* more pipes and sockets than those */
	char comm[16];
	__u64 run_ns;              /* on a CPU, all its threads' and those that ended */
	__u32 kthread;             /* a kernel thread */
	__u32 pad;
};
