/* The BPF iterators of the sampler against /proc, on real processes: the
 * same threads, counters no further apart than the moments they were read,
 * the same pipes and sockets; and a process that is gone, or not the one
 * asked for, reads -ESRCH. Skipped where BPF cannot be loaded. */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procfs.h"
#include "taskiter.h"
#include "taskiter-records.h"

static struct taskiter *load(void) {
	struct taskiter *it;

	if (taskiter_new(false, &it) < 0)
		SKIP_TEST("no BPF task iterators here (not root, or a kernel without BTF)");
	return it;
}

/* With the batch iterator, or a skip that says why this kernel has none. */
static struct taskiter *load_batch(void) {
	struct taskiter *it;

	if (taskiter_new(true, &it) < 0)
		SKIP_TEST("no BPF task iterators here (not root, or a kernel without BTF)");
	if (!taskiter_can_batch(it)) {
		printf("# SKIP %s\n", taskiter_no_batch(it));
		taskiter_free(it);
		test_exit(77);
	}
	return it;
}

static void *write_null(void *arg) {
	static char buf[4096];
	int fd = open("/dev/null", O_WRONLY);

	(void)arg;
	for (;;)
		if (write(fd, buf, sizeof(buf)) < 0)
			break;
	return NULL;
}

static void *sleep_forever(void *arg) {
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* A child that runs body, which writes to ready once it is set up: its
 * pid then. The child keeps both ends of ready. */
static pid_t spawn_with(void (*body)(int ready)) {
	int ready[2];
	pid_t pid;
	char c;

	if (pipe(ready) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		body(ready[1]);
		_exit(1);
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		pid = -1;
	close(ready[0]);
	return pid;
}

/* Three threads, one of them writing to /dev/null, and a pipe's two ends,
 * one end of a socketpair and a file. */
static void threads_and_files(int ready) {
	int p[2], sv[2];
	pthread_t t;

	if (pipe(p) < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || open("/dev/null", O_RDONLY) < 0)
		return;
	close(sv[1]);
	pthread_create(&t, NULL, sleep_forever, NULL);
	pthread_create(&t, NULL, write_null, NULL);
	if (write(ready, "x", 1) == 1)
		sleep_forever(NULL);
}

/* One thread that holds a pipe and has written to it, and sleeps. */
static void one_pipe(int ready) {
	int p[2];

	prctl(PR_SET_NAME, "single");
	if (pipe(p) == 0 && write(p[1], "hello", 5) == 5 && write(ready, "x", 1) == 1)
		sleep_forever(NULL);
}

static pid_t spawn(void) {
	return spawn_with(threads_and_files);
}

static pid_t spawn_single(void) {
	return spawn_with(one_pipe);
}

static void reap(pid_t pid) {
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int compare_pid_entry(const void *a, const void *b) {
	pid_t x = ((const struct taskiter_batch_entry *)a)->pid, y = ((const struct taskiter_batch_entry *)b)->pid;

	return (x > y) - (x < y);
}

static void reads_threads_as_proc_does(void) {
	struct taskiter *it = load();
	pid_t pid = spawn(), *tids;
	struct procfs_stat st;
	struct procfs_io before, after;
	struct taskiter_process p;
	size_t n_tids;
	int io, fd;

	CHECK(pid > 0);
	usleep(100000);   /* for the writer to write */
	CHECK_INT(procfs_read_stat("", pid, &st), 0);
	io = procfs_open("", pid, 0, "io");
	fd = taskiter_open(it, pid, TASKITER_THREADS);
	CHECK(io >= 0 && fd >= 0);
	CHECK_INT(procfs_pread_io(io, &before), 0);
	CHECK_INT(taskiter_read_threads(fd, st.start_time, &p), 0);
	CHECK_INT(procfs_pread_io(io, &after), 0);
	printf("# %zu threads, wchar %llu <= %llu <= %llu\n", p.n_threads, (unsigned long long)before.wchar,
	       (unsigned long long)p.io.wchar, (unsigned long long)after.wchar);
	CHECK(before.wchar > 4096);
	CHECK(before.wchar <= p.io.wchar && p.io.wchar <= after.wchar);
	CHECK(before.rchar <= p.io.rchar && p.io.rchar <= after.rchar);
	CHECK_INT(procfs_list_tasks("", pid, &tids, &n_tids), 0);
	CHECK_INT(p.n_threads, 3);
	CHECK_INT(n_tids, 3);
	for (size_t i = 0; i < p.n_threads && i < n_tids; i++)
		CHECK_INT(p.threads[i].tid, tids[i]);   /* both by tid */
	/* The writer ran: its time and its switches (a preemption at least). */
	CHECK(p.threads[0].ns > 0 || p.threads[1].ns > 0 || p.threads[2].ns > 0);
	CHECK(p.switches.voluntary + p.switches.involuntary > 0);
	free(tids);
	free(p.threads);
	close(io);
	close(fd);
	reap(pid);
	taskiter_free(it);
}

static int compare_fd(const void *a, const void *b) {
	return ((const struct procfs_fd *)a)->fd - ((const struct procfs_fd *)b)->fd;
}

static void same_fds_as_proc(pid_t pid, struct procfs_fd *bpf, size_t n_bpf) {
	struct procfs_fd *proc;
	size_t n_proc;
	int dir = procfs_open("", pid, 0, "fd");

	CHECK(dir >= 0);
	CHECK_INT(procfs_list_fds_at(dir, &proc, &n_proc), 0);
	close(dir);
	qsort(bpf, n_bpf, sizeof(*bpf), compare_fd);
	qsort(proc, n_proc, sizeof(*proc), compare_fd);
	CHECK_INT(n_bpf, n_proc);
	for (size_t i = 0; i < n_bpf && i < n_proc; i++) {
		CHECK_INT(bpf[i].fd, proc[i].fd);
		CHECK_INT(bpf[i].kind, proc[i].kind);
		CHECK(bpf[i].inode == proc[i].inode);
		CHECK_INT(bpf[i].readable, proc[i].readable);
		CHECK_INT(bpf[i].writable, proc[i].writable);
	}
	free(proc);
}

static void reads_pipes_and_sockets_as_proc_does(void) {
	struct taskiter *it = load();
	pid_t pid = spawn();
	struct procfs_fd *bpf;
	struct taskiter_process single;
	size_t n_bpf;
	struct procfs_stat st;
	int fd;

	CHECK(pid > 0);
	CHECK_INT(procfs_read_stat("", pid, &st), 0);
	fd = taskiter_open(it, pid, TASKITER_FILES);
	CHECK(fd >= 0);
	CHECK_INT(taskiter_read_files(fd, st.start_time, &bpf, &n_bpf, &single), 0);
	CHECK_INT(single.n_threads, 0);   /* three threads: the threads iterator tells of them */
	/* The ready pipe's two ends, the pipe's two ends, the socket, and
	 * whatever pipes the test's stdin, stdout and stderr are. */
	printf("# %zu pipe and socket fds through BPF\n", n_bpf);
	CHECK(n_bpf >= 5);
	same_fds_as_proc(pid, bpf, n_bpf);
	free(bpf);
	close(fd);
	reap(pid);
	taskiter_free(it);
}

static void a_process_gone_or_another_reads_esrch(void) {
	struct taskiter *it = load();
	pid_t pid = spawn();
	struct taskiter_process p;
	struct procfs_stat st;
	struct procfs_fd *fds;
	size_t n;
	int threads, files;

	CHECK(pid > 0);
	CHECK_INT(procfs_read_stat("", pid, &st), 0);
	threads = taskiter_open(it, pid, TASKITER_THREADS);
	files = taskiter_open(it, pid, TASKITER_FILES);
	CHECK(threads >= 0 && files >= 0);
	/* Another start time: the pid is another process's now. */
	CHECK_INT(taskiter_read_threads(threads, st.start_time + 1, &p), -ESRCH);
	CHECK_INT(taskiter_read_files(files, st.start_time + 1, &fds, &n, &p), -ESRCH);
	reap(pid);
	CHECK_INT(taskiter_read_threads(threads, st.start_time, &p), -ESRCH);
	CHECK_INT(taskiter_read_files(files, st.start_time, &fds, &n, &p), 0);
	CHECK_INT(n, 0);
	free(fds);
	close(threads);
	close(files);
	taskiter_free(it);
}

/* A single-threaded process: the files iterator tells all of it. */
static void a_single_thread_comes_with_the_files(void) {
	struct taskiter *it = load();
	pid_t pid = spawn_single();
	struct procfs_stat st;
	struct procfs_io io;
	struct taskiter_process single;
	struct procfs_fd *fds;
	size_t n;
	int fd = taskiter_open(it, pid, TASKITER_FILES), io_fd = procfs_open("", pid, 0, "io");

	CHECK(pid > 0);
	CHECK_INT(procfs_read_stat("", pid, &st), 0);
	CHECK(fd >= 0 && io_fd >= 0);
	CHECK_INT(taskiter_read_files(fd, st.start_time, &fds, &n, &single), 0);
	CHECK_INT(procfs_pread_io(io_fd, &io), 0);
	CHECK_INT(single.n_threads, 1);
	CHECK(single.threads && single.threads[0].tid == pid);
	printf("# wchar %llu through BPF, %llu through /proc; %zu pipe and socket fds\n",
	       (unsigned long long)single.io.wchar, (unsigned long long)io.wchar, n);
	CHECK(single.io.wchar == io.wchar && single.io.wchar >= 6);   /* it sleeps: both alike */
	CHECK(n >= 4);   /* ready's two ends and its own pipe's */
	free(single.threads);
	free(fds);
	close(fd);
	close(io_fd);
	reap(pid);
	taskiter_free(it);
}

/* Several processes in one read: each as /proc tells it, a gone one and
 * one asked with another start time -ESRCH; and the next read, with one
 * process less and one more, tells of those asked then. */
static void a_batch_reads_each_as_proc_does(void) {
	struct taskiter *it = load_batch();
	pid_t many = spawn(), single = spawn_single(), gone = spawn_single();
	struct procfs_stat st_many, st_single, st_gone;
	struct taskiter_batch_entry e[3];
	long tick_ns = 1000000000L / sysconf(_SC_CLK_TCK);

	CHECK(many > 0 && single > 0 && gone > 0);
	usleep(100000);   /* for the writer to write */
	CHECK_INT(procfs_read_stat("", many, &st_many), 0);
	CHECK_INT(procfs_read_stat("", single, &st_single), 0);
	CHECK_INT(procfs_read_stat("", gone, &st_gone), 0);
	reap(gone);
	e[0] = (struct taskiter_batch_entry){ .pid = many, .start_time = st_many.start_time };
	e[1] = (struct taskiter_batch_entry){ .pid = single, .start_time = st_single.start_time };
	e[2] = (struct taskiter_batch_entry){ .pid = gone, .start_time = st_gone.start_time };
	qsort(e, 3, sizeof(*e), compare_pid_entry);
	CHECK_INT(taskiter_read_batch(it, e, 3), 0);
	for (size_t i = 0; i < 3; i++) {
		struct procfs_stat st;
		if (e[i].pid == gone) {
			CHECK_INT(e[i].r, -ESRCH);
			continue;
		}
		CHECK_INT(e[i].r, 0);
		CHECK_INT(procfs_read_stat("", e[i].pid, &st), 0);
		CHECK_INT(e[i].threads, st.threads);
		CHECK_STR(e[i].comm, st.comm);
		CHECK(e[i].last_cpu >= 0 && e[i].last_cpu < sysconf(_SC_NPROCESSORS_CONF));
		same_fds_as_proc(e[i].pid, e[i].fds, e[i].n_fds);
		if (e[i].pid == many) {
			CHECK_INT(e[i].process.n_threads, 0);   /* read through its threads iterator */
		} else {
			struct procfs_io io;
			uint64_t ticks = st.utime + st.stime;
			int io_fd = procfs_open("", single, 0, "io");
			CHECK_INT(e[i].process.n_threads, 1);
			CHECK_INT(procfs_pread_io(io_fd, &io), 0);
			close(io_fd);
			CHECK(e[i].process.io.wchar == io.wchar && io.wchar >= 6);
			/* /proc splits the same nanoseconds into user and system ticks. */
			printf("# %llu ns through BPF, %llu ticks through /proc\n",
			       (unsigned long long)e[i].process.run_ns, (unsigned long long)ticks);
			CHECK(e[i].process.run_ns / (uint64_t)tick_ns <= ticks + 1);
			CHECK(ticks <= e[i].process.run_ns / (uint64_t)tick_ns + 1);
		}
		free(e[i].fds);
		free(e[i].process.threads);
	}

	/* Asked again: the same process with a start time not its own, and our own. */
	struct procfs_stat self;
	CHECK_INT(procfs_read_stat("", getpid(), &self), 0);
	e[0] = (struct taskiter_batch_entry){ .pid = single, .start_time = st_single.start_time + 1 };
	e[1] = (struct taskiter_batch_entry){ .pid = getpid(), .start_time = self.start_time };
	qsort(e, 2, sizeof(*e), compare_pid_entry);
	CHECK_INT(taskiter_read_batch(it, e, 2), 0);
	for (size_t i = 0; i < 2; i++) {
		CHECK_INT(e[i].r, e[i].pid == single ? -ESRCH : 0);
		if (e[i].pid == getpid())
			CHECK_INT(e[i].threads, 1);
		free(e[i].fds);
		free(e[i].process.threads);
	}
	reap(many);
	reap(single);
	taskiter_free(it);
}

/* Asked for its stat alone: the CPU time of all a process's threads
 * between what /proc tells before and after, and no fds; a kernel thread
 * said so; asked for its fds next, the same pid has them. More pids than
 * the map holds: the one past it reads -ENOSPC. */
static void a_batch_reads_stat_alone(void) {
	struct taskiter *it = load_batch();
	pid_t many = spawn();
	struct procfs_stat before, after, kthreadd;
	struct taskiter_batch_entry e[2], *all;
	uint64_t tick_ns = 1000000000 / (uint64_t)sysconf(_SC_CLK_TCK);
	bool have_kthreadd = procfs_read_stat("", 2, &kthreadd) == 0 && (kthreadd.flags & PROCFS_PF_KTHREAD);
	size_t n = 0, full = 0;

	CHECK(many > 2);
	usleep(100000);   /* for its writer to run a few ticks */
	CHECK_INT(procfs_read_stat("", many, &before), 0);
	if (have_kthreadd)
		e[n++] = (struct taskiter_batch_entry){ .pid = 2, .start_time = kthreadd.start_time, .stat_only = true };
	e[n++] = (struct taskiter_batch_entry){ .pid = many, .start_time = before.start_time, .stat_only = true };
	CHECK_INT(taskiter_read_batch(it, e, n), 0);
	CHECK_INT(procfs_read_stat("", many, &after), 0);
	for (size_t i = 0; i < n; i++) {
		CHECK_INT(e[i].r, 0);
		CHECK(e[i].fds == NULL && e[i].n_fds == 0);
		CHECK(e[i].kthread == (e[i].pid == 2));
	}
	CHECK_INT(e[n - 1].threads, 3);
	printf("# %llu ns through BPF, %llu then %llu ticks through /proc\n",
	       (unsigned long long)e[n - 1].run_ns, (unsigned long long)(before.utime + before.stime),
	       (unsigned long long)(after.utime + after.stime));
	CHECK(before.utime + before.stime > 0);
	CHECK(before.utime + before.stime <= e[n - 1].run_ns / tick_ns + 1);
	CHECK(e[n - 1].run_ns / tick_ns <= after.utime + after.stime + 1);

	e[n - 1].stat_only = false;
	CHECK_INT(taskiter_read_batch(it, e, n), 0);
	CHECK_INT(e[n - 1].r, 0);
	same_fds_as_proc(many, e[n - 1].fds, e[n - 1].n_fds);
	for (size_t i = 0; i < n; i++) {
		free(e[i].fds);
		free(e[i].process.threads);
	}

	all = calloc(TASKITER_BATCH_MAX + 1, sizeof(*all));
	CHECK(all != NULL);
	for (size_t i = 0; i <= TASKITER_BATCH_MAX; i++)
		all[i] = (struct taskiter_batch_entry){ .pid = (pid_t)i + 1, .start_time = UINT64_MAX, .stat_only = true };
	CHECK_INT(taskiter_read_batch(it, all, TASKITER_BATCH_MAX + 1), 0);
	for (size_t i = 0; i <= TASKITER_BATCH_MAX; i++) {
		full += all[i].r == -ENOSPC;
		CHECK(all[i].r == -ENOSPC || all[i].r == -ESRCH);   /* no process started then */
		free(all[i].process.threads);
	}
	CHECK_INT(full, 1);
	free(all);

	/* A few again, after so many. */
	e[0] = (struct taskiter_batch_entry){ .pid = many, .start_time = before.start_time, .stat_only = true };
	CHECK_INT(taskiter_read_batch(it, e, 1), 0);
	CHECK_INT(e[0].r, 0);
	CHECK_INT(e[0].threads, 3);
	free(e[0].process.threads);
	reap(many);
	taskiter_free(it);
}

/* Asked for the batch iterator, it is there, or it is not and the reason
 * is; either way the per-process iterators read. Not asked for, it is not
 * loaded, and there is nothing to explain. */
static void the_batch_is_there_or_its_absence_explained(void) {
	struct taskiter *it = load(), *batch;
	struct taskiter_process tp = { .threads = NULL };
	struct procfs_stat self;
	int fd;

	CHECK(!taskiter_can_batch(it));
	CHECK(!taskiter_no_batch(it));
	taskiter_free(it);
	CHECK_INT(taskiter_new(true, &batch), 0);
	printf("# %s\n", taskiter_can_batch(batch) ? "a batch iterator" : taskiter_no_batch(batch));
	CHECK(taskiter_can_batch(batch) == !taskiter_no_batch(batch));
	CHECK_INT(procfs_read_stat("", getpid(), &self), 0);
	fd = taskiter_open(batch, getpid(), TASKITER_THREADS);
	CHECK(fd >= 0);
	CHECK_INT(taskiter_read_threads(fd, self.start_time, &tp), 0);
	CHECK(tp.n_threads >= 1);
	free(tp.threads);
	close(fd);
	taskiter_free(batch);
}

TEST_MAIN(T(the_batch_is_there_or_its_absence_explained), T(reads_threads_as_proc_does), T(reads_pipes_and_sockets_as_proc_does),
	  T(a_single_thread_comes_with_the_files), T(a_process_gone_or_another_reads_esrch),
	  T(a_batch_reads_each_as_proc_does), T(a_batch_reads_stat_alone))
