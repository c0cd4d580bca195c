/* ccxt-fuse: a process whose command line no reader gets, for tests of
 * what ccxd does when a read of another user's /proc/PID/cmdline blocks.
 *
 *   ccxt-fuse serve MOUNTPOINT
 *       Mounts a FUSE file system (allow_other) with one file, "args",
 *       64 KiB long, whose reads are never answered; prints "mounted" and
 *       serves until killed or unmounted.
 *   ccxt-fuse map FILE PADDING  (run under any name)
 *       Maps FILE over the whole pages of its own arguments (between
 *       /proc/self/stat's arg_start and arg_end; PADDING, a long argument,
 *       makes sure there are some, clear of the stack's live frames below
 *       them), prints its pid, and sleeps: whoever reads its
 *       /proc/PID/cmdline then waits for FILE to answer.
 *
 * Built where libfuse3 is (make check installs it); the test that uses it
 * says why it skips elsewhere. */
#define FUSE_USE_VERSION 34
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROOT_INO 1
#define ARGS_INO 2
#define ARGS_SIZE (64 * 1024)

static void attr_of(fuse_ino_t ino, struct stat *st) {
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	if (ino == ROOT_INO) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else {
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = ARGS_SIZE;
	}
}

static void on_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
	struct fuse_entry_param e;

	if (parent != ROOT_INO || strcmp(name, "args") != 0) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ino = ARGS_INO;
	e.attr_timeout = e.entry_timeout = 3600;
	attr_of(ARGS_INO, &e.attr);
	fuse_reply_entry(req, &e);
}

static void on_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
	struct stat st;

	(void)fi;
	if (ino != ROOT_INO && ino != ARGS_INO) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	attr_of(ino, &st);
	fuse_reply_attr(req, &st, 3600);
}

static void on_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
	if (ino != ARGS_INO) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	fuse_reply_open(req, fi);
}

/* Never answered: the reader waits until the file system goes. */
static void on_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
	(void)req;
	(void)ino;
	(void)size;
	(void)off;
	(void)fi;
}

static int serve(const char *mountpoint) {
	static const struct fuse_lowlevel_ops ops = {
		.lookup = on_lookup, .getattr = on_getattr, .open = on_open, .read = on_read,
	};
	char *argv[] = { "ccxt-fuse", "-oallow_other", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(2, argv);
	struct fuse_session *se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	int r;

	if (!se || fuse_set_signal_handlers(se) != 0 || fuse_session_mount(se, mountpoint) != 0) {
		fprintf(stderr, "ccxt-fuse: cannot mount %s\n", mountpoint);
		return 1;
	}
	printf("mounted\n");
	fflush(stdout);
	r = fuse_session_loop(se);
	fuse_session_unmount(se);
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
	return r < 0 ? 1 : 0;
}

/* Fields 48 and 49 of /proc/self/stat: where the arguments lie. */
static int arguments(uintptr_t *start, uintptr_t *end) {
	char buf[4096], *p;
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n;
	int field = 2;

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	for (p++; *p && field < 48; p++)
		if (*p == ' ')
			field++;
	return sscanf(p, " %lu %lu", (unsigned long *)start, (unsigned long *)end) == 2 ? 0 : -1;
}

static int map(const char *file) {
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t start, end, first, last;
	int fd = open(file, O_RDONLY);

	if (fd < 0 || arguments(&start, &end) < 0) {
		fprintf(stderr, "ccxt-fuse: cannot open %s or find the arguments\n", file);
		return 1;
	}
	first = (start + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
	last = end & ~(uintptr_t)(page - 1);
	if (last <= first) {
		fprintf(stderr, "ccxt-fuse: the arguments hold no whole page: give a longer PADDING\n");
		return 1;
	}
	printf("%d\n", (int)getpid());
	fflush(stdout);
	/* From here on nothing reads the arguments or the environment above
	 * them, which would wait for the file as any reader does. */
	if (mmap((void *)first, last - first, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED)
		return 1;
	for (;;)
		pause();
}

int main(int argc, char **argv) {
	if (argc == 3 && strcmp(argv[1], "serve") == 0)
		return serve(argv[2]);
	if (argc == 4 && strcmp(argv[1], "map") == 0)
		return map(argv[2]);
	fprintf(stderr, "Usage: ccxt-fuse serve MOUNTPOINT | map FILE PADDING\n");
	return 2;
}
