/* SPDX-License-Identifier: MIT */
/*
 * Symbolizer façade: names every location of a profile. Kernel addresses go
 * to /proc/kallsyms; user addresses to the ELF file behind their mapping,
 * opened through /proc/PID/root (so containerised processes resolve) and
 * then the host path, with one symbol table cached per file. Also records
 * each file's GNU build-id in its mappings.
 */
#ifndef BPFPROF_SYMBOLIZE_H
#define BPFPROF_SYMBOLIZE_H

#include <stdbool.h>
#include "profile.h"
#include "sym_jit.h"
#include "sym_jitdump.h"

struct symbolizer;

/*
 * kallsyms_path: normally "/proc/kallsyms"; NULL skips kernel symbols.
 * proc_dir: normally "/proc". Returns NULL with errno ENOMEM.
 */
struct symbolizer *symbolizer__new(const char *kallsyms_path, const char *proc_dir);
void symbolizer__free(struct symbolizer *sy);

/*
 * Read the kernel symbols now, on a thread of their own, instead of when the
 * first profile is symbolized: reading /proc/kallsyms is ~50-90 ms of the
 * kernel formatting 120 000 lines, which then uses idle CPU time while
 * sampling (the thread is SCHED_IDLE where bpfprof has CAP_SYS_NICE, so that
 * it can raise it back when it waits for it) instead of delaying the outputs. The table is a snapshot from this call: kernel code
 * loaded later (modules, BPF programs) is not in it, as it is not in one read
 * at the end of the previous --interval. Returns 0, or -errno when no thread
 * could be started (the symbols are then read when first needed).
 */
int symbolizer__load_kernel_async(struct symbolizer *sy);

/*
 * Read the symbol tables of the files symbolizer__pin holds (the executable
 * files of the processes the run registers) while sampling, on a thread of
 * their own (sym_preload.h; SCHED_IDLE where bpfprof has CAP_SYS_NICE),
 * instead of at the first symbolizer__symbolize, which then takes what was
 * read (waiting for the table under way) and reads the rest itself. The
 * names are the same. Costs CPU during the run and memory until then for
 * every file pinned, sampled or not: at most max_files files, and meant for
 * runs whose targets are few (a command, -p), not -a's every file; nothing
 * is read before after_ns (ns) of the run, so that a short run costs no
 * more CPU than without it. Call before the first pin. Returns 0, or
 * -errno when no thread could be started (the tables are then read at the
 * end as without it).
 */
int symbolizer__preload(struct symbolizer *sy, size_t max_files, uint64_t after_ns);

/*
 * Name kernel frames by the kernel's own symbol lookup (include/kernel_names.h)
 * for just the addresses each profile holds, and take the kernel text's
 * bounds from it, instead of reading /proc/kallsyms whole (40-60 ms of CPU a
 * run). Where that lookup does not load (before 5.16, no CAP_BPF), or fails,
 * /proc/kallsyms is read as without this call. The kernel's lookup sees the
 * kernel code of the moment it is asked (modules, BPF programs loaded since
 * sampling began), where the read is a snapshot.
 */
void symbolizer__kernel_names_by_bpf(struct symbolizer *sy);

/*
 * The kernel text's bounds, _text and _etext (addresses), from the kernel
 * symbols (waiting for symbolizer__load_kernel_async's read, or reading
 * them now). Returns 0, or -ENOENT when they are unreadable (kptr_restrict,
 * no kallsyms) or lack either symbol.
 */
int symbolizer__kernel_text(struct symbolizer *sy, uint64_t *text, uint64_t *etext);

/*
 * Hold the executable files of process `proc` open (through
 * /proc/PID/map_files) while it runs, so that they can be read after it has
 * exited, also when they exist only in its mount namespace or were deleted.
 * Also looks for its JIT files (sym_jit.h). Call when its maps change.
 * Holds at most about half of RLIMIT_NOFILE (raised to the hard limit);
 * past that, files are read by path at the end.
 * Returns 0 or -ENOMEM.
 */
int symbolizer__pin(struct symbolizer *sy, const struct profile *p, uint32_t proc);

