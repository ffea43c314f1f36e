// SPDX-License-Identifier: MIT
/*
 * Names of V8 JavaScript frames from a process's heap (include/v8_names.h).
 * Object layouts: V8's src/objects/{js-function,shared-function-info,script,
 * string,code,bytecode-array,scope-info,deoptimization-data}.h through the
 * build's v8dbg_ metadata; the ScopeInfo name heuristic and the baseline
 * walk are the OpenTelemetry eBPF profiler's interpreter/nodev8/v8.go ones,
 * checked on node 20 (docs/INTERPRETERS.md, "V8").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "array.h"
#include "bpfprof_abi.h"
#include "lib_hashmap.h"
#include "v8_names.h"
#include "v8_srcpos.h"

/* Bounds on what is read of one process */
#define MAX_NAME 256 /* bytes of a name kept (UTF-8) */
#define MAX_SOURCE (64u << 20) /* code units of a script source scanned for its lines */
#define MAX_TABLE (4u << 20) /* bytes of a source-position or bytecode table */
#define MAX_DEPTH 16 /* cons / sliced / thin strings nested; inlining levels */
#define MAX_SCOPE_SLOTS 6 /* ScopeInfo slots looked at for a name after the context locals */
#define MAX_CONTEXT_LOCALS 4096
#define MAX_FRAMES_CACHED (1u << 20) /* frame results kept before the cache starts over */
#define INLINE_MAX 16
/*
 * Reads of a script's source that may fail before its lines are given up
 * (a cons string flattened, a source moved while read): the k-th retry at
 * the (2^(k-1) + 1)-th look at one of its frames since the failure before
 * (that look included), so that a source read in a bad moment is read
 * again at the next look, one that cannot be read costs a bounded number
 * of reads (134 looks for the 7 retries)
 */
#define SCRIPT_TRIES 8
/* kUncachedExternalStringMask (instance-type.h): no cached data pointer */
#define EXTERNAL_UNCACHED 0x10

/* A function (SharedFunctionInfo) read */
struct v8_func {
	uint64_t sfi;
	uint64_t name_or_scope, script; /* the fields it was read from: the check against reuse */
	const char *name, *file; /* in strs: kept for the namer's life */
	int64_t script_idx; /* index into scripts, -1: none */
	/*
	 * reads of its Script's name that gave none: retried at each look up to
	 * SCRIPT_TRIES (a read in a bad moment named a whole run's hottest
	 * functions without their file: node 18, about 1 run in 4 of node.sh)
	 */
	uint8_t file_fails;
};

/* A script's line ends */
struct v8_script {
	uint64_t addr, source; /* the check against reuse: the same source object */
	uint32_t *ends;
	size_t nr_ends;
	uint8_t fails; /* reads of its line ends failed (no ends): retried up to SCRIPT_TRIES */
	uint32_t asks; /* lines asked for since the last failed read, that one's included */
};

/* Compiled code a frame was in: [start, end), and the frame's words to name a pc there */
struct v8_code_range {
	uint64_t start, end;
	uint64_t code; /* the Code: its instruction start still start, or the range is stale */
	uint64_t w0; /* SharedFunctionInfo (baseline) or Code (optimized) */
	uint16_t check;
	uint8_t kind;
};

/* A frame's result: names[first, first + n) */
struct v8_frame_res {
	uint32_t first, n;
};

struct v8_names {
	struct v8_metadata md;
	struct strset strs; /* every name and file read: cached frames point into it */
	bool strs_ok;
	uint8_t *sizes;
	size_t nr_bytecodes;
	v8_read_fn read;
	void *ctx;
	struct v8_func *funcs;
	size_t nr_funcs, cap_funcs;
	struct u64map func_idx; /* sfi -> index + 1 */
	struct v8_script *scripts;
	size_t nr_scripts, cap_scripts;
	struct u64map script_idx; /* script -> index + 1 */
	struct v8_name *names; /* frame results' names (strings: the funcs') */
	size_t nr_names, cap_names;
	struct v8_frame_res *res;
	size_t nr_res, cap_res;
	struct u64map res_idx; /* hash of (w0, w1, leaf) -> index + 1 into res */
	/* compiled code seen in frames, sorted by start: a pc no frame record names (v8_names__pc) */
	struct v8_code_range *ranges;
	size_t nr_ranges, cap_ranges;
	/*
	 * a line of the frame being named is missing for a read that will be
	 * tried again (a script's source): its result is not cached
	 */
	bool retry;
	struct v8_names_stats st;
};

struct v8_names *v8_names__new(const struct v8_metadata *md, const uint8_t *bytecode_sizes,
			       size_t nr_bytecodes, v8_read_fn read, void *ctx)
{
	struct v8_names *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->md = *md;
	if (strset__init(&n->strs, true)) {
		free(n);
		errno = ENOMEM;
		return NULL;
	}
	n->strs_ok = true;
	n->read = read;
	n->ctx = ctx;
	if (bytecode_sizes && nr_bytecodes) {
		n->sizes = malloc(3 * nr_bytecodes);
		if (!n->sizes) {
			strset__free(&n->strs);
			free(n);
			errno = ENOMEM;
			return NULL;
		}
		memcpy(n->sizes, bytecode_sizes, 3 * nr_bytecodes);
		n->nr_bytecodes = nr_bytecodes;
	}
	return n;
}

