// SPDX-License-Identifier: MIT
/*
 * XRay trace → struct profile (include/read_xray.h). FDR version 1 follows
 * "XRay Flight Data Recorder Trace Format" (llvm/docs/XRayFDRFormat.rst in
 * llvm-project): fixed-size thread buffers of the
 * header's buffer_size, each NewBuffer WallClockTime NewCPUId Body* and
 * EndOfBuffer, whose remaining bytes are skipped whatever they hold; the
 * NewBuffer thread id is 2 bytes. Versions 2–5 follow what LLVM's runtime
 * writes and llvm-xray reads: each thread block is a BufferExtents record
 * (kind 7, u64 size of the bytes after it) then that many bytes, packed; the
 * thread id is 4 bytes; PID records (kind 9) name the process; EndOfBuffer is
 * invalid; custom events carry an absolute TSC before version 5 (plus a CPU
 * from version 4) and a signed 32-bit TSC delta from version 5, as typed
 * events (kind 8) do. Basic mode: 32-byte records {u16 type, u8 cpu, u8
 * action, i32 function, u64 tsc, u32 tid, u32 pid, 8 pad}, type 1 being an
 * argument payload. Bitfields are decoded with the spec's masks and shifts.
 *
 *   FDR record, first byte:  LE: bit 0 = 1 metadata / 0 function, bits 1–7 kind
 *                            BE: bit 7 = discriminant, bits 0–6 kind
 *   function word (u32):     LE: action = (w >> 1) & 7, id = w >> 4
 *                            BE: action = (w >> 28) & 7, id = w & 0x0FFFFFFF
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "array.h"
#include "lib_cursor.h"
#include "lib_hashmap.h"
#include "log.h"
#include "read_xray.h"

#define HDR_SIZE 32
#define FN_SIZE 8
#define MD_SIZE 16
#define BASIC_REC_SIZE 32
#define MAX_FUNC_ID (1U << 28) /* FDR ids are 28 bits; basic-mode ids beyond are damage */
#define MAX_WARNINGS 10 /* per file; the rest are counted */
#define NONE UINT32_MAX

enum trace_type { TYPE_BASIC = 0, TYPE_FDR = 1 };
enum fn_action { ACT_ENTRY = 0, ACT_EXIT = 1, ACT_TAIL_EXIT = 2, ACT_ENTRY_ARGS = 3 };
enum md_kind {
	MD_NEW_BUFFER = 0,
	MD_END_OF_BUFFER = 1,
	MD_NEW_CPU = 2,
	MD_TSC_WRAP = 3,
	MD_WALLTIME = 4,
	MD_CUSTOM_EVENT = 5,
	MD_CALL_ARG = 6,
	MD_BUFFER_EXTENTS = 7,
	MD_TYPED_EVENT = 8,
	MD_PID = 9,
};

/* Call-tree node: one per distinct (process, call path). */
struct node {
	uint32_t parent; /* node index, NONE for a process root */
	uint32_t func; /* function id; the process index for a root */
	uint32_t proc;
	uint32_t depth; /* frames from the root (root: 0) */
	uint64_t self_ticks; /* of the file being read; flushed into the profile per file */
	uint64_t calls;
};

struct frame {
	uint32_t node, func;
	uint32_t fs; /* index into r->fstats */
	uint64_t entry_tsc;
	uint64_t child_ticks; /* time spent in instrumented callees */
	uint32_t last_func, last_node, last_fs; /* one-entry cache of this frame's child lookup */
};

struct thread {
	uint32_t pid, tid;
	bool used;
	uint32_t root;
	struct frame *stack;
	uint32_t depth, cap;
	uint64_t last_tsc;
};

struct xray_reader {
	struct profile *p;
	const struct xray_instr_map *map;
	struct node *nodes;
	size_t nr_nodes, cap_nodes;
	struct idxmap node_map; /* node indices by (parent, func) */
	uint32_t *proc_root; /* [profile proc index] → root node, NONE */
	size_t nr_proc_root;
	struct thread *threads; /* per file, open addressing on (pid, tid) */
	size_t thr_mask, nr_threads;
	struct xray_func_stats *fstats; /* in order of first call */
	size_t nr_fstats, cap_fstats;
	struct idxmap fs_map; /* function id → fstats index */
	struct xray_read_stats st;
	uint64_t *addr_sorted; /* {address, id} pairs sorted by address, built on demand */
	char namebuf[32];
	/* the file being read */
	const char *name;
	const uint8_t *base;
	uint64_t freq;
	double ns_per_tick;
	uint16_t version;
	bool swap, file_be;
	unsigned warnings;
	uint64_t unknown_md;
};

