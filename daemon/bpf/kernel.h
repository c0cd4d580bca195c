/* The kernel's structures that ccxd's BPF programs read (events/bpf/execs.bpf.c,
 * sample/bpf/taskiter.bpf.c and traffic.bpf.c), each with only the fields
 * one of them reads. preserve_access_index: CO-RE relocates every field to
 * the running kernel's layout (its BTF), so no kernel headers are needed,
 * and a field declared here that one kernel lacks matters only to a
 * program that reads it (which checks with bpf_core_field_exists()). */
#pragma once

#include <linux/types.h>

struct seq_file;
struct iov_iter;

struct bpf_iter_meta {
	struct seq_file *seq;
	__u64 seq_num;             /* objects shown before this one */
} __attribute__((preserve_access_index));
struct task_io_accounting {
	__u64 rchar, wchar;
} __attribute__((preserve_access_index));
struct sched_entity {
	__u64 sum_exec_runtime;
} __attribute__((preserve_access_index));
struct sched_info {
	unsigned long long run_delay;
} __attribute__((preserve_access_index));
struct signal_struct {
	int nr_threads;
	unsigned long long sum_sched_runtime;   /* of the threads that ended */
} __attribute__((preserve_access_index));
struct thread_info {
	__u32 cpu;                 /* where THREAD_INFO_IN_TASK */
	__u32 status;              /* x86: TS_COMPAT while in a 32-bit system call */
} __attribute__((preserve_access_index));
struct super_block {
	unsigned long s_magic;
} __attribute__((preserve_access_index));
struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
} __attribute__((preserve_access_index));
struct file {
	struct inode *f_inode;
	unsigned int f_mode;
} __attribute__((preserve_access_index));
struct fdtable {
	unsigned int max_fds;
	struct file **fd;
	unsigned long *open_fds;
} __attribute__((preserve_access_index));
struct files_struct {
	struct fdtable *fdt;
} __attribute__((preserve_access_index));
struct ns_common {
	unsigned int inum;
} __attribute__((preserve_access_index));
struct pid_namespace {
	struct ns_common ns;
} __attribute__((preserve_access_index));
struct upid {
	int nr;
	struct pid_namespace *ns;
} __attribute__((preserve_access_index));
struct pid {
	unsigned int level;
	__u64 ino;                 /* its inode in pidfs (Linux 6.9 and later) */
	struct upid numbers[1];
} __attribute__((preserve_access_index));
struct cpumask {
	unsigned long bits[1];     /* as many as the kernel's NR_CPUS asks: bpf_core_field_size() */
} __attribute__((preserve_access_index));
struct linux_binprm {
	const char *filename;             /* the path the exec was given */
} __attribute__((preserve_access_index));
struct task_struct {
	struct thread_info thread_info;   /* its cpu, where THREAD_INFO_IN_TASK */
	unsigned int cpu;                 /* or here (before Linux 5.16) */
	unsigned int flags;
	int pid;
	int tgid;
	unsigned in_execve : 1;
	__u64 start_time;
	__u64 start_boottime;
	struct cpumask cpus_mask;         /* its affinity */
	char comm[16];
	struct files_struct *files;
	unsigned long nvcsw, nivcsw;
	struct sched_entity se;
	struct sched_info sched_info;
	struct task_io_accounting ioac;
	struct signal_struct *signal;
	struct task_struct *group_leader;
	struct task_struct *real_parent;
	struct pid *thread_pid;
} __attribute__((preserve_access_index));