static void cache_free(struct v8_names *n)
{
	free(n->names);
	free(n->res);
	u64map__free(&n->res_idx);
	n->names = NULL;
	n->res = NULL;
	n->nr_names = n->cap_names = n->nr_res = n->cap_res = 0;
	memset(&n->res_idx, 0, sizeof(n->res_idx));
}

void v8_names__free(struct v8_names *n)
{
	if (!n)
		return;
	if (n->strs_ok)
		strset__free(&n->strs);
	free(n->funcs);
	u64map__free(&n->func_idx);
	for (size_t i = 0; i < n->nr_scripts; i++)
		free(n->scripts[i].ends);
	free(n->scripts);
	u64map__free(&n->script_idx);
	cache_free(n);
	free(n->ranges);
	free(n->sizes);
	free(n);
}

void v8_names__stats(const struct v8_names *n, struct v8_names_stats *st)
{
	*st = n->st;
}

/* --- reading objects --- */

static int rd(struct v8_names *n, uint64_t addr, void *buf, size_t len)
{
	if (addr < 4096 || addr + len < addr || (addr >> 47))
		return -EFAULT;
	return n->read(n->ctx, addr, buf, len);
}

static bool is_heap(const struct v8_names *n, uint64_t v)
{
	return (v & (uint64_t)n->md.heap_object_tag_mask) == (uint64_t)n->md.heap_object_tag &&
	       v > 4096 && !(v >> 47);
}

static bool is_smi(const struct v8_names *n, uint64_t v)
{
	return (v & (uint64_t)n->md.smi_tag_mask) == (uint64_t)n->md.smi_tag;
}

static int64_t smi_value(const struct v8_names *n, uint64_t v)
{
	if (n->md.smi_shift_size == 31)
		return (int64_t)v >> 32;
	return (int64_t)(int32_t)(uint32_t)v >> 1;
}

/* The tagged field at off of heap object obj (a full pointer or Smi word). 0, or -errno. */
static int field(struct v8_names *n, uint64_t obj, int32_t off, uint64_t *v)
{
	uint32_t c;
	int err;

	if (off < 0 || off > 1 << 16)
		return -EINVAL;
	if (!n->md.pointer_compression)
		return rd(n, obj - 1 + (uint64_t)off, v, 8);
	err = rd(n, obj - 1 + (uint64_t)off, &c, 4);
	if (err)
		return err;
	/* a Smi stays 32-bit; a pointer is an offset from the 4 GiB cage base */
	*v = (c & 1) ? (obj & ~0xffffffffull) | c : c;
	return 0;
}

/* A Smi field's value */
static int smi_field(struct v8_names *n, uint64_t obj, int32_t off, int64_t *v)
{
	uint64_t w;
	int err = field(n, obj, off, &w);

	if (err)
		return err;
	if (!is_smi(n, w))
		return -EINVAL;
	*v = smi_value(n, w);
	return 0;
}

/* The instance type of heap object obj. 0, or -errno. */
static int type_of(struct v8_names *n, uint64_t obj, uint16_t *type)
{
	uint64_t map;
	int err;

	if (!is_heap(n, obj))
		return -EINVAL;
	err = field(n, obj, n->md.heap_object_map, &map);
	if (!err && !is_heap(n, map))
		err = -EINVAL;
	if (!err)
		err = rd(n, map - 1 + (uint64_t)n->md.map_instance_type, type, 2);
	return err;
}

static bool has(int32_t v)
{
	return v != V8MD_ABSENT && v >= 0;
}

/* A ByteArray's (or BytecodeArray's) bytes into a new buffer; data_off: where they start */
static int byte_array(struct v8_names *n, uint64_t obj, int32_t data_off, uint8_t **out,
		      size_t *len)
{
	int64_t l;
	int err = smi_field(n, obj, n->md.fixed_array_length, &l);

	*out = NULL;
	if (err)
		return err;
	if (l < 0 || l > MAX_TABLE)
		return -EINVAL;
	*out = malloc(l ? (size_t)l : 1);
	if (!*out)
		return -ENOMEM;
	if (l && (err = rd(n, obj - 1 + (uint64_t)data_off, *out, (size_t)l))) {
		free(*out);
		*out = NULL;
		return err;
	}
	*len = (size_t)l;
	return 0;
}

/* --- strings --- */

/* Where a string's code units go: a UTF-8 name, or a script's line ends */
struct sink {
	/* name */
	char *buf;
	size_t len, size;
	bool full;
	/* lines */
	bool lines;
	uint64_t pos; /* code units seen */
	uint32_t *ends;
	size_t nr_ends, cap_ends;
	int err;
};

