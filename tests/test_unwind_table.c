// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/unwind/unwind_table.c. Real files of this machine (libc,
 * python3.11, xz, liblzma) and programs built here with -O2
 * -fomit-frame-pointer (a PLT call into a shared library, a thread, a signal
 * handler; once more with only .debug_frame) are checked against binutils'
 * `readelf --debug-dump=frames-interp`, parsed here, at every row of every
 * FDE (its first byte, its last byte and one byte inside) and just past every
 * FDE: the count of mismatches must be 0. The PLT expression is recognised
 * from `readelf --debug-dump=frames`. Then hand-written CFI (.cfi_escape) for
 * each rule the word cannot express, and corrupted copies of a real file
 * (huge length, truncation, unknown augmentation, unknown pointer encoding,
 * an overflowing range, random flips): -EINVAL, -ENOENT or NONE rows, one
 * warning naming the file and the offset, no crash. Every CFI section:
 * .eh_frame typed SHT_X86_64_UNWIND (patched in a copy, and from clang-14
 * with gold) gives the same table; a debug file's .eh_frame without bits
 * leaves its .debug_frame; a copy without section headers finds .eh_frame
 * through PT_GNU_EH_FRAME.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "log.h"
#include "unwind_table.h"

static char tmp_dir[] = "/tmp/test_unwind_table.XXXXXX";

#define TEST_TMP_DIR tmp_dir
#include "test_files.h"

static const char lib_src[] = "__attribute__((noinline)) int lib_work(int x)\n"
			      "{\n"
			      "	volatile int s = 0;\n"
			      "	for (int i = 0; i < x; i++)\n"
			      "		s += i * x;\n"
			      "	return s;\n"
			      "}\n";

static const char main_src[] = "#include <pthread.h>\n"
			       "#include <signal.h>\n"
			       "#include <stdio.h>\n"
			       "extern int lib_work(int);\n"
			       "static volatile int sink;\n"
			       "__attribute__((noinline)) static int leaf(int x)\n"
			       "{\n"
			       "	int a[64];\n"
			       "	for (int i = 0; i < 64; i++)\n"
			       "		a[i] = i * x;\n"
			       "	return a[x & 63];\n"
			       "}\n"
			       "static void handler(int sig)\n"
			       "{\n"
			       "	sink += leaf(sig);\n"
			       "}\n"
			       "static void *thread_main(void *arg)\n"
			       "{\n"
			       "	sink += lib_work(100) + leaf(3);\n"
			       "	return arg;\n"
			       "}\n"
			       "int main(int argc, char **argv)\n"
			       "{\n"
			       "	pthread_t t;\n"
			       "	signal(SIGUSR1, handler);\n"
			       "	pthread_create(&t, NULL, thread_main, NULL);\n"
			       "	pthread_join(t, NULL);\n"
			       "	raise(SIGUSR1);\n"
			       "	printf(\"%d\\n\", sink + lib_work(argc));\n"
			       "	return 0;\n"
			       "}\n";

/*
 * One function per rule the rule word cannot say, or says specially, written
 * with .cfi directives and raw .cfi_escape bytes (DWARF 5 section 6.4.2).
 */
static const char hostile_src[] =
	".text\n"
	/* push %rbp; mov %rsp,%rbp: CFA rbp+16, rbp at CFA-16 */
	".globl f_fp\n.type f_fp,@function\nf_fp:\n.cfi_startproc\n"
	"	push %rbp\n.cfi_def_cfa_offset 16\n.cfi_offset rbp, -16\n"
	"	mov %rsp, %rbp\n.cfi_def_cfa_register rbp\n"
	"	nop\n	pop %rbp\n.cfi_def_cfa rsp, 8\n	ret\n.cfi_endproc\n"
	/* DW_CFA_def_cfa_offset_sf 1 (x data alignment -8): CFA = rsp - 8 */
	".globl f_neg\n.type f_neg,@function\nf_neg:\n.cfi_startproc\n"
	"	nop\n.cfi_escape 0x13, 0x01\n	nop\n	ret\n.cfi_endproc\n"
	/* CFA in r12 (OpenSSL's assembly does this) */
	".globl f_r12\n.type f_r12,@function\nf_r12:\n.cfi_startproc\n"
	"	nop\n.cfi_def_cfa r12, 16\n	nop\n	ret\n.cfi_endproc\n"
	/* an opcode no DWARF version defines: libdw rejects the FDE */
	".globl f_unknown\n.type f_unknown,@function\nf_unknown:\n.cfi_startproc\n"
	"	nop\n.cfi_escape 0x3e\n	nop\n	ret\n.cfi_endproc\n"
	/* return address undefined: the end of the stack */
	".globl f_end\n.type f_end,@function\nf_end:\n.cfi_startproc\n"
	"	.cfi_undefined rip\n	nop\n	ret\n.cfi_endproc\n"
	/* rbp kept in rbx */
	".globl f_rbp_reg\n.type f_rbp_reg,@function\nf_rbp_reg:\n.cfi_startproc\n"
	"	nop\n.cfi_register rbp, rbx\n	nop\n	ret\n.cfi_endproc\n"
	/* CFA offset past 16 bits */
	".globl f_bigoff\n.type f_bigoff,@function\nf_bigoff:\n.cfi_startproc\n"
	"	nop\n.cfi_def_cfa_offset 70000\n	nop\n	ret\n.cfi_endproc\n"
	/* rbp saved above the CFA, at CFA + 24 (DW_CFA_offset_extended_sf -3) */
	".globl f_rbp_pos\n.type f_rbp_pos,@function\nf_rbp_pos:\n.cfi_startproc\n"
	"	nop\n.cfi_escape 0x11, 0x06, 0x7d\n	nop\n	ret\n.cfi_endproc\n"
	/* rbp saved at the CFA itself: slot 0 would read as "unchanged" */
	".globl f_rbp_zero\n.type f_rbp_zero,@function\nf_rbp_zero:\n.cfi_startproc\n"
	"	nop\n.cfi_escape 0x11, 0x06, 0x00\n	nop\n	ret\n.cfi_endproc\n"
	/* rbp saved far away: slot -3000 does not fit 12 bits */
	".globl f_rbp_far\n.type f_rbp_far,@function\nf_rbp_far:\n.cfi_startproc\n"
	"	nop\n.cfi_offset rbp, -24000\n	nop\n	ret\n.cfi_endproc\n"
	/* return address at CFA - 16 */
	".globl f_ra_moved\n.type f_ra_moved,@function\nf_ra_moved:\n.cfi_startproc\n"
	"	nop\n.cfi_offset rip, -16\n	nop\n	ret\n.cfi_endproc\n"
	/* CFA expression other than the PLT's: [rsp + 160] */
	".globl f_expr\n.type f_expr,@function\nf_expr:\n.cfi_startproc\n"
	"	nop\n.cfi_escape 0x0f, 0x04, 0x77, 0x80, 0x01, 0x06\n	nop\n	ret\n.cfi_endproc\n"
	/* the PLT expression, threshold 11, then 10 */
	".globl f_plt\n.type f_plt,@function\nf_plt:\n.cfi_startproc\n"
	"	nop\n.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22\n"
	"	nop\n.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3a, 0x2a, 0x33, 0x24, 0x22\n"
	"	nop\n	ret\n.cfi_endproc\n"
	/* the PLT expression with threshold 12: not the standard one */
	".globl f_plt12\n.type f_plt12,@function\nf_plt12:\n.cfi_startproc\n"
	"	nop\n.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3c, 0x2a, 0x33, 0x24, 0x22\n"
	"	nop\n	ret\n.cfi_endproc\n"
	/* a signal frame */
	".globl f_signal\n.type f_signal,@function\nf_signal:\n.cfi_startproc\n.cfi_signal_frame\n"
	"	nop\n	ret\n.cfi_endproc\n"
	/* remember/restore state, rbp restored to same value */
	".globl f_state\n.type f_state,@function\nf_state:\n.cfi_startproc\n"
	"	push %rbp\n.cfi_def_cfa_offset 16\n.cfi_offset rbp, -16\n"
	"	.cfi_remember_state\n	pop %rbp\n.cfi_def_cfa_offset 8\n.cfi_same_value rbp\n"
	"	ret\n.cfi_restore_state\n	nop\n	ret\n.cfi_endproc\n"
	/*
	 * register 200 000 000 (DW_CFA_offset_extended): libdw would grow its
	 * register array to 1.6 GB for every row; refused before libdw sees it
	 */
	".globl f_bigreg\n.type f_bigreg,@function\nf_bigreg:\n.cfi_startproc\n"
	"	nop\n.cfi_escape 0x05, 0x80, 0x84, 0xaf, 0x5f, 0x02\n	nop\n	ret\n.cfi_endproc\n"
	/* DW_CFA_remember_state nested 65 deep */
	".globl f_deep\n.type f_deep,@function\nf_deep:\n.cfi_startproc\n	nop\n"
	".rept 65\n.cfi_remember_state\n.endr\n	nop\n	ret\n.cfi_endproc\n"
	/* a gap of 16 bytes without CFI, then a function */
	"	.skip 16, 0xcc\n"
	".globl f_after_gap\n.type f_after_gap,@function\nf_after_gap:\n.cfi_startproc\n"
	"	nop\n	ret\n.cfi_endproc\n";

