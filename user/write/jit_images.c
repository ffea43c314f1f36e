// SPDX-License-Identifier: MIT
/* Which processes get JIT images, and why JIT code stayed unnamed (include/jit_images.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "jit_elf.h"
#include "jit_images.h"
#include "jvm_perfmap.h"
#include "log.h"
#include "sym_python.h"
#include "symbolize.h"

int jit_images__plan(struct profile *p, uint32_t proc, const struct symbolizer *sy, const char *dir,
		     bool ask_jvm)
{
	const struct profile_process *pr = &p->procs[proc];

	if (!dir ||
	    !(symbolizer__has_jit(sy, pr) || pr->py_start || (ask_jvm && jvm_perfmap__is_jvm(pr))))
		return 0;
	return jit_elf__plan(p, proc, dir) < 0 ? -ENOMEM : 0;
}

void jit_images__write(struct profile *p, struct symbolizer *sy, const char *dir, unsigned mode)
{
	bool made_dir = false;

	for (uint32_t i = 0; dir && i < p->nr_procs; i++) {
		struct profile_process *pr = &p->procs[i];
		const struct jit_table *t;
		struct jit_table *merged = NULL;
		int werr;

		if (!pr->nr_samples || (!symbolizer__has_jit(sy, pr) && !pr->nr_pyfuncs))
			continue;
		if (jit_elf__plan(p, i, dir) < 0)
			return;
		t = symbolizer__has_jit(sy, pr) ? symbolizer__jit_table(sy, p, i) : NULL;
		if (pr->nr_pyfuncs) {
			/* Python functions name the process's Python region (sym_python.h) */
			merged = sym_python__jit_table(p, i, t);
			if (!merged && errno == ENOMEM)
				return;
			t = merged;
		}
		if (!pr->nr_jit_maps || !t) {
			jitdump__free(merged);
			continue;
		}
		if (!made_dir && mkdir(dir, 0755) && errno != EEXIST) {
			pr_warn("cannot create '%s': %s; JIT frames stay unnamed in .prof and perf.data\n",
				dir, strerror(errno));
			return;
		}
		made_dir = true;
		werr = jit_elf__write(p, i, t, mode);
		jitdump__free(merged);
		if (!werr)
			pr_info("wrote %zu JIT images of pid %u to '%s'\n", pr->nr_jit_maps,
				pr->pid, dir);
	}
}

bool jit_images__why_unnamed(void *ctx, const struct profile *p, uint32_t proc, char *buf,
			     size_t size)
{
	const struct profile_process *pr = &p->procs[proc];
	const struct jit_images_why *w = ctx;
	bool dump, map;

	symbolizer__jit_sources(w->sy, pr, &dump, &map);
	if (jvm_perfmap__is_jvm(pr) && !map) {
		int err = jvm_perfmaps__err(w->jvm, pr->pid);

		snprintf(
			buf, size,
			"the JVM wrote no perf map (%s); run 'jcmd %u Compiler.perfmap' before the "
			"profile ends, or start it with -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit",
			w->no_jvm_perfmap ? "--no-jvm-perfmap" :
			err == -EPERM	  ? "it does not catch SIGQUIT (-Xrs): not asked" :
			err == -EACCES ?
					"no right to signal it: bpfprof needs CAP_KILL or its uid" :
			err == -ESRCH || err == -ENOENT ? "it had exited" :
							  strerror(-err),
			pr->pid);
	} else if (pr->py_dso && !strcmp(pr->py_dso, SYM_JS_DSO)) {
		/* node's JavaScript frames are named from its heap: no flag to ask for */
		snprintf(buf, size,
			 "the JavaScript frames V8's walk could not name (samples walked from stack "
			 "copies while the process's unwind tables were built, a leaf in a function's "
			 "prologue or epilogue, code no frame was seen in)");
	} else if (dump) {
		snprintf(
			buf, size,
			"not in its jitdump yet (V8 writes it through a stdio buffer, flushed in 4 KiB "
			"blocks, and the rest of the code compiled last was not there); run node with "
			"--perf-basic-prof too (its perf map is written line by line), or let it exit before the "
			"profile ends");
	} else if (map) {
		snprintf(
			buf, size,
			"not in its perf map /tmp/perf-PID.map (code made after the map was written, "
			"or never listed)");
	} else {
		snprintf(
			buf, size,
			"no jitdump or /tmp/perf-PID.map was found; run node with --perf-prof or "
			"--perf-basic-prof, Python 3.12+ with -X perf, a JVM with a perf-map agent (HotSpot 17+: "
			"asked at the end unless --no-jvm-perfmap)");
	}
	return true;
}