static void sink_unit(struct sink *s, uint32_t c)
{
	if (s->lines) {
		if (c == '\n') {
			if (array__grow((void **)&s->ends, &s->cap_ends, s->nr_ends + 1,
					sizeof(*s->ends))) {
				s->err = -ENOMEM;
				return;
			}
			s->ends[s->nr_ends++] = (uint32_t)s->pos;
		}
		s->pos++;
		return;
	}
	/* UTF-8 of a UTF-16 unit; lone surrogates and controls as '?' */
	if (c < 0x20 || (c >= 0xd800 && c < 0xe000))
		c = '?';
	if (s->len + 4 >= s->size) {
		s->full = true;
		return;
	}
	if (c < 0x80) {
		s->buf[s->len++] = (char)c;
	} else if (c < 0x800) {
		s->buf[s->len++] = (char)(0xc0 | (c >> 6));
		s->buf[s->len++] = (char)(0x80 | (c & 0x3f));
	} else {
		s->buf[s->len++] = (char)(0xe0 | (c >> 12));
		s->buf[s->len++] = (char)(0x80 | ((c >> 6) & 0x3f));
		s->buf[s->len++] = (char)(0x80 | (c & 0x3f));
	}
}

/* Code units [start, start + count) of string str into s. 0, or -errno. */
static int string_units(struct v8_names *n, uint64_t str, int64_t start, int64_t count, int depth,
			struct sink *s)
{
	const struct v8_metadata *md = &n->md;
	uint16_t type;
	int64_t len, off;
	uint64_t part;
	int32_t repr;
	int err;

	if (depth > MAX_DEPTH)
		return -ELOOP;
	if (!count)
		return 0;
	err = type_of(n, str, &type);
	if (err)
		return err;
	if (type >= md->type_first_nonstring)
		return -EINVAL;
	{
		int32_t l32;

		err = rd(n, str - 1 + (uint64_t)md->string_length, &l32, 4);
		if (err)
			return err;
		len = l32;
	}
	if (len < 0 || start < 0 || count < 0 || start + count > len)
		return -EINVAL;
	repr = type & md->string_representation_mask;
	if (repr == md->seq_string_tag ||
	    (repr == md->external_string_tag && has(md->external_resource) &&
	     !(type & EXTERNAL_UNCACHED))) {
		bool one = (type & md->string_encoding_mask) == md->one_byte_string_tag;
		uint8_t buf[4096];
		uint64_t at =
			str - 1 + (uint64_t)(one ? md->seq_one_byte_chars : md->seq_two_byte_chars);
		size_t w = one ? 1 : 2;

		/*
		 * An external string's characters are the embedder's (node's
		 * own sources: its binary's data): V8 caches their address
		 * after the resource (ExternalString::resource_data)
		 */
		if (repr == md->external_string_tag &&
		    (err = rd(n, str - 1 + (uint64_t)md->external_resource + 8, &at, 8)))
			return err;

		at += (uint64_t)start * w;
		while (count > 0 && !s->full && !s->err) {
			size_t chunk = (size_t)count * w > sizeof(buf) ? sizeof(buf) :
									 (size_t)count * w;

			err = rd(n, at, buf, chunk);
			if (err)
				return err;
			for (size_t i = 0; i < chunk; i += w)
				sink_unit(s, one ? buf[i] : (uint32_t)(buf[i] | buf[i + 1] << 8));
			at += chunk;
			count -= (int64_t)(chunk / w);
		}
		return s->err;
	}
	if (repr == md->cons_string_tag && has(md->cons_first) && has(md->cons_second)) {
		uint64_t first;
		int32_t l1;

		err = field(n, str, md->cons_first, &first);
		if (!err && !is_heap(n, first))
			err = -EINVAL;
		if (!err)
			err = rd(n, first - 1 + (uint64_t)md->string_length, &l1, 4);
		if (err)
			return err;
		if (l1 < 0 || l1 > len)
			return -EINVAL;
		if (start < l1) {
			int64_t c1 = count < l1 - start ? count : l1 - start;

			err = string_units(n, first, start, c1, depth + 1, s);
			if (err)
				return err;
			start += c1;
			count -= c1;
		}
		if (!count)
			return 0;
		err = field(n, str, md->cons_second, &part);
		return err ? err : string_units(n, part, start - l1, count, depth + 1, s);
	}
	if (repr == md->sliced_string_tag && has(md->sliced_parent) && has(md->sliced_offset)) {
		err = field(n, str, md->sliced_parent, &part);
		if (!err)
			err = smi_field(n, str, md->sliced_offset, &off);
		if (err)
			return err;
		if (off < 0)
			return -EINVAL;
		return string_units(n, part, off + start, count, depth + 1, s);
	}
	if (repr == md->thin_string_tag && has(md->thin_actual)) {
		err = field(n, str, md->thin_actual, &part);
		return err ? err : string_units(n, part, start, count, depth + 1, s);
	}
	return -EOPNOTSUPP; /* uncached external strings: only the embedder knows their bytes */
}

/* The length of string str (after its type is checked) */
static int string_len(struct v8_names *n, uint64_t str, int64_t *len)
{
	uint16_t type;
	int32_t l;
	int err = type_of(n, str, &type);

	if (!err && type >= n->md.type_first_nonstring)
		err = -EINVAL;
	if (!err)
		err = rd(n, str - 1 + (uint64_t)n->md.string_length, &l, 4);
	if (!err && l < 0)
		err = -EINVAL;
	if (!err)
		*len = l;
	return err;
}

