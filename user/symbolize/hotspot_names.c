// SPDX-License-Identifier: MIT
/*
 * Java methods, lines and inlined scopes read from a HotSpot JVM's memory
 * (include/hotspot_names.h). Sources: HotSpot's method.cpp
 * (CompressedLineNumberReadStream, line_number_from_bci), unsigned5.hpp
 * (UNSIGNED5 with X excluded bytes), compressedStream.cpp (read_signed_int:
 * zigzag), scopeDesc.cpp (decode_body), debugInfoRec.hpp (serialized_null
 * is 0), nmethod.hpp (where the PcDescs, scopes and metadata lie in JDK 17
 * and 23+), symbol.hpp (u2 length, then the bytes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hotspot_names.h"

/* UNSIGNED5 (unsigned5.hpp): lg_H 6, at most 5 bytes; bytes < X + L end a number */
#define U5_LG_H 6
#define U5_MAX_BYTES 5

/* One UNSIGNED5 number at buf[*at] (len bytes): 0 and *at past it, or -EBADMSG */
static int u5_read(const uint8_t *buf, size_t len, size_t *at, unsigned x, uint32_t *out)
{
	uint32_t l = 256 - x - (1u << U5_LG_H), shift = 0;
	uint64_t sum = 0;

	for (int i = 0; i < U5_MAX_BYTES; i++) {
		uint8_t b;

		if (*at >= len)
			return -EBADMSG;
		b = buf[(*at)++];
		if (b < x)
			return -EBADMSG; /* an excluded byte */
		sum += (uint64_t)(b - x) << shift;
		if (b < x + l) {
			if (sum > UINT32_MAX)
				return -EBADMSG;
			*out = (uint32_t)sum;
			return 0;
		}
		shift += U5_LG_H;
	}
	return -EBADMSG;
}

/* compressedStream.hpp's decode_sign: zigzag */
static int32_t unzigzag(uint32_t v)
{
	return (int32_t)((v >> 1) ^ -(v & 1));
}

int hotspot_lines__decode(const uint8_t *buf, size_t len, unsigned x, struct hotspot_line **lines,
			  uint32_t *nr)
{
	struct hotspot_line *l = NULL, *nl;
	uint32_t n = 0, cap = 0, u;
	int64_t bci = 0, line = 0;
	size_t at = 0;

	*lines = NULL;
	*nr = 0;
	for (;;) {
		uint8_t b;

		if (at >= len)
			goto bad;
		b = buf[at++];
		if (!b)
			break;
		if (b == 0xff) {
			if (u5_read(buf, len, &at, x, &u))
				goto bad;
			bci += unzigzag(u);
			if (u5_read(buf, len, &at, x, &u))
				goto bad;
			line += unzigzag(u);
		} else {
			bci += b >> 3;
			line += b & 7;
		}
		if (bci < 0 || bci > 65535 || line < INT32_MIN || line > INT32_MAX)
			goto bad;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			nl = realloc(l, cap * sizeof(*l));
			if (!nl) {
				free(l);
				return -ENOMEM;
			}
			l = nl;
		}
		l[n].bci = (uint32_t)bci;
		l[n].line = (int32_t)line;
		n++;
	}
	*lines = l;
	*nr = n;
	return 0;
bad:
	free(l);
	return -EBADMSG;
}

int32_t hotspot_lines__find(const struct hotspot_line *lines, uint32_t nr, uint32_t bci)
{
	uint32_t best_bci = 0;
	int32_t best = -1;

	for (uint32_t i = 0; i < nr; i++) {
		if (lines[i].bci == bci)
			return lines[i].line;
		if (lines[i].bci < bci && lines[i].bci >= best_bci) {
			best_bci = lines[i].bci;
			best = lines[i].line;
		}
	}
	return best;
}

