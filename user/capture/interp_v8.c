// SPDX-License-Identifier: MIT
/*
 * V8 behind the interpreter interface (include/interp_v8.h): find reads the
 * v8dbg_* metadata (v8_metadata.h) of each executable file a process maps,
 * once per file (device, inode and path), and records per process which V8
 * it runs; -v names it. attach hands the process's layout to the BPF walk
 * (bpf/v8.bpf.h); merge names the JavaScript frames it recorded
 * (v8_names.h) where they were found in the native stack.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "array.h"
#include "interp.h"
#include "interp_v8.h"
#include "lib_hashmap.h"
#include "log.h"
#include "proc_file.h"
#include "proc_mem.h"
#include "sym_python.h"
#include "v8_copy_walk.h"
#include "v8_metadata.h"
#include "v8_names.h"

/* node's binary is ~100 MB; a file past this is not read */
#define MAX_FILE_SIZE (1ull << 30)

/* An executable file read for metadata */
struct v8_file {
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	char *path;
	int status; /* 0: usable V8; -ENOENT: none; -EINVAL: refused (why); else unreadable */
	bool unreadable; /* not opened or not the mapped file (status: why): never cached */
	bool shape_said; /* the warning on its Code's shape given (once per file) */
	char why[160];
	struct v8_metadata md;
};

/* What a process runs: its file, as last reported */
struct v8_proc {
	uint32_t pid, start;
	int64_t file; /* index into files, -1: no V8 */
	bool attached; /* in the BPF walk's v8_procs, with cfg */
	struct bpfprof_v8_proc cfg; /* what the BPF walk was given: the copies' walk's too */
	struct v8_copy_cache *copy_cache; /* the copies' walk's functions (NULL until a copy) */
	struct proc_mem *mem; /* NULL until a read is needed; the readers' context (vp moves) */
	struct v8_names *names; /* its frames' names, kept once read (NULL until a frame comes) */
	uint64_t gen; /* the profile generation of addrs */
	uint32_t addrs_proc; /* the profile's entry of the process that addrs are in */
	struct u64map addrs; /* hash of (name, file, line) -> frame address in the profile */
	char comm[16];
	struct v8_proc_stats ps;
};

struct interp_v8 {
	struct interp_env env;
	struct v8_file *files;
	size_t nr_files, cap_files;
	struct u64map file_idx; /* key of (dev, inode, path) -> index + 1 into files */
	struct v8_proc *procs;
	size_t nr_procs, cap_procs;
	struct u64map by_pid; /* pid + 1 -> index + 1 into procs */
	struct v8_stats st;
	/* the profile whose frame addresses are cached (a new one each interval) */
	const struct profile *gen_p;
	uint64_t gen_start, gen;
	struct v8_file scratch; /* an unreadable file's outcome, for this find only (FILE_SCRATCH) */
};

/* get_file's index of v->scratch; the process's file in struct v8_proc is one of these or >= 0 */
#define FILE_SCRATCH (-3)
#define FILE_NONE (-1)
#define FILE_UNSAID (-2)

static struct v8_file *file_at(struct interp_v8 *v, int64_t i)
{
	return i == FILE_SCRATCH ? &v->scratch : &v->files[i];
}

