// SPDX-License-Identifier: MIT
/*
 * Run a command and write what it cost, from wait4(2)'s rusage of the child:
 * wall time, user and system CPU time, peak RSS. The command's stdout and
 * stderr pass through untouched; the figures go to FILE (or stderr), so
 * scripts need neither GNU time nor bc.
 *
 * usage: runstat [-o FILE] -- COMMAND [ARG...]
 * writes:  "wall_s W user_s U sys_s S maxrss_kb M status X end_rt T"
 *          end_rt: CLOCK_REALTIME seconds when the command had exited, so
 *          that two runstats can time what happens in between
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	struct rusage ru;
	int opt, status;
	double t0, t1, end_rt;
	FILE *f = stderr;
	pid_t pid;

	while ((opt = getopt(argc, argv, "+o:")) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		default:
			fprintf(stderr, "usage: runstat [-o FILE] -- COMMAND [ARG...]\n");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: runstat [-o FILE] -- COMMAND [ARG...]\n");
		return 2;
	}
	t0 = now_s(CLOCK_MONOTONIC);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (!pid) {
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "runstat: cannot run '%s'\n", argv[optind]);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid) {
		perror("wait4");
		return 1;
	}
	t1 = now_s(CLOCK_MONOTONIC);
	end_rt = now_s(CLOCK_REALTIME);
	if (out && !(f = fopen(out, "w"))) {
		perror(out);
		return 1;
	}
	fprintf(f, "wall_s %.6f user_s %.6f sys_s %.6f maxrss_kb %ld status %d end_rt %.6f\n", t1 - t0,
		ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
		ru.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), end_rt);
	if (out)
		fclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