int hotspot_scope__decode(const uint8_t *buf, size_t len, unsigned x, uint32_t *sender,
			  uint32_t *method_index, int32_t *bci)
{
	size_t at = 0;
	uint32_t b;

	if (u5_read(buf, len, &at, x, sender) || u5_read(buf, len, &at, x, method_index) ||
	    u5_read(buf, len, &at, x, &b) || b > 65536)
		return -EBADMSG; /* a bci is below 65536 (the JVM spec's code length) */
	*bci = (int32_t)b - 1; /* DebugInfoWriteStream::write_bci: bci - InvocationEntryBci */
	return 0;
}

static bool user_ptr(uint64_t p)
{
	return p && !(p & 7) && p < (1ull << 47);
}

static int read_u64(hotspot_read_fn rd, void *ctx, uint64_t addr, uint64_t *v)
{
	return rd(ctx, addr, v, sizeof(*v));
}

static int read_u32(hotspot_read_fn rd, void *ctx, uint64_t addr, uint32_t *v)
{
	return rd(ctx, addr, v, sizeof(*v));
}

static int read_u16(hotspot_read_fn rd, void *ctx, uint64_t addr, uint16_t *v)
{
	return rd(ctx, addr, v, sizeof(*v));
}

/*
 * The Symbol at sym into buf (size bytes), '/' turned to '.' when dots: its
 * u2 length, then its bytes, which must be printable. 0 or -errno.
 */
static int read_symbol(const struct hotspot_vm *vm, hotspot_read_fn rd, void *ctx, uint64_t sym,
		       char *buf, size_t size, bool dots)
{
	uint16_t len;

	if (!user_ptr(sym))
		return -EBADMSG;
	if (read_u16(rd, ctx, sym + vm->field[HS_F_SYMBOL_LENGTH], &len))
		return -EFAULT;
	if (!len || len >= size)
		return -EBADMSG;
	if (rd(ctx, sym + vm->field[HS_F_SYMBOL_BODY], buf, len))
		return -EFAULT;
	buf[len] = '\0';
	for (uint16_t i = 0; i < len; i++) {
		if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] == 0x7f)
			return -EBADMSG;
		if (dots && buf[i] == '/')
			buf[i] = '.';
	}
	return 0;
}

/* The pool's entry idx: a Symbol* (its low bit is a tag) */
static int pool_symbol(const struct hotspot_vm *vm, hotspot_read_fn rd, void *ctx, uint64_t cp,
		       uint16_t idx, uint64_t *sym)
{
	if (!idx || read_u64(rd, ctx, cp + vm->size[HS_T_CPOOL] + 8ull * idx, sym))
		return -EFAULT;
	*sym &= ~1ull;
	return 0;
}