/* String str as UTF-8 into buf (size bytes), truncated. 0, or -errno. */
static int read_string(struct v8_names *n, uint64_t str, char *buf, size_t size)
{
	struct sink s = { .buf = buf, .size = size };
	int64_t len;
	int err = string_len(n, str, &len);

	buf[0] = 0;
	if (err)
		return err;
	/* a name is short: only what fits is read */
	if (len > (int64_t)size)
		len = (int64_t)size;
	err = string_units(n, str, 0, len, 0, &s);
	s.buf[s.len < size ? s.len : size - 1] = 0;
	return err;
}

/* --- functions and scripts --- */

/* The name from SharedFunctionInfo's name_or_scope_info (a String, or a ScopeInfo) */
static void func_name(struct v8_names *n, uint64_t nos, char *buf, size_t size)
{
	const struct v8_metadata *md = &n->md;
	int32_t ts = md->tagged_size;
	uint16_t type;
	int64_t ncl;

	buf[0] = 0;
	if (type_of(n, nos, &type))
		return;
	if (type < md->type_first_nonstring) {
		read_string(n, nos, buf, size);
		return;
	}
	if (type != md->type_scope_info || !has(md->scope_info_ncontextlocals) ||
	    !has(md->scope_info_first_vars))
		return;
	/* slot k at ScopeInfo + tagged size * (k + 1): flags, parameters, context locals, ... */
	if (smi_field(n, nos, ts * (md->scope_info_ncontextlocals + 1), &ncl) || ncl < 0 ||
	    ncl > MAX_CONTEXT_LOCALS)
		return;
	/*
	 * After the context locals' names and infos (scope-info.tq): the
	 * function variable's name ('' when anonymous) and slot, then the
	 * inferred name ('obj.method'), each there by a flag, then the
	 * positions (Smis) and other scopes. The first non-empty name is
	 * V8's DebugName (the OpenTelemetry profiler's heuristic); the look
	 * stops at anything else than a String, a Smi or an Oddball, or at two
	 * Smis in a row (the positions): what follows may be past the object.
	 */
	for (int64_t k = md->scope_info_first_vars + 2 * ncl, smis = 0;
	     k < md->scope_info_first_vars + 2 * ncl + MAX_SCOPE_SLOTS && smis < 2; k++) {
		uint64_t v;

		if (field(n, nos, (int32_t)(ts * (k + 1)), &v))
			return;
		if (is_smi(n, v)) {
			smis++;
			continue;
		}
		smis = 0;
		if (type_of(n, v, &type))
			return;
		if (type == md->type_oddball)
			continue;
		if (type >= md->type_first_nonstring)
			return;
		if (!read_string(n, v, buf, size) && buf[0])
			return;
	}
	buf[0] = 0;
}

/* Line ends of a script from its line_ends array (if V8 made it) or its source */
static void script_lines(struct v8_names *n, struct v8_script *sc, uint64_t script)
{
	const struct v8_metadata *md = &n->md;
	struct sink s = { .lines = true };
	uint64_t le;
	uint16_t type;
	int64_t len;

	if (!field(n, script, md->script_line_ends, &le) && !type_of(n, le, &type) &&
	    type == md->type_fixed_array && !smi_field(n, le, md->fixed_array_length, &len) &&
	    len > 0 && len < (1 << 24)) {
		uint32_t *ends = malloc((size_t)len * sizeof(*ends));
		int64_t prev = -1, v;
		int64_t i;

		for (i = 0; ends && i < len; i++) {
			if (smi_field(n, le, md->fixed_array_data + (int32_t)(i * md->tagged_size),
				      &v) ||
			    v <= prev || v > UINT32_MAX)
				break;
			ends[i] = (uint32_t)v;
			prev = v;
		}
		if (ends && i == len) {
			sc->ends = ends;
			sc->nr_ends = (size_t)len;
			return;
		}
		free(ends);
	}
	if (string_len(n, sc->source, &len) || len > MAX_SOURCE ||
	    string_units(n, sc->source, 0, len, 0, &s) || s.err) {
		free(s.ends);
		sc->fails++;
		return;
	}
	/* the last line ends at the source's end */
	if (array__grow((void **)&s.ends, &s.cap_ends, s.nr_ends + 1, sizeof(*s.ends))) {
		free(s.ends);
		sc->fails++;
		return;
	}
	s.ends[s.nr_ends++] = (uint32_t)len;
	sc->ends = s.ends;
	sc->nr_ends = s.nr_ends;
	n->st.scripts++;
}

/* The script at addr (a Script checked by the caller), cached; -1 on ENOMEM */
static int64_t get_script(struct v8_names *n, uint64_t script)
{
	struct v8_script *sc;
	uint64_t idx, source = 0;

	if (field(n, script, n->md.script_source, &source))
		source = 0;
	if (u64map__get(&n->script_idx, script, &idx)) {
		sc = &n->scripts[idx - 1];
		if (sc->source == source)
			return (int64_t)idx - 1;
		free(sc->ends); /* another script at the address now */
	} else {
		if (array__grow((void **)&n->scripts, &n->cap_scripts, n->nr_scripts + 1,
				sizeof(*n->scripts)) ||
		    u64map__put(&n->script_idx, script, n->nr_scripts + 1))
			return -1;
		idx = ++n->nr_scripts;
		sc = &n->scripts[idx - 1];
	}
	memset(sc, 0, sizeof(*sc));
	sc->addr = script;
	sc->source = source;
	script_lines(n, sc, script);
	return (int64_t)idx - 1;
}