static int group_setup(void **state)
{
	if (!mkdtemp(tmp_dir))
		return -1;
	if (write_text(tpath("lib.c"), lib_src) || write_text(tpath("main.c"), main_src) ||
	    write_text(tpath("hostile.s"), hostile_src))
		return -1;
	if (sh("cd %s && cc -O2 -fomit-frame-pointer -fPIC -shared lib.c -o libnofp.so", tmp_dir) ||
	    sh("cd %s && cc -O2 -fomit-frame-pointer main.c -L. -lnofp -Wl,-rpath,'$ORIGIN' "
	       "-pthread -o nofp",
	       tmp_dir) ||
	    /* the same program with .debug_frame only */
	    sh("cd %s && cc -O2 -g -fomit-frame-pointer -fno-asynchronous-unwind-tables "
	       "-fno-unwind-tables main.c -L. -lnofp -pthread -o nofp-dbg.full && "
	       "objcopy --remove-section=.eh_frame --remove-section=.eh_frame_hdr "
	       "nofp-dbg.full nofp-dbg",
	       tmp_dir) ||
	    sh("cd %s && cc -shared -nostdlib hostile.s -o hostile.so 2>/dev/null", tmp_dir))
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	sh("rm -rf %s", tmp_dir);
	return 0;
}

/* ---- what readelf says ---- */

struct exp_row {
	uint64_t loc;
	uint32_t rule;
};

struct exp_fde {
	uint64_t off, start, end;
	size_t first, nr; /* rows in the row array */
};

struct expect {
	struct exp_row *rows;
	size_t nr_rows, cap_rows;
	struct exp_fde *fdes;
	size_t nr_fdes, cap_fdes;
};

struct cie_row {
	uint64_t off;
	bool signal;
	uint32_t rule;
};

/* FDE offset -> PLT threshold (10, 11) or -1 (another expression) */
struct plt_fde {
	uint64_t off;
	int threshold;
};

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	*cap = *cap ? *cap * 2 : 256;
	if (*cap < need)
		*cap = need;
	p = realloc(p, *cap * elem);
	assert_non_null(p);
	return p;
}

static size_t read_plt_fdes(const char *file, const char *section, struct plt_fde **out)
{
	char cmd[1024], line[4096], want[128];
	struct plt_fde *v = NULL;
	size_t n = 0, cap = 0;
	bool in = false, have = false;
	uint64_t off = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames '%s' 2>/dev/null", file);
	snprintf(want, sizeof(want), "Contents of the %s section", section);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a, b, c;
		char kind[8];
		const char *e;

		if (!strncmp(line, "Contents of the ", 16)) {
			in = !strncmp(line, want, strlen(want));
			continue;
		}
		if (!in)
			continue;
		if (sscanf(line, "%llx %llx %llx %7s", &a, &b, &c, kind) == 4 &&
		    (!strcmp(kind, "FDE") || !strcmp(kind, "CIE") || !strcmp(kind, "ZERO"))) {
			off = a;
			have = !strcmp(kind, "FDE");
			continue;
		}
		e = strstr(line, "DW_CFA_def_cfa_expression (");
		if (!e || !have)
			continue;
		v = grow(v, &cap, n + 1, sizeof(*v));
		v[n].off = off;
		v[n].threshold = -1;
		if (strstr(e,
			   "(DW_OP_breg7 (rsp): 8; DW_OP_breg16 (rip): 0; DW_OP_lit15; DW_OP_and; "
			   "DW_OP_lit11; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus)"))
			v[n].threshold = 11;
		else if (strstr(e,
				"(DW_OP_breg7 (rsp): 8; DW_OP_breg16 (rip): 0; DW_OP_lit15; "
				"DW_OP_and; DW_OP_lit10; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus)"))
			v[n].threshold = 10;
		/* one FDE with two expressions of different kinds: give up on its rows */
		if (n && v[n - 1].off == off) {
			if (v[n - 1].threshold != v[n].threshold)
				v[n - 1].threshold = -2;
			continue;
		}
		n++;
	}
	pclose(p);
	*out = v;
	return n;
}

static int plt_of(const struct plt_fde *v, size_t n, uint64_t off)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].off == off)
			return v[i].threshold;
	return 0;
}

/*
 * The rule the columns of a readelf row mean (include/bpfprof_abi.h):
 * "u" undefined (or not yet mentioned), "s" same value, "c-16" offset(-16),
 * "exp" an expression, "rsp+8" the CFA. A register without a column is
 * unchanged. plt: this FDE's expression (10, 11: the PLT's; <0: other).
 */