int hotspot_method__read(const struct hotspot_vm *vm, hotspot_read_fn rd, void *ctx,
			 uint64_t method, struct hotspot_method *m)
{
	uint64_t cm, cp, holder, sym;
	uint16_t code_size, name_idx, sig_idx, file_idx;
	uint32_t flags = 0;
	uint8_t *tab;
	size_t got;
	int err;

	memset(m, 0, sizeof(*m));
	if (!user_ptr(method))
		return -EBADMSG;
	if (read_u64(rd, ctx, method + vm->field[HS_F_METHOD_CONSTMETHOD], &cm))
		return -EFAULT;
	if (!user_ptr(cm))
		return -EBADMSG;
	m->cmethod = cm;
	if (read_u64(rd, ctx, cm + vm->field[HS_F_CONSTMETHOD_CONSTANTS], &cp) ||
	    read_u16(rd, ctx, cm + vm->field[HS_F_CONSTMETHOD_CODE_SIZE], &code_size) ||
	    read_u16(rd, ctx, cm + vm->field[HS_F_CONSTMETHOD_NAME_INDEX], &name_idx) ||
	    read_u16(rd, ctx, cm + vm->field[HS_F_CONSTMETHOD_SIGNATURE_INDEX], &sig_idx))
		return -EFAULT;
	/* _flags._flags (u4, JDK 21+: the first alternative) | _flags (u2) */
	if ((vm->field_alt[HS_F_CONSTMETHOD_FLAGS] & 15) == 0) {
		if (read_u32(rd, ctx, cm + vm->field[HS_F_CONSTMETHOD_FLAGS], &flags))
			return -EFAULT;
	} else {
		uint16_t f16;

		if (read_u16(rd, ctx, cm + vm->field[HS_F_CONSTMETHOD_FLAGS], &f16))
			return -EFAULT;
		flags = f16;
	}
	m->code_size = code_size;
	if (!user_ptr(cp) || read_u64(rd, ctx, cp + vm->field[HS_F_CPOOL_HOLDER], &holder) ||
	    !user_ptr(holder) || read_u64(rd, ctx, holder + vm->field[HS_F_KLASS_NAME], &sym))
		return -EBADMSG;
	if ((err = read_symbol(vm, rd, ctx, sym, m->klass, sizeof(m->klass), true)))
		return err;
	if ((err = pool_symbol(vm, rd, ctx, cp, name_idx, &sym)) ||
	    (err = read_symbol(vm, rd, ctx, sym, m->name, sizeof(m->name), false)))
		return err;
	if ((err = pool_symbol(vm, rd, ctx, cp, sig_idx, &sym)) ||
	    (err = read_symbol(vm, rd, ctx, sym, m->sig, sizeof(m->sig), false)))
		return err;
	file_idx = 0;
	if (hotspot_vm__has(vm, HS_F_CPOOL_SOURCE_FILE) &&
	    !read_u16(rd, ctx, cp + vm->field[HS_F_CPOOL_SOURCE_FILE], &file_idx) && file_idx &&
	    (pool_symbol(vm, rd, ctx, cp, file_idx, &sym) ||
	     read_symbol(vm, rd, ctx, sym, m->file, sizeof(m->file), false)))
		m->file[0] = '\0'; /* no file rather than no method */
	if (!(vm->have_const >> HS_C_HAS_LINENUMBERS & 1) ||
	    !(flags & (uint32_t)vm->constant[HS_C_HAS_LINENUMBERS]))
		return 0;
	/* the table follows the bytecodes; read a chunk at a time up to its end (a 0 byte) */
	tab = malloc(HS_LINES_MAX);
	if (!tab)
		return -ENOMEM;
	got = 0;
	err = -EBADMSG;
	while (got < HS_LINES_MAX) {
		size_t chunk = got ? 4096 : 256;

		if (rd(ctx, cm + vm->size[HS_T_CONSTMETHOD] + code_size + got, tab + got, chunk))
			break;
		got += chunk;
		err = hotspot_lines__decode(tab, got, vm->unsigned5_x, &m->lines, &m->nr_lines);
		if (err != -EBADMSG)
			break;
	}
	free(tab);
	if (err == -ENOMEM)
		return err;
	if (err)
		m->nr_lines = 0; /* no lines rather than no method */
	for (uint32_t i = 0; i < m->nr_lines; i++) {
		if (!i || m->lines[i].line < m->min_line)
			m->min_line = m->lines[i].line;
		if (!i || m->lines[i].line > m->max_line)
			m->max_line = m->lines[i].line;
	}
	return 0;
}

void hotspot_method__release(struct hotspot_method *m)
{
	free(m->lines);
	m->lines = NULL;
	m->nr_lines = 0;
}

/* One field type of a signature at *s, Java-style, appended to buf at *n */
static void sig_type(const char **s, char *buf, size_t size, size_t *n)
{
	static const char *const prim[] = {
		['B'] = "byte", ['C'] = "char",	 ['D'] = "double",  ['F'] = "float", ['I'] = "int",
		['J'] = "long", ['S'] = "short", ['Z'] = "boolean", ['V'] = "void",
	};
	int dims = 0;

	while (**s == '[')
		dims++, (*s)++;
	if (**s == 'L') {
		const char *end = strchr(*s, ';');

		if (!end)
			end = *s + strlen(*s);
		for (const char *c = *s + 1; c < end && *n + 1 < size; c++)
			buf[(*n)++] = *c == '/' ? '.' : *c;
		*s = *end ? end + 1 : end;
	} else if ((unsigned char)**s < sizeof(prim) / sizeof(prim[0]) &&
		   prim[(unsigned char)**s]) {
		*n += (size_t)snprintf(buf + *n, size - *n, "%s", prim[(unsigned char)**s]);
		(*s)++;
	} else {
		if (**s && *n + 1 < size)
			buf[(*n)++] = **s;
		if (**s)
			(*s)++;
	}
	if (*n >= size)
		*n = size - 1;
	while (dims-- > 0 && *n + 2 < size) {
		buf[(*n)++] = '[';
		buf[(*n)++] = ']';
	}
	buf[*n] = '\0';
}

