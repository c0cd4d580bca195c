/* ccxt-hold N SECONDS: N idle processes in pairs, each pair joined by a pipe
 * and a Unix socketpair, that sleep for SECONDS. The crowd a sampler must
 * look through without being slowed by it. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
	int n, seconds;

	if (argc != 3 || (n = atoi(argv[1])) < 2 || (seconds = atoi(argv[2])) < 1) {
		fprintf(stderr, "Usage: ccxt-hold N SECONDS\n");
		return 2;
	}
	for (int i = 0; i < n / 2; i++) {
		int p[2], sv[2];
		if (pipe(p) < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
			perror("ccxt-hold");
			break;
		}
		for (int side = 0; side < 2; side++) {
			pid_t pid = fork();
			if (pid < 0) {
				perror("ccxt-hold: fork");
				break;
			}
			if (pid == 0) {
				close(p[side]);
				close(sv[side]);
				sleep((unsigned)seconds);
				_exit(0);
			}
		}
		close(p[0]);
		close(p[1]);
		close(sv[0]);
		close(sv[1]);
	}
	while (wait(NULL) > 0)
		;
	return 0;
}