static uint32_t expect_rule(const char *cfa, const char *rbp, const char *ra, const char *rsp,
			    bool signal, int plt)
{
	long long off, rbp_off;
	char reg[16];
	int slot = 0;

	if (signal)
		return BPFPROF_UNWIND_SIGNAL;
	if (!ra)
		return BPFPROF_UNWIND_NONE;
	if (!strcmp(ra, "u"))
		return BPFPROF_UNWIND_END;
	if (strcmp(ra, "c-8"))
		return BPFPROF_UNWIND_NONE;
	if (rsp && strcmp(rsp, "u"))
		return BPFPROF_UNWIND_NONE;
	if (rbp && strcmp(rbp, "u") && strcmp(rbp, "s")) {
		if (sscanf(rbp, "c%lld", &rbp_off) != 1 || rbp_off == 0 || rbp_off % 8 ||
		    rbp_off / 8 < BPFPROF_UNWIND_RBP_SLOT_MIN ||
		    rbp_off / 8 > BPFPROF_UNWIND_RBP_SLOT_MAX)
			return BPFPROF_UNWIND_NONE;
		slot = rbp_off / 8;
	}
	if (!strcmp(cfa, "exp")) {
		if (plt != 10 && plt != 11)
			return BPFPROF_UNWIND_NONE;
		return slot ? BPFPROF_UNWIND_NONE :
			      BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_PLT, 0, 8, plt);
	}
	if (sscanf(cfa, "%3[a-z0-9]%lld", reg, &off) != 2)
		return BPFPROF_UNWIND_NONE;
	if ((strcmp(reg, "rsp") && strcmp(reg, "rbp")) || off < 0 ||
	    off > BPFPROF_UNWIND_CFA_OFF_MAX)
		return BPFPROF_UNWIND_NONE;
	/* rbp saved below rsp: an epilogue popped it already, rbp holds it (unchanged) */
	if (!strcmp(reg, "rsp") && off + slot * 8 < 0)
		slot = 0;
	return BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, !strcmp(reg, "rbp"), off, slot);
}

/* Parse `readelf --debug-dump=frames-interp` for one section */
static void read_expect(const char *file, const char *section, struct expect *x)
{
	char cmd[1024], line[8192], want[128], cols[32][16];
	struct cie_row *cies = NULL;
	size_t nr_cies = 0, cap_cies = 0, nr_cols = 0;
	struct plt_fde *plts;
	size_t nr_plts;
	bool in = false, in_fde = false, in_cie = false, signal = false;
	uint64_t fde_off = 0;
	struct exp_fde *cur = NULL;
	struct cie_row *cur_cie = NULL;
	FILE *p;

	memset(x, 0, sizeof(*x));
	nr_plts = read_plt_fdes(file, section, &plts);
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", file);
	snprintf(want, sizeof(want), "Contents of the %s section", section);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a, b, c, cie, lo, hi;
		char aug[64], *tok, *save;
		const char *v[32];
		size_t i;

		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "Contents of the ", 16)) {
			in = !strncmp(line, want, strlen(want));
			in_fde = in_cie = false;
			continue;
		}
		if (!in)
			continue;
		if (sscanf(line, "%llx %llx %llx CIE \"%63[^\"]\"", &a, &b, &c, aug) == 4 ||
		    (sscanf(line, "%llx %llx %llx CIE \"\"", &a, &b, &c) == 3 &&
		     strstr(line, " CIE \"\"") && !(aug[0] = 0))) {
			cies = grow(cies, &cap_cies, nr_cies + 1, sizeof(*cies));
			cur_cie = &cies[nr_cies++];
			cur_cie->off = a;
			cur_cie->signal = aug[0] == 'z' && strchr(aug, 'S');
			cur_cie->rule = BPFPROF_UNWIND_NONE;
			in_cie = true;
			in_fde = false;
			nr_cols = 0;
			continue;
		}
		if (sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx", &a, &b, &c, &cie, &lo,
			   &hi) == 6) {
			signal = false;
			cur_cie = NULL;
			for (i = 0; i < nr_cies; i++)
				if (cies[i].off == cie)
					cur_cie = &cies[i];
			assert_non_null(cur_cie);
			signal = cur_cie->signal;
			x->fdes = grow(x->fdes, &x->cap_fdes, x->nr_fdes + 1, sizeof(*x->fdes));
			cur = &x->fdes[x->nr_fdes++];
			cur->off = a;
			cur->start = lo;
			cur->end = hi;
			cur->first = x->nr_rows;
			cur->nr = 0;
			fde_off = a;
			in_fde = true;
			in_cie = false;
			nr_cols = 0;
			continue;
		}
		if (strstr(line, "LOC") && strstr(line, "CFA")) {
			nr_cols = 0;
			for (tok = strtok_r(line, " ", &save); tok && nr_cols < 32;
			     tok = strtok_r(NULL, " ", &save))
				snprintf(cols[nr_cols++], sizeof(cols[0]), "%s", tok);
			continue;
		}
		if (!line[0]) {
			/* an FDE without a row table has its CIE's initial row */
			if (in_fde && cur && !cur->nr) {
				x->rows = grow(x->rows, &x->cap_rows, x->nr_rows + 1,
					       sizeof(*x->rows));
				x->rows[x->nr_rows].loc = cur->start;
				x->rows[x->nr_rows].rule = signal ? BPFPROF_UNWIND_SIGNAL :
								    cur_cie->rule;
				x->nr_rows++;
				cur->nr = 1;
			}
			in_fde = in_cie = false;
			continue;
		}
		if (!(in_fde || in_cie) || nr_cols < 2 || !strchr("0123456789abcdef", line[0]))
			continue;
		i = 0;
		for (tok = strtok_r(line, " ", &save); tok && i < 32;
		     tok = strtok_r(NULL, " ", &save)) {
			/* "r10 (r10)" is one column */
			if (tok[0] == '(' && i)
				continue;
			v[i++] = tok;
		}
		if (i < 2)
			continue;
		{
			const char *rbp = NULL, *ra = NULL, *rsp = NULL;
			uint32_t rule;
			size_t j;

			for (j = 2; j < i && j < nr_cols; j++) {
				if (!strcmp(cols[j], "rbp"))
					rbp = v[j];
				else if (!strcmp(cols[j], "ra"))
					ra = v[j];
				else if (!strcmp(cols[j], "rsp"))
					rsp = v[j];
			}
			if (in_cie) {
				cur_cie->rule = expect_rule(v[1], rbp, ra, rsp, false, 0);
				continue;
			}
			rule = expect_rule(v[1], rbp, ra, rsp, signal,
					   plt_of(plts, nr_plts, fde_off));
			a = strtoull(v[0], NULL, 16);
			/* two rows at one address: the later one holds */
			if (cur->nr && x->rows[x->nr_rows - 1].loc == a) {
				x->rows[x->nr_rows - 1].rule = rule;
				continue;
			}
			x->rows = grow(x->rows, &x->cap_rows, x->nr_rows + 1, sizeof(*x->rows));
			x->rows[x->nr_rows].loc = a;
			x->rows[x->nr_rows].rule = rule;
			x->nr_rows++;
			cur->nr++;
		}
	}
	if (in_fde && cur && !cur->nr) {
		x->rows = grow(x->rows, &x->cap_rows, x->nr_rows + 1, sizeof(*x->rows));
		x->rows[x->nr_rows].loc = cur->start;
		x->rows[x->nr_rows].rule = signal ? BPFPROF_UNWIND_SIGNAL : cur_cie->rule;
		x->nr_rows++;
		cur->nr = 1;
	}
	pclose(p);
	free(cies);
	free(plts);
}

