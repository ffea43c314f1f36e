// SPDX-License-Identifier: MIT
/*
 * Python processes: interpreter discovery, the BPF walk's per-process
 * layout, and Python frames merged into sampled stacks (include/python_procs.h).
 * Layouts and line tables: py_code.h; the frame chain (CPython's
 * Include/internal/pycore_frame.h, Include/cpython/pystate.h): the
 * project's docs/INTERPRETERS.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "array.h"
#include "lib_hashmap.h"
#include "log.h"
#include "py_code.h"
#include "python_procs.h"

/* glibc x86-64: struct pthread's specific_1stblock from the thread pointer (fs base) */
#define GLIBC_TLS_SPECIFIC 0x310
#define LAYOUT_TRIES 20
/* walked processes after which exited ones leave the BPF map (BPFPROF_MAX_PY_PROCS in all) */
#ifndef SWEEP_FIRST
#define SWEEP_FIRST 256
#endif
#define LAYOUT_RETRY_NS (50ull * 1000 * 1000)
/* code objects cached per process at most */
#define MAX_CODES 65536

/* A code object read from the process */
struct code_entry {
	uint64_t addr;
	uint32_t csum;
	bool bad; /* unreadable or malformed: its frames get the marker */
	int32_t first, max; /* first line, largest line of its table */
	char *name, *file;
	uint8_t *linetable;
	size_t linetable_len;
	/* its function in the profile last seen (block start), for profile gen `gen` */
	uint64_t gen;
	uint64_t block;
};

enum marker {
	MARK_TRUNCATED, /* more frames than BPFPROF_MAX_PY_FRAMES */
	MARK_UNREADABLE, /* a code object that could not be read or validated */
	MARK_FULL, /* the process's Python region is full */
	NR_MARKS,
};

static const char *const marker_names[NR_MARKS] = {
	"[older Python frames not shown]",
	"[Python code not readable]",
	"[Python functions past the region]",
};

struct py_proc {
	uint32_t pid;
	bool supported; /* walked in BPF */
	bool warned;
	const struct py_layout *L;
	struct py_types types;
	uint64_t eval_start, eval_end, cold_start, cold_end;
	uint64_t runtime; /* &_PyRuntime */
	struct bpfprof_py_proc cfg; /* what the BPF walk gets, once the layout checks */
	/*
	 * The layout check failed: retried at samples retry_ns apart, up to
	 * LAYOUT_TRIES times (a process caught before the dynamic loader
	 * relocated libpython has no pointers in PyCode_Type yet)
	 */
	bool retry;
	uint32_t tries;
	uint64_t retry_ns;
	uint64_t file_key; /* hash of the interpreter file's path and load bias: a rescan finds the same */
	uint64_t start_time; /* /proc/PID/stat's, at the scan that found the interpreter: pid reuse */
	int mem_fd;
	struct u64map code_idx; /* code address -> index + 1 into codes */
	struct code_entry *codes;
	size_t nr_codes, cap_codes;
	/* the profile whose frames are cached (gen), its frame cache and markers */
	uint64_t gen;
	struct u64map frames; /* hash of (code, instruction, csum) -> frame address */
	uint64_t marks[NR_MARKS];
};

struct python_procs {
	const char *proc_dir;
	python_set_fn set;
	void *ctx;
	struct u64map by_pid; /* pid -> index + 1 into procs */
	struct py_proc *procs;
	size_t nr_procs, cap_procs;
	const struct profile *gen_p; /* the profile of generation gen */
	uint64_t gen_start;
	uint64_t gen;
	size_t nr_walked; /* processes with an entry in the BPF walk's map */
	size_t sweep_at; /* look for exited ones once nr_walked reaches this */
	struct python_stats st;
};

struct python_procs *python_procs__new(const char *proc_dir, python_set_fn set, void *ctx)
{
	struct python_procs *py = calloc(1, sizeof(*py));

	if (!py)
		return NULL;
	py->proc_dir = proc_dir;
	py->set = set;
	py->ctx = ctx;
	py->sweep_at = SWEEP_FIRST;
	return py;
}

static void codes_free(struct py_proc *pp)
{
	for (size_t i = 0; i < pp->nr_codes; i++) {
		free(pp->codes[i].name);
		free(pp->codes[i].file);
		free(pp->codes[i].linetable);
	}
	free(pp->codes);
	pp->codes = NULL;
	pp->nr_codes = pp->cap_codes = 0;
	u64map__free(&pp->code_idx);
	memset(&pp->code_idx, 0, sizeof(pp->code_idx));
}

