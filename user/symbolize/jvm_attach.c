// SPDX-License-Identifier: MIT
/*
 * HotSpot dynamic attach, just enough for Compiler.perfmap
 * (include/jvm_attach.h; OpenJDK's attachListener_linux.cpp and
 * sun/tools/attach/VirtualMachineImpl.java for Linux).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>
#include "jvm_attach.h"
#include "log.h"
#include "proc_file.h"

#define REPLY_MAX 65536

/* SigCgt of /proc/PID/status: whether the process catches signal sig. -errno when unreadable. */
static int catches(const char *proc_dir, uint32_t pid, int sig)
{
	char path[64], line[256];
	unsigned long long mask;
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/status", proc_dir, pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigCgt: %llx", &mask) == 1) {
			ret = !!(mask & (1ULL << (sig - 1)));
			break;
		}
	fclose(f);
	return ret;
}

/* dir inside the process's root, no symlink followed: an O_PATH fd or -errno */
static int open_in_root(const char *proc_dir, uint32_t pid, const char *dir)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char root[64];
	int rfd, fd, err;

	snprintf(root, sizeof(root), "%s/%u/root", proc_dir, pid);
	rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	fd = (int)syscall(SYS_openat2, rfd, dir, &how, sizeof(how));
	err = fd < 0 ? -errno : fd;
	close(rfd);
	return err;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The listener's socket, a socket owned by one of the process's uids or root. */
static bool socket_ready(int tmp_fd, const char *name, const struct proc_ident *id)
{
	struct stat sb;

	if (fstatat(tmp_fd, name, &sb, AT_SYMLINK_NOFOLLOW) || !S_ISSOCK(sb.st_mode))
		return false;
	for (int i = 0; i < 4; i++)
		if (sb.st_uid == id->uids[i])
			return true;
	return sb.st_uid == 0;
}

int jvm_attach__parse_reply(const char *buf, size_t len, int *status)
{
	size_t i = 0;
	int neg = 0, v = 0;

	if (i < len && buf[i] == '-')
		neg = 1, i++;
	if (i >= len || buf[i] < '0' || buf[i] > '9')
		return -EPROTO;
	/* HotSpot's codes are small; anything past 6 digits is not an answer */
	for (; i < len && buf[i] >= '0' && buf[i] <= '9'; i++) {
		v = v * 10 + (buf[i] - '0');
		if (v > 999999)
			return -EPROTO;
	}
	if (i < len && buf[i] != '\n')
		return -EPROTO;
	*status = neg ? -v : v;
	return 0;
}

/* Send the request and read the whole reply (the JVM closes after it), within the deadline. */
static int request(int tmp_fd, const char *sock_name, uint64_t deadline, uint32_t pid)
{
	static const char req[] =
		"1\0jcmd\0Compiler.perfmap\0\0"; /* + the literal's own NUL: 3 args */
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *buf = NULL;
	size_t len = 0;
	int fd, err = 0, status;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", tmp_fd, sock_name);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) && errno != EINPROGRESS) {
		err = -errno;
		goto out;
	}
	for (size_t off = 0; off < sizeof(req);) {
		ssize_t n = send(fd, req + off, sizeof(req) - off, MSG_NOSIGNAL);

		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			err = -errno;
			goto out;
		}
		if (n > 0)
			off += (size_t)n;
		else if (poll(&(struct pollfd){ .fd = fd, .events = POLLOUT }, 1, 50) < 0 &&
			 errno != EINTR) {
			err = -errno;
			goto out;
		}
		if (now_ms() > deadline) {
			err = -ETIMEDOUT;
			goto out;
		}
	}
	buf = malloc(REPLY_MAX + 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		uint64_t now = now_ms();
		ssize_t n;

		if (now >= deadline) {
			err = -ETIMEDOUT;
			goto out;
		}
		if (poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, (int)(deadline - now)) <
			    0 &&
		    errno != EINTR) {
			err = -errno;
			goto out;
		}
		n = recv(fd, buf + len, REPLY_MAX - len, 0);
		if (n == 0 || len == REPLY_MAX)
			break;
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			err = -errno;
			goto out;
		}
		if (n > 0)
			len += (size_t)n;
	}
	buf[len] = '\0';
	if (jvm_attach__parse_reply(buf, len, &status) || status) {
		for (size_t i = 0; i < len; i++)
			if (buf[i] < ' ')
				buf[i] = ' ';
		pr_info("JVM pid %u: Compiler.perfmap answered '%.200s'\n", pid, buf);
		err = -EPROTO;
	}
