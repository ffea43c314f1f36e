// SPDX-License-Identifier: MIT
/*
 * The kernel's BTF cut to a BPF object's CO-RE roots (include/btf_min.h),
 * written with libbpf's BTF writer (btf__add_*): a type's members are added
 * right after it, so what a type embeds is copied before the type itself.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "btf_min.h"

struct cut {
	const struct btf *kernel;
	struct btf *out;
	int *ids; /* the kernel's type id → the cut's, 0 not copied yet */
	char **roots; /* the essential names, sorted */
	size_t nr_roots;
};

/* libbpf's bpf_core_essential_name_len: the name before its last "X___Y" flavor */
static size_t essential_len(const char *name)
{
	size_t n = strlen(name);

	for (size_t i = n >= 5 ? n - 5 + 1 : 0; i-- > 0;)
		if (name[i] != '_' && !strncmp(name + i + 1, "___", 3) && name[i + 4] != '_')
			return i + 1;
	return n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool root_kind(const struct btf_type *t)
{
	return btf_is_composite(t) || btf_is_any_enum(t) || btf_is_typedef(t);
}

/* local's named structs, unions, enums and typedefs, by essential name. Returns 0 or -errno. */
static int gather_roots(struct cut *c, const struct btf *local)
{
	uint32_t n = btf__type_cnt(local);

	c->roots = calloc(n, sizeof(*c->roots));
	if (!c->roots)
		return -ENOMEM;
	for (uint32_t id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(local, id);
		const char *name = btf__name_by_offset(local, t->name_off);

		if (!root_kind(t) || !name || !name[0])
			continue;
		c->roots[c->nr_roots] = strndup(name, essential_len(name));
		if (!c->roots[c->nr_roots++])
			return -ENOMEM;
	}
	qsort(c->roots, c->nr_roots, sizeof(*c->roots), cmp_str);
	return 0;
}

static bool is_root(const struct cut *c, const char *name)
{
	return name && name[0] && bsearch(&name, c->roots, c->nr_roots, sizeof(*c->roots), cmp_str);
}

static int copy(struct cut *c, uint32_t id);
static int copy_proto(struct cut *c, const struct btf_type *t);

/* A struct or union: its members' types first, then it and its members */
static int copy_composite(struct cut *c, const struct btf_type *t, const char *name)
{
	const struct btf_member *m = btf_members(t);
	uint16_t vlen = btf_vlen(t);
	int *types = calloc(vlen + 1, sizeof(*types)), ret = 0;

	if (!types)
		return -ENOMEM;
	for (uint16_t i = 0; i < vlen && ret >= 0; i++)
		ret = types[i] = copy(c, m[i].type);
	if (ret >= 0)
		ret = btf_is_struct(t) ? btf__add_struct(c->out, name, t->size) :
					 btf__add_union(c->out, name, t->size);
	for (uint16_t i = 0; i < vlen && ret >= 0; i++) {
		int err = btf__add_field(c->out, btf__name_by_offset(c->kernel, m[i].name_off),
					 types[i], btf_member_bit_offset(t, i),
					 btf_member_bitfield_size(t, i));

		if (err < 0)
			ret = err;
	}
	free(types);
	return ret;
}

/* An enum, 32 or 64 bits, with its values */
static int copy_enum(struct cut *c, const struct btf_type *t, const char *name)
{
	bool is_signed = btf_kflag(t);
	int ret;

	if (btf_is_enum(t)) {
		const struct btf_enum *e = btf_enum(t);

		ret = btf__add_enum(c->out, name, t->size);
		for (uint16_t i = 0; i < btf_vlen(t) && ret >= 0; i++) {
			int err = btf__add_enum_value(
				c->out, btf__name_by_offset(c->kernel, e[i].name_off),
				is_signed ? (int64_t)e[i].val : (int64_t)(uint32_t)e[i].val);
			if (err < 0)
				ret = err;
		}
		return ret;
	}
	ret = btf__add_enum64(c->out, name, t->size, is_signed);
	for (uint16_t i = 0; i < btf_vlen(t) && ret >= 0; i++) {
		const struct btf_enum64 *e = &btf_enum64(t)[i];
		int err = btf__add_enum64_value(c->out, btf__name_by_offset(c->kernel, e->name_off),
						btf_enum64_value(e));
		if (err < 0)
			ret = err;
	}
	return ret;
}

/* A function's type (a typedef's, as sighandler_t's): its return and parameters' types first */
static int copy_proto(struct cut *c, const struct btf_type *t)
{
	const struct btf_param *p = btf_params(t);
	uint16_t vlen = btf_vlen(t);
	int *types = calloc(vlen + 1, sizeof(*types)), ret;

	if (!types)
		return -ENOMEM;
	ret = copy(c, t->type);
	for (uint16_t i = 0; i < vlen && ret >= 0; i++) {
		int type = copy(c, p[i].type);

		types[i] = type;
		ret = type < 0 ? type : ret;
	}
	if (ret >= 0)
		ret = btf__add_func_proto(c->out, ret);
	for (uint16_t i = 0; i < vlen && ret >= 0; i++) {
		int err = btf__add_func_param(c->out, btf__name_by_offset(c->kernel, p[i].name_off),
					      types[i]);

		if (err < 0)
			ret = err;
	}
	free(types);
	return ret;
}

/* The cut's id of kernel type id, copied first if need be. Returns it, or -errno. */
static int copy(struct cut *c, uint32_t id)
{
	const struct btf_type *t;
	const char *name;
	int ref, ret;

	if (!id)
		return 0; /* void */
	if (c->ids[id])
		return c->ids[id];
	t = btf__type_by_id(c->kernel, id);
	if (!t)
		return -EINVAL;
	name = btf__name_by_offset(c->kernel, t->name_off);
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
		ret = btf__add_int(c->out, name, t->size, btf_int_encoding(t));
		break;
	case BTF_KIND_FLOAT:
		ret = btf__add_float(c->out, name, t->size);
		break;
	case BTF_KIND_PTR:
		ret = btf__add_ptr(c->out, 0); /* the pointee is matched by its own name */
		break;
	case BTF_KIND_ARRAY: {
		const struct btf_array *a = btf_array(t);
		int index = copy(c, a->index_type), elem = index < 0 ? index : copy(c, a->type);

		ret = elem < 0 ? elem : btf__add_array(c->out, index, elem, a->nelems);
		break;
	}
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		ret = copy_composite(c, t, name);
		break;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		ret = copy_enum(c, t, name);
		break;
	case BTF_KIND_FWD:
		ret = btf__add_fwd(c->out, name, btf_kflag(t) ? BTF_FWD_UNION : BTF_FWD_STRUCT);
		break;
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		ref = copy(c, t->type);
		if (ref < 0)
			return ref;
		ret = btf_is_typedef(t)	 ? btf__add_typedef(c->out, name, ref) :
		      btf_is_volatile(t) ? btf__add_volatile(c->out, ref) :
		      btf_is_const(t)	 ? btf__add_const(c->out, ref) :
		      btf_is_restrict(t) ? btf__add_restrict(c->out, ref) :
					   btf__add_type_tag(c->out, name, ref);
		break;
	case BTF_KIND_FUNC_PROTO:
		ret = copy_proto(c, t);
		break;
	default:
		/* variables, sections, functions: not types a relocation reaches */
		return -EINVAL;
	}
	if (ret > 0)
		c->ids[id] = ret;
	return ret;
}

struct btf *btf_min__cut(const struct btf *kernel, const struct btf *local)
{
	struct cut c = { .kernel = kernel };
	uint32_t n = btf__type_cnt(kernel);
	int err;

	c.out = btf__new_empty();
	c.ids = calloc(n, sizeof(*c.ids));
	err = !c.out || !c.ids ? -ENOMEM : gather_roots(&c, local);
	if (!err && btf__pointer_size(kernel))
		err = btf__set_pointer_size(c.out, btf__pointer_size(kernel));
	for (uint32_t id = 1; id < n && !err; id++) {
		const struct btf_type *t = btf__type_by_id(kernel, id);

		if (root_kind(t) && is_root(&c, btf__name_by_offset(kernel, t->name_off))) {
			int ret = copy(&c, id);

			err = ret < 0 ? ret : 0;
		}
	}
	for (size_t i = 0; i < c.nr_roots; i++)
		free(c.roots[i]);
	free(c.roots);
	free(c.ids);
	if (err) {
		btf__free(c.out);
		errno = -err;
		return NULL;
	}
	return c.out;
}