static bool fde_starts_at(const struct expect *x, uint64_t addr)
{
	size_t i;

	for (i = 0; i < x->nr_fdes; i++)
		if (x->fdes[i].start == addr && x->fdes[i].end > addr)
			return true;
	return false;
}

/* file's .init and .fini (crti.o's code: rows of their own, test_crt_init): [a, a + size) */
struct crt_sections {
	uint64_t a[2], size[2];
	int n;
};

static void read_crt_sections(const char *file, struct crt_sections *c)
{
	char cmd[1024], line[512], name[64];
	unsigned long long a, size;
	FILE *p;

	memset(c, 0, sizeof(*c));
	snprintf(cmd, sizeof(cmd), "readelf -SW '%s' 2>/dev/null", file);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		const char *b = strchr(line, ']');

		if (b && sscanf(b + 1, "%63s %*s %llx %*x %llx", name, &a, &size) == 3 &&
		    (!strcmp(name, ".init") || !strcmp(name, ".fini")) && c->n < 2) {
			c->a[c->n] = a;
			c->size[c->n++] = size;
		}
	}
	pclose(p);
}

static bool in_crt_section(const struct crt_sections *c, uint64_t addr)
{
	for (int i = 0; i < c->n; i++)
		if (addr >= c->a[i] && addr < c->a[i] + c->size[i])
			return true;
	return false;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct compare_stats {
	size_t checks, mismatches, kinds[8];
};

static void check_addr(const struct unwind_table *t, uint64_t addr, uint32_t want,
		       struct compare_stats *st)
{
	uint32_t got = unwind_table__lookup(t, addr);

	st->checks++;
	if (got != want && st->mismatches++ < 10)
		print_message("  mismatch at 0x%" PRIx64 ": table 0x%08x, readelf 0x%08x\n", addr,
			      got, want);
}

/*
 * Build the table of file and compare it with readelf at every row; returns
 * the stats. min_checks: the least number of rows readelf must have shown.
 */
static void compare_with_readelf(const char *file, const char *section, size_t min_checks,
				 struct compare_stats *st)
{
	struct unwind_table *t = NULL;
	struct expect x;
	struct crt_sections crt;
	uint64_t *ends;
	size_t i, k, nr_ends = 0;
	int err, fd;

	memset(st, 0, sizeof(*st));
	fd = open(file, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	err = unwind_table__build_fd(fd, file, &t);
	close(fd);
	assert_int_equal(err, 0);
	read_expect(file, section, &x);
	assert_true(x.nr_fdes > 0);
	/* FDEs with an empty range cover nothing and are not counted */
	for (i = 0, k = 0; i < x.nr_fdes; i++)
		k += x.fdes[i].end > x.fdes[i].start;
	assert_int_equal(t->nr_fdes, k);
	for (i = 0; i < t->nr_rows; i++) {
		st->kinds[BPFPROF_UNWIND_KIND(t->rows[i].rule)]++;
		if (i)
			assert_true(t->rows[i].pc > t->rows[i - 1].pc);
		if (i)
			assert_true(t->rows[i].rule != t->rows[i - 1].rule);
	}
	ends = calloc(x.nr_fdes, sizeof(*ends));
	assert_non_null(ends);
	for (i = 0; i < x.nr_fdes; i++) {
		const struct exp_fde *f = &x.fdes[i];

		assert_true(f->nr > 0);
		for (k = 0; k < f->nr; k++) {
			const struct exp_row *r = &x.rows[f->first + k];
			uint64_t next = k + 1 < f->nr ? x.rows[f->first + k + 1].loc : f->end;
			uint64_t len = next - r->loc;

			if (next <= r->loc)
				continue;
			check_addr(t, r->loc, r->rule, st);
			check_addr(t, next - 1, r->rule, st);
			check_addr(t, r->loc + (r->loc * 2654435761u) % len, r->rule, st);
		}
		ends[nr_ends++] = f->end;
	}
	/* just past every FDE: no CFI unless another FDE starts there (or crti.o's code) */
	read_crt_sections(file, &crt);
	qsort(ends, nr_ends, sizeof(*ends), cmp_u64);
	for (i = 0; i < nr_ends; i++)
		if (!fde_starts_at(&x, ends[i]) && !in_crt_section(&crt, ends[i]))
			check_addr(t, ends[i], BPFPROF_UNWIND_NONE, st);
	/* before the first FDE, and outside the table */
	check_addr(t, t->base - 1, BPFPROF_UNWIND_NONE, st);
	check_addr(t, t->end, BPFPROF_UNWIND_NONE, st);
	check_addr(t, 0, BPFPROF_UNWIND_NONE, st);
	check_addr(t, UINT64_MAX, BPFPROF_UNWIND_NONE, st);
	print_message("  %s: %u FDEs, %u rows (cfa %zu, none %zu, end %zu, plt %zu, signal %zu), "
		      "%zu checks against readelf, %zu mismatches\n",
		      file, t->nr_fdes, t->nr_rows, st->kinds[BPFPROF_UNWIND_CFA],
		      st->kinds[BPFPROF_UNWIND_NONE], st->kinds[BPFPROF_UNWIND_END],
		      st->kinds[BPFPROF_UNWIND_PLT], st->kinds[BPFPROF_UNWIND_SIGNAL], st->checks,
		      st->mismatches);
	assert_int_equal(st->mismatches, 0);
	assert_true(st->checks >= min_checks);
	free(ends);
	free(x.rows);
	free(x.fdes);
	unwind_table__free(t);
}

static void test_libc(void **state)
{
	struct compare_stats st;

	compare_with_readelf("/lib/x86_64-linux-gnu/libc.so.6", ".eh_frame", 30000, &st);
	/* _start is not in libc; clone3's child and __libc_start_call_main-era asm are */
	assert_true(st.kinds[BPFPROF_UNWIND_END] >= 1);
	assert_true(st.kinds[BPFPROF_UNWIND_PLT] >= 1);
	assert_int_equal(st.kinds[BPFPROF_UNWIND_SIGNAL], 1); /* __restore_rt */
}

static void test_python(void **state)
{
	struct compare_stats st;

	if (access("/usr/bin/python3.11", R_OK))
		skip();
	compare_with_readelf("/usr/bin/python3.11", ".eh_frame", 50000, &st);
	assert_true(st.kinds[BPFPROF_UNWIND_END] >= 1); /* _start */
	assert_true(st.kinds[BPFPROF_UNWIND_CFA] > 10000);
}

static void test_xz(void **state)
{
	struct compare_stats st;

	if (access("/usr/bin/xz", R_OK) || access("/lib/x86_64-linux-gnu/liblzma.so.5", R_OK))
		skip();
	compare_with_readelf("/usr/bin/xz", ".eh_frame", 1000, &st);
	compare_with_readelf("/lib/x86_64-linux-gnu/liblzma.so.5", ".eh_frame", 3000, &st);
}

static void test_nofp(void **state)
{
	struct compare_stats st;

	compare_with_readelf(tpath("nofp"), ".eh_frame", 50, &st);
	assert_true(st.kinds[BPFPROF_UNWIND_PLT] >= 1);
	assert_true(st.kinds[BPFPROF_UNWIND_END] >= 1); /* _start */
	compare_with_readelf(tpath("libnofp.so"), ".eh_frame", 10, &st);
}

static void test_debug_frame(void **state)
{
	struct compare_stats st;

	compare_with_readelf(tpath("nofp-dbg"), ".debug_frame", 20, &st);
	assert_true(st.kinds[BPFPROF_UNWIND_CFA] >= 3);
}

/* ---- hand-written CFI ---- */

static uint64_t sym_addr(const char *file, const char *name)
{
	char cmd[1024], line[512], sym[256], type;
	unsigned long long a;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm '%s'", file);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name)) {
			pclose(p);
			return a;
		}
	pclose(p);
	fail_msg("no symbol %s in %s", name, file);
	return 0;
}

static uint32_t rule_at(const struct unwind_table *t, const char *file, const char *name,
			uint64_t off)
{
	return unwind_table__lookup(t, sym_addr(file, name) + off);
}

/*
 * crti.o's _init and _fini have no CFI (glibc's sysdeps/x86_64/crti.S):
 * rows of their known shape, sub $8,%rsp ... add $8,%rsp; ret (Debian 12's
 * crti.o has no endbr64; node's, built with CET, has: ready.sh)
 */
static void test_crt_init(void **state)
{
	const char *exe = tpath("nofp");
	struct unwind_table *t;
	int fd = open(exe, O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(unwind_table__build_fd(fd, exe, &t), 0);
	close(fd);
	assert_int_equal(rule_at(t, exe, "_init", 0), BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, 8, 0));
	assert_int_equal(rule_at(t, exe, "_init", 4), BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, 16, 0));
	/* the return address of crti's call *%rax (__gmon_start__) */
	assert_int_equal(rule_at(t, exe, "_init", 0x12),
			 BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, 16, 0));
	assert_int_equal(rule_at(t, exe, "_fini", 4), BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, 16, 0));
	assert_int_equal(rule_at(t, exe, "_fini", 8), BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, 8, 0));
	unwind_table__free(t);
}