out:
	free(buf);
	close(fd);
	return err;
}

/*
 * Create .attach_pid<nspid> in dir_fd; 0 and *made set when created, or
 * -errno. A file of that name that is not a regular file we made is never used.
 */
static int make_trigger(int dir_fd, const char *name, bool *made)
{
	int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	close(fd);
	*made = true;
	return 0;
}

int jvm_attach__perfmap(const char *proc_dir, uint32_t pid, unsigned timeout_ms,
			struct jvm_perfmap *pm)
{
	char sock_name[32], trigger[32], map[32], cwd[64];
	struct proc_ident id;
	uint64_t start = now_ms(), deadline = start + timeout_ms;
	bool made = false, requit = false;
	int trig_fd = -1, err;
	struct stat sb;

	pm->tmp_fd = -1;
	pm->created = false;
	err = proc_ident__read(proc_dir, pid, &id);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	pm->nspid = id.nspid;
	err = catches(proc_dir, pid, SIGQUIT);
	if (err <= 0)
		return err ? err : -EPERM;
	pm->tmp_fd = open_in_root(proc_dir, pid, "/tmp");
	if (pm->tmp_fd < 0) {
		err = pm->tmp_fd;
		pm->tmp_fd = -1;
		return err;
	}
	snprintf(sock_name, sizeof(sock_name), ".java_pid%u", id.nspid);
	snprintf(trigger, sizeof(trigger), ".attach_pid%u", id.nspid);
	snprintf(map, sizeof(map), "perf-%u.map", id.nspid);
	pm->created = fstatat(pm->tmp_fd, map, &sb, AT_SYMLINK_NOFOLLOW) && errno == ENOENT;

	if (!socket_ready(pm->tmp_fd, sock_name, &id)) {
		/* the working directory first, as jcmd does; the JVM looks there, then in /tmp */
		snprintf(cwd, sizeof(cwd), "%s/%u/cwd", proc_dir, pid);
		trig_fd = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (trig_fd < 0 || make_trigger(trig_fd, trigger, &made)) {
			if (trig_fd >= 0)
				close(trig_fd);
			trig_fd = fcntl(pm->tmp_fd, F_DUPFD_CLOEXEC, 0);
			err = trig_fd < 0 ? -errno : make_trigger(trig_fd, trigger, &made);
			if (err)
				goto out;
		}
		if (kill((pid_t)pid, SIGQUIT)) {
			/* -EPERM means "does not catch SIGQUIT" here: no right to signal is -EACCES */
			err = errno == EPERM ? -EACCES : -errno;
			goto out;
		}
		/* poll for the socket; SIGQUIT once more half way, as jcmd does */
		while (!socket_ready(pm->tmp_fd, sock_name, &id)) {
			uint64_t now = now_ms();

			if (now >= deadline) {
				err = -ETIMEDOUT;
				goto out;
			}
			if (!requit && now - start > timeout_ms / 2) {
				requit = true;
				if (catches(proc_dir, pid, SIGQUIT) == 1)
					kill((pid_t)pid, SIGQUIT);
			}
			usleep(20000);
		}
	}
	/*
	 * The socket file exists from the JVM's bind(2), connections are taken
	 * from its listen(2): in between they are refused, so try again.
	 */
	while ((err = request(pm->tmp_fd, sock_name, deadline, pid)) == -ECONNREFUSED &&
	       now_ms() < deadline)
		usleep(10000);
out:
	if (made) {
		/* ours only if still a regular file: the JVM removes it itself once attached */
		if (!fstatat(trig_fd, trigger, &sb, AT_SYMLINK_NOFOLLOW) && S_ISREG(sb.st_mode) &&
		    sb.st_uid == 0)
			unlinkat(trig_fd, trigger, 0);
	}
	if (trig_fd >= 0)
		close(trig_fd);
	return err;
}

int jvm_attach__release(struct jvm_perfmap *pm)
{
	char map[32];
	struct stat sb;
	int err = 0;

	if (pm->tmp_fd < 0)
		return 0;
	snprintf(map, sizeof(map), "perf-%u.map", pm->nspid);
	if (pm->created && !fstatat(pm->tmp_fd, map, &sb, AT_SYMLINK_NOFOLLOW) &&
	    S_ISREG(sb.st_mode) && unlinkat(pm->tmp_fd, map, 0))
		err = -errno;
	close(pm->tmp_fd);
	pm->tmp_fd = -1;
	pm->created = false;
	return err;
}