/* Per-buffer decoding state. */
struct block {
	uint32_t pid, tid;
	struct thread *th;
	uint64_t tsc;
	bool have_tid, have_tsc;
};

static uint16_t get16(const struct xray_reader *r, const uint8_t *p)
{
	return bo__load16(p, r->swap);
}

static uint32_t get32(const struct xray_reader *r, const uint8_t *p)
{
	return bo__load32(p, r->swap);
}

static uint64_t get64(const struct xray_reader *r, const uint8_t *p)
{
	return bo__load64(p, r->swap);
}

static size_t off_of(const struct xray_reader *r, const uint8_t *p)
{
	return (size_t)(p - r->base);
}

__attribute__((format(printf, 3, 4))) static void bad(struct xray_reader *r, const uint8_t *at,
						      const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (++r->warnings > MAX_WARNINGS) {
		if (r->warnings == MAX_WARNINGS + 1)
			pr_warn("xray: '%s': more problems, not shown\n", r->name);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_warn("xray: '%s': offset %zu: %s\n", r->name, off_of(r, at), msg);
}

/* array__grow returning the array: NULL when out of memory (the old one untouched) */
static void *grow(void *ptr, size_t *cap, size_t need, size_t elem)
{
	return array__grow(&ptr, cap, need, elem) ? NULL : ptr;
}

/* ---- call tree ---- */

static uint32_t node_hash(uint32_t parent, uint32_t func)
{
	uint64_t k = ((uint64_t)parent << 32 | func) * 0x9E3779B97F4A7C15ULL;

	return (uint32_t)(k >> 29);
}

static uint32_t node_hash_of(void *ctx, uint32_t idx)
{
	const struct node *n = &((struct xray_reader *)ctx)->nodes[idx];

	return node_hash(n->parent, n->func);
}

/* Child `func` of node `parent` (NONE: a root, func = proc), created if new; NONE on ENOMEM. */
static uint32_t node_get(struct xray_reader *r, uint32_t parent, uint32_t func, uint32_t proc)
{
	uint32_t h = node_hash(parent, func), pos;
	struct node *n;

	if (idxmap__reserve(&r->node_map, node_hash_of, r))
		return NONE;
	idxmap__for_each(&r->node_map, h, pos) {
		n = &r->nodes[r->node_map.slots[pos]];
		if (n->parent == parent && n->func == func)
			return r->node_map.slots[pos];
	}
	if (r->nr_nodes >= NONE - 1)
		return NONE;
	n = grow(r->nodes, &r->cap_nodes, r->nr_nodes + 1, sizeof(*r->nodes));
	if (!n)
		return NONE;
	r->nodes = n;
	n = &r->nodes[r->nr_nodes];
	*n = (struct node){ .parent = parent,
			    .func = func,
			    .proc = proc,
			    .depth = parent == NONE ? 0 : r->nodes[parent].depth + 1 };
	idxmap__insert(&r->node_map, h, (uint32_t)r->nr_nodes);
	return (uint32_t)r->nr_nodes++;
}

static uint32_t fs_hash(uint32_t id)
{
	return id * 0x9E3779B1U;
}

static uint32_t fs_hash_of(void *ctx, uint32_t idx)
{
	return fs_hash(((struct xray_reader *)ctx)->fstats[idx].id);
}

/* Slot of function id's stats in r->fstats, created if new; NONE on ENOMEM. */
static uint32_t func_stats_slot(struct xray_reader *r, uint32_t id)
{
	struct xray_func_stats *f;
	uint32_t pos;

	if (idxmap__reserve(&r->fs_map, fs_hash_of, r))
		return NONE;
	idxmap__for_each(&r->fs_map, fs_hash(id), pos)
		if (r->fstats[r->fs_map.slots[pos]].id == id)
			return r->fs_map.slots[pos];
	f = grow(r->fstats, &r->cap_fstats, r->nr_fstats + 1, sizeof(*f));
	if (!f)
		return NONE;
	r->fstats = f;
	r->fstats[r->nr_fstats] = (struct xray_func_stats){ .id = id };
	idxmap__insert(&r->fs_map, fs_hash(id), (uint32_t)r->nr_fstats);
	return (uint32_t)r->nr_fstats++;
}

/* ---- threads ---- */

static struct thread *thread_get(struct xray_reader *r, uint32_t pid, uint32_t tid)
{
	size_t h, i;
	struct thread *t;

	if ((r->nr_threads + 1) * 2 > r->thr_mask + 1) {
		size_t n = r->thr_mask ? (r->thr_mask + 1) * 2 : 64;
		struct thread *nt = calloc(n, sizeof(*nt));

		if (!nt)
			return NULL;
		for (i = 0; r->threads && i <= r->thr_mask; i++) {
			if (!r->threads[i].used)
				continue;
			h = ((size_t)r->threads[i].tid * 31 + r->threads[i].pid) & (n - 1);
			while (nt[h].used)
				h = (h + 1) & (n - 1);
			nt[h] = r->threads[i];
		}
		free(r->threads);
		r->threads = nt;
		r->thr_mask = n - 1;
	}
	h = ((size_t)tid * 31 + pid) & r->thr_mask;
	while (r->threads[h].used) {
		t = &r->threads[h];
		if (t->pid == pid && t->tid == tid)
			return t;
		h = (h + 1) & r->thr_mask;
	}
	t = &r->threads[h];
	*t = (struct thread){ .pid = pid, .tid = tid, .used = true, .root = NONE };
	r->nr_threads++;
	return t;
}

/* Root node of the process with this pid, creating the process (and its mappings). */
static uint32_t proc_root(struct xray_reader *r, uint32_t pid)
{
	bool created;
	int proc = profile__process(r->p, pid, &created);
	size_t i;

	if (proc < 0)
		return NONE;
	if (created) {
		struct profile_process *pr = &r->p->procs[proc];
		const char *comm = r->map ? strrchr(xray_instr_map__path(r->map), '/') : NULL;

		comm = comm ? comm + 1 : r->map ? xray_instr_map__path(r->map) : "xray";
		snprintf(pr->comm, sizeof(pr->comm), "%s", comm);
		if (r->map && xray_instr_map__add_mappings(r->map, r->p, (uint32_t)proc))
			return NONE;
	}
	if ((size_t)proc >= r->nr_proc_root) {
		size_t cap = r->nr_proc_root;
		uint32_t *a = grow(r->proc_root, &cap, (size_t)proc + 1, sizeof(*a));

		if (!a)
			return NONE;
		for (i = r->nr_proc_root; i < cap; i++)
			a[i] = NONE;
		r->proc_root = a;
		r->nr_proc_root = cap;
	}
	if (r->proc_root[proc] == NONE)
		r->proc_root[proc] = node_get(r, NONE, (uint32_t)proc, (uint32_t)proc);
	return r->proc_root[proc];
}

/* Close the innermost frame at tsc; counted: a real exit (a call), else closed at the end. */
static void frame_close(struct xray_reader *r, struct thread *t, uint64_t tsc, bool counted)
{
	struct frame *f = &t->stack[--t->depth];
	uint64_t dur = tsc > f->entry_tsc ? tsc - f->entry_tsc : 0;
	uint64_t self = dur > f->child_ticks ? dur - f->child_ticks : 0;
	struct node *n = &r->nodes[f->node];

	n->self_ticks += self;
	if (t->depth)
		t->stack[t->depth - 1].child_ticks += dur;
	if (counted) {
		n->calls++;
		struct xray_func_stats *fs = &r->fstats[f->fs];

		fs->calls++;
		fs->total_ns += (double)dur * r->ns_per_tick;
		fs->self_ns += (double)self * r->ns_per_tick;
	}
}

static void thread_close_all(struct xray_reader *r, struct thread *t)
{
	while (t->depth) {
		frame_close(r, t, t->last_tsc, false);
		r->st.open_at_end++;
	}
}

static int on_entry(struct xray_reader *r, struct thread *t, uint32_t func, uint64_t tsc)
{
	struct frame *f, *parent;
	uint32_t node, fs;

	if (t->root == NONE) {
		t->root = proc_root(r, t->pid);
		if (t->root == NONE)
			return -ENOMEM;
	}
	if (t->depth == t->cap) {
		size_t cap = t->cap;

		f = grow(t->stack, &cap, (size_t)t->depth + 1, sizeof(*f));
		if (!f || cap > UINT32_MAX)
			return -ENOMEM;
		t->stack = f;
		t->cap = (uint32_t)cap;
	}
	parent = t->depth ? &t->stack[t->depth - 1] : NULL;
	if (parent && parent->last_func == func) {
		node = parent->last_node;
		fs = parent->last_fs;
	} else {
		node = node_get(r, parent ? parent->node : t->root, func, r->nodes[t->root].proc);
		fs = func_stats_slot(r, func);
		if (node == NONE || fs == NONE)
			return -ENOMEM;
		if (parent) {
			parent->last_func = func;
			parent->last_node = node;
			parent->last_fs = fs;
		}
	}
	f = &t->stack[t->depth++];
	*f = (struct frame){
		.node = node, .func = func, .fs = fs, .entry_tsc = tsc, .last_func = NONE
	};
	return 0;
}

static void on_exit_rec(struct xray_reader *r, struct thread *t, uint32_t func, uint64_t tsc)
{
	uint32_t i;

	if (t->depth && t->stack[t->depth - 1].func == func) {
		frame_close(r, t, tsc, true);
		return;
	}
	for (i = t->depth; i-- > 0;)
		if (t->stack[i].func == func)
			break;
	if (i == UINT32_MAX) {
		r->st.unmatched_exits++;
		return;
	}
	/* the exits of the frames above were lost (e.g. dropped by the runtime) */
	while (t->depth > i + 1) {
		frame_close(r, t, tsc, true);
		r->st.unwound_frames++;
	}
	frame_close(r, t, tsc, true);
}

static int on_function(struct xray_reader *r, struct thread *t, unsigned action, uint32_t func,
		       uint64_t tsc)
{
	r->st.records++;
	t->last_tsc = tsc;
	if (action == ACT_ENTRY || action == ACT_ENTRY_ARGS)
		return on_entry(r, t, func, tsc);
	on_exit_rec(r, t, func, tsc);
	return 0;
}

/* ---- FDR ---- */

enum { BLOCK_END = 0, BLOCK_EOB = 1 };

static bool is_metadata(const struct xray_reader *r, uint8_t b)
{
	return r->file_be ? b >> 7 : b & 1;
}

static unsigned md_kind(const struct xray_reader *r, uint8_t b)
{
	return r->file_be ? b & 0x7f : b >> 1;
}

static struct thread *block_thread(struct xray_reader *r, struct block *b)
{
	if (!b->th)
		b->th = thread_get(r, b->pid, b->tid);
	return b->th;
}

/* Skip an event payload of `size` bytes after its marker; false when it does not fit. */
static bool skip_payload(struct xray_reader *r, const uint8_t **pp, const uint8_t *end,
			 int32_t size, const char *what)
{
	if (size < 0 || (size_t)size > (size_t)(end - *pp)) {
		bad(r, *pp - MD_SIZE,
		    "%s payload of %d bytes exceeds the %zu bytes left in the buffer", what, size,
		    (size_t)(end - *pp));
		return false;
	}
	*pp += size;
	return true;
}

/*
 * Decode records in [p, end). Returns BLOCK_END at end, BLOCK_EOB at a v1
 * EndOfBuffer, -EINVAL on damage (printed), -ENOMEM.
 */
static int fdr_records(struct xray_reader *r, struct block *b, const uint8_t *p, const uint8_t *end)
{
	int err;

	while (p < end) {
		uint8_t first = *p;

		if (!is_metadata(r, first)) {
			uint32_t w, func;
			unsigned action;
			struct thread *t;

			if (end - p < FN_SIZE) {
				bad(r, p, "function record needs %d bytes, %zu left in the buffer",
				    FN_SIZE, (size_t)(end - p));
				return -EINVAL;
			}
			w = get32(r, p);
			if (r->file_be) {
				action = (w >> 28) & 7;
				func = w & 0x0FFFFFFF;
			} else {
				action = (w >> 1) & 7;
				func = w >> 4;
			}
			if (!b->have_tid || !b->have_tsc) {
				bad(r, p, "function record before %s",
				    b->have_tid ? "NewCPUId" : "NewBuffer");
				return -EINVAL;
			}
			if (action > ACT_ENTRY_ARGS) {
				bad(r, p, "function record with unknown action %u", action);
				return -EINVAL;
			}
			b->tsc += get32(r, p + 4);
			t = block_thread(r, b);
			if (!t)
				return -ENOMEM;
			err = on_function(r, t, action, func, b->tsc);
			if (err)
				return err;
			p += FN_SIZE;
			continue;
		}
		if (end - p < MD_SIZE) {
			bad(r, p, "metadata record needs %d bytes, %zu left in the buffer", MD_SIZE,
			    (size_t)(end - p));
			return -EINVAL;
		}
		switch (md_kind(r, first)) {
		case MD_NEW_BUFFER:
			/* spec (v1): 2-byte thread id; LLVM (v2+): 4 bytes */
			b->tid = r->version == 1 ? get16(r, p + 1) : get32(r, p + 1);
			if (r->version == 2)
				b->pid = b->tid; /* as llvm-xray: v2 has no PID record */
			b->have_tid = true;
			b->have_tsc = false;
			b->th = NULL;
			break;
		case MD_END_OF_BUFFER:
			if (r->version >= 2) {
				bad(r, p, "EndOfBuffer record in a version %u trace", r->version);
				return -EINVAL;
			}
			return BLOCK_EOB;
		case MD_NEW_CPU:
			/* cpu id u16 at +1, absolute TSC u64 at +3 */
			b->tsc = get64(r, p + 3);
			b->have_tsc = true;
			break;
		case MD_TSC_WRAP:
			b->tsc = get64(r, p + 1);
			b->have_tsc = true;
			break;
		case MD_WALLTIME:
			break;
		case MD_CUSTOM_EVENT: {
			int32_t size = (int32_t)get32(r, p + 1);

			r->st.custom_events++;
			/* v5: i32 TSC delta at +5; before: absolute u64 TSC that leaves the base alone */
			if (r->version >= 5)
				b->tsc += (uint64_t)(int64_t)(int32_t)get32(r, p + 5);
			p += MD_SIZE;
			if (!skip_payload(r, &p, end, size, "custom event"))
				return -EINVAL;
			continue;
		}
		case MD_TYPED_EVENT: {
			int32_t size = (int32_t)get32(r, p + 1);

			r->st.typed_events++;
			b->tsc += (uint64_t)(int64_t)(int32_t)get32(r, p + 5);
			p += MD_SIZE;
			if (!skip_payload(r, &p, end, size, "typed event"))
				return -EINVAL;
			continue;
		}
		case MD_CALL_ARG:
			r->st.call_args++;
			break;
		case MD_PID:
			b->pid = get32(r, p + 1);
			b->th = NULL;
			break;
		case MD_BUFFER_EXTENTS:
			if (r->version >= 2) {
				bad(r, p, "BufferExtents record inside a buffer");
				return -EINVAL;
			}
			/* not a version 1 kind */
			__attribute__((fallthrough));
		default:
			r->unknown_md++;
			break;
		}
		p += MD_SIZE;
	}
	return BLOCK_END;
}

/* A thread buffer went bad: its thread's stack cannot be trusted past here. */
static void block_damaged(struct xray_reader *r, struct block *b)
{
	r->st.bad_buffers++;
	if (b->have_tid) {
		struct thread *t = block_thread(r, b);

		if (t)
			thread_close_all(r, t);
	}
}

static bool new_buffer_at(const struct xray_reader *r, const uint8_t *p, const uint8_t *end)
{
	return end - p >= MD_SIZE && is_metadata(r, *p) && md_kind(r, *p) == MD_NEW_BUFFER;
}

static int read_fdr_v1(struct xray_reader *r, const uint8_t *p, const uint8_t *end, uint64_t bufsz)
{
	int err, ret = 0;

	if (!bufsz)
		bufsz = (uint64_t)(end - p); /* one buffer: the whole data section */
	while (p < end) {
		struct block b = { 0 };
		const uint8_t *bend = (uint64_t)(end - p) < bufsz ? end : p + bufsz;

		r->st.buffers++;
		if (!new_buffer_at(r, p, bend)) {
			bad(r, p, "thread buffer does not start with a NewBuffer record");
			err = -EINVAL;
		} else {
			err = fdr_records(r, &b, p, bend);
		}
		if (err == -ENOMEM)
			return err;
		if (err < 0) {
			block_damaged(r, &b);
			ret = -EINVAL;
		} else if (bend == end && (uint64_t)(end - p) < bufsz) {
			bad(r, end,
			    "truncated: thread buffer at offset %zu needs %llu bytes, file has %zu",
			    off_of(r, p), (unsigned long long)bufsz, (size_t)(end - p));
			block_damaged(r, &b);
			ret = -EINVAL;
		}
		p = bend;
	}
	return ret;
}

/* Size of the block whose BufferExtents record is at p, or -1 when p holds no plausible one. */
static int64_t extents_at(const struct xray_reader *r, const uint8_t *p, const uint8_t *end)
{
	uint64_t size;

	if (end - p < MD_SIZE || !is_metadata(r, *p) || md_kind(r, *p) != MD_BUFFER_EXTENTS)
		return -1;
	size = get64(r, p + 1);
	if (size > (uint64_t)(end - p - MD_SIZE))
		return -1;
	return (int64_t)size;
}

static int read_fdr_extents(struct xray_reader *r, const uint8_t *p, const uint8_t *end)
{
	int err, ret = 0;

	while (p < end) {
		struct block b = { 0 };
		const uint8_t *q;
		int64_t size = extents_at(r, p, end);

		if (size < 0) {
			if (end - p >= MD_SIZE && is_metadata(r, *p) &&
			    md_kind(r, *p) == MD_BUFFER_EXTENTS)
				bad(r, p,
				    "buffer extents of %llu bytes exceed the %zu bytes left in the file",
				    (unsigned long long)get64(r, p + 1),
				    (size_t)(end - p - MD_SIZE));
			else
				bad(r, p, "expected a BufferExtents record (%zu bytes left)",
				    (size_t)(end - p));
			ret = -EINVAL;
			r->st.bad_buffers++;
			/* resynchronize: a plausible extents record followed by NewBuffer */
			for (q = p + 1; q < end; q++) {
				int64_t s = extents_at(r, q, end);

				if (s >= 0 &&
				    (!s || new_buffer_at(r, q + MD_SIZE, q + MD_SIZE + s)))
					break;
			}
			p = q;
			continue;
		}
		p += MD_SIZE;
		r->st.buffers++;
		if (!size)
			continue;
		if (!new_buffer_at(r, p, p + size)) {
			bad(r, p, "thread buffer does not start with a NewBuffer record");
			err = -EINVAL;
		} else {
			err = fdr_records(r, &b, p, p + size);
		}
		if (err == -ENOMEM)
			return err;
		if (err < 0) {
			block_damaged(r, &b);
			ret = -EINVAL;
		}
		p += size;
	}
	return ret;
}

/* ---- basic mode ---- */

static int read_basic(struct xray_reader *r, const uint8_t *p, const uint8_t *end)
{
	size_t tail = (size_t)(end - p) % BASIC_REC_SIZE;
	const uint8_t *stop = end - tail;
	struct thread *t = NULL;
	int err, ret = 0;

	r->st.buffers++;
	for (; p < stop; p += BASIC_REC_SIZE) {
		uint16_t type = get16(r, p);
		unsigned action = p[3];
		uint32_t func = get32(r, p + 4), tid = get32(r, p + 16), pid = get32(r, p + 20);
		uint64_t tsc = get64(r, p + 8);

		if (type == 1) { /* argument payload of the previous entry */
			r->st.call_args++;
			continue;
		}
		if (type != 0) {
			bad(r, p, "unknown basic-mode record type %u", type);
			ret = -EINVAL;
			r->st.bad_buffers++;
			continue;
		}
		if (action > ACT_ENTRY_ARGS || func >= MAX_FUNC_ID) {
			bad(r, p,
			    action > ACT_ENTRY_ARGS ? "unknown function record action %u" :
						      "function id %u out of range",
			    action > ACT_ENTRY_ARGS ? action : func);
			ret = -EINVAL;
			r->st.bad_buffers++;
			continue;
		}
		if (!t || t->tid != tid || t->pid != pid) {
			t = thread_get(r, pid, tid);
			if (!t)
				return -ENOMEM;
		}
		err = on_function(r, t, action, func, tsc);
		if (err)
			return err;
	}
	if (tail) {
		bad(r, stop, "truncated: %zu trailing bytes are not a whole %d-byte record", tail,
		    BASIC_REC_SIZE);
		ret = -EINVAL;
	}
	return ret;
}

/* ---- file level ---- */

static uint64_t ticks_to_ns(uint64_t ticks, uint64_t freq)
{
	return (uint64_t)((unsigned __int128)ticks * 1000000000U / freq);
}

/* Close every thread, move this file's call-tree counters into the profile. */
static int flush_file(struct xray_reader *r)
{
	uint64_t *ips = NULL;
	size_t cap = 0, i;
	bool created;
	int err = 0;

	for (i = 0; r->threads && i <= r->thr_mask; i++) {
		if (!r->threads[i].used)
			continue;
		thread_close_all(r, &r->threads[i]);
		free(r->threads[i].stack);
	}
	free(r->threads);
	r->threads = NULL;
	r->thr_mask = r->nr_threads = 0;

	for (i = 0; i < r->nr_nodes; i++) {
		struct node *n = &r->nodes[i];
		uint32_t depth = n->depth, k, j;
		uint64_t *tmp;

		if (!n->calls && !n->self_ticks)
			continue;
		if (depth > UINT16_MAX)
			depth = UINT16_MAX; /* keep the innermost frames */
		tmp = grow(ips, &cap, depth, sizeof(*ips));
		if (!tmp) {
			err = -ENOMEM;
			break;
		}
		ips = tmp;
		for (k = 0, j = (uint32_t)i; k < depth; k++, j = r->nodes[j].parent) {
			uint32_t f = r->nodes[j].func;
			uint64_t a = r->map ? xray_instr_map__addr(r->map, f) : f;

			if (r->map && !a) {
				a = f;
				r->st.unknown_ids++;
			}
			/* callers as return addresses (readers look up ip - 1): the entry itself */
			ips[k] = k ? a + 1 : a;
		}
		if (profile__add_stack(r->p, n->proc, ips, 0, (uint16_t)depth, n->calls,
				       ticks_to_ns(n->self_ticks, r->freq), &created) < 0) {
			err = -ENOMEM;
			break;
		}
		r->p->nr_samples += n->calls;
		r->p->procs[n->proc].nr_samples += n->calls;
		n->calls = n->self_ticks = 0;
	}
	free(ips);
	return err;
}

int xray_reader__read_mem(struct xray_reader *r, const char *name, const uint8_t *data, size_t len)
{
	uint16_t version, type;
	uint64_t bufsz;
	int err, ret;

	r->name = name;
	r->base = data;
	r->warnings = 0;
	r->unknown_md = 0;
	r->st.files++;
	if (len < HDR_SIZE) {
		pr_warn("xray: '%s': offset 0: file of %zu bytes is shorter than the %d-byte header\n",
			name, len, HDR_SIZE);
		return -EINVAL;
	}
	/* byte order: the one in which the version is plausible */
	r->swap = false;
	version = get16(r, data);
	if (version < 1 || version > 5) {
		r->swap = true;
		version = get16(r, data);
		if (version < 1 || version > 5) {
			r->swap = false;
			pr_warn("xray: '%s': offset 0: not an XRay trace: version %u not in 1..5\n",
				name, get16(r, data));
			return -EINVAL;
		}
	}
	r->file_be = r->swap != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	r->version = version;
	type = get16(r, data + 2);
	r->freq = get64(r, data + 8);
	bufsz = get64(r, data + 16);
	if (type != TYPE_BASIC && type != TYPE_FDR) {
		pr_warn("xray: '%s': offset 2: unknown trace type %u (0 basic, 1 FDR)\n", name,
			type);
		return -EINVAL;
	}
	if (type == TYPE_BASIC && version > 3) {
		pr_warn("xray: '%s': offset 0: basic-mode version %u not supported (1..3)\n", name,
			version);
		return -ENOTSUP;
	}
	if (!r->freq) {
		pr_warn("xray: '%s': offset 8: cycle_frequency is 0\n", name);
		return -EINVAL;
	}
	r->ns_per_tick = 1e9 / (double)r->freq;
	if (type == TYPE_BASIC)
		ret = read_basic(r, data + HDR_SIZE, data + len);
	else if (version == 1)
		ret = read_fdr_v1(r, data + HDR_SIZE, data + len, bufsz);
	else
		ret = read_fdr_extents(r, data + HDR_SIZE, data + len);
	if (r->unknown_md)
		pr_info("xray: '%s': skipped %llu metadata records of unknown kinds\n", name,
			(unsigned long long)r->unknown_md);
	err = flush_file(r);
	if (ret == -ENOMEM || err)
		return -ENOMEM;
	return ret;
}

int xray_reader__read_file(struct xray_reader *r, const char *path)
{
	struct stat sb;
	void *data;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb)) {
		err = -errno;
		pr_warn("xray: cannot read '%s': %s\n", path, strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		pr_warn("xray: '%s' is not a regular file\n", path);
		return -EINVAL;
	}
	if (!sb.st_size) {
		close(fd);
		return xray_reader__read_mem(r, path, (const uint8_t *)"", 0);
	}
	data = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	err = -errno;
	close(fd);
	if (data == MAP_FAILED) {
		pr_warn("xray: cannot map '%s': %s\n", path, strerror(-err));
		return err;
	}
	madvise(data, (size_t)sb.st_size, MADV_SEQUENTIAL);
	err = xray_reader__read_mem(r, path, data, (size_t)sb.st_size);
	munmap(data, (size_t)sb.st_size);
	return err;
}

