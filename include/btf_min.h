/* SPDX-License-Identifier: MIT */
/*
 * The kernel's BTF cut to what a BPF object's CO-RE relocations can match,
 * for libbpf to relocate against (bpf_object_open_opts.btf_custom_path;
 * core_btf.h keeps it in a file) instead of parsing the whole of
 * /sys/kernel/btf/vmlinux each start (5.5 MB here: 5-15 ms of CPU, most of
 * it page faults and kernfs's page-sized reads).
 *
 * What libbpf's CO-RE reads of the target (tools/lib/bpf/relo_core.c,
 * libbpf 1.1): candidates by kind and essential name (the name before a
 * "___flavor" suffix); their members by name, anonymous ones searched
 * through; a member's offset, bitfield, size and signedness; two fields
 * compatible when both are composites, both pointers (to anything), or
 * ints, enums (by name), arrays of such. So the cut keeps every kernel
 * struct, union, enum and typedef whose name is the essential name of one
 * of the object's, whole, with what they embed (members, array elements,
 * typedefs and qualifiers, recursively) whole, and every pointer as a
 * pointer to void: the pointee is another relocation's root, matched by
 * its own name. Type-based relocations comparing pointees
 * (bpf_core_type_matches) are not served; bpfprof's objects have none.
 */
#ifndef BPFPROF_BTF_MIN_H
#define BPFPROF_BTF_MIN_H

struct btf;

/*
 * The cut of kernel for local (the object's BTF, bpf_object__btf). Returns
 * a new BTF the caller frees with btf__free, or NULL with errno set.
 */
struct btf *btf_min__cut(const struct btf *kernel, const struct btf *local);

#endif /* BPFPROF_BTF_MIN_H */