static int v8_new(const struct interp_env *env, void **state)
{
	struct interp_v8 *v = calloc(1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	v->env = *env;
	*state = v;
	return 0;
}

static void v8_free(void *state)
{
	struct interp_v8 *v = state;

	if (!v)
		return;
	for (size_t i = 0; i < v->nr_files; i++)
		free(v->files[i].path);
	free(v->files);
	u64map__free(&v->file_idx);
	for (size_t i = 0; i < v->nr_procs; i++) {
		v8_names__free(v->procs[i].names);
		u64map__free(&v->procs[i].addrs);
		free(v->procs[i].copy_cache);
		proc_mem__free(v->procs[i].mem);
	}
	free(v->procs);
	u64map__free(&v->by_pid);
	free(v);
}

/* node, nodeNN, nsolid, libnode.so*: files that ought to carry the metadata (OTel's names) */
static bool node_named(const char *path)
{
	const char *b = strrchr(path, '/');

	size_t n;

	b = b ? b + 1 : path;
	n = strlen(b);
	/* a file deleted since it was mapped (an upgraded node) */
	if (n > 10 && !strcmp(b + n - 10, " (deleted)"))
		n -= 10;
	if (!strncmp(b, "libnode.so", 10) || (n == 6 && !strncmp(b, "nsolid", 6)))
		return true;
	if (n < 4 || strncmp(b, "node", 4))
		return false;
	for (size_t i = 4; i < n; i++)
		if (b[i] < '0' || b[i] > '9')
			return false;
	return true;
}

static uint64_t file_key(const struct profile_mapping *m)
{
	uint64_t dev = ((uint64_t)m->dev_major << 20) | m->dev_minor;

	return hash__mix64(m->inode ^ (dev << 40) ^ ((uint64_t)hash__str(m->path) << 32)) | 1;
}

/* Read file m of process pid into f (status and reason) */
static void read_file(struct interp_v8 *v, uint32_t pid, const struct profile_mapping *m,
		      struct v8_file *f)
{
	char root[96];
	struct stat sb;
	int fd;

	/*
	 * The mapped file itself (map_files: root only), which a deleted or
	 * replaced node binary still is; else its path inside the process's root
	 */
	snprintf(root, sizeof(root), "%s/%u/map_files/%llx-%llx", v->env.proc_dir, pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(root, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0 &&
	    (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > MAX_FILE_SIZE)) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		snprintf(root, sizeof(root), "%s/%u/root", v->env.proc_dir, pid);
		fd = proc_file__open_in(root, m->path, NULL, MAX_FILE_SIZE);
	}
	if (fd < 0) {
		f->status = fd;
		/* too big stays so; anything else may be the process gone: tried again */
		f->unreadable = fd != -EFBIG;
		snprintf(f->why, sizeof(f->why), "cannot open it: %s", proc_file__strerror(fd));
		return;
	}
	if (m->inode && (fstat(fd, &sb) || sb.st_ino != m->inode)) {
		f->status = -ESTALE;
		f->unreadable = true;
		snprintf(f->why, sizeof(f->why), "its path names another file now");
	} else {
		f->status = v8_metadata__read(fd, &f->md, f->why, sizeof(f->why));
		if (f->status == -ENOEXEC)
			snprintf(f->why, sizeof(f->why), "not an ELF file");
		else if (f->status == -ENOMEM)
			snprintf(f->why, sizeof(f->why), "out of memory");
	}
	close(fd);
	if (!f->unreadable && f->status != -EFBIG) {
		v->st.nr_files++;
		v->st.nr_v8_files += f->status == 0;
	}
}

/* The file of mapping m, read once; its index, or -ENOMEM */
static int64_t get_file(struct interp_v8 *v, uint32_t pid, const struct profile_mapping *m)
{
	uint64_t key = file_key(m), idx;
	struct v8_file *f;

	if (u64map__get(&v->file_idx, key, &idx)) {
		f = &v->files[idx - 1];
		if (f->inode == m->inode && f->dev_major == m->dev_major &&
		    f->dev_minor == m->dev_minor && !strcmp(f->path, m->path))
			return (int64_t)idx - 1;
	}
	if (array__grow((void **)&v->files, &v->cap_files, v->nr_files + 1, sizeof(*v->files)))
		return -ENOMEM;
	f = &v->files[v->nr_files];
	memset(f, 0, sizeof(*f));
	f->path = strdup(m->path);
	if (!f->path)
		return -ENOMEM;
	f->inode = m->inode;
	f->dev_major = m->dev_major;
	f->dev_minor = m->dev_minor;
	read_file(v, pid, m, f);
	/*
	 * An unreadable file (the process gone before its root could be
	 * entered, a path naming another file now) is not kept: the next
	 * process that maps it tries again.
	 */
	if (f->unreadable) {
		free(f->path);
		v->scratch = *f;
		v->scratch.path = NULL;
		return FILE_SCRATCH;
	}
	if (u64map__put(&v->file_idx, key, v->nr_files + 1)) {
		free(f->path);
		return -ENOMEM;
	}
	return (int64_t)v->nr_files++;
}

/*
 * The entry of pr's pid into *out (NULL: none); a new one only when add
 * (something to remember: only node processes get one, so that -a over
 * days keeps no entry per pid). Returns 0 or -ENOMEM.
 */
static int get_proc(struct interp_v8 *v, const struct profile_process *pr, bool add,
		    struct v8_proc **out)
{
	uint64_t idx;
	struct v8_proc *vp;

	*out = NULL;
	if (u64map__get(&v->by_pid, (uint64_t)pr->pid + 1, &idx)) {
		*out = &v->procs[idx - 1];
		return 0;
	}
	if (!add)
		return 0;
	if (array__grow((void **)&v->procs, &v->cap_procs, v->nr_procs + 1, sizeof(*v->procs)) ||
	    u64map__put(&v->by_pid, (uint64_t)pr->pid + 1, v->nr_procs + 1))
		return -ENOMEM;
	vp = &v->procs[v->nr_procs++];
	memset(vp, 0, sizeof(*vp));
	vp->pid = pr->pid;
	vp->start = pr->start;
	vp->file = FILE_UNSAID;
	*out = vp;
	return 0;
}

/* -v's line, or the one warning, for file f that process pr runs now (NULL: none) */
static void report(struct interp_v8 *v, const struct profile_process *pr, const struct v8_file *f)
{
	char ver[64], dir[64];

	if (!f)
		return;
	if (!f->status) {
		v->st.nr_procs++;
		pr_info("v8: pid %u (%s): found V8 %s in %s (metadata: %u symbols read)%s\n",
			pr->pid, pr->comm, v8_metadata__version(&f->md, ver, sizeof(ver)), f->path,
			f->md.nr_symbols, f->md.pointer_compression ? ", pointer compression" : "");
		/* -vv: what the BPF walk will be given, for a check against the file */
		pr_debug(
			"v8: pid %u: fp function %d context %d bytecode_array %d bytecode_offset %d; "
			"markers entry %d interpreted %d baseline %d turbofan %d stub %d internal %d; "
			"types JSFunction %d-%d SharedFunctionInfo %d Code %d; JSFunction.shared %d "
			"SharedFunctionInfo.name_or_scope_info %d Script.name %d Map.instance_type %d\n",
			pr->pid, f->md.fp_function, f->md.fp_context, f->md.fp_bytecode_array,
			f->md.fp_bytecode_offset, f->md.ft_entry, f->md.ft_interpreted,
			f->md.ft_baseline, f->md.ft_turbofan, f->md.ft_stub, f->md.ft_internal,
			f->md.type_js_function, f->md.type_js_function_last,
			f->md.type_shared_function_info, f->md.type_code, f->md.js_function_shared,
			f->md.sfi_name_or_scope_info, f->md.script_name, f->md.map_instance_type);
		return;
	}
	if (f->unreadable) {
		/* a process gone before its files could be opened: nothing to say */
		snprintf(dir, sizeof(dir), "%s/%u", v->env.proc_dir, pr->pid);
		if (access(dir, F_OK)) {
			pr_debug("v8: pid %u (%s): gone before %s could be read\n", pr->pid,
				 pr->comm, f->path);
			return;
		}
		v->st.nr_unreadable++;
	} else if (f->status == -EINVAL) {
		v->st.nr_bad++;
	} else if (f->status == -ENOENT || f->status == -ENOEXEC) {
		v->st.nr_no_metadata++;
	} else {
		v->st.nr_unreadable++;
	}
	pr_warn("v8: pid %u (%s): %s: %s%s: profiled without JavaScript frames\n", pr->pid,
		pr->comm, f->path, f->status == -EINVAL ? "unusable V8 metadata: " : "",
		f->status == -ENOENT && !f->unreadable ? "no v8dbg_ metadata" : f->why);
}

/*
 * The BPF walk's layout of build md (struct bpfprof_v8_proc). Returns 0, or
 * -ENOTSUP with *why when the build's offsets do not fit it. *partial: NULL,
 * or why the walk takes no code offsets (frames named without lines where
 * compiled): a shape of Code the metadata does not show.
 */
static int bpf_layout(const struct v8_metadata *md, struct bpfprof_v8_proc *c, const char **why,
		      const char **partial)
{
	int32_t fps[4] = { md->fp_context_or_frame_type, md->fp_function, md->fp_bytecode_array,
			   md->fp_bytecode_offset };
	int32_t low = 0, tsz = md->pointer_compression ? 4 : 8;

	memset(c, 0, sizeof(*c));
	for (int i = 0; i < 4; i++) {
		if (fps[i] == V8MD_ABSENT || fps[i] > -8 || fps[i] < -120 || fps[i] % 8) {
			*why = "frame slots beyond 120 bytes below the frame pointer";
			return -ENOTSUP;
		}
		low = fps[i] < low ? fps[i] : low;
	}
	c->fp_marker = (int8_t)fps[0];
	c->fp_function = (int8_t)fps[1];
	c->fp_bytecode_array = (int8_t)fps[2];
	c->fp_bytecode_offset = (int8_t)fps[3];
	c->fp_low = (int8_t)low;
	if (md->map_instance_type < 0 || md->map_instance_type > 0xff0 ||
	    md->js_function_shared < 0 || md->js_function_shared + tsz > BPFPROF_V8_READ ||
	    (md->js_function_code != V8MD_ABSENT &&
	     (md->js_function_code < 0 || md->js_function_code + tsz > BPFPROF_V8_READ)) ||
	    md->type_js_function < 0 || md->type_js_function_last < md->type_js_function ||
	    md->type_js_function_last > 0xffff || md->heap_object_map != 0) {
		*why = "JSFunction's fields lie beyond what the BPF walk reads";
		return -ENOTSUP;
	}
	c->map_instance_type = (uint16_t)md->map_instance_type;
	c->fn_shared = (uint16_t)md->js_function_shared;
	/* no JSFunction.code (13.x): the function's map word, never a Code: no compiled frames */
	c->fn_code = md->js_function_code >= 0 ? (uint16_t)md->js_function_code : 0;
	c->type_function_first = (uint16_t)md->type_js_function;
	c->type_function_last = (uint16_t)md->type_js_function_last;
	c->smi_shift = (uint8_t)(md->smi_shift_size + 1);
	c->flags = md->pointer_compression ? BPFPROF_V8_COMPRESSED : 0;
	/*
	 * compiled frames: where the Code's kind is known and its start is
	 * either a pointer field (11.1.204+) or right after its header (node 18)
	 */
	if (md->js_function_code >= 0 && md->code_instruction_size >= 0 &&
	    md->code_instruction_size + 4 <= BPFPROF_V8_READ && md->code_flags >= 0 &&
	    md->code_flags + 4 <= BPFPROF_V8_READ && md->code_kind_mask > 0 &&
	    md->code_kind_shift >= 0 && md->code_kind_baseline > 0 &&
	    md->code_kind_baseline < 255 &&
	    ((md->code_instruction_start >= 0 &&
	      md->code_instruction_start + 8 <= BPFPROF_V8_READ) ||
	     (md->code_instruction_start == V8MD_ABSENT && md->code_header_size > 0 &&
	      md->code_header_size < 4096))) {
		if (md->code_instruction_start >= 0) {
			c->flags |= BPFPROF_V8_CODE_START_PTR;
			c->code_start = (uint16_t)md->code_instruction_start;
		} else {
			c->flags |= BPFPROF_V8_CODE_START_INLINE;
			c->code_start = (uint16_t)md->code_header_size;
		}
		c->code_size = (uint16_t)md->code_instruction_size;
		c->code_flags = (uint16_t)md->code_flags;
		c->code_kind_mask = (uint32_t)md->code_kind_mask;
		c->code_kind_shift = (uint8_t)md->code_kind_shift;
		c->kind_baseline = (uint8_t)md->code_kind_baseline;
	} else {
		c->kind_baseline =
			255; /* no Code read is trusted: interpreted or function-only frames */
		*partial =
			md->js_function_code < 0 ?
				"no JSFunction::code in its metadata (V8 13+: a dispatch handle)" :
			md->code_kind_mask <= 0 || md->code_kind_baseline <= 0 ?
				"no CodeKind in its metadata" :
				"where Code's instructions start is not in its metadata";
	}
	return 0;
}

/* Hand (or take back) vp's layout to the BPF walk; warned once on failure */
static void attach(struct interp_v8 *v, struct v8_proc *vp, const struct profile_process *pr,
		   struct v8_file *f)
{
	struct bpfprof_v8_proc cfg;
	const char *why = NULL, *partial = NULL;
	char ver[64];
	int err;

	if (vp->attached || !f || f->status)
		return;
	err = bpf_layout(&f->md, &cfg, &why, &partial);
	if (!err && partial && !f->shape_said) {
		f->shape_said = true;
		pr_warn("v8: %s (V8 %s): compiled JavaScript frames named without lines: %s\n",
			f->path, v8_metadata__version(&f->md, ver, sizeof(ver)), partial);
	}
	if (!err)
		/* -vv: the Code shape the walk was given */
		pr_debug("v8: pid %u: Code's instructions %s %d; its deoptimization data %d, "
			 "positions %d%s; BytecodeArray's positions %d%s\n",
			 pr->pid,
			 cfg.flags & BPFPROF_V8_CODE_START_PTR ? "at the pointer at" :
			 cfg.flags & BPFPROF_V8_CODE_START_INLINE ?
								 "inline after a header of" :
								 "not located (none read), start",
			 cfg.code_start, f->md.code_deoptimization_data,
			 f->md.code_source_position_table,
			 f->md.code_tables_derived ? " (derived from its shape)" : "",
			 f->md.bytecode_array_source_position_table,
			 f->md.bytecode_spt_derived ? " (derived)" : "");
	if (!err && v->env.attach)
		err = v->env.attach(v->env.attach_ctx, INTERP_V8, pr->pid, &cfg);
	if (err) {
		v->st.nr_attach_failed++;
		pr_warn("v8: pid %u (%s): JavaScript frames not walked: %s\n", pr->pid, pr->comm,
			why ? why : strerror(-err));
		return;
	}
	vp->attached = true;
	vp->cfg = cfg;
	v->st.nr_attached++;
}

static int v8_find(void *state, struct profile *p, uint32_t proc)
{
	struct interp_v8 *v = state;
	const struct profile_process *pr = &p->procs[proc];
	const char *last = NULL;
	int64_t found = FILE_NONE, named = FILE_NONE;
	struct v8_file named_copy; /* named's outcome when it was not kept (FILE_SCRATCH) */
	struct v8_proc *vp;

	for (size_t i = 0; i < pr->nr_mappings; i++) {
		const struct profile_mapping *m = &pr->mappings[i];
		const struct v8_file *f;
		int64_t fi;

		if (m->perms[2] != 'x' || m->path[0] != '/' || (last && !strcmp(last, m->path)))
			continue;
		last = m->path;
		fi = get_file(v, pr->pid, m);
		if (fi == -ENOMEM)
			return -ENOMEM;
		f = file_at(v, fi);
		if (!f->unreadable && (f->status == 0 || f->status == -EINVAL)) {
			found = fi;
			if (f->status == 0)
				break;
		} else if (named == FILE_NONE && node_named(m->path)) {
			/* a node without (readable) metadata: said when nothing else is V8 */
			named = fi;
			if (fi == FILE_SCRATCH) {
				named_copy = *f;
				named_copy.path =
					(char *)m->path; /* interned in p, for this call */
			}
		}
	}
	if (found == FILE_NONE)
		found = named;
	if (get_proc(v, pr, found != FILE_NONE, &vp))
		return -ENOMEM;
	if (!vp)
		return 0; /* no V8, nothing said, nothing to remember */
	if (vp->start != pr->start) { /* a reused pid */
		vp->start = pr->start;
		vp->file = FILE_UNSAID;
	}
	if (vp->file != found) {
		if (vp->attached && v->env.attach)
			v->env.attach(v->env.attach_ctx, INTERP_V8, pr->pid, NULL);
		vp->attached = false;
		vp->file = found;
		report(v, pr,
		       found == FILE_NONE    ? NULL :
		       found == FILE_SCRATCH ? &named_copy :
					       &v->files[found]);
	}
	snprintf(vp->comm, sizeof(vp->comm), "%s", pr->comm);
	if (found >= 0)
		attach(v, vp, pr, &v->files[found]);
	return 0;
}

/*
 * vp's memory for a sample's reads, the lines of the last one forgotten;
 * opened where it is not and open says so. 0, -ENOMEM, or -errno of the
 * open (vp->mem is there, its reads fail).
 */
static int mem_begin(const struct interp_v8 *v, struct v8_proc *vp, bool open_it)
{
	char path[64];

	if (!vp->mem && !(vp->mem = proc_mem__new()))
		return -ENOMEM;
	proc_mem__forget(vp->mem);
	if (proc_mem__is_open(vp->mem) || !open_it)
		return 0;
	snprintf(path, sizeof(path), "%s/%u/mem", v->env.proc_dir, vp->pid);
	return proc_mem__open(vp->mem, path);
}

/* vp's summary counters: the first V8_STATS_PROCS processes get a line each */
static struct v8_proc_stats *proc_stats(struct interp_v8 *v, struct v8_proc *vp)
{
	if (!vp->ps.pid) {
		vp->ps.pid = vp->pid;
		snprintf(vp->ps.comm, sizeof(vp->ps.comm), "%s", vp->comm);
	}
	return &vp->ps;
}

/* The frame address of name nm in p's region of proc (a return address); 0: no room */
static uint64_t frame_addr(struct interp_v8 *v, struct v8_proc *vp, struct profile *p,
			   uint32_t proc, const struct v8_name *nm, int *err)
{
	uint64_t key = hash__mix64((uint64_t)(uintptr_t)nm->func ^
				   hash__mix64((uint64_t)(uintptr_t)nm->file + nm->line)) |
		       1,
		 a, start;
	int e;

	(void)v;
	if (u64map__get(&vp->addrs, key, &a))
		return a;
	e = profile__add_pyfunc(p, proc, nm->func, nm->file, nm->line, 1, &start);
	if (e == -ENOMEM)
		*err = e;
	if (e)
		return 0;
	a = start + 1;
	if (u64map__put(&vp->addrs, key, a))
		*err = -ENOMEM;
	return a;
}

/* Whether pc is in anonymous memory (JIT code) or in no mapping read yet (new JIT code) */
static bool in_jit(const struct profile *p, uint32_t proc, uint64_t pc)
{
	int m = profile__find_mapping(p, proc, pc);

	return m < 0 || !p->procs[proc].mappings[m].path[0];
}

/* Room for a merged user stack (interp.h) */
#define MERGED_ROOM (BPFPROF_MAX_STACK + BPFPROF_MAX_PY_FRAMES + 1)
#define INLINED_MAX 8

static int v8_merge(void *state, struct profile *p, uint32_t proc, const struct bpfprof_sample *s,
		    uint64_t *ips, uint16_t *nr_user)
{
	struct interp_v8 *v = state;
	const uint64_t *nat = (const uint64_t *)s->ips + s->nr_kernel, *w = nat + s->nr_user;
	int16_t at[BPFPROF_MAX_USER_STACK];
	struct v8_proc_stats *ps;
	struct v8_proc *vp;
	uint64_t idx;
	size_t o = 0, named = 0;
	bool walked;
	int err = 0;

	if (!u64map__get(&v->by_pid, (uint64_t)s->tgid + 1, &idx))
		return 0;
	vp = &v->procs[idx - 1];
	if (vp->file < 0)
		return 0;
	ps = proc_stats(v, vp);
	ps->samples++;
	if (s->nr_user > BPFPROF_MAX_USER_STACK)
		return 0;
	/* not walked for JavaScript (a stack copy): its compiled frames may be named by pc */
	walked = vp->attached && s->py_stop;
	if (!walked)
		ps->not_walked++;
	else if (s->py_stop == BPFPROF_STAT_V8_NONE || !s->nr_py)
		ps->native++;
	if (!vp->names && !walked)
		return 0;
	/* its reads go to /proc/PID/mem, opened with the namer (one that cannot be fails them) */
	if (mem_begin(v, vp, !vp->names) == -ENOMEM)
		return -ENOMEM;
	if (!vp->names) {
		vp->names =
			v8_names__new(&v->files[vp->file].md, v->files[vp->file].md.bytecode_sizes,
				      v->files[vp->file].md.nr_bytecodes, proc_mem__read, vp->mem);
		if (!vp->names)
			return -ENOMEM;
	}
	/* a new profile (interval): its own functions and frame addresses */
	if (v->gen_p != p || v->gen_start != p->start_ns) {
		v->gen_p = p;
		v->gen_start = p->start_ns;
		v->gen++;
	}
	/* ... and each entry of the process in it (an exec gives the pid a new one: agg.c) */
	if (vp->gen != v->gen || vp->addrs_proc != proc) {
		u64map__free(&vp->addrs);
		memset(&vp->addrs, 0, sizeof(vp->addrs));
		vp->gen = v->gen;
		vp->addrs_proc = proc;
	}
	if (profile__add_py_region(p, proc, SYM_JS_DSO) < 0)
		return -ENOMEM;
	if (!p->procs[proc].py_start)
		return 0;
	memset(at, 0xff, sizeof(at[0]) * s->nr_user);
	for (size_t j = 0; walked && j < s->nr_py && j < BPFPROF_MAX_PY_FRAMES; j++) {
		uint32_t k = BPFPROF_V8_IDX(w[2 * j + 1]);

		if (k < s->nr_user && at[k] < 0)
			at[k] = (int16_t)j;
	}
	for (size_t i = 0; i < s->nr_user && o < MERGED_ROOM; i++) {
		struct v8_name nm[INLINED_MAX];
		int n = 0;

		bool after = false;

		if (at[i] >= 0) {
			uint64_t w1 = w[2 * at[i] + 1];

			/* after: the native leaf stays, the function (not the leaf) follows */
			after = w1 & BPFPROF_V8_AFTER;
			n = v8_names__frame(vp->names, w[2 * at[i]], w1, i == 0 && !after, nm,
					    INLINED_MAX);
			if (n < 0)
				return n;
			if (!n)
				ps->unnamed_frames++;
		}
		/* a leaf no record names (a callee's prologue, a copy's frame): its code may be known */
		if (at[i] < 0 || (after && i == 0)) {
			int m = v8_names__pc(vp->names, nat[i], i == 0, nm, INLINED_MAX);

			if (m < 0)
				return m;
			if (m > 0) {
				n = m;
				after = false;
				ps->by_pc++;
			} else if (after && n > 0 && in_jit(p, proc, nat[0])) {
				/*
				 * Not an Ignition handler or a builtin (node's
				 * text) but JIT code, in the frame's function:
				 * its own code that JSFunction.code does not
				 * name, OSR code (node 22 enters a hot loop's
				 * from each call for a while): the frame stands
				 * for the leaf. (Also a callee's first
				 * instructions before its frame, of code not
				 * seen yet: named as its caller.)
				 */
				after = false;
				ps->osr++;
			}
		}
		if (!n || after)
			ips[o++] = nat[i];
		if (!n)
			continue;
		for (int k = 0; k < n && o < MERGED_ROOM; k++) {
			uint64_t a = frame_addr(v, vp, p, proc, &nm[k], &err);

			if (err)
				return err;
			if (!a)
				continue;
			/* the leaf is looked up at its address, the others at address - 1 */
			ips[o] = o ? a : a - 1;
			o++;
			named++;
			ps->inlined += k + 1 < n;
			ps->no_line += !nm[k].line;
		}
	}
	if (!named) {
		ps->unnamed += walked && s->nr_py;
		return 0;
	}
	ps->with_js++;
	ps->frames += named;
	ps->truncated += s->py_stop == BPFPROF_STAT_V8_LIMIT;
	*nr_user = (uint16_t)o;
	return 1;
}

/* A stack copy's JavaScript frames (interp.h copy_frames), as the BPF walk would record them */
static uint32_t v8_copy_frames(void *state, uint32_t pid, const struct unwind_step_frame *frames,
			       uint32_t nr, const struct unwind_step_stack *stack, uint64_t *words,
			       uint32_t max_frames, uint32_t *stop)
{
	struct interp_v8 *v = state;
	struct v8_proc *vp;
	uint64_t idx;

	*stop = 0;
	if (!u64map__get(&v->by_pid, (uint64_t)pid + 1, &idx))
		return 0;
	vp = &v->procs[idx - 1];
	if (!vp->attached)
		return 0;
	if (mem_begin(v, vp, true))
		return 0;
	if (!vp->copy_cache && !(vp->copy_cache = calloc(1, sizeof(*vp->copy_cache))))
		return 0;
	return v8_copy_walk(&vp->cfg, proc_mem__read, vp->mem, vp->copy_cache, frames, nr, stack,
			    words, max_frames, stop);
}

static void v8_forget(void *state, uint32_t pid)
{
	struct interp_v8 *v = state;
	uint64_t idx;

	/* the entry stays (no removal in u64map) and is reset for a next process of that pid */
	/* its names stay: samples of it still waiting in the ring are named */
	if (u64map__get(&v->by_pid, (uint64_t)pid + 1, &idx)) {
		struct v8_proc *vp = &v->procs[idx - 1];

		if (vp->attached && v->env.attach)
			v->env.attach(v->env.attach_ctx, INTERP_V8, pid, NULL);
		vp->attached = false;
		vp->file = FILE_UNSAID;
		vp->start = 0;
		free(vp->copy_cache);
		vp->copy_cache = NULL;
	}
}

static void v8_stats(const void *state, void *out)
{
	const struct interp_v8 *v = state;
	struct v8_stats *st = out;

	*st = v->st;
	st->nr_proc_stats = 0;
	for (size_t i = 0; i < v->nr_procs; i++) {
		const struct v8_proc *vp = &v->procs[i];

		if (vp->ps.samples && st->nr_proc_stats < V8_STATS_PROCS)
			st->procs[st->nr_proc_stats++] = vp->ps;
		if (vp->names) {
			struct v8_names_stats ns;

			v8_names__stats(vp->names, &ns);
			st->frames += ns.frames;
			st->frame_hits += ns.frame_hits;
			st->funcs += ns.funcs;
			st->scripts += ns.scripts;
			st->read_ns += ns.read_ns;
		}
	}
}

const struct interp_ops interp_v8 = {
	.name = "V8",
	.new = v8_new,
	.free = v8_free,
	.find = v8_find,
	.merge = v8_merge,
	.copy_frames = v8_copy_frames,
	.forget = v8_forget,
	.stats = v8_stats,
	.stats_size = sizeof(struct v8_stats),
};