const char *hotspot_sig__java(const char *sig, char *buf, size_t size)
{
	const char *s = sig;
	size_t n = 0;
	bool first = true;

	if (!size)
		return buf;
	buf[0] = '\0';
	if (*s != '(')
		return buf;
	s++;
	buf[n++] = '(';
	buf[n] = '\0';
	while (*s && *s != ')' && n + 1 < size) {
		if (!first && n + 2 < size) {
			buf[n++] = ',';
			buf[n++] = ' ';
			buf[n] = '\0';
		}
		first = false;
		sig_type(&s, buf, size, &n);
	}
	if (n + 1 < size)
		buf[n++] = ')';
	buf[n] = '\0';
	return buf;
}

int hotspot_blob__name(const struct hotspot_vm *vm, hotspot_read_fn rd, void *ctx, uint64_t blob,
		       char *buf, size_t size)
{
	uint64_t at;
	size_t i;

	if (!size || read_u64(rd, ctx, blob + vm->field[HS_F_CODEBLOB_NAME], &at) || !at)
		return -EFAULT;
	/* a byte at a time: a name may end just before an unmapped page */
	for (i = 0; i + 1 < size && i < 64; i++) {
		if (rd(ctx, at + i, &buf[i], 1))
			return -EFAULT;
		if (!buf[i])
			break;
		if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] >= 0x7f)
			return -EBADMSG;
	}
	buf[i] = '\0';
	return i ? 0 : -EBADMSG;
}

int hotspot_nmethod__method(const struct hotspot_vm *vm, hotspot_read_fn rd, void *ctx,
			    uint64_t blob, uint64_t *method, uint32_t *compile_id)
{
	if (read_u64(rd, ctx, blob + vm->field[HS_F_NMETHOD_METHOD], method) ||
	    read_u32(rd, ctx, blob + vm->field[HS_F_NMETHOD_COMPILE_ID], compile_id))
		return -EFAULT;
	return user_ptr(*method) ? 0 : -EBADMSG;
}

/* Where an nmethod's PcDescs, scopes data and metadata lie (nmethod.hpp, JDK 17 and 23+) */
struct nm_layout {
	uint64_t pcs, pcs_end, data, meta;
};

static int nm_layout(const struct hotspot_vm *vm, hotspot_read_fn rd, void *ctx, uint64_t blob,
		     struct nm_layout *l)
{
	uint32_t pcs_off, end_off, data_off;