/*
 * The name of script (a Script) into file[size]; "" where it has none
 * readable. Returns whether the read is to be tried again later.
 */
static bool script_file(struct v8_names *n, uint64_t script, char *file, size_t size)
{
	uint64_t file_v;

	file[0] = 0;
	if (!field(n, script, n->md.script_name, &file_v) && is_heap(n, file_v))
		read_string(n, file_v, file, size);
	return !file[0];
}

/*
 * f's Script had no name when f was read: read again (f->file_fails
 * times so far); its frames are not cached meanwhile (n->retry)
 */
static int retry_file(struct v8_names *n, struct v8_func *f)
{
	char file[1024];
	int64_t fi;

	if (script_file(n, f->script, file, sizeof(file))) {
		f->file_fails++;
		n->retry |= f->file_fails < SCRIPT_TRIES;
		return 0;
	}
	fi = strset__add(&n->strs, file);
	if (fi < 0)
		return -ENOMEM;
	f->file = n->strs.strs[fi];
	f->file_fails = 0;
	return 0;
}

/* The function of SharedFunctionInfo sfi, cached and checked; NULL when not one (or ENOMEM: *err) */
static struct v8_func *get_func(struct v8_names *n, uint64_t sfi, int *err)
{
	const struct v8_metadata *md = &n->md;
	uint64_t nos, script, idx;
	struct v8_func *f;
	char name[MAX_NAME], file[1024];
	uint16_t type;

	if (type_of(n, sfi, &type) || type != md->type_shared_function_info ||
	    field(n, sfi, md->sfi_name_or_scope_info, &nos) ||
	    field(n, sfi, md->sfi_script_or_debug_info, &script))
		return NULL;
	if (u64map__get(&n->func_idx, sfi, &idx)) {
		f = &n->funcs[idx - 1];
		if (f->name_or_scope == nos && f->script == script) {
			if (f->file_fails && f->file_fails < SCRIPT_TRIES && retry_file(n, f))
				*err = -ENOMEM;
			return f;
		}
		/* moved or reused by the garbage collector: read again */
	} else {
		if (array__grow((void **)&n->funcs, &n->cap_funcs, n->nr_funcs + 1,
				sizeof(*n->funcs)) ||
		    u64map__put(&n->func_idx, sfi, n->nr_funcs + 1)) {
			*err = -ENOMEM;
			return NULL;
		}
		idx = ++n->nr_funcs;
		f = &n->funcs[idx - 1];
	}
	memset(f, 0, sizeof(*f));
	f->sfi = sfi;
	f->name_or_scope = nos;
	f->script = script;
	f->script_idx = -1;
	n->st.funcs++;
	func_name(n, nos, name, sizeof(name));
	file[0] = 0;
	if (!type_of(n, script, &type) && type == md->type_script) {
		if (script_file(n, script, file, sizeof(file))) {
			f->file_fails = 1;
			n->retry = true;
		}
		f->script_idx = get_script(n, script);
		if (f->script_idx < 0) {
			*err = -ENOMEM;
			f->script_idx = -1;
		}
	}
	{
		int64_t ni = strset__add(&n->strs, name[0] ? name : "(anonymous)");
		int64_t fi = strset__add(&n->strs, file);

		if (ni < 0 || fi < 0) {
			*err = -ENOMEM;
			return NULL;
		}
		f->name = n->strs.strs[ni];
		f->file = n->strs.strs[fi];
	}
	return f;
}

/* The line and column of script offset off in f's script (0, 0: unknown) */
static void position(struct v8_names *n, const struct v8_func *f, int64_t off, struct v8_name *out)
{
	struct v8_script *sc;

	out->line = out->col = 0;
	if (f->script_idx < 0 || off < 0)
		return;
	sc = &n->scripts[f->script_idx];
	if (!sc->ends && sc->fails && sc->fails < SCRIPT_TRIES) {
		/* its source (the field again: it may have been moved) read again, in time */
		if (++sc->asks > 1u << (sc->fails - 1)) {
			sc->asks = 0;
			if (field(n, sc->addr, n->md.script_source, &sc->source))
				sc->source = 0;
			script_lines(n, sc, sc->addr);
			n->st.script_retries++;
		}
		n->retry |= !sc->ends && sc->fails < SCRIPT_TRIES;
	}
	if (!sc->ends || v8_srcpos__line(sc->ends, sc->nr_ends, off, &out->line, &out->col))
		out->line = out->col = 0;
}

