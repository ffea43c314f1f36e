// SPDX-License-Identifier: MIT
/*
 * The interpreters a run expects at start (include/interp_expect.h): names
 * and "#!" lines, as execve(2) reads them (fs/binfmt_script.c: the
 * interpreter path, then at most one argument; /usr/bin/env's program
 * after its options).
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "interp.h"
#include "interp_expect.h"

/* name's last component */
static const char *base_name(const char *name)
{
	const char *slash = strrchr(name, '/');

	return slash ? slash + 1 : name;
}

/* name, then digits, dots and dashes only (node20, python3.11, python3-dbg) */
static bool versioned(const char *name, const char *stem)
{
	size_t n = strlen(stem);

	if (strncmp(name, stem, n))
		return false;
	for (name += n; *name; name++)
		if (!strchr("0123456789.-dbgm", *name))
			return false;
	return true;
}

uint32_t interp_expect_name(const char *name)
{
	const char *b = base_name(name);

	if (versioned(b, "python"))
		return 1u << INTERP_PYTHON;
	if (versioned(b, "node") || !strcmp(b, "nodejs"))
		return 1u << INTERP_V8;
	if (!strcmp(b, "java"))
		return 1u << INTERP_HOTSPOT;
	return 0;
}

/* cmd's file: cmd itself with a '/', else the first executable of that name in path */
static bool resolve(const char *cmd, const char *path, char *out, size_t size)
{
	const char *p, *end;

	if (strchr(cmd, '/')) {
		snprintf(out, size, "%s", cmd);
		return true;
	}
	for (p = path ? path : ""; *p; p = *end ? end + 1 : end) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		if ((size_t)snprintf(out, size, "%.*s/%s", (int)(end - p), end > p ? p : ".", cmd) <
			    size &&
		    !access(out, X_OK))
			return true;
	}
	return false;
}

/* The interpreter a "#!" line (line, its first line) names: its path, or env's program */
static uint32_t shebang(char *line)
{
	char *save = NULL, *interp, *arg;

	line[strcspn(line, "\n")] = '\0';
	interp = strtok_r(line + 2, " \t", &save);
	if (!interp)
		return 0;
	if (strcmp(base_name(interp), "env"))
		return interp_expect_name(interp);
	/* env's options (-S, -i, -u NAME is not followed: a guess) */
	while ((arg = strtok_r(NULL, " \t", &save)) && arg[0] == '-')
		;
	return arg ? interp_expect_name(arg) : 0;
}

uint32_t interp_expect_command(const char *cmd, const char *path)
{
	char file[PATH_MAX], line[256];
	uint32_t kinds = interp_expect_name(cmd);
	FILE *f;

	if (kinds || !resolve(cmd, path ? path : getenv("PATH"), file, sizeof(file)))
		return kinds;
	f = fopen(file, "re");
	if (!f)
		return 0;
	if (fgets(line, sizeof(line), f) && !strncmp(line, "#!", 2))
		kinds = shebang(line);
	fclose(f);
	return kinds;
}

/* proc_pid_readlink's mark of an executable unlinked since (d_path) */
#define DELETED " (deleted)"

uint32_t interp_expect_pid(const char *proc_dir, uint32_t pid)
{
	char link[PATH_MAX], exe[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "%s/%u/exe", proc_dir, pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	/* a file replaced since its exec (an upgrade) is still the interpreter it was */
	if ((size_t)n > strlen(DELETED) && !strcmp(exe + n - strlen(DELETED), DELETED))
		exe[n - strlen(DELETED)] = '\0';
	return interp_expect_name(exe);
}

uint32_t interp_expect_running(const char *proc_dir, uint32_t want)
{
	DIR *d = opendir(proc_dir);
	struct dirent *de;
	uint32_t kinds = 0;

	if (!d)
		return 0;
	while ((kinds & want) != want && (de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid || pid > UINT32_MAX)
			continue;
		kinds |= interp_expect_pid(proc_dir, (uint32_t)pid);
	}
	closedir(d);
	return kinds & want;
}
