// SPDX-License-Identifier: MIT
/*
 * held PID [MAP...]: what process PID holds, in one line: "fds N" and "NAME N" for
 * each BPF map of its own named on the command line after PID, N its
 * entries counted key by key (BPF_MAP_GET_NEXT_KEY), found through the
 * map ids of its descriptors (/proc/PID/fdinfo).
 */
#include <dirent.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long bpf(int cmd, union bpf_attr *a)
{
	return syscall(__NR_bpf, cmd, a, sizeof(*a));
}

int main(int argc, char **argv)
{
	char path[128], line[256];
	unsigned ids[4096];
	int nids = 0, fds = 0;
	struct dirent *de;
	DIR *d;

	if (argc < 2)
		return 2;
	snprintf(path, sizeof(path), "/proc/%s/fd", argv[1]);
	d = opendir(path);
	if (!d)
		return 1;
	while ((de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		fds++;
		snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", argv[1], de->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f)) {
			unsigned id;
			int i;

			if (sscanf(line, "map_id: %u", &id) != 1)
				continue;
			for (i = 0; i < nids && ids[i] != id; i++)
				;
			if (i == nids && nids < 4096)
				ids[nids++] = id;
		}
		if (f)
			fclose(f);
	}
	closedir(d);
	printf("fds %d", fds);
	for (int i = 0; i < nids; i++) {
		union bpf_attr a;
		struct bpf_map_info info;
		unsigned char key[256], next[256];
		long n = 0;
		int fd, want = 0;

		memset(&a, 0, sizeof(a));
		a.map_id = ids[i];
		fd = bpf(BPF_MAP_GET_FD_BY_ID, &a);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = fd;
		a.info.info_len = sizeof(info);
		a.info.info = (unsigned long)&info;
		if (bpf(BPF_OBJ_GET_INFO_BY_FD, &a) || info.key_size > sizeof(key))
			goto next;
		for (int j = 2; j < argc; j++)
			want |= !strcmp(argv[j], info.name);
		if (!want)
			goto next;
		memset(&a, 0, sizeof(a));
		a.map_fd = fd;
		a.next_key = (unsigned long)next;
		while (!bpf(BPF_MAP_GET_NEXT_KEY, &a)) {
			n++;
			memcpy(key, next, info.key_size);
			a.key = (unsigned long)key;
		}
		printf(" %s %ld", info.name, n);
next:
		close(fd);
	}
	printf("\n");
	return 0;
}