/* The BytecodeArray of SharedFunctionInfo sfi: its function_data, or a baseline Code's */
static int sfi_bytecode(struct v8_names *n, uint64_t sfi, uint64_t *ba)
{
	const struct v8_metadata *md = &n->md;
	uint16_t type;
	uint64_t d;

	if (field(n, sfi, md->sfi_function_data, &d) || type_of(n, d, &type))
		return -EINVAL;
	if (type == md->type_code && has(md->code_deoptimization_data) &&
	    (field(n, d, md->code_deoptimization_data, &d) || type_of(n, d, &type)))
		return -EINVAL;
	if (type != md->type_bytecode_array)
		return -EINVAL;
	*ba = d;
	return 0;
}

/* Source-position table of object obj at field off: a ByteArray's bytes (a new buffer) */
static int table_of(struct v8_names *n, uint64_t obj, int32_t off, uint8_t **t, size_t *len)
{
	uint64_t tv;
	uint16_t type;

	*t = NULL;
	if (!has(off) || field(n, obj, off, &tv) || type_of(n, tv, &type) ||
	    (type != n->md.type_byte_array && type != n->md.type_trusted_byte_array))
		return -EINVAL;
	return byte_array(n, tv, n->md.fixed_array_data, t, len);
}

/* The raw source position of bytecode offset bc of sfi's bytecode; -1: unknown */
static int64_t bytecode_position(struct v8_names *n, uint64_t sfi, int64_t bc)
{
	uint64_t ba;
	uint8_t *t;
	size_t len;
	int64_t raw = -1;

	if (sfi_bytecode(n, sfi, &ba) ||
	    table_of(n, ba, n->md.bytecode_array_source_position_table, &t, &len))
		return -1;
	if (v8_srcpos__find(t, len, bc, &raw))
		raw = -1;
	free(t);
	return raw;
}

/* Whether code is a Code whose size and kind give check (the BPF walk's): 0, or -errno */
static int code_check(struct v8_names *n, uint64_t code, uint16_t check)
{
	const struct v8_metadata *md = &n->md;
	uint32_t flags, size;
	uint16_t type;

	if (!has(md->code_flags) || !has(md->code_instruction_size) || type_of(n, code, &type) ||
	    type != md->type_code || rd(n, code - 1 + (uint64_t)md->code_flags, &flags, 4) ||
	    rd(n, code - 1 + (uint64_t)md->code_instruction_size, &size, 4))
		return -EINVAL;
	if (BPFPROF_V8_CODE_CHECK(size, (flags >> (md->code_kind_shift & 31)) &
						(uint32_t)md->code_kind_mask) != check)
		return -ESTALE; /* other code at the address now: no line */
	return 0;
}

/* A baseline frame's raw source position (pc offset off in sfi's baseline Code); -1: unknown */
static int64_t baseline_position(struct v8_names *n, uint64_t sfi, uint16_t check, int64_t off,
				 bool leaf)
{
	const struct v8_metadata *md = &n->md;
	uint64_t code, ba;
	uint8_t *t = NULL, *bc = NULL;
	size_t len, bc_len;
	int64_t bco, raw = -1;
	uint16_t type;

	if (!n->sizes || field(n, sfi, md->sfi_function_data, &code) ||
	    code_check(n, code, check) || field(n, code, md->code_deoptimization_data, &ba) ||
	    type_of(n, ba, &type) || type != md->type_bytecode_array ||
	    table_of(n, code, md->code_source_position_table, &t, &len))
		goto out;
	if (byte_array(n, ba, md->bytecode_array_data, &bc, &bc_len))
		goto out;
	/* a pc range is (start, end]: a leaf's pc is at an instruction's start */
	if (v8_srcpos__baseline(t, len, bc, bc_len, n->sizes, n->nr_bytecodes, leaf ? off + 1 : off,
				&bco))
		goto out;
	free(t);
	t = NULL;
	if (table_of(n, ba, md->bytecode_array_source_position_table, &t, &len) ||
	    v8_srcpos__find(t, len, bco < 0 ? 0 : bco, &raw))
		raw = -1;
out:
	free(t);
	free(bc);
	return raw;
}

/* --- frames --- */

/* The DeoptimizationData of an optimized Code (a FixedArray of a kind) */
static int deopt_data(struct v8_names *n, uint64_t code, uint64_t *deopt)
{
	const struct v8_metadata *md = &n->md;
	uint16_t type;

	if (!has(md->code_deoptimization_data) ||
	    field(n, code, md->code_deoptimization_data, deopt) || type_of(n, *deopt, &type) ||
	    (type != md->type_fixed_array && type != md->type_trusted_fixed_array &&
	     type != md->type_protected_fixed_array))
		return -EINVAL;
	return 0;
}

static int add_name(struct v8_names *n, const struct v8_func *f, int64_t script_off)
{
	struct v8_name *nm;

	if (array__grow((void **)&n->names, &n->cap_names, n->nr_names + 1, sizeof(*n->names)))
		return -ENOMEM;
	nm = &n->names[n->nr_names++];
	nm->func = f->name;
	nm->file = f->file;
	position(n, f, script_off, nm);
	if (!nm->line)
		n->st.no_line++;
	return 0;
}

/*
 * An optimized frame: code offset off of Code code; its inlined functions'
 * names, then its own function's (outer) into the names. Returns 0 or -errno.
 */