/* capture what the builder warns: stderr into a file for the call */
static int build_capture(const char *path, struct unwind_table **t, char *msg, size_t size)
{
	int saved = dup(2), fd, err;
	FILE *f;
	size_t n;

	fflush(stderr);
	fd = open(tpath("stderr"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	dup2(fd, 2);
	close(fd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	err = unwind_table__build_fd(fd, path, t);
	close(fd);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fopen(tpath("stderr"), "r");
	assert_non_null(f);
	n = fread(msg, 1, size - 1, f);
	msg[n] = 0;
	fclose(f);
	return err;
}

static void test_hostile_cfi(void **state)
{
	struct unwind_table *t = NULL;
	char so[512];
	char msg[4096];
	int err;

	snprintf(so, sizeof(so), "%s", tpath("hostile.so"));
	err = build_capture(so, &t, msg, sizeof(msg));
	assert_int_equal(err, 0);
	/*
	 * f_unknown's, f_bigreg's and f_deep's FDEs are refused: one warning
	 * naming file and offset
	 */
	assert_non_null(strstr(msg, so));
	assert_non_null(strstr(msg, ".eh_frame at 0x"));
	assert_non_null(strstr(msg, "3 FDEs without rows"));

	/* f_fp: rsp+8 at entry, rsp+16 after push, rbp+16 with rbp at CFA-16 */
	assert_int_equal(rule_at(t, so, "f_fp", 0),
			 BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, 8, 0));
	assert_int_equal(rule_at(t, so, "f_fp", 1),
			 BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, 16, -2));
	assert_int_equal(rule_at(t, so, "f_fp", 4),
			 BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 1, 16, -2));
	/*
	 * after `pop %rbp` (rsp+8, the CFI still saying rbp at CFA-16, below
	 * rsp): rbp unchanged, as the copy of a stack starts at rsp (node's
	 * CRYPTO_THREAD_read_lock's `ret` was a read fault)
	 */
	assert_int_equal(rule_at(t, so, "f_fp", 6),
			 BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, 8, 0));
	/* negative CFA offset, CFA in r12, unknown opcode: NONE, never END */
	assert_int_equal(rule_at(t, so, "f_neg", 0),
			 BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, 8, 0));
	assert_int_equal(rule_at(t, so, "f_neg", 1), BPFPROF_UNWIND_NONE);
	assert_int_equal(rule_at(t, so, "f_r12", 1), BPFPROF_UNWIND_NONE);
	assert_int_equal(rule_at(t, so, "f_unknown", 0), BPFPROF_UNWIND_NONE);
	assert_int_equal(rule_at(t, so, "f_unknown", 1), BPFPROF_UNWIND_NONE);
	assert_int_equal(rule_at(t, so, "f_end", 0), BPFPROF_UNWIND_END);
	assert_int_equal(rule_at(t, so, "f_rbp_reg", 1), BPFPROF_UNWIND_NONE);
	assert_int_equal(rule_at(t, so, "f_bigoff", 1), BPFPROF_UNWIND_NONE);
	assert_int_equal(rule_at(t, so, "f_rbp_pos", 1),
			 BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, 8, 3));
	assert_int_equal(rule_at(t, so, "f_rbp_zero", 1), BPFPROF_UNWIND_NONE);
	assert_int_equal(rule_at(t, so, "f_rbp_far", 1), BPFPROF_UNWIND_NONE);
	assert_int_equal(rule_at(t, so, "f_ra_moved", 1), BPFPROF_UNWIND_NONE);
	assert_int_equal(rule_at(t, so, "f_expr", 1), BPFPROF_UNWIND_NONE);
	assert_int_equal(rule_at(t, so, "f_plt", 1),
			 BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_PLT, 0, 8, 11));
	assert_int_equal(rule_at(t, so, "f_plt", 2),
			 BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_PLT, 0, 8, 10));
	assert_int_equal(rule_at(t, so, "f_plt12", 1), BPFPROF_UNWIND_NONE);
	assert_int_equal(rule_at(t, so, "f_signal", 0), BPFPROF_UNWIND_SIGNAL);
	assert_int_equal(rule_at(t, so, "f_signal", 1), BPFPROF_UNWIND_SIGNAL);
	assert_int_equal(rule_at(t, so, "f_bigreg", 0), BPFPROF_UNWIND_NONE);
	assert_int_equal(rule_at(t, so, "f_bigreg", 2), BPFPROF_UNWIND_NONE);
	assert_int_equal(rule_at(t, so, "f_deep", 0), BPFPROF_UNWIND_NONE);
	/* remember/restore: after the ret, the pushed state again */
	assert_int_equal(rule_at(t, so, "f_state", 1),
			 BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, 16, -2));
	assert_int_equal(rule_at(t, so, "f_state", 2),
			 BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, 8, 0));
	assert_int_equal(rule_at(t, so, "f_state", 3),
			 BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, 16, -2));
	/* the gap before f_after_gap has no CFI */
	assert_int_equal(rule_at(t, so, "f_after_gap", -1), BPFPROF_UNWIND_NONE);
	assert_int_equal(rule_at(t, so, "f_after_gap", 0),
			 BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, 8, 0));
	assert_int_equal(rule_at(t, so, "f_after_gap", 2), BPFPROF_UNWIND_NONE);
	unwind_table__free(t);
}

