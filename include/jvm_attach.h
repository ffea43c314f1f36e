/* SPDX-License-Identifier: MIT */
/*
 * Asking a running HotSpot JVM (OpenJDK 17+) for its perf map, as
 * `jcmd PID Compiler.perfmap` does, so that its JIT-compiled Java methods
 * are named with no step of the user's. The dynamic attach protocol of
 * HotSpot on Linux (src/hotspot/os/linux/attachListener_linux.cpp and
 * src/jdk.attach/linux/classes/sun/tools/attach/VirtualMachineImpl.java):
 *
 *   1. unless the JVM listens already on <tmp>/.java_pid<nspid>, create
 *      .attach_pid<nspid> in its working directory (else <tmp>) and send it
 *      SIGQUIT: a JVM that finds the file starts its attach listener instead
 *      of printing a thread dump;
 *   2. connect to the UNIX socket <tmp>/.java_pid<nspid> and send
 *      "1\0jcmd\0Compiler.perfmap\0\0\0" (protocol version, command, three
 *      arguments); the reply is "<status>\n<output>", status 0 on success.
 *
 * <tmp> is /tmp inside the process's root (/proc/PID/root), <nspid> its pid
 * in its own pid namespace (NSpid:), so JVMs in containers work. The JVM
 * then writes /tmp/perf-<nspid>.map, which sym_jit.h reads.
 *
 * Safety: SIGQUIT is sent only to a process that catches it (SigCgt in
 * /proc/PID/status: a JVM run with -Xrs, or anything else, would die of
 * it); directories are opened inside the process's root without following
 * symlinks (openat2 RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS); the attach file
 * is created O_EXCL|O_NOFOLLOW and removed only if it is still ours; the
 * socket must be owned by one of the process's uids or root; the reply is
 * read with a timeout and a size cap.
 */
#ifndef BPFPROF_JVM_ATTACH_H
#define BPFPROF_JVM_ATTACH_H

#include <stdbool.h>
#include <stdint.h>

/* Time one JVM gets to start its attach listener and answer, ms (jcmd waits up to 10 s). */
#define JVM_ATTACH_TIMEOUT_MS 3000

/* What an attach left behind: the perf map to remove once read, if it made it. */
struct jvm_perfmap {
	int tmp_fd; /* O_PATH fd of the process's /tmp, -1 when none */
	uint32_t nspid;
	bool created; /* the map did not exist before: remove it */
};

/*
 * Ask the JVM of process pid (root pid namespace) to write its perf map,
 * waiting at most timeout_ms. Fills *pm (release it with
 * jvm_attach__release, also on failure). Returns 0 when the JVM answered
 * with status 0, -ESRCH (gone), -EPERM (the process does not catch
 * SIGQUIT: never signalled), -EACCES (no right to signal it: CAP_KILL or
 * its uid needed), -ETIMEDOUT (no listener came up, or no answer), -EPROTO (an answer other than 0: the JVM's message is printed at
 * info level), or another -errno.
 */
int jvm_attach__perfmap(const char *proc_dir, uint32_t pid, unsigned timeout_ms,
			struct jvm_perfmap *pm);

/*
 * Remove the perf map when the attach created it (through the directory
 * fd, so also after the process exited), and close. Returns 0 or -errno.
 */
int jvm_attach__release(struct jvm_perfmap *pm);

/*
 * Parse a reply of the attach protocol: status (the decimal number before
 * the first '\n'). Returns 0 and sets *status, or -EPROTO.
 */
int jvm_attach__parse_reply(const char *buf, size_t len, int *status);

#endif /* BPFPROF_JVM_ATTACH_H */