static int optimized_names(struct v8_names *n, uint64_t code, const struct v8_func *outer_p,
			   int64_t off, bool leaf)
{
	/* a copy: reading the inlined functions may move the functions' array */
	const struct v8_func outer_copy = *outer_p, *outer = &outer_copy;
	const struct v8_metadata *md = &n->md;
	uint64_t deopt = 0, lits = 0, ip = 0;
	uint8_t *t = NULL;
	size_t len;
	int64_t raw = -1;
	int err = 0, depth;

	if (table_of(n, code, md->code_source_position_table, &t, &len) ||
	    v8_srcpos__find(t, len, leaf ? off : off - 1, &raw))
		raw = -1;
	free(t);
	if (raw >= 0 && V8_SRCPOS_INLINING_ID(raw) >= 0) {
		if (deopt_data(n, code, &deopt) || !has(md->deopt_literal_array) ||
		    !has(md->deopt_inlining_positions) ||
		    field(n, deopt,
			  md->fixed_array_data + md->tagged_size * md->deopt_literal_array,
			  &lits) ||
		    field(n, deopt,
			  md->fixed_array_data + md->tagged_size * md->deopt_inlining_positions,
			  &ip))
			deopt = 0;
	}
	/* inlined functions, innermost first: InliningPositions[id] = {caller's position, literal} */
	for (depth = 0; raw >= 0 && V8_SRCPOS_INLINING_ID(raw) >= 0 && depth < INLINE_MAX;
	     depth++) {
		int32_t id = V8_SRCPOS_INLINING_ID(raw);
		struct {
			int64_t pos;
			int32_t fn_id;
			int32_t pad;
		} rec;
		int64_t nr;
		uint64_t sfi;
		const struct v8_func *f;

		if (!deopt || smi_field(n, ip, md->fixed_array_length, &nr) || id >= nr ||
		    rd(n, ip - 1 + (uint64_t)md->fixed_array_data + (uint64_t)id * sizeof(rec),
		       &rec, sizeof(rec)) ||
		    rec.fn_id < 0 || smi_field(n, lits, md->fixed_array_length, &nr) ||
		    rec.fn_id >= nr ||
		    field(n, lits, md->fixed_array_data + md->tagged_size * rec.fn_id, &sfi))
			break;
		sfi &= ~(uint64_t)2; /* a weak reference's tag */
		f = get_func(n, sfi, &err);
		if (err)
			return err;
		if (!f)
			break;
		if ((err = add_name(n, f, V8_SRCPOS_SCRIPT_OFFSET(raw))))
			return err;
		n->st.inlined++;
		raw = rec.pos;
	}
	if (raw >= 0 && V8_SRCPOS_INLINING_ID(raw) >= 0)
		raw = -1; /* the chain could not be followed: the outer function without a line */
	return add_name(n, outer, raw >= 0 ? V8_SRCPOS_SCRIPT_OFFSET(raw) : -1);
}

/*
 * The instruction range of Code code: its start a pointer field (11.1+), or
 * right after its header (before 11.1, v8_metadata.h). 0, or -errno.
 */
static int code_range(struct v8_names *n, uint64_t code, uint64_t *start, uint64_t *end)
{
	const struct v8_metadata *md = &n->md;
	uint32_t size;

	if (!has(md->code_instruction_size) ||
	    rd(n, code - 1 + (uint64_t)md->code_instruction_size, &size, 4) || !size)
		return -EINVAL;
	if (has(md->code_instruction_start)) {
		if (rd(n, code - 1 + (uint64_t)md->code_instruction_start, start, 8))
			return -EINVAL;
	} else if (has(md->code_header_size)) {
		*start = code - (uint64_t)md->heap_object_tag + (uint64_t)md->code_header_size;
	} else {
		return -EINVAL;
	}
	if (*start < 4096 || (*start >> 47))
		return -EINVAL;
	*end = *start + size;
	return 0;
}

/* Remember compiled code named by a frame, for v8_names__pc (sorted, no overlap) */
static void add_range(struct v8_names *n, uint64_t code, uint64_t w0, uint16_t check, uint32_t kind)
{
	uint64_t start, end;
	size_t l = 0, r;

	if (code_range(n, code, &start, &end))
		return;
	r = n->nr_ranges;
	while (l < r) {
		size_t m = l + (r - l) / 2;

		if (n->ranges[m].start < start)
			l = m + 1;
		else
			r = m;
	}
	/* code freed and its place given to new code: the old ranges it overlaps go */
	while (l > 0 && n->ranges[l - 1].end > start) {
		memmove(&n->ranges[l - 1], &n->ranges[l], (n->nr_ranges - l) * sizeof(*n->ranges));
		n->nr_ranges--;
		l--;
	}
	while (l < n->nr_ranges && n->ranges[l].start < end) {
		memmove(&n->ranges[l], &n->ranges[l + 1],
			(n->nr_ranges - l - 1) * sizeof(*n->ranges));
		n->nr_ranges--;
	}
	if (array__grow((void **)&n->ranges, &n->cap_ranges, n->nr_ranges + 1, sizeof(*n->ranges)))
		return; /* only a pc left unnamed */
	memmove(&n->ranges[l + 1], &n->ranges[l], (n->nr_ranges - l) * sizeof(*n->ranges));
	n->ranges[l] = (struct v8_code_range){ start, end, code, w0, check, (uint8_t)kind };
	n->nr_ranges++;
}

