/* notify-listen PATH SECONDS: stands in for systemd's notification socket.
 * Binds a datagram socket at PATH and prints every message it receives as
 * one line (newlines inside become spaces), for SECONDS at most or until a
 * message holds STOPPING=1. It keeps reading all the while, as systemd does:
 * a sender blocks once a few datagrams sit unread. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	time_t deadline;
	int fd;

	if (argc != 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "Usage: notify-listen PATH SECONDS\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	unlink(argv[1]);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("notify-listen");
		return 1;
	}
	deadline = time(NULL) + atoi(argv[2]);
	while (time(NULL) < deadline) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char buf[4096];
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		for (char *c = buf; *c; c++)
			if (*c == '\n')
				*c = ' ';
		printf("%s\n", buf);
		fflush(stdout);
		if (strstr(buf, "STOPPING=1"))
			break;
	}
	unlink(argv[1]);
	return 0;
}