void python_procs__free(struct python_procs *py)
{
	if (!py)
		return;
	for (size_t i = 0; i < py->nr_procs; i++) {
		codes_free(&py->procs[i]);
		u64map__free(&py->procs[i].frames);
		if (py->procs[i].mem_fd >= 0)
			close(py->procs[i].mem_fd);
	}
	free(py->procs);
	u64map__free(&py->by_pid);
	free(py);
}

void python_procs__stats(const struct python_procs *py, struct python_stats *st)
{
	*st = py->st;
}

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct py_proc *pp = ctx;
	ssize_t n;

	if (pp->mem_fd < 0)
		return -EBADF;
	if (addr > INT64_MAX - len)
		return -EFAULT;
	n = pread(pp->mem_fd, buf, len, (off_t)addr);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* python3.N, python3.Nd, libpython3.N.so.1.0, libpython3.Nd.so: the minor version N, else -1 */
static int interp_minor(const char *path)
{
	const char *base = strrchr(path, '/');
	char *end;
	long minor;

	base = base ? base + 1 : path;
	if (!strncmp(base, "lib", 3))
		base += 3;
	if (strncmp(base, "python3.", 8))
		return -1;
	minor = strtol(base + 8, &end, 10);
	if (end == base + 8 || minor < 0 || minor > 99)
		return -1;
	while (*end >= 'a' && *end <= 'z')
		end++;
	if (*end && *end != '.')
		return -1;
	return (int)minor;
}

struct interp_syms {
	uint64_t runtime, version, eval, eval_size, cold, cold_size, code_type, str_type,
		bytes_type;
	uint64_t bias_vaddr_delta; /* p_vaddr - p_offset of the PT_LOAD at the mapping's offset */
	bool have_load;
};

static void scan_symtab(Elf *e, Elf_Scn *scn, GElf_Shdr *sh, struct interp_syms *s)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; d && i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || !sym.st_value)
			continue;
		name = elf_strptr(e, sh->sh_link, sym.st_name);
		if (!name || (name[0] != '_' && name[0] != 'P'))
			continue;
		if (!strcmp(name, "_PyRuntime"))
			s->runtime = sym.st_value;
		else if (!strcmp(name, "Py_Version"))
			s->version = sym.st_value;
		else if (!strcmp(name, "_PyEval_EvalFrameDefault")) {
			s->eval = sym.st_value;
			s->eval_size = sym.st_size;
		} else if (!strcmp(name, "_PyEval_EvalFrameDefault.cold")) {
			s->cold = sym.st_value;
			s->cold_size = sym.st_size;
		} else if (!strcmp(name, "PyCode_Type"))
			s->code_type = sym.st_value;
		else if (!strcmp(name, "PyUnicode_Type"))
			s->str_type = sym.st_value;
		else if (!strcmp(name, "PyBytes_Type"))
			s->bytes_type = sym.st_value;
	}
}

/* The interpreter symbols of the ELF file open at fd, and its PT_LOAD at file offset off. */
static int read_syms(int fd, uint64_t off, struct interp_syms *s)
{
	Elf_Scn *scn = NULL;
	size_t nph;
	Elf *e;

	memset(s, 0, sizeof(*s));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return -ENOEXEC;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) &&
		    (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
			scan_symtab(e, scn, &sh, s);
	}
	if (!elf_getphdrnum(e, &nph)) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (off >= ph.p_offset && off < ph.p_offset + ph.p_filesz) {
				s->bias_vaddr_delta = ph.p_vaddr - ph.p_offset;
				s->have_load = true;
				break;
			}
		}
	}
	elf_end(e);
	return 0;
}

static struct py_proc *find_proc(struct python_procs *py, uint32_t pid)
{
	uint64_t idx;

	return u64map__get(&py->by_pid, (uint64_t)pid + 1, &idx) ? &py->procs[idx - 1] : NULL;
}

static struct py_proc *get_proc(struct python_procs *py, uint32_t pid)
{
	struct py_proc *pp = find_proc(py, pid);