/*
 * symbolizer__pin in two halves, for a process captured on another thread
 * than the symbolizer's (main.c's notices' thread, which must not wait for
 * the symbolizer nor touch it): symbolizer__capture opens what the pin
 * would (map_files of each executable file mapping, the JIT files:
 * sym_jit.h) into *c, reading no symbolizer state (thread-safe: only its
 * arguments and its own memory); symbolizer__adopt, on the symbolizer's
 * thread, holds what it opened as pins (or leaves it to c: held already,
 * past the cap), with no I/O but close(2).
 */
#define SYM_CAPTURE_MAX_FILES 64
struct sym_capture {
	struct {
		uint64_t start, end; /* the mapping (its address range) */
		int fd; /* its file, through map_files (owned until adopted); -1: taken */
	} files[SYM_CAPTURE_MAX_FILES];
	size_t nr_files;
	struct jit_capture jit;
};

/*
 * Capture the files of process (pid, start) from its maps text (len bytes
 * of /proc/PID/maps, just read) under proc_dir (borrowed): the map_files
 * descriptor of each executable file mapping, one per file, at most
 * max_files (and SYM_CAPTURE_MAX_FILES), and its JIT files (each at most
 * jit_max_size bytes: sym_jit.h), into *c (release it with
 * sym_capture__release). Allocates nothing (no malloc lock to wait for).
 */
void symbolizer__capture(const char *proc_dir, uint64_t jit_max_size, uint32_t pid, uint32_t start,
			 const char *maps, size_t len, size_t max_files, struct sym_capture *c);

/*
 * Hold what c captured of process `proc` of p (the process, its mappings
 * merged from the same maps text): as symbolizer__pin, within the same
 * cap; each descriptor goes to the mapping of its address range. The
 * descriptors taken leave c. Returns 0 or -ENOMEM.
 */
int symbolizer__adopt(struct symbolizer *sy, const struct profile *p, uint32_t proc,
		      struct sym_capture *c);

/* Close what c still holds (c itself is the caller's). */
void sym_capture__release(struct sym_capture *c);

/*
 * A read-only descriptor of the ELF file behind mapping m of process proc,
 * for copying it (dso_export.h): the one held open since the process's
 * first sample (symbolizer__pin: files of exited processes, of other mount
 * namespaces, deleted files), else m's path inside the process's root,
 * else on the host. When m has a build-id the file must carry the same.
 * Read it with pread (the descriptor may share its offset). Returns the fd
 * (the caller closes it), or -ENOENT (no such file), -ENOEXEC (not ELF),
 * -ESTALE (another build-id), another -errno.
 */
int symbolizer__open_file(struct symbolizer *sy, const struct profile *p, uint32_t proc,
			  const struct profile_mapping *m);

/*
 * Cap on the size of a JIT file (jitdump, perf map) read, in bytes (default
 * JIT_FILE_MAX_SIZE, sym_jitdump.h). Call before the first pin. 0 or -ENOMEM.
 */
int symbolizer__set_jit_max_size(struct symbolizer *sy, uint64_t bytes);

/* Which JIT files were found for this process: a jitdump, a perf map (sym_jit.h). */
void symbolizer__jit_sources(const struct symbolizer *sy, const struct profile_process *pr,
			     bool *dump, bool *map);

/* Whether a jitdump or perf map was found for this process (pid and start: sym_jit.h). */
bool symbolizer__has_jit(const struct symbolizer *sy, const struct profile_process *pr);

/*
 * What the symbolizer holds now, for -v's figures: files held open (pins),
 * symbol tables cached, JIT processes and their descriptors. Each profile
 * symbolized lets go of what the two before it did not use (processes gone,
 * files no longer mapped): a run of weeks holds what its processes use.
 */
/*
 * Between profiles (--interval): the symbol tables kept for the next ones
 * finish their lazy indexes and free the symbols as collected
 * (elf_symtab__settle), so that what a long run holds is their built form.
 * Names do not change.
 */
void symbolizer__settle(struct symbolizer *sy);

struct symbolizer_counts {
	size_t nr_pins, nr_files, nr_jit_procs, nr_jit_fds;
	/* symbolizer__preload: files queued, read (or failed) so far, tables taken by the first profile */
	size_t nr_preload_queued, nr_preload_tried, nr_preloaded;
	/* symbolizer__symbolize_ahead: passes over the profile in hand, locations they named */
	size_t nr_ahead_passes, nr_named_ahead;
};
void symbolizer__counts(const struct symbolizer *sy, struct symbolizer_counts *c);

