/* SPDX-License-Identifier: MIT */
/*
 * Java frames named from a HotSpot JVM's memory (user/symbolize/
 * hotspot_names.c), with the offsets its vmStructs tables gave
 * (hotspot_vmstructs.h), the way HotSpot's own Serviceability Agent and the
 * OpenTelemetry eBPF profiler (interpreter/hotspot/method.go) read them:
 *
 *   Method* -> ConstMethod -> ConstantPool -> _pool_holder Klass -> _name
 *   ConstMethod's _name_index / _signature_index -> the pool's Symbol*s
 *   ConstantPool's _source_file_name_index -> the source file's Symbol
 *   the compressed line number table after the bytecodes (method.cpp
 *   CompressedLineNumberReadStream::read_pair: a byte (bci delta << 3 |
 *   line delta), or 0xff then two signed UNSIGNED5 ints; 0 ends it)
 *   an nmethod's PcDescs (pcDesc.hpp) and scopes (scopeDesc.cpp: UNSIGNED5
 *   sender offset, method index into the nmethod's metadata, bci + 1): a
 *   compiled pc's inlined methods, innermost first
 *
 * UNSIGNED5 (unsigned5.hpp) excludes X = 1 byte value from JDK 20 (0 before):
 * the struct hotspot_vm's unsigned5_x.
 *
 * A JVM is hostile: every read is bounded (names HS_NAME_MAX, line tables
 * HS_LINES_MAX bytes, PcDescs HS_PCDESC_MAX, HS_SCOPES_MAX inlined
 * scopes), every pointer checked, every name must be printable, and a
 * failure is an error, never a guess. Memory is read through a
 * hotspot_read_fn, so tests and the fuzz harness read from a buffer.
 */
#ifndef BPFPROF_HOTSPOT_NAMES_H
#define BPFPROF_HOTSPOT_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hotspot_vmstructs.h"

#define HS_NAME_MAX 512 /* bytes of a class, method, signature or file name, NUL included */
#define HS_LINES_MAX 65536 /* bytes of a line number table read at most */
#define HS_PCDESC_MAX 65536 /* PcDescs of an nmethod read at most */
#define HS_SCOPES_MAX 64 /* inlined scopes of one pc (OTel PR #1731 bounds them so too) */

/* One entry of a line number table: from bytecode index bci, source line `line` */
struct hotspot_line {
	uint32_t bci;
	int32_t line;
};

/* A Java method as read */
struct hotspot_method {
	char klass[HS_NAME_MAX]; /* "java.util.HashMap$Node" ('/' turned '.') */
	char name[HS_NAME_MAX]; /* "getNode" */
	char sig[HS_NAME_MAX]; /* "(Ljava/lang/Object;)Ljava/util/HashMap$Node;" */
	char file[HS_NAME_MAX]; /* "HashMap.java", "" when the class has none */
	uint64_t cmethod; /* its ConstMethod* (the bytecodes follow it: sizeof ConstMethod) */
	uint32_t code_size; /* bytes of bytecode */
	struct hotspot_line *lines; /* malloc'ed, nr_lines; NULL when it has none */
	uint32_t nr_lines;
	int32_t min_line, max_line; /* over lines[]; 0, 0 without */
};

/*
 * Decode the line number table in buf (len bytes, X excluded bytes:
 * 0 or 1) into *lines (malloc'ed, the caller frees; NULL for none) and
 * *nr. Returns 0, -EBADMSG (not terminated within len, an int of more than
 * 5 bytes, a bci past 65535 or a line out of int range) or -ENOMEM.
 */
int hotspot_lines__decode(const uint8_t *buf, size_t len, unsigned x, struct hotspot_line **lines,
			  uint32_t *nr);

/*
 * The line of bytecode index bci in lines[0..nr) as Method::line_number_from_bci
 * gives it: an entry of that bci, else the one with the greatest bci below
 * it; -1 when none.
 */
int32_t hotspot_lines__find(const struct hotspot_line *lines, uint32_t nr, uint32_t bci);

/*
 * Read the method at Method* method of the JVM vm describes, through
 * rd(ctx, ...), into *m (its lines malloc'ed: hotspot_method__release).
 * Returns 0, -EFAULT (unreadable), -EBADMSG (a pointer or name that makes
 * no sense: not a method) or -ENOMEM.
 */
int hotspot_method__read(const struct hotspot_vm *vm, hotspot_read_fn rd, void *ctx,
			 uint64_t method, struct hotspot_method *m);
void hotspot_method__release(struct hotspot_method *m);

/* "(JI[Ljava/lang/String;)V" -> "(long, int, java.lang.String[])" into buf; returns buf */
const char *hotspot_sig__java(const char *sig, char *buf, size_t size);

/* One scope of a compiled pc: its Method* and bytecode index (-1: none) */
struct hotspot_scope {
	uint64_t method;
	int32_t bci;
};

/*
 * The scopes of compiled pc offset pcoff (from the code's start) in
 * nmethod blob (at most max, innermost first) into scopes: from its
 * PcDescs (the first whose pc offset is >= pcoff: the return address's
 * own, or the leaf's next) and its scopes data. Returns their number (0:
 * no debug information for that pc), or -EFAULT, -EBADMSG (forged or
 * absurd data), -ENOTSUP (vm lacks the fields).
 */
int hotspot_scopes__read(const struct hotspot_vm *vm, hotspot_read_fn rd, void *ctx, uint64_t blob,
			 uint32_t pcoff, struct hotspot_scope *scopes, int max);

/*
 * Decode one scope's head in buf (len bytes, X excluded bytes): the
 * sender's decode offset (0: the outermost scope), the method's index into
 * the nmethod's metadata (i names metadata[i - 1]) and its bci (-1: the
 * method's entry). Returns 0 or -EBADMSG. Pure, for the fuzzer.
 */
int hotspot_scope__decode(const uint8_t *buf, size_t len, unsigned x, uint32_t *sender,
			  uint32_t *method_index, int32_t *bci);

/* A CodeBlob's name (a stub's: "StubRoutines (1)") into buf; 0 or -errno */
int hotspot_blob__name(const struct hotspot_vm *vm, hotspot_read_fn rd, void *ctx, uint64_t blob,
		       char *buf, size_t size);

/* The Method* of nmethod blob: 0 or -errno */
int hotspot_nmethod__method(const struct hotspot_vm *vm, hotspot_read_fn rd, void *ctx,
			    uint64_t blob, uint64_t *method, uint32_t *compile_id);

#endif /* BPFPROF_HOTSPOT_NAMES_H */