/* ---- corrupted copies of a real file ---- */

struct section_at {
	uint64_t off, size;
	uint64_t shdr; /* file offset of its section header */
};

static struct section_at find_section_at(const char *path, const char *name)
{
	struct section_at s = { 0 };
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		gelf_getshdr(scn, &sh);
		if (!strcmp(elf_strptr(elf, shstrndx, sh.sh_name), name)) {
			GElf_Ehdr eh;

			gelf_getehdr(elf, &eh);
			s.off = sh.sh_offset;
			s.size = sh.sh_size;
			s.shdr = eh.e_shoff + elf_ndxscn(scn) * sizeof(Elf64_Shdr);
		}
	}
	elf_end(elf);
	close(fd);
	assert_true(s.size > 0);
	return s;
}

static struct section_at find_eh_frame(const char *path)
{
	return find_section_at(path, ".eh_frame");
}

static uint8_t *load(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, st.st_size), st.st_size);
	close(fd);
	*len = st.st_size;
	return buf;
}

static void store(const char *path, const uint8_t *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

/*
 * Every CIE "zR" of .eh_frame: aug != 0 writes it over the 'R', else the 'R'
 * encoding (pcrel|sdata4, after code and data alignment, ra register and
 * augmentation length, one byte each) becomes DW_EH_PE_aligned. Returns how
 * many CIEs it changed.
 */
static int patch_cies(uint8_t *buf, const struct section_at *eh, char aug)
{
	uint64_t off = eh->off;
	int n = 0;

	while (off + 8 <= eh->off + eh->size) {
		uint32_t l = get32(buf + off);

		if (!l || l == 0xffffffff)
			break;
		if (!get32(buf + off + 4)) {
			assert_memory_equal(buf + off + 9, "zR", 3);
			assert_int_equal(buf[off + 9 + 3 + 4], 0x1b);
			if (aug)
				buf[off + 10] = aug;
			else
				buf[off + 9 + 3 + 4] = 0x50;
			n++;
		}
		off += 4 + (uint64_t)l;
	}
	return n;
}

/* readelf's count of FDEs whose CIE is not the first one (at offset 0) */
static unsigned int fdes_not_of_first_cie(const char *file)
{
	char cmd[1024], line[512];
	unsigned int n = 0;
	FILE *p;

	snprintf(
		cmd, sizeof(cmd),
		"readelf --debug-dump=frames '%s' | grep ' FDE cie=' | grep -vc ' FDE cie=00000000 '",
		file);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (fgets(line, sizeof(line), p))
		n = strtoul(line, NULL, 10);
	pclose(p);
	return n;
}

static void test_corrupt(void **state)
{
	char src[512], bad[512];
	struct unwind_table *t = NULL;
	struct section_at eh;
	uint8_t *orig, *buf;
	size_t len, cie_len, fde, i;
	char msg[4096], want[128];
	uint64_t main_addr;
	int err;

	snprintf(src, sizeof(src), "%s", tpath("nofp"));
	snprintf(bad, sizeof(bad), "%s", tpath("bad"));
	eh = find_eh_frame(src);
	main_addr = sym_addr(src, "main");

	orig = load(src, &len);
	buf = malloc(len);
	assert_non_null(buf);
	/* the first entry is a CIE "zR" (gcc's crt files and ours) */
	cie_len = get32(orig + eh.off);
	assert_int_equal(get32(orig + eh.off + 4), 0);
	assert_memory_equal(orig + eh.off + 9, "zR", 3);
	fde = eh.off + 4 + cie_len;
	assert_true(get32(orig + fde + 4) != 0);

	/* 1. an FDE whose length runs past the section */
	memcpy(buf, orig, len);
	put32(buf + fde, 0x7ffffff0);
	store(bad, buf, len);
	err = build_capture(bad, &t, msg, sizeof(msg));
	assert_int_equal(err, -EINVAL);
	assert_null(t);
	snprintf(want, sizeof(want), ".eh_frame at 0x%llx", (unsigned long long)(fde - eh.off));
	assert_non_null(strstr(msg, want));
	assert_non_null(strstr(msg, bad));

	/* 2. the 64-bit length escape with a huge length */
	memcpy(buf, orig, len);
	put32(buf + fde, 0xffffffff);
	put32(buf + fde + 4, 0xfffffff0);
	put32(buf + fde + 8, 0x7fffffff);
	store(bad, buf, len);
	assert_int_equal(build_capture(bad, &t, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, want));

	/* 3. .eh_frame cut in the middle of an entry (its sh_size halved) */
	memcpy(buf, orig, len);
	assert_int_equal(get32(buf + eh.shdr + offsetof(Elf64_Shdr, sh_size)), eh.size);
	put32(buf + eh.shdr + offsetof(Elf64_Shdr, sh_size), eh.size / 2 + 1);
	store(bad, buf, len);
	err = build_capture(bad, &t, msg, sizeof(msg));
	assert_int_equal(err, -EINVAL);
	assert_non_null(strstr(msg, bad));
	assert_non_null(strstr(msg, ".eh_frame at 0x"));

	/* 3b. the file cut in the middle of .eh_frame: no section headers left */
	store(bad, orig, eh.off + eh.size / 2);
	err = build_capture(bad, &t, msg, sizeof(msg));
	assert_true(err == -ENOENT || err == -EINVAL);
	assert_null(t);

	/* 4. an augmentation not understood ("zQ" in every CIE): every FDE skipped */
	memcpy(buf, orig, len);
	assert_true(patch_cies(buf, &eh, 'Q') >= 2);
	store(bad, buf, len);
	err = build_capture(bad, &t, msg, sizeof(msg));
	assert_int_equal(err, -ENOENT);
	assert_null(t);
	assert_non_null(strstr(msg, "pointer encodings not handled"));
	assert_non_null(strstr(msg, ".eh_frame at 0x"));

	/* 5. an 'R' pointer encoding not handled (DW_EH_PE_aligned) in every CIE */
	memcpy(buf, orig, len);
	assert_true(patch_cies(buf, &eh, 0) >= 2);
	store(bad, buf, len);
	err = build_capture(bad, &t, msg, sizeof(msg));
	assert_int_equal(err, -ENOENT);
	assert_non_null(strstr(msg, "pointer encodings not handled"));

	/* 5b. the same in the first CIE only: its FDEs have no rows, the others do */
	memcpy(buf, orig, len);
	buf[eh.off + 9 + 3 + 4] = 0x50;
	assert_int_equal(orig[eh.off + 9 + 3 + 4], 0x1b);
	store(bad, buf, len);
	err = build_capture(bad, &t, msg, sizeof(msg));
	assert_int_equal(err, 0);
	assert_non_null(strstr(msg, "1 FDEs with pointer encodings not handled"));
	assert_int_equal(t->nr_fdes, fdes_not_of_first_cie(src));
	unwind_table__free(t);
	t = NULL;

	/* 6. an FDE range that wraps around the address space */
	memcpy(buf, orig, len);
	put32(buf + fde + 12, 0xffffffff); /* address_range, sdata4: -1 */
	store(bad, buf, len);
	err = build_capture(bad, &t, msg, sizeof(msg));
	assert_int_equal(err, -EINVAL);
	assert_non_null(strstr(msg, "overflows"));
	assert_non_null(strstr(msg, want));

	/* 7. random byte flips in .eh_frame: any result but a crash; rows stay sorted */
	srand(1);
	for (i = 0; i < 300; i++) {
		size_t j, n = 1 + rand() % 8;

		memcpy(buf, orig, len);
		for (j = 0; j < n; j++)
			buf[eh.off + rand() % eh.size] = rand();
		store(bad, buf, len);
		err = build_capture(bad, &t, msg, sizeof(msg));
		assert_true(err == 0 || err == -EINVAL || err == -ENOENT || err == -ENOTSUP);
		if (!err) {
			for (j = 1; j < t->nr_rows; j++)
				assert_true(t->rows[j].pc > t->rows[j - 1].pc);
			unwind_table__lookup(t, main_addr);
		}
		unwind_table__free(t);
		t = NULL;
	}
	free(buf);
	free(orig);
}

static void test_not_elf_or_no_cfi(void **state)
{
	struct unwind_table *t = (void *)1;
	char msg[4096], path[512];

	snprintf(path, sizeof(path), "%s", tpath("text"));
	write_text(path, "not an ELF file\n");
	assert_int_equal(build_capture(path, &t, msg, sizeof(msg)), -EINVAL);
	assert_null(t);
	/* stripped of all CFI */
	assert_int_equal(
		sh("cd %s && objcopy --remove-section=.eh_frame --remove-section=.eh_frame_hdr "
		   "nofp nocfi",
		   tmp_dir),
		0);
	snprintf(path, sizeof(path), "%s", tpath("nocfi"));
	assert_int_equal(build_capture(path, &t, msg, sizeof(msg)), -ENOENT);
	assert_null(t);
	assert_int_equal(unwind_table__lookup(NULL, 0x1000), BPFPROF_UNWIND_NONE);
}

/* ---- every CFI section ---- */

static struct unwind_table *build_ok(const char *path)
{
	struct unwind_table *t = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(unwind_table__build_fd(fd, path, &t), 0);
	close(fd);
	return t;
}

static void assert_same_table(const struct unwind_table *a, const struct unwind_table *b)
{
	assert_int_equal(a->base, b->base);
	assert_int_equal(a->end, b->end);
	assert_int_equal(a->nr_fdes, b->nr_fdes);
	assert_int_equal(a->nr_rows, b->nr_rows);
	assert_memory_equal(a->rows, b->rows, (size_t)a->nr_rows * sizeof(*a->rows));
}

/* Set the sh_type of section `name` in the copy of `from` at `to` */
static void copy_with_type(const char *from, const char *to, const char *name, uint32_t type)
{
	struct section_at s = find_section_at(from, name);
	size_t len;
	uint8_t *buf = load(from, &len);

	put32(buf + s.shdr + offsetof(Elf64_Shdr, sh_type), type);
	store(to, buf, len);
	free(buf);
}

/*
 * .eh_frame typed SHT_X86_64_UNWIND, as LLVM's assembler and GNU gold type
 * it (the x86-64 psABI allows either): the same table as SHT_PROGBITS. First
 * our gcc-built program with the type patched, then the same sources built
 * by clang-14 and linked by gold, against readelf.
 */
static void test_x86_64_unwind(void **state)
{
	struct unwind_table *a, *b;
	struct compare_stats st;

	copy_with_type(tpath("nofp"), tpath("nofp-x86u"), ".eh_frame", SHT_X86_64_UNWIND);
	copy_with_type(tpath("nofp-x86u"), tpath("nofp-x86u"), ".eh_frame_hdr", SHT_X86_64_UNWIND);
	assert_int_equal(sh("readelf -SW %s | grep -q ' .eh_frame  *X86_64_UNWIND '",
			    tpath("nofp-x86u")),
			 0);
	a = build_ok(tpath("nofp"));
	b = build_ok(tpath("nofp-x86u"));
	assert_same_table(a, b);
	unwind_table__free(a);
	unwind_table__free(b);

	if (sh("command -v clang-14 >/dev/null && command -v ld.gold >/dev/null"))
		skip();
	assert_int_equal(
		sh("cd %s && clang-14 -O2 -fomit-frame-pointer -fuse-ld=gold -fPIC -shared lib.c "
		   "-o libgold.so && clang-14 -O2 -fomit-frame-pointer -fuse-ld=gold main.c -L. "
		   "-lgold -pthread -o gold && readelf -SW gold | grep -q ' .eh_frame  *X86_64_UNWIND ' && "
		   "readelf -SW libgold.so | grep -q ' .eh_frame  *X86_64_UNWIND '",
		   tmp_dir),
		0);
	compare_with_readelf(tpath("gold"), ".eh_frame", 50, &st);
	assert_true(st.kinds[BPFPROF_UNWIND_END] >= 1); /* _start */
	compare_with_readelf(tpath("libgold.so"), ".eh_frame", 5, &st);
}

/*
 * A separate debug file's .eh_frame has no bits (SHT_NOBITS): its
 * .debug_frame is read instead, and a file whose only .eh_frame has no bits
 * has no CFI.
 */
static void test_nobits_eh_frame(void **state)
{
	struct unwind_table *t = (void *)1;
	struct compare_stats st;
	char msg[4096];

	assert_int_equal(
		sh("cd %s && objcopy --only-keep-debug nofp-dbg.full nofp-dbg.debug && "
		   "readelf -SW nofp-dbg.debug 2>/dev/null | grep -q ' .eh_frame  *NOBITS '",
		   tmp_dir),
		0);
	compare_with_readelf(tpath("nofp-dbg.debug"), ".debug_frame", 20, &st);
	assert_true(st.kinds[BPFPROF_UNWIND_CFA] >= 3);
	copy_with_type(tpath("nofp"), tpath("nofp-nobits"), ".eh_frame", SHT_NOBITS);
	assert_int_equal(build_capture(tpath("nofp-nobits"), &t, msg, sizeof(msg)), -ENOENT);
	assert_null(t);
}

static void copy_with_type(const char *from, const char *to, const char *name, uint32_t type);

/*
 * Without section headers (sstrip), .eh_frame is found through
 * PT_GNU_EH_FRAME (.eh_frame_hdr), as the run-time unwinder finds it: the
 * same table. A header of an unknown version: no CFI.
 */
static void test_no_section_headers(void **state)
{
	struct unwind_table *a, *b, *t = (void *)1;
	const char *bins[] = { "nofp", "libnofp.so", "/usr/bin/xz" };
	char msg[4096], path[512];
	size_t len, i;

	for (i = 0; i < sizeof(bins) / sizeof(bins[0]); i++) {
		const char *src = bins[i][0] == '/' ? bins[i] : tpath(bins[i]);
		struct section_at hdr;
		uint8_t *buf;
		Elf64_Ehdr *eh;

		if (access(src, R_OK))
			continue;
		hdr = find_section_at(src, ".eh_frame_hdr");
		buf = load(src, &len);
		eh = (Elf64_Ehdr *)buf;
		eh->e_shoff = 0;
		eh->e_shnum = 0;
		eh->e_shstrndx = 0;
		eh->e_shentsize = 0;
		snprintf(path, sizeof(path), "%s", tpath("noshdr"));
		store(path, buf, len);
		/*
		 * the same table as from the section headers, but for crti.o's
		 * _init and _fini (found by their section headers): against a
		 * copy whose .init and .fini are SHT_NOBITS
		 */
		copy_with_type(src, tpath("noinit1"), ".init", SHT_NOBITS);
		copy_with_type(tpath("noinit1"), tpath("noinit"), ".fini", SHT_NOBITS);
		a = build_ok(tpath("noinit"));
		b = build_ok(path);
		assert_same_table(a, b);
		unwind_table__free(a);
		unwind_table__free(b);

		buf[hdr.off] = 2; /* .eh_frame_hdr's version */
		store(path, buf, len);
		assert_int_equal(build_capture(path, &t, msg, sizeof(msg)), -ENOENT);
		assert_null(t);
		free(buf);
	}
}

static void test_rule_roundtrip(void **state)
{
	static const unsigned int offs[] = { 0, 8, 16, 160, 4096, 65535 };
	static const int slots[] = { BPFPROF_UNWIND_RBP_SLOT_MIN, -300, -2, -1, 0, 1, 2,
				     BPFPROF_UNWIND_RBP_SLOT_MAX };
	unsigned int kind, rbp, o, s;

	for (kind = 0; kind <= BPFPROF_UNWIND_SIGNAL; kind++)
		for (rbp = 0; rbp < 2; rbp++)
			for (o = 0; o < sizeof(offs) / sizeof(offs[0]); o++)
				for (s = 0; s < sizeof(slots) / sizeof(slots[0]); s++) {
					uint32_t r =
						BPFPROF_UNWIND_RULE(kind, rbp, offs[o], slots[s]);

					assert_int_equal(BPFPROF_UNWIND_KIND(r), kind);
					assert_int_equal(!!(r & BPFPROF_UNWIND_CFA_RBP), rbp);
					assert_int_equal(BPFPROF_UNWIND_CFA_OFF(r), offs[o]);
					assert_int_equal(BPFPROF_UNWIND_RBP_SLOT(r), slots[s]);
				}
	/* the PLT rule keeps its threshold where CFA rules keep the rbp slot */
	assert_int_equal(BPFPROF_UNWIND_RBP_SLOT(BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_PLT, 0, 8, 11)),
			 11);
	/* NONE is the all-zero word: a zeroed row array means "no CFI" */
	assert_int_equal(BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_NONE, 0, 0, 0), 0);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The fast row generator against libdw, the oracle: the same rows, row for
 * row, on the host's large files (those installed of: Debian's LLVM, node,
 * cc1, libjvm, libz3, libstdc++, perl, libc, python3.11), and how many rows
 * a second each builds (docs/BENCHMARKS.md).
 */
