/* read-cost PID...: the CPU time it takes to read what the sampler needs of
 * one active process (its threads' times and switches, its I/O bytes, its
 * pipe and socket fds), from /proc as the sampler does, through files kept
 * open (stat, io, each thread's status, the fd listing with a readlinkat
 * per fd and an lstat per pipe), through its BPF task iterators, links
 * kept open (taskiter.h), and through the batch iterator, all PIDs in one
 * read, stat's figures included, and again for stat's figures alone (as
 * the sampler reads idle processes). Medians of ROUNDS passes over the PIDs, in
 * microseconds per process. Built and run by tools/bench/read-cost.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "procfs.h"
#include "taskiter.h"

#define ROUNDS 15
#define MAX_PIDS 256

enum { STAT, IO, STATUS, FDS, THREADS, FILES, BATCH, BATCH_STAT, N_READS };
static const char *const names[N_READS] = { "proc_stat", "proc_io", "proc_status", "proc_fds", "bpf_threads",
					    "bpf_files", "bpf_batch", "bpf_batch_stat" };

static double cpu_usec(void) {
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int compare_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int compare_entry(const void *a, const void *b) {
	pid_t x = ((const struct taskiter_batch_entry *)a)->pid, y = ((const struct taskiter_batch_entry *)b)->pid;

	return (x > y) - (x < y);
}

/* All of them in one read; 0 or -errno. */
static int read_batch(struct taskiter *it, struct taskiter_batch_entry *e, size_t n) {
	int r = taskiter_read_batch(it, e, n);

	for (size_t i = 0; i < n; i++) {
		if (r == 0 && e[i].r < 0)
			r = e[i].r;
		free(e[i].fds);
		free(e[i].process.threads);
	}
	return r;
}

/* One read of kind k of process i through its fd; 0 or -errno. */
static int read_one(int k, int fd, pid_t pid, uint64_t start_time) {
	struct procfs_stat st;
	struct procfs_io io;
	struct procfs_switches sw;
	struct taskiter_process p;
	struct procfs_fd *fds;
	size_t n;
	int r;

	switch (k) {
	case STAT: return procfs_pread_stat(fd, pid, &st);
	case IO: return procfs_pread_io(fd, &io);
	case STATUS: return procfs_pread_switches(fd, &sw);
	case FDS:
		r = procfs_list_fds_at(fd, &fds, &n);
		if (r >= 0)
			free(fds);
		return r;
	case THREADS:
		r = taskiter_read_threads(fd, start_time, &p);
		if (r >= 0)
			free(p.threads);
		return r;
	default:
		r = taskiter_read_files(fd, start_time, &fds, &n, &p);
		if (r >= 0) {
			free(fds);
			free(p.threads);
		}
		return r;
	}
}

int main(int argc, char **argv) {
	static struct taskiter_batch_entry batch[MAX_PIDS], batch_stat[MAX_PIDS];
	static double took[N_READS][ROUNDS];
	static int fd[N_READS][MAX_PIDS];
	static uint64_t start[MAX_PIDS];
	static pid_t pids[MAX_PIDS];
	size_t n = (size_t)argc - 1;
	struct taskiter *it;

	if (argc < 2 || n > MAX_PIDS) {
		fprintf(stderr, "Usage: read-cost PID... (at most %d)\n", MAX_PIDS);
		return 2;
	}
	if (taskiter_new(true, &it) < 0) {
		fprintf(stderr, "read-cost: no BPF task iterators (root, and a kernel with BTF, are needed)\n");
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		struct procfs_stat st;
		pids[i] = (pid_t)atoi(argv[i + 1]);
		if (procfs_read_stat("", pids[i], &st) < 0) {
			fprintf(stderr, "read-cost: no process %d\n", (int)pids[i]);
			return 1;
		}
		start[i] = st.start_time;
		batch[i] = (struct taskiter_batch_entry){ .pid = pids[i], .start_time = st.start_time };
		batch_stat[i] = batch[i];
		batch_stat[i].stat_only = true;
		fd[STAT][i] = procfs_open("", pids[i], 0, "stat");
		fd[IO][i] = procfs_open("", pids[i], 0, "io");
		fd[STATUS][i] = procfs_open("", pids[i], 0, "status");   /* one thread each */
		fd[FDS][i] = procfs_open("", pids[i], 0, "fd");
		fd[THREADS][i] = taskiter_open(it, pids[i], TASKITER_THREADS);
		fd[FILES][i] = taskiter_open(it, pids[i], TASKITER_FILES);
		for (int k = 0; k < BATCH; k++)
			if (fd[k][i] < 0) {
				fprintf(stderr, "read-cost: process %d: gone, or not ours to read\n", (int)pids[i]);
				return 1;
			}
	}
	qsort(batch, n, sizeof(*batch), compare_entry);
	qsort(batch_stat, n, sizeof(*batch_stat), compare_entry);
	for (int round = 0; round < ROUNDS; round++)
		for (int k = 0; k < N_READS; k++) {
			double t0 = cpu_usec();
			if (k >= BATCH && taskiter_can_batch(it) &&
			    read_batch(it, k == BATCH ? batch : batch_stat, n) < 0) {
				fprintf(stderr, "read-cost: a process ended\n");
				return 1;
			}
			for (size_t i = 0; k < BATCH && i < n; i++)
				if (read_one(k, fd[k][i], pids[i], start[i]) < 0) {
					fprintf(stderr, "read-cost: process %d ended\n", (int)pids[i]);
					return 1;
				}
			took[k][round] = (cpu_usec() - t0) / (double)n;
		}
	for (int k = 0; k < N_READS; k++) {
		if (k >= BATCH && !taskiter_can_batch(it))
			continue;   /* a kernel before 6.13 */
		qsort(took[k], ROUNDS, sizeof(double), compare_double);
		printf("%s %.1f\n", names[k], took[k][ROUNDS / 2]);
	}
	taskiter_free(it);
	return 0;
}