	if (pp)
		return pp;
	if (array__grow((void **)&py->procs, &py->cap_procs, py->nr_procs + 1,
			sizeof(*py->procs)) ||
	    u64map__put(&py->by_pid, (uint64_t)pid + 1, py->nr_procs + 1))
		return NULL;
	pp = &py->procs[py->nr_procs++];
	memset(pp, 0, sizeof(*pp));
	pp->pid = pid;
	pp->mem_fd = -1;
	return pp;
}

/* Check the layout against the process: PyCode_Type's size and members, 3.13's debug cookie. */
static int check_layout(struct py_proc *pp, uint64_t runtime, const char **why)
{
	static const struct {
		const char *name;
		size_t field;
	} members[] = {
		{ "co_argcount", offsetof(struct py_layout, co_argcount) },
		{ "co_flags", offsetof(struct py_layout, co_flags) },
		{ "co_firstlineno", offsetof(struct py_layout, co_firstlineno) },
		{ "co_filename", offsetof(struct py_layout, co_filename) },
		{ "co_name", offsetof(struct py_layout, co_name) },
		{ "co_qualname", offsetof(struct py_layout, co_qualname) },
		{ "co_linetable", offsetof(struct py_layout, co_linetable) },
		{ "co_lnotab", offsetof(struct py_layout, co_linetable) },
	};
	uint8_t type[256], defs[40 * 64];
	uint64_t basicsize, tp_members;
	int matched = 0;

	if (mem_read(pp, pp->types.code, type, sizeof(type))) {
		*why = "PyCode_Type not readable";
		return -EFAULT;
	}
	memcpy(&basicsize, type + 32, 8);
	memcpy(&tp_members, type + 240, 8);
	if (basicsize != pp->L->code_size) {
		*why = "code objects of another size";
		return -ENOTSUP;
	}
	if (!tp_members || mem_read(pp, tp_members, defs, sizeof(defs))) {
		*why = "PyCode_Type's members not readable";
		return -EFAULT;
	}
	for (size_t i = 0; i < 64; i++) {
		uint64_t name_at, off;
		char name[24] = { 0 };

		memcpy(&name_at, defs + i * 40, 8);
		memcpy(&off, defs + i * 40 + 16, 8);
		if (!name_at)
			break;
		if (mem_read(pp, name_at, name, sizeof(name) - 1))
			continue;
		for (size_t k = 0; k < sizeof(members) / sizeof(members[0]); k++) {
			uint16_t want;

			if (strcmp(name, members[k].name))
				continue;
			memcpy(&want, (const char *)pp->L + members[k].field, sizeof(want));
			if (want != off) {
				*why = "code object members at other offsets";
				return -ENOTSUP;
			}
			matched++;
		}
	}
	if (matched < 5) {
		*why = "PyCode_Type's members not found";
		return -ENOTSUP;
	}
	if (pp->L->version >= 0x030d) {
		char cookie[8];

		if (mem_read(pp, runtime, cookie, sizeof(cookie)) ||
		    memcmp(cookie, "xdebugpy", 8)) {
			*why = "no _Py_DebugOffsets in _PyRuntime";
			return -ENOTSUP;
		}
	}
	return 0;
}

/* One warning per process and interpreter: "python: pid N (comm): what" */
static void warn_once(struct py_proc *pp, const struct profile_process *pr, const char *what)
{
	if (pp->warned)
		return;
	pp->warned = true;
	pr_warn("python: pid %u (%s): %s\n", pp->pid, pr->comm, what);
}

