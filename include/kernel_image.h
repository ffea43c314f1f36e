/* SPDX-License-Identifier: MIT */
/*
 * The running kernel as perf record describes it, read into the profile's
 * model (struct profile_kernel) for the writers, which then never read the
 * host: the text bounds, the loaded modules with the files perf names them
 * by, and the kernel's GNU build-id. Sources, and the perf code each follows:
 *
 *   /proc/kallsyms      _text, _etext (perf's reference relocation symbol and
 *                       the text's end; tools/perf/util/event.c
 *                       perf_event__synthesize_kernel_mmap)
 *   /proc/modules       "name size refs deps state 0xaddr" per module
 *                       (tools/perf/util/machine.c machine__create_modules)
 *   RELEASE/modules.dep "path: deps" per module; '-' and '_' compare equal
 *                       (perf's kmod_path__parse); a path not absolute is
 *                       relative to /lib/modules/RELEASE
 *   /sys/kernel/notes   ELF notes; the NT_GNU_BUILD_ID one
 *                       (tools/perf/util/symbol-elf.c sysfs__read_build_id)
 */
#ifndef BPFPROF_KERNEL_IMAGE_H
#define BPFPROF_KERNEL_IMAGE_H

#include <stdint.h>
#include "profile.h"

/* Test seams: each NULL means the running system's file. */
struct kernel_image_paths {
	const char *kallsyms; /* NULL: "/proc/kallsyms" */
	const char *modules; /* NULL: "/proc/modules" */
	const char *modules_dir; /* NULL: "/lib/modules/RELEASE" (uname -r): modules.dep's folder */
	const char *notes; /* NULL: "/sys/kernel/notes" */
};

/*
 * Fill p->kernel (replacing what it held). text/etext: the caller's kernel
 * text bounds when it has them (symbolizer__kernel_text, so /proc/kallsyms is
 * read once per run); 0 reads the kallsyms file for them, taking the highest
 * kernel address for a missing _etext. A file that cannot be read leaves its
 * part unknown (zero, no modules), logged at debug level, as perf record
 * does; a module missing from modules.dep gets perf's name "[name]".
 * Returns 0 or -ENOMEM.
 */
int kernel_image__read(struct profile *p, uint64_t text, uint64_t etext,
		       const struct kernel_image_paths *paths);

/*
 * The GNU build-id note in a file of ELF notes such as /sys/kernel/notes
 * (Elf_Nhdr in the host's byte order, name and desc padded to 4 bytes).
 * Returns its length (1..20) or a negative errno (-ENOENT when the file has
 * no such note).
 */
int kernel_image__notes_build_id(const char *path, uint8_t id[PROFILE_BUILD_ID_MAX]);

#endif /* BPFPROF_KERNEL_IMAGE_H */