	if (!hotspot_vm__has(vm, HS_F_NMETHOD_SCOPES_PCS) ||
	    !hotspot_vm__has(vm, HS_F_NMETHOD_SCOPES_DATA) || !vm->size[HS_T_PCDESC] ||
	    !hotspot_vm__has(vm, HS_F_PCDESC_PC_OFFSET) ||
	    !hotspot_vm__has(vm, HS_F_PCDESC_SCOPE_DECODE))
		return -ENOTSUP;
	if (read_u32(rd, ctx, blob + vm->field[HS_F_NMETHOD_SCOPES_PCS], &pcs_off))
		return -EFAULT;
	if (hotspot_vm__has(vm, HS_F_NMETHOD_IMMUTABLE_DATA)) {
		/* JDK 23+: PcDescs then scopes in the immutable data; metadata after the relocations */
		uint64_t imm, mut;
		uint32_t reloc;

		if (!hotspot_vm__has(vm, HS_F_CODEBLOB_MUTABLE_DATA) ||
		    !hotspot_vm__has(vm, HS_F_CODEBLOB_RELOCATION_SIZE))
			return -ENOTSUP;
		if (read_u64(rd, ctx, blob + vm->field[HS_F_NMETHOD_IMMUTABLE_DATA], &imm) ||
		    read_u32(rd, ctx, blob + vm->field[HS_F_NMETHOD_SCOPES_DATA], &data_off) ||
		    read_u64(rd, ctx, blob + vm->field[HS_F_CODEBLOB_MUTABLE_DATA], &mut) ||
		    read_u32(rd, ctx, blob + vm->field[HS_F_CODEBLOB_RELOCATION_SIZE], &reloc))
			return -EFAULT;
		l->pcs = imm + pcs_off;
		l->pcs_end = imm + data_off;
		l->data = imm + data_off;
		l->meta = mut + reloc;
		return user_ptr(imm) && mut ? 0 : -EBADMSG;
	}
	/* JDK <= 22: offsets from the blob, the scopes data's start a pointer */
	if (!hotspot_vm__has(vm, HS_F_NMETHOD_DEPENDENCIES) ||
	    !hotspot_vm__has(vm, HS_F_NMETHOD_METADATA))
		return -ENOTSUP;
	if (read_u32(rd, ctx, blob + vm->field[HS_F_NMETHOD_DEPENDENCIES], &end_off) ||
	    read_u64(rd, ctx, blob + vm->field[HS_F_NMETHOD_SCOPES_DATA], &l->data) ||
	    read_u32(rd, ctx, blob + vm->field[HS_F_NMETHOD_METADATA], &data_off))
		return -EFAULT;
	l->pcs = blob + pcs_off;
	l->pcs_end = blob + end_off;
	l->meta = blob + data_off;
	return l->data ? 0 : -EBADMSG;
}

int hotspot_scopes__read(const struct hotspot_vm *vm, hotspot_read_fn rd, void *ctx, uint64_t blob,
			 uint32_t pcoff, struct hotspot_scope *scopes, int max)
{
	struct nm_layout l;
	uint64_t nr, lo, hi, psize = vm->size[HS_T_PCDESC];
	uint32_t decode = 0, idx;
	int32_t pco;
	int n = 0, err;

	if ((err = nm_layout(vm, rd, ctx, blob, &l)))
		return err;
	if (l.pcs_end < l.pcs || psize < 8 || psize > 64)
		return -EBADMSG;
	nr = (l.pcs_end - l.pcs) / psize;
	if (nr > HS_PCDESC_MAX)
		return -EBADMSG;
	/* the first PcDesc whose pc offset is >= pcoff (sorted by pc offset) */
	lo = 0;
	hi = nr;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (read_u32(rd, ctx, l.pcs + mid * psize + vm->field[HS_F_PCDESC_PC_OFFSET],
			     (uint32_t *)&pco))
			return -EFAULT;
		if (pco < (int32_t)pcoff)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == nr)
		return 0;
	if (read_u32(rd, ctx, l.pcs + lo * psize + vm->field[HS_F_PCDESC_SCOPE_DECODE], &decode))
		return -EFAULT;
	while (decode && n < max && n < HS_SCOPES_MAX) {
		uint8_t buf[3 * U5_MAX_BYTES];
		uint32_t sender;
		uint64_t method;
		int32_t bci;

		/* the head's 3 ints: at most 15 bytes, fewer where the data ends sooner */
		memset(buf, 0xff, sizeof(buf));
		for (size_t k = sizeof(buf); k > 0; k--)
			if (!rd(ctx, l.data + decode, buf, k))
				break;
		if (hotspot_scope__decode(buf, sizeof(buf), vm->unsigned5_x, &sender, &idx, &bci))
			return -EBADMSG;
		if (!idx || idx > 65536 || read_u64(rd, ctx, l.meta + 8ull * (idx - 1), &method) ||
		    !user_ptr(method))
			return -EBADMSG;
		scopes[n].method = method;
		scopes[n].bci = bci;
		n++;
		if (sender >= decode)
			break; /* senders are written before their callees: a loop otherwise */
		decode = sender;
	}
	return n;
}