/* The start time of process pid (field 22 of /proc/PID/stat, clock ticks after boot); 0 if gone */
static uint64_t start_time(const struct python_procs *py, uint32_t pid)
{
	char path[PATH_MAX], buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "%s/%u/stat", py->proc_dir, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the comm may hold anything */
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

/* Forget pp's interpreter: out of the BPF map, caches and memory descriptor closed. */
static void forget(struct python_procs *py, struct py_proc *pp)
{
	if (pp->supported) {
		if (py->set)
			py->set(py->ctx, pp->pid, NULL);
		py->nr_walked--;
	}
	pp->supported = false;
	pp->retry = false;
	pp->file_key = 0;
	codes_free(pp);
	u64map__free(&pp->frames);
	memset(&pp->frames, 0, sizeof(pp->frames));
	if (pp->mem_fd >= 0)
		close(pp->mem_fd);
	pp->mem_fd = -1;
}

void python_procs__forget(struct python_procs *py, uint32_t pid)
{
	struct py_proc *pp = find_proc(py, pid);

	if (pp)
		forget(py, pp);
}

/*
 * Once nr_walked reaches sweep_at: the walked processes that have exited (or
 * whose pid another process has now) leave the BPF map, which has room for
 * BPFPROF_MAX_PY_PROCS; the next sweep comes after as many again.
 */
static void sweep(struct python_procs *py)
{
	size_t gone = 0;

	if (py->nr_walked < py->sweep_at)
		return;
	for (size_t i = 0; i < py->nr_procs; i++) {
		struct py_proc *pp = &py->procs[i];

		if (pp->supported && start_time(py, pp->pid) != pp->start_time) {
			forget(py, pp);
			gone++;
		}
	}
	py->sweep_at = py->nr_walked * 2 > SWEEP_FIRST ? py->nr_walked * 2 : SWEEP_FIRST;
	pr_debug("python: %zu exited interpreters forgotten, %zu walked\n", gone, py->nr_walked);
}

/*
 * Check pp's layout against the process and hand it to the BPF walk.
 * Returns 0 when walked, else non-zero (warned once it is final).
 */
static int enable(struct python_procs *py, struct py_proc *pp, const struct profile_process *pr)
{
	const char *why = NULL;
	char msg[256];
	int err;

	pp->tries++;
	err = check_layout(pp, pp->runtime, &why);
	if (err) {
		pp->retry = pp->tries < LAYOUT_TRIES;
		if (pp->retry)
			return err;
		py->st.nr_unsupported++;
		snprintf(
			msg, sizeof(msg),
			"CPython %u.%u's layout is not the one known (%s): profiled without Python "
			"frames",
			pp->L->version >> 8, pp->L->version & 0xff, why);
		warn_once(pp, pr, msg);
		return err;
	}
	pp->retry = false;
	if (py->set && (err = py->set(py->ctx, pr->pid, &pp->cfg))) {
		snprintf(msg, sizeof(msg),
			 "cannot add it to the BPF walk: %s: profiled without Python frames",
			 strerror(-err));
		warn_once(pp, pr, msg);
		return err;
	}
	pp->supported = true;
	py->nr_walked++;
	py->st.nr_procs++;
	for (size_t i = 0; i < 8; i++) {
		if (py->st.versions[i] == pp->L->version)
			break;
		if (!py->st.versions[i]) {
			py->st.versions[i] = pp->L->version;
			break;
		}
	}
	return 0;
}

int python_procs__scan(struct python_procs *py, struct profile *p, uint32_t proc)
{
	const struct profile_process *pr = &p->procs[proc];
	const struct profile_mapping *cand = NULL;
	struct interp_syms s, best = { 0 };
	const struct profile_mapping *best_m = NULL;
	struct py_proc *pp;
	char path[PATH_MAX], msg[256];
	uint64_t bias, key, st, ver = 0;
	uint32_t v32;
	int minor = -1, fd, err;

	/* the interpreter's files: a libpython first (pyenv's python3.N is a shim without the symbols) */
	for (size_t i = 0; i < pr->nr_mappings; i++) {
		const struct profile_mapping *m = &pr->mappings[i];
		int n;

		if (m->perms[2] != 'x' || m->path[0] != '/' || (n = interp_minor(m->path)) < 0)
			continue;
		if (cand && !strcmp(cand->path, m->path))
			continue;
		cand = m;
		snprintf(path, sizeof(path), "%s/%u/map_files/%llx-%llx", py->proc_dir, pr->pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			snprintf(path, sizeof(path), "%s/%u/root%s", py->proc_dir, pr->pid,
				 m->path);
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
		if (fd < 0)
			continue;
		err = read_syms(fd, m->offset, &s);
		close(fd);
		if (err || !s.eval || !s.runtime || !s.code_type || !s.have_load)
			continue;
		best = s;
		best_m = m;
		minor = n;
		break;
	}
	pp = find_proc(py, pr->pid);
	if (!best_m) {
		if (pp && pp->file_key) { /* an exec into something else */
			pr_debug("python: pid %u: no interpreter mapped any more\n", pr->pid);
			forget(py, pp);
		}
		return 0;
	}
	bias = best_m->start - best_m->offset - best.bias_vaddr_delta;
	key = hash__mix64(hash__str(best_m->path) ^ bias) | 1;
	sweep(py);
	pp = get_proc(py, pr->pid);
	if (!pp)
		return -ENOMEM;
	st = start_time(py, pr->pid);
	if (pp->file_key == key && pp->start_time == st) {
		/*
		 * known: a new profile only needs its region. A layout check
		 * that failed (a process caught in its dynamic loader) is
		 * retried at each scan too: the notices' 10, 30 and 70 ms
		 * ones come while the process lives, where a retry at its
		 * records' merge may come after a short one's exit.
		 */
		if (!pp->supported && pp->retry && enable(py, pp, pr))
			return 0;
		return pp->supported ? profile__add_py_region(p, proc, NULL) : 0;
	}
	/* a new interpreter for this pid (first scan, exec, reused pid): forget the old one */
	forget(py, pp);
	pp->file_key = key;
	pp->start_time = st;
	pp->warned = false;
	pp->gen = 0;
	snprintf(path, sizeof(path), "%s/%u/mem", py->proc_dir, pr->pid);
	pp->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (pp->mem_fd < 0) {
		snprintf(msg, sizeof(msg), "cannot open its memory: %s: no Python frames",
			 strerror(errno));
		warn_once(pp, pr, msg);
		return 0;
	}
	if (best.version && !mem_read(pp, best.version + bias, &v32, sizeof(v32)))
		ver = (v32 >> 16) & 0xffff;
	if (!ver)
		ver = 0x0300 | (uint64_t)minor;
	pp->L = py_layout__get((uint16_t)ver);
	if (!pp->L || (minor >= 0 && (int)(ver & 0xff) != minor && best.version)) {
		char v[16];

		snprintf(v, sizeof(v), "%u.%u", (unsigned)(ver >> 8), (unsigned)(ver & 0xff));
		py->st.nr_unsupported++;
		snprintf(
			msg, sizeof(msg),
			"CPython %s is not supported (3.8 to 3.13 are): profiled without Python frames",
			v);
		warn_once(pp, pr, msg);
		return 0;
	}
	pp->types.code = best.code_type + bias;
	pp->types.str = best.str_type ? best.str_type + bias : 0;
	pp->types.bytes = best.bytes_type ? best.bytes_type + bias : 0;
	pp->runtime = best.runtime + bias;
	pp->eval_start = best.eval + bias;
	pp->eval_end = best.eval + bias + (best.eval_size ? best.eval_size : 1);
	pp->cold_start = best.cold ? best.cold + bias : 0;
	pp->cold_end = best.cold ? best.cold + bias + (best.cold_size ? best.cold_size : 1) : 0;
	pp->cfg = (struct bpfprof_py_proc){
		.eval_start = pp->eval_start,
		.eval_end = pp->eval_end,
		.cold_start = pp->cold_start,
		.cold_end = pp->cold_end,
		.tss = pp->runtime + pp->L->rt_tss,
		.code_type = pp->types.code,
		.version = pp->L->version,
		.tls_specific = GLIBC_TLS_SPECIFIC,
		.ts_thread_id = pp->L->ts_thread_id,
		.ts_cframe = pp->L->ts_cframe,
		.ts_frame = pp->L->ts_frame,
		.f_code = pp->L->f_code,
		.f_previous = pp->L->f_previous,
		.f_instr = pp->L->f_instr,
		.f_entry = pp->L->f_entry,
		.co_firstlineno = pp->L->co_firstlineno,
		.co_flags = pp->L->co_flags,
		.co_argcount = pp->L->co_argcount,
		.entry = pp->L->entry,
		.lasti = pp->L->lasti,
	};
	pp->tries = 0;
	pp->retry = false;
	if (enable(py, pp, pr))
		return 0;
	pr_debug("python: pid %u: CPython %u.%u in '%s', eval loop %llx-%llx, cold %llx-%llx\n",
		 pr->pid, (unsigned)(ver >> 8), (unsigned)(ver & 0xff), best_m->path,
		 (unsigned long long)pp->eval_start, (unsigned long long)pp->eval_end,
		 (unsigned long long)pp->cold_start, (unsigned long long)pp->cold_end);
	return profile__add_py_region(p, proc, NULL);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The code object at addr with check sum csum: cached, else read now. NULL on ENOMEM. */
static struct code_entry *get_code(struct python_procs *py, struct py_proc *pp, uint64_t addr,
				   uint32_t csum, int *err)
{
	struct code_entry *c = NULL;
	struct py_code pc;
	uint64_t idx, t0;
	int rerr;

	*err = 0;
	if (u64map__get(&pp->code_idx, addr, &idx)) {
		c = &pp->codes[idx - 1];
		if (c->csum == csum)
			return c;
		/* the address holds another code object now */
		free(c->name);
		free(c->file);
		free(c->linetable);
	} else {
		if (pp->nr_codes >= MAX_CODES)
			codes_free(pp); /* start over rather than grow without end */
		if (array__grow((void **)&pp->codes, &pp->cap_codes, pp->nr_codes + 1,
				sizeof(*pp->codes)) ||
		    u64map__put(&pp->code_idx, addr, pp->nr_codes + 1)) {
			*err = -ENOMEM;
			return NULL;
		}
		c = &pp->codes[pp->nr_codes++];
	}
	memset(c, 0, sizeof(*c));
	c->addr = addr;
	c->csum = csum;
	t0 = now_ns();
	rerr = py_code__read(pp->L, &pp->types, mem_read, pp, addr, &pc);
	py->st.code_reads++;
	if (!rerr && pc.csum != csum)
		rerr = -ESTALE; /* changed since the sample */
	if (!rerr) {
		c->name = strdup(pc.name);
		c->file = strdup(pc.file);
		c->first = pc.firstlineno;
		py_line__find(pp->L->version, pc.linetable, pc.linetable_len, pc.firstlineno, -1,
			      &c->max);
		c->linetable = pc.linetable;
		c->linetable_len = pc.linetable_len;
		pc.linetable = NULL;
		if (!c->name || !c->file) {
			*err = -ENOMEM;
			py_code__release(&pc);
			return NULL;
		}
	} else {
		c->bad = true;
		py->st.code_read_failed++;
		pr_debug("python: pid %u: code object at %llx: %s\n", pp->pid,
			 (unsigned long long)addr, strerror(-rerr));
	}
	py_code__release(&pc);
	py->st.code_read_ns += now_ns() - t0;
	return c;
}

/* The marker's address in p (a one-line function of its own). 0 when there is no room. */
static uint64_t marker(struct profile *p, uint32_t proc, struct py_proc *pp, enum marker k,
		       int *err)
{
	uint64_t start;
	int e;

	if (pp->marks[k])
		return pp->marks[k];
	e = profile__add_pyfunc(p, proc, marker_names[k], "", 0, 1, &start);
	if (e == -ENOMEM)
		*err = e;
	if (e)
		return 0;
	pp->marks[k] = start + 1;
	return pp->marks[k];
}

/* The address of one Python frame (a return address: line = addr - 1 - block start + first). */
static uint64_t frame_addr(struct python_procs *py, struct profile *p, uint32_t proc,
			   struct py_proc *pp, uint64_t code, uint32_t off32, uint32_t csum,
			   int *err)
{
	uint64_t key = hash__mix64(code) ^ hash__mix64(((uint64_t)csum << 32 | off32) + 0x9e37), a;
	struct code_entry *c;
	int32_t line, max;
	int64_t off;

	if (!key)
		key = 1;
	if (u64map__get(&pp->frames, key, &a)) {
		py->st.frame_hits++;
		return a;
	}
	py->st.frame_misses++;
	c = get_code(py, pp, code, csum, err);
	if (!c)
		return 0;
	if (c->bad)
		return marker(p, proc, pp, MARK_UNREADABLE, err);
	max = c->max < c->first ? c->first : c->max;
	if (max - c->first > 65535)
		max = c->first + 65535;
	if (c->gen != pp->gen || !c->block) {
		int e = profile__add_pyfunc(p, proc, c->name, c->file, (uint32_t)c->first,
					    (uint32_t)(max - c->first + 1), &c->block);

		if (e == -ENOMEM) {
			*err = e;
			return 0;
		}
		if (e)
			return marker(p, proc, pp, MARK_FULL, err);
		c->gen = pp->gen;
	}
	off = pp->L->lasti ? (int64_t)(int32_t)off32 - BPFPROF_PY_LASTI_BIAS :
			     (int64_t)off32 - pp->L->code_size;
	line = py_line__find(pp->L->version, c->linetable, c->linetable_len, c->first, off, NULL);
	if (line < c->first || line > max)
		line = c->first;
	a = c->block + (uint64_t)(line - c->first) + 1;
	if (u64map__put(&pp->frames, key, a)) {
		*err = -ENOMEM;
		return 0;
	}
	return a;
}

static bool in_eval(const struct py_proc *pp, uint64_t ip)
{
	return (ip >= pp->eval_start && ip < pp->eval_end) ||
	       (ip >= pp->cold_start && ip < pp->cold_end);
}

int python_procs__merge(struct python_procs *py, struct profile *p, uint32_t proc,
			const struct bpfprof_sample *s, uint64_t *out, uint16_t *nr_user)
{
	uint64_t pyaddr[BPFPROF_MAX_PY_FRAMES];
	bool act_end[BPFPROF_MAX_PY_FRAMES];
	const uint64_t *nat = (const uint64_t *)s->ips + s->nr_kernel, *w = nat + s->nr_user;
	struct py_proc *pp = py->nr_procs ? find_proc(py, s->tgid) : NULL;
	size_t npy = s->nr_py, o = 0, j = 0, i;
	bool truncated;
	int err = 0;

	if (!pp)
		return 0;
	if (!pp->supported && pp->retry && s->time_ns >= pp->retry_ns) {
		pp->retry_ns = s->time_ns + LAYOUT_RETRY_NS;
		if (!enable(py, pp, &p->procs[proc]) && profile__add_py_region(p, proc, NULL) < 0)
			return -ENOMEM;
	}
	if (!pp->supported) {
		if (pp->file_key && !pp->retry)
			py->st.unsupported_samples++;
		return 0;
	}
	py->st.samples++;
	switch (s->py_stop) {
	case 0:
		py->st.not_walked++;
		return 0;
	case BPFPROF_STAT_PY_NO_EVAL:
		py->st.no_eval++;
		return 0;
	case BPFPROF_STAT_PY_NO_TSTATE:
		py->st.no_tstate++;
		return 0;
	default:
		break;
	}
	if (!npy) {
		py->st.walk_failed++;
		return 0;
	}
	/* a new profile (interval): its own functions and frame addresses */
	if (py->gen_p != p || py->gen_start != p->start_ns) {
		py->gen_p = p;
		py->gen_start = p->start_ns;
		py->gen++;
	}
	if (pp->gen != py->gen) {
		u64map__free(&pp->frames);
		memset(&pp->frames, 0, sizeof(pp->frames));
		memset(pp->marks, 0, sizeof(pp->marks));
		pp->gen = py->gen;
	}
	if (!p->procs[proc].py_start && profile__add_py_region(p, proc, NULL) < 0)
		return -ENOMEM;
	if (!p->procs[proc].py_start)
		return 0;
	py->st.with_frames++;
	if (npy > BPFPROF_MAX_PY_FRAMES)
		npy = BPFPROF_MAX_PY_FRAMES;
	for (i = 0; i < npy; i++) {
		uint64_t w0 = w[2 * i], w1 = w[2 * i + 1];

		act_end[i] = w0 & BPFPROF_PY_ACT_END;
		pyaddr[i] = frame_addr(py, p, proc, pp, w0 & ~BPFPROF_PY_ACT_END, (uint32_t)w1,
				       (uint32_t)(w1 >> 32), &err);
		if (err)
			return err;
	}
	py->st.frames += npy;
	truncated = s->py_stop == BPFPROF_STAT_PY_LIMIT;
	py->st.truncated += truncated;
	for (i = 0; i <= s->nr_user; i++) {
		/* an activation's frames go leafward of its eval-loop frame; what is left, at the root */
		bool eval = i < s->nr_user && in_eval(pp, nat[i] - (i > 0));

		if ((eval || i == s->nr_user) && j < npy) {
			while (j < npy) {
				/* the leaf is looked up at its address, the others at address - 1 */
				if (pyaddr[j]) {
					out[o] = o ? pyaddr[j] : pyaddr[j] - 1;
					o++;
				}
				if (act_end[j++] && i < s->nr_user)
					break;
			}
			if (j == npy && truncated) {
				uint64_t m = marker(p, proc, pp, MARK_TRUNCATED, &err);

				if (err)
					return err;
				if (m)
					out[o++] = m;
				truncated = false;
			}
		}
		if (i < s->nr_user)
			out[o++] = nat[i];
	}
	*nr_user = (uint16_t)o;
	return 1;
}
