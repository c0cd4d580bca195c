/* ccxd-send SOCKET [MESSAGE...]: sends each MESSAGE as it is, followed by a
 * NUL, to a Varlink socket and prints each reply on a line of its own. For
 * tests that need to say what ccxctl never would. With no MESSAGE, sends
 * standard input unterminated (a half-written message) and prints whatever
 * comes back before the daemon hangs up or 2 seconds pass. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int connect_to(const char *path) {
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	return fd;
}

/* Prints what arrives up to one NUL; returns 0 when a whole reply came. */
static int print_reply(int fd) {
	char c;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 2000) <= 0 || read(fd, &c, 1) != 1) {
			putchar('\n');
			return 1;
		}
		if (c == '\0')
			break;
		putchar(c);
	}
	putchar('\n');
	return 0;
}

int main(int argc, char **argv) {
	int fd, rc = 0;

	if (argc < 2) {
		fprintf(stderr, "Usage: ccxd-send SOCKET [MESSAGE...]\n");
		return 2;
	}
	fd = connect_to(argv[1]);
	if (fd < 0) {
		fprintf(stderr, "ccxd-send: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (argc == 2) {
		char buf[65536];
		ssize_t n;
		while ((n = read(0, buf, sizeof(buf))) > 0)
			if (send(fd, buf, (size_t)n, MSG_NOSIGNAL) != n)
				break;
		print_reply(fd);
		return 0;
	}
	for (int i = 2; i < argc; i++) {
		if (send(fd, argv[i], strlen(argv[i]) + 1, MSG_NOSIGNAL) < 0) {
			perror("ccxd-send: send");
			return 1;
		}
		rc |= print_reply(fd);
	}
	close(fd);
	return rc;
}