static void test_fast_vs_libdw(void **state)
{
	static const char *const files[] = {
		"/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/bin/python3.11",
		"/usr/lib/x86_64-linux-gnu/libperl.so.5.36",
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/usr/lib/gcc/x86_64-linux-gnu/12/cc1",
		"/usr/bin/node",
		"/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so",
		"/usr/lib/x86_64-linux-gnu/libz3.so.4",
		"/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
		"/usr/lib/x86_64-linux-gnu/libclang-cpp.so.14",
	};
	double t_fast = 0, t_dw = 0;
	uint64_t rows = 0;
	int done = 0;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct unwind_table *fast, *dw;
		double t0, t1, t2;
		int fd = open(files[i], O_RDONLY);

		if (fd < 0)
			continue;
		t0 = now_s();
		assert_int_equal(unwind_table__build_fd(fd, files[i], &fast), 0);
		t1 = now_s();
		unwind_table_libdw_only = true;
		assert_int_equal(unwind_table__build_fd(fd, files[i], &dw), 0);
		unwind_table_libdw_only = false;
		t2 = now_s();
		close(fd);
		assert_int_equal(fast->base, dw->base);
		assert_int_equal(fast->end, dw->end);
		assert_int_equal(fast->nr_rows, dw->nr_rows);
		for (uint32_t r = 0; r < dw->nr_rows; r++)
			if (fast->rows[r].pc != dw->rows[r].pc || fast->rows[r].rule != dw->rows[r].rule)
				fail_msg("%s: row %u: fast {0x%x, 0x%x}, libdw {0x%x, 0x%x}", files[i], r,
					 fast->rows[r].pc, fast->rows[r].rule, dw->rows[r].pc,
					 dw->rows[r].rule);
		print_message("  %s: %u rows, %.1f MiB of CFI: fast %.1f ms (%.2f M rows/s), libdw %.1f ms (%.2f M rows/s)\n",
			      files[i], dw->nr_rows, fast->cfi_bytes / 1048576.0, (t1 - t0) * 1e3,
			      dw->nr_rows / (t1 - t0) / 1e6, (t2 - t1) * 1e3,
			      dw->nr_rows / (t2 - t1) / 1e6);
		rows += dw->nr_rows;
		t_fast += t1 - t0;
		t_dw += t2 - t1;
		done++;
		unwind_table__free(fast);
		unwind_table__free(dw);
	}
	assert_true(done >= 2);
	print_message("  all: %llu rows, fast %.2f M rows/s, libdw %.2f M rows/s (%.1fx)\n",
		      (unsigned long long)rows, rows / t_fast / 1e6, rows / t_dw / 1e6, t_dw / t_fast);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_roundtrip),
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_python),
		cmocka_unit_test(test_xz),
		cmocka_unit_test(test_nofp),
		cmocka_unit_test(test_crt_init),
		cmocka_unit_test(test_debug_frame),
		cmocka_unit_test(test_hostile_cfi),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_not_elf_or_no_cfi),
		cmocka_unit_test(test_x86_64_unwind),
		cmocka_unit_test(test_nobits_eh_frame),
		cmocka_unit_test(test_no_section_headers),
		cmocka_unit_test(test_fast_vs_libdw),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