int v8_names__frame(struct v8_names *n, uint64_t w0, uint64_t w1, bool leaf, struct v8_name *out,
		    size_t max)
{
	const struct v8_metadata *md = &n->md;
	uint32_t kind = BPFPROF_V8_KIND(w1), first;
	uint16_t check = BPFPROF_V8_CHECK(w1);
	int64_t off = BPFPROF_V8_OFF(w1), raw = -1;
	uint64_t key, idx, sfi;
	const struct v8_func *f;
	struct v8_func fc;
	struct timespec t0, t1;
	int err = 0;
	size_t k;

	n->st.frames++;
	key = hash__mix64(w0 ^ hash__mix64((w1 & 0xffffffffffffull) | (uint64_t)kind << 58 |
					   (uint64_t)leaf << 63)) |
	      1;
	if (u64map__get(&n->res_idx, key, &idx)) {
		const struct v8_frame_res *r = &n->res[idx - 1];

		n->st.frame_hits++;
		for (k = 0; k < r->n && k < max; k++)
			out[k] = n->names[r->first + k];
		return (int)k;
	}
	if (n->nr_res >= MAX_FRAMES_CACHED)
		cache_free(n);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	first = (uint32_t)n->nr_names;
	n->retry = false;
	sfi = w0;
	if (kind == BPFPROF_V8_OPTIMIZED) {
		uint64_t deopt;

		/* the Code names its function: DeoptimizationData's SharedFunctionInfo */
		if (code_check(n, w0, check) || deopt_data(n, w0, &deopt) ||
		    !has(md->deopt_shared_function_info) ||
		    field(n, deopt,
			  md->fixed_array_data + md->tagged_size * md->deopt_shared_function_info,
			  &sfi))
			goto bad;
	}
	f = get_func(n, sfi, &err);
	if (err)
		return err;
	if (!f)
		goto bad;
	fc = *f; /* its array may move as inlined functions are read */
	f = &fc;
	switch (kind) {
	case BPFPROF_V8_INTERPRETED: {
		uint64_t ba;

		/* the frame's BytecodeArray is the function's (not flushed and compiled again) */
		if (!sfi_bytecode(n, sfi, &ba) && BPFPROF_V8_PTR_CHECK(ba) == check)
			raw = bytecode_position(
				n, sfi, off - (md->bytecode_array_data - md->heap_object_tag));
		err = add_name(n, f, raw >= 0 ? V8_SRCPOS_SCRIPT_OFFSET(raw) : -1);
		break;
	}
	case BPFPROF_V8_BASELINE: {
		uint64_t code;

		raw = baseline_position(n, sfi, check, off, leaf);
		err = add_name(n, f, raw >= 0 ? V8_SRCPOS_SCRIPT_OFFSET(raw) : -1);
		if (raw >= 0 && !field(n, sfi, md->sfi_function_data, &code))
			add_range(n, code, w0, check, kind);
		break;
	}
	case BPFPROF_V8_OPTIMIZED:
		err = optimized_names(n, w0, f, off, leaf);
		add_range(n, w0, w0, check, kind);
		break;
	case BPFPROF_V8_FUNCTION:
		err = add_name(n, f, -1);
		break;
	default:
		goto bad;
	}
	if (err)
		return err;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	n->st.read_ns += (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ull +
			 (uint64_t)(t1.tv_nsec - t0.tv_nsec);
	for (k = 0; k < n->nr_names - first && k < max; k++)
		out[k] = n->names[first + k];
	if (n->retry) {
		/* named without a line for now: named again at the next look */
		n->nr_names = first;
		return (int)k;
	}
	if (array__grow((void **)&n->res, &n->cap_res, n->nr_res + 1, sizeof(*n->res)) ||
	    u64map__put(&n->res_idx, key, n->nr_res + 1))
		return -ENOMEM;
	n->res[n->nr_res++] = (struct v8_frame_res){ first, (uint32_t)(n->nr_names - first) };
	return (int)k;
bad:
	/* not cached: a later sample may find the object readable */
	n->nr_names = first;
	n->st.bad++;
	return 0;
}

int v8_names__pc(struct v8_names *n, uint64_t pc, bool leaf, struct v8_name *out, size_t max)
{
	const struct v8_code_range *c;
	uint64_t look = leaf ? pc : pc - 1, start, end;
	size_t l = 0, r = n->nr_ranges;

	while (l < r) {
		size_t m = l + (r - l) / 2;

		if (n->ranges[m].end <= look)
			l = m + 1;
		else
			r = m;
	}
	if (l >= n->nr_ranges || n->ranges[l].start > look)
		return 0;
	c = &n->ranges[l];
	/* the code is still there (not moved by compaction, nor freed for other code) */
	if (code_range(n, c->code, &start, &end) || start != c->start || end != c->end)
		return 0;
	n->st.by_pc++;
	return v8_names__frame(n, c->w0, BPFPROF_V8_WORD1(pc - c->start, c->check, 0, c->kind),
			       leaf, out, max);
}