/*
 * The JIT symbols read for process `proc` of p by the last
 * symbolizer__symbolize (read now if it did not need them), or NULL.
 * Borrowed until the next symbolizer__symbolize or symbolizer__free.
 */
const struct jit_table *symbolizer__jit_table(struct symbolizer *sy, const struct profile *p,
					      uint32_t proc);

/*
 * From the next symbolizer__symbolize on, fetch from debuginfod (when
 * DEBUGINFOD_URLS is set, sym_debuginfod.h) the debug files of the sampled
 * files that have a build-id and no names but .dynsym, before naming. Call
 * it only once sampling has stopped: the fetches use the network and CPU. o
 * may be NULL (defaults); it is copied.
 */
struct debuginfod_opts;
void symbolizer__use_debuginfod(struct symbolizer *sy, const struct debuginfod_opts *o);

/*
 * Whether symbolizer__symbolize demangles the names it finds (default on):
 * each location's func is then the demangled name and sys_func the symbol
 * (profile.h), so that every writer shows the one and pprof keeps both.
 * Off (--no-demangle): func is the symbol, sys_func NULL.
 */
void symbolizer__set_demangle(struct symbolizer *sy, bool on);

/*
 * What symbolizer__symbolize does with demangling on, for profiles named
 * elsewhere (bpfprof xray): every named location's func as people read it,
 * its symbol kept in sys_func; the one place names are demangled, so that
 * the writers agree. Python frames (src_func) are left as they are.
 * Returns 0 or -ENOMEM.
 */
int symbolizer__demangle_names(struct profile *p);

/*
 * Resolve p's locations (calls profile__resolve_locs first) and set func,
 * func_offset and dso where known. Code outside files (anonymous memory,
 * memfd) is named from the process's JIT files (sym_jit.h; is_jit set, dso
 * "[jit]"), re-read for every profile. Unreadable files are reported once each
 * at info level and leave their frames unnamed. From 512 locations on, the
 * files' tables are read and searched in a second thread beside the
 * caller's (a file in one of them only; joined before it returns), the
 * names interned after in the locations' order. Returns 0 or -ENOMEM.
 */
int symbolizer__symbolize(struct symbolizer *sy, struct profile *p);

/*
 * One pass of symbolizer__symbolize's work while sampling, on the thread
 * that owns p (its reader: nothing here locks), so that finalize names only
 * the locations new since the last pass (benchmark 4,
 * docs/BENCHMARKS.md): the stacks added since are resolved
 * (profile__resolve_locs), and the user locations in files whose symbol
 * tables are read already (symbolizer__preload's, taken as they come; no
 * table is read here) are named and demangled as symbolizer__symbolize
 * would name them. Left to symbolizer__symbolize: kernel frames, JIT code,
 * Python and JavaScript frames, the vDSO, files whose tables are not read
 * yet or that debuginfod may give a debug file. The locations of a process
 * whose mappings change after a pass (profile_process.maps_gen) are looked
 * up again, and named again where their mapping is new since
 * (profile__reset_locs). Names, build-ids and the locations' order are those of
 * one symbolizer__symbolize at the end; the passes' state is the
 * symbolizer's until p is symbolized (p must be, or the next pass be
 * given another profile, before p is freed). Returns 0 or -ENOMEM.
 */
int symbolizer__symbolize_ahead(struct symbolizer *sy, struct profile *p);

/*
 * Whether symbolizer__use_debuginfod may be called with fetching enabled
 * before a profile is symbolized (default true): the passes while sampling
 * then leave to symbolizer__symbolize the files whose names debuginfod may
 * replace (.dynsym only, a build-id), and name them otherwise.
 */
void symbolizer__expect_debuginfod(struct symbolizer *sy, bool maybe);

/* p is about to be freed, symbolized or not: the passes' state of it goes (sy may be NULL). */
void symbolizer__forget_profile(struct symbolizer *sy, const struct profile *p);

#endif /* BPFPROF_SYMBOLIZE_H */