struct xray_reader *xray_reader__new(struct profile *p, const struct xray_instr_map *map)
{
	struct xray_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	r->p = p;
	r->map = map;
	if (!p->event)
		p->event = profile__intern(p, "xray");
	/* the model's unit: value is ns of self time; count is calls */
	if (!p->period_ns)
		p->period_ns = 1;
	return r;
}

void xray_reader__free(struct xray_reader *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; r->threads && i <= r->thr_mask; i++)
		if (r->threads[i].used)
			free(r->threads[i].stack);
	free(r->threads);
	free(r->nodes);
	idxmap__free(&r->node_map);
	free(r->proc_root);
	free(r->fstats);
	idxmap__free(&r->fs_map);
	free(r->addr_sorted);
	free(r);
}

const struct xray_func_stats *xray_reader__func_stats(const struct xray_reader *r, size_t *nr)
{
	*nr = r->nr_fstats;
	return r->fstats;
}

const struct xray_read_stats *xray_reader__stats(const struct xray_reader *r)
{
	return &r->st;
}

const char *xray_reader__name(struct xray_reader *r, uint32_t id)
{
	const char *n = r->map ? xray_instr_map__name(r->map, id) : NULL;

	if (n)
		return n;
	snprintf(r->namebuf, sizeof(r->namebuf), "fn#%u", id);
	return r->namebuf;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Function id at run-time address a (a function's entry), or 0. */
static uint32_t id_at(struct xray_reader *r, uint64_t a)
{
	uint32_t n = xray_instr_map__nr_funcs(r->map), id;
	size_t lo = 0, hi = n;

	if (!r->addr_sorted) {
		/* pairs (address, id) packed as two u64 per entry, sorted by address */
		r->addr_sorted = calloc((size_t)n * 2 + 2, sizeof(uint64_t));
		if (!r->addr_sorted)
			return 0;
		for (id = 1; id <= n; id++) {
			r->addr_sorted[(id - 1) * 2] = xray_instr_map__addr(r->map, id);
			r->addr_sorted[(id - 1) * 2 + 1] = id;
		}
		qsort(r->addr_sorted, n, 2 * sizeof(uint64_t), cmp_u64);
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t m = r->addr_sorted[mid * 2];

		if (m == a)
			return (uint32_t)r->addr_sorted[mid * 2 + 1];
		if (m < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

int xray_reader__name_locs(struct xray_reader *r)
{
	struct profile *p = r->p;
	const char *dso = NULL;
	size_t i;
	int err;

	err = profile__resolve_locs(p);
	if (err)
		return err;
	if (r->map) {
		dso = strrchr(xray_instr_map__path(r->map), '/');
		dso = profile__intern(p, dso ? dso + 1 : xray_instr_map__path(r->map));
		if (!dso)
			return -ENOMEM;
	}
	for (i = 0; i < p->nr_locs; i++) {
		struct profile_location *l = &p->locs[i];
		uint64_t a = l->addr - (l->is_return ? 1 : 0);
		uint32_t id = r->map ? id_at(r, a) : (uint32_t)a;

		if (l->proc == PROFILE_KERNEL_PROC || (r->map && !id))
			continue;
		l->func = profile__intern(p, xray_reader__name(r, id));
		if (!l->func)
			return -ENOMEM;
		l->func_offset = 0;
		l->dso = dso;
	}
	return 0;
}
