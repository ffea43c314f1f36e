/* SPDX-License-Identifier: MIT */
/*
 * The BPF <-> userspace ABI: ring-buffer record layouts, map keys and the
 * compile-time limits both sides agree on. The BPF program (bpf/) includes
 * it after vmlinux.h; the user side includes <linux/types.h> first. Every record starts
 * with a __u32 type tag, padding is spelled out, and the sizes are asserted so
 * that both compilers check the same layout.
 */
#ifndef BPFPROF_ABI_H
#define BPFPROF_ABI_H

#ifndef __bpf__
#include <linux/types.h> /* the BPF side gets these from vmlinux.h */
#endif

/*
 * bpf_get_stack() depth of the kernel stack, and the default user depth
 * (--max-stack): perf's default kernel.perf_event_max_stack
 */
#define BPFPROF_MAX_STACK 127
/* The deepest user stack a sample can hold (--max-stack at most) */
#define BPFPROF_MAX_USER_STACK 512
#define BPFPROF_TASK_COMM_LEN 16

enum bpfprof_rec_type {
	BPFPROF_REC_SAMPLE = 1,
	BPFPROF_REC_USTACK_COPY = 2, /* --check-unwind: struct bpfprof_ustack_copy */
	BPFPROF_REC_OFFCPU = 3, /* --off-cpu: struct bpfprof_offcpu */
	BPFPROF_REC_NOTICE = 4, /* the `notices` ring: struct bpfprof_notice */
	/* a sample whose user stack is for user space to unwind: struct bpfprof_sample_copy */
	BPFPROF_REC_SAMPLE_COPY = 5,
};

/* Indices into the per-CPU `stats` array. */
enum bpfprof_stat {
	BPFPROF_STAT_SAMPLES = 0, /* records submitted to the ring buffer */
	BPFPROF_STAT_DROPPED = 1, /* ring buffer full: sample lost */
	BPFPROF_STAT_FILTERED = 2, /* sample ran the program but matched no target */
	/* --check-user-stacks: the frame-pointer walk against bpf_get_stack(BPF_F_USER_STACK) */
	BPFPROF_STAT_USTACK_SAME = 3, /* ours is the kernel's */
	BPFPROF_STAT_USTACK_SHORTER =
		4, /* ours is its first part: the kernel went on through garbage */
	BPFPROF_STAT_USTACK_DIFF = 5, /* ours differs somewhere */
	/* --off-cpu (struct bpfprof_offcpu) */
	BPFPROF_STAT_OFFCPU = 6, /* blocks at or above the threshold sent */
	BPFPROF_STAT_OFFCPU_DROPPED = 7, /* such blocks lost: ring buffer full */
	BPFPROF_STAT_OFFCPU_FULL =
		8, /* blocks not followed: no task slot, or `offcpu_pending` full */
	BPFPROF_STAT_OFFCPU_SHORT = 9, /* blocks below the threshold: left out */
	BPFPROF_STAT_OFFCPU_SHORT_NS = 10, /* their total blocked time, ns */
	BPFPROF_STAT_OFFCPU_KERNEL_ONLY =
		11, /* blocks sent without user frames (not in a system call) */
	/* How each user-stack walk ended (one per walk), and how its frames were stepped */
	BPFPROF_STAT_WALK_END =
		12, /* at a frame whose return address is undefined: _start, clone3 */
	BPFPROF_STAT_WALK_FP_END =
		13, /* a frame-pointer chain ended (rbp 0 or not a stack address) */
	BPFPROF_STAT_WALK_NO_MAPPING = 14, /* a pc outside the process's executable mappings */
	BPFPROF_STAT_WALK_READ_FAULT = 15, /* a stack read failed (not mapped, not present) */
	BPFPROF_STAT_WALK_LIMIT = 16, /* --max-stack frames */
	BPFPROF_STAT_WALK_BAD =
		17, /* a frame that does not go up the stack, a loop, a 0 return address */
	BPFPROF_STAT_WALK_NOT_READY = 18, /* walked by frame pointers for want of tables: the
					     process's were not loaded yet and no copy was sent
					     (off-CPU blocks; user space: a process gone unread) */
	BPFPROF_STAT_FRAMES_CFI = 19, /* frames stepped with a CFI row */
	BPFPROF_STAT_FRAMES_FP =
		20, /* frames stepped with frame pointers (no row, no table, not ready) */
	BPFPROF_STAT_CHECK_COPIES = 21, /* --check-unwind stack copies sent */
	/*
	 * Python (struct bpfprof_py_proc): samples of a Python process whose
	 * native walk went through the eval loop, and how their Python walk ended
	 */
	BPFPROF_STAT_PY_WALKS = 22, /* Python walks begun */
	BPFPROF_STAT_PY_END = 23, /* the chain's end (the thread's first frame) */
	BPFPROF_STAT_PY_NO_TSTATE = 24, /* no thread state: TSS key unset, not this thread's */
	BPFPROF_STAT_PY_READ_FAULT = 25, /* a frame or code object not readable (not present) */
	BPFPROF_STAT_PY_BAD = 26, /* not a code object, a loop, a misaligned pointer */
	BPFPROF_STAT_PY_LIMIT = 27, /* BPFPROF_MAX_PY_FRAMES frames: the older ones left out */
	BPFPROF_STAT_PY_NO_EVAL = 28, /* a Python process's sample outside the eval loop: no walk */
	BPFPROF_STAT_PY_FRAMES = 29, /* Python frames recorded */
	/*
	 * Samples sent as struct bpfprof_sample_copy, their user stack for user
	 * space to unwind with the same tables (user/unwind/unwind_step.c):
	 * the process's tables were not loaded yet, or the walk met an address
	 * outside its registered mappings (a library mapped since)
	 */
	BPFPROF_STAT_COPY_NOT_READY = 30,
	BPFPROF_STAT_COPY_NO_MAPPING = 31,
	BPFPROF_STAT_COPY_BYTES = 32, /* their bytes in the ring buffer */
	/*
	 * Samples sent as copies because a frame-pointer step of a process
	 * registered moments before left its registered mappings (JIT code
	 * mapped since; bpf/unwind.bpf.h YOUNG_NS)
	 */
	BPFPROF_STAT_COPY_FP_UNMAPPED = 33,
	/*
	 * HotSpot (struct bpfprof_hotspot_proc): native walks of a JVM that
	 * reached its code cache, the Java frames stepped, and how the Java
	 * part of a walk ended where it did not go back to native code
	 */
	BPFPROF_STAT_HS_WALKS = 40, /* walks that stepped at least one Java frame */
	BPFPROF_STAT_HS_FRAMES = 41, /* code-cache frames stepped (Java methods and stubs) */
	BPFPROF_STAT_HS_NATIVE = 42, /* the Java part went back to native code (call stub) */
	BPFPROF_STAT_HS_NO_BLOB = 43, /* a pc in the code cache in no CodeBlob (segment map) */
	BPFPROF_STAT_HS_READ_FAULT = 44, /* a CodeBlob, its name or a frame slot not readable */
	BPFPROF_STAT_HS_BAD = 45, /* a frame that does not go up the stack, a bad pointer */
	BPFPROF_STAT_HS_LIMIT = 46, /* BPFPROF_MAX_PY_FRAMES Java frames: the older ones not recorded */
	BPFPROF_STAT_HS_NO_RA = 47, /* a compiled frame's return address not found */
	/*
	 * V8 (struct bpfprof_v8_proc, bpf/v8.bpf.h): samples of a V8 process,
	 * the JavaScript frames found on their frame-pointer chain, and why a
	 * sample's JavaScript part ended or had none
	 */
	BPFPROF_STAT_V8_WALKS = 50, /* samples of a V8 process whose frames were looked at */
	BPFPROF_STAT_V8_FRAMES = 51, /* JavaScript frames recorded */
	BPFPROF_STAT_V8_END = 52, /* walks with JavaScript frames, to the chain's end */
	BPFPROF_STAT_V8_NONE = 53, /* walks without a JavaScript frame (native code, idle loop) */
	BPFPROF_STAT_V8_LIMIT = 54, /* BPFPROF_MAX_PY_FRAMES frames: the older ones left out */
	BPFPROF_STAT_V8_NOT_FUNCTION =
		55, /* a frame that looked like JavaScript (context slot a heap object) but whose
		       function slot was no readable JSFunction: native code's garbage, skipped */
	BPFPROF_STAT_V8_NO_CODE = 56, /* a JSFunction whose Code was not readable: no offset */
	BPFPROF_STAT_V8_TYPED = 57, /* typed frames passed (entry, exit, stub, internal markers) */
	BPFPROF_STAT_V8_CACHED = 58, /* frames classified from the per-CPU cache: no user read */
	/*
	 * Walks not done: more than half of the ring buffer waited for the
	 * reader, so the record went with its leaf only, and no stack copy,
	 * that records keep fitting (bpf/unwind.bpf.h walk_begin)
	 */
	BPFPROF_STAT_WALK_SHED = 60,
	BPFPROF_STAT_NR = 80, /* 40-49 HotSpot's, 50-59 V8's, 60-79 the walk's costs */
};

/* Interpreter frames (Python, Java, JavaScript) a sample records at most (the thread's newest ones) */
#define BPFPROF_MAX_PY_FRAMES 128

/*
 * One stack sample. Only the first
 *   offsetof(struct bpfprof_sample, ips) + (nr_kernel + nr_user + 2 * nr_py) * 8
 * bytes are sent: ips[0..nr_kernel) are kernel addresses, leaf first (at
 * most BPFPROF_MAX_STACK), followed by nr_user user addresses, leaf first
 * (at most --max-stack, BPFPROF_MAX_USER_STACK). For a sample taken in kernel mode the
 * user part is the user stack at kernel entry (from the task's saved pt_regs).
 * Then nr_py interpreter frames of the sampled thread, newest first, two
 * words each, which the process's interpreter defines (a process has
 * one): Python's below (struct bpfprof_py_proc says how they are read),
 * Java's at struct bpfprof_hotspot_proc, JavaScript's at struct
 * bpfprof_v8_proc. Python:
 *   word 0  the code object's address; bit 0 (BPFPROF_PY_ACT_END) set on the
 *           oldest frame of an eval-loop activation (3.11's is_entry frame,
 *           the frame above 3.12+'s C-stack shim, every frame before 3.11)
 *   word 1  bits 0-31: the instruction, in bytes from the code object's
 *           start (3.11+: prev_instr/instr_ptr - code; before: f_lasti's
 *           byte offset + BPFPROF_PY_LASTI_BIAS), bits 32-63: a check sum of
 *           the code object (BPFPROF_PY_CSUM) to catch an address reused
 */
struct bpfprof_sample {
	__u32 type; /* BPFPROF_REC_SAMPLE */
	__u32 cpu;
	__u32 tgid; /* process id as the root pid namespace sees it */
	__u32 tid;
	__u64 time_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 cgroup_id; /* cgroup v2 id of the task (inode number of its directory) */
	char comm[BPFPROF_TASK_COMM_LEN];
	__u16 nr_kernel;
	__u16 nr_user;
	/*
	 * Start time of the process (its thread-group leader), in USER_HZ
	 * clock ticks after boot: /proc/PID/stat's starttime, so that (tgid,
	 * start) names one process however its pid is reused; kept across an
	 * exec. 0: unknown.
	 */
	__u32 start;
	__u16 nr_py; /* interpreter frames after the user addresses, 2 words each */
	__u16 py_stop; /* enum bpfprof_stat of the interpreter walk's end; 0: no walk */
	__u32 pad;
	__u64 ips[BPFPROF_MAX_STACK + BPFPROF_MAX_USER_STACK + 2 * BPFPROF_MAX_PY_FRAMES];
};

#define BPFPROF_SAMPLE_HDR_SIZE 64

_Static_assert(sizeof(struct bpfprof_sample) ==
		       BPFPROF_SAMPLE_HDR_SIZE + (BPFPROF_MAX_STACK + BPFPROF_MAX_USER_STACK +
						   2 * BPFPROF_MAX_PY_FRAMES) * 8,
	       "struct bpfprof_sample layout");

/*
 * The CPUs' rings (`cpu_rings`, a BPF_MAP_TYPE_ARRAY with BPF_F_MMAPABLE,
 * one value a possible CPU): a sampled CPU's kept samples (struct
 * bpfprof_sample, as sent through `samples`) go into its own ring, which
 * the BPF program writes with plain stores (no helper call, no lock shared
 * between CPUs) and the reader reads through its mapping of the map. A
 * value:
 *
 *   [0, 64)     struct bpfprof_cpu_ring: head and BPF's own state,
 *               written by BPF only
 *   [64, 128)   tail, written by the reader only, once a drain
 *   [128, 128 + size)             the data, size a power of two
 *   [128 + size, + SLACK)         never written: room the verifier needs
 *                                 for a record at any offset below size
 *
 * head and tail are byte counts that only grow (the kernel's ring buffer's
 * producer and consumer positions); a record is at (pos & (size - 1)).
 * The bytes [tail, head) are records, each a struct bpfprof_cpu_ring_rec
 * and len bytes, the next one BPFPROF_CPU_RING_ALIGN-aligned after it. A
 * record never wraps: where one would not fit before the data's end, a rec
 * with len BPFPROF_CPU_RING_PAD says the rest of the lap is unused (the
 * kernel's ring does the same with its skip records). BPF stores a
 * record's bytes before the head that covers them; the reader loads head
 * (acquire), reads the records, then stores tail (release).
 */
#define BPFPROF_CPU_RING_HDR_SIZE 128
#define BPFPROF_CPU_RING_ALIGN 8
#define BPFPROF_CPU_RING_PAD 0xffffffffu
/* bytes after the data area: a record header and the largest record, rounded to a page */
#define BPFPROF_CPU_RING_SLACK 8192
/* data bytes a CPU's ring holds at least and at most (5.10's array values: 4 MiB at most) */
#define BPFPROF_CPU_RING_MIN (16u << 10)
#define BPFPROF_CPU_RING_MAX (2u << 20)

struct bpfprof_cpu_ring {
	__u64 head; /* BPF: bytes written, the record before it complete */
	/*
	 * BPF's per-CPU state (bpf/state.bpf.h, struct cpu_state), here at
	 * no line's cost of its own: every sample writes head's line. The
	 * reader neither reads nor writes it.
	 */
	__u8 bpf_own[56];
	__u64 tail; /* the reader: bytes read and done with */
	__u8 pad1[56];
};

_Static_assert(sizeof(struct bpfprof_cpu_ring) == BPFPROF_CPU_RING_HDR_SIZE,
	       "struct bpfprof_cpu_ring layout");

struct bpfprof_cpu_ring_rec {
	__u32 len; /* the record's bytes after this header, or BPFPROF_CPU_RING_PAD */
	__u32 pad;
};

_Static_assert(BPFPROF_CPU_RING_SLACK >= sizeof(struct bpfprof_cpu_ring_rec) +
						 sizeof(struct bpfprof_sample) +
						 BPFPROF_CPU_RING_ALIGN,
	       "a record at any offset below the data's size fits in the value");

/*
 * A process's first samples after its exec (the ones that wake the reader
 * at once) are also announced in a small ring buffer of their own,
 * `notices`, which user space reads before the samples' backlog: what a
 * sample needs to be named later (maps, held files, JIT files) is read
 * while the process lives, however many records wait before its own.
 */
struct bpfprof_notice {
	__u32 type; /* BPFPROF_REC_NOTICE */
	__u32 tgid;
	__u32 start; /* as struct bpfprof_sample.start; 0: unknown */
	__u32 nr_seen; /* which of the process's notices since its exec: 1, 2, ... */
	__u64 time_ns; /* bpf_ktime_get_ns() when sent */
};

_Static_assert(sizeof(struct bpfprof_notice) == 24, "struct bpfprof_notice layout");

/*
 * For HotSpot (struct bpfprof_hotspot_proc), one entry per code-cache frame
 * the native walk stepped, in the walk's order:
 *   word 0  bits 0-47: the Method* (interpreted), nmethod* (compiled,
 *           native wrapper) or CodeBlob* (stub); bits 48-51: the kind,
 *           enum bpfprof_hs_kind; bits 52-63: the index among the sample's
 *           user addresses of the frame's pc (0: the leaf)
 *   word 1  interpreted: the bytecode pointer (0: none, a native method),
 *           from which user space has the bci, and its check against reuse
 *           (it must lie in the method's bytecodes); else bits 0-31: the
 *           pc's offset from the blob's code start, bits 32-63: a check
 *           against reuse: the compile id (compiled, native wrapper), the
 *           name's first 4 bytes (stub)
 */
enum bpfprof_hs_kind {
	BPFPROF_HS_INTERPRETED = 1,
	BPFPROF_HS_COMPILED = 2, /* an nmethod: C1 or C2 */
	BPFPROF_HS_NATIVE = 3, /* a native method's wrapper ("native nmethod") */
	BPFPROF_HS_STUB = 4, /* stubs, adapters, the interpreter's own code outside a frame */
};
#define BPFPROF_HS_ADDR(w0) ((w0) & ((1ull << 48) - 1))
#define BPFPROF_HS_KIND(w0) ((__u32)((w0) >> 48) & 15u)
#define BPFPROF_HS_INDEX(w0) ((__u32)((w0) >> 52))
#define BPFPROF_HS_WORD0(addr, kind, index) \
	(((addr) & ((1ull << 48) - 1)) | ((__u64)(kind) << 48) | ((__u64)(index) << 52))

#define BPFPROF_PY_ACT_END 1ull
/* ≤ 3.10: word 1 holds f_lasti's byte offset plus this, so that -1 (not started) stays positive */
#define BPFPROF_PY_LASTI_BIAS 2u
/* The check sum of a code object from its first line, flags and argument counts */
#define BPFPROF_PY_CSUM(firstlineno, flags, argcount)                                  \
	((__u32)(firstlineno) * 2654435761u ^ (__u32)(flags) * 40503u ^ (__u32)(argcount))

/*
 * A Python process's interpreter as user space found it (python_procs.h), in
 * `py_procs` by tgid: where the eval loop's code is (a sample whose user
 * stack has no address there has no Python walk), where the thread state is
 * (the TSS key of _PyRuntime, then the thread's pthread-specific slot, the
 * glibc layout), and the struct offsets of its CPython version. Offsets are
 * bytes; BPFPROF_PY_NONE: no such field.
 */
#define BPFPROF_PY_NONE 0xffff
enum bpfprof_py_entry {
	BPFPROF_PY_ENTRY_FLAG = 1, /* 3.11: the bool at f_entry is set on an activation's first frame */
	BPFPROF_PY_ENTRY_SHIM = 2, /* 3.12+: a frame whose byte at f_entry is 3 (C stack) is a shim */
	BPFPROF_PY_ENTRY_EACH = 3, /* before 3.11: each frame is an activation of its own */
};

struct bpfprof_py_proc {
	__u64 eval_start, eval_end; /* _PyEval_EvalFrameDefault, [start, end) */
	__u64 cold_start, cold_end; /* its .cold part; 0, 0 when unknown */
	__u64 tss; /* &_PyRuntime.autoTSSkey: struct { int initialized; pthread_key_t key; } */
	__u64 code_type; /* &PyCode_Type: a code object's ob_type */
	__u16 version; /* 0x030b for 3.11 */
	__u16 tls_specific; /* glibc: fs base to the first pthread_key_data (key 0's .data at +8) */
	__u16 ts_thread_id; /* PyThreadState.thread_id (pthread_self(), the fs base) */
	__u16 ts_cframe; /* PyThreadState.cframe, or NONE */
	__u16 ts_frame; /* cframe->current_frame, or tstate->current_frame/frame without cframe */
	/* frame fields; f_instr an int (f_lasti) before 3.11 */
	__u16 f_code, f_previous, f_instr, f_entry;
	__u16 co_firstlineno, co_flags, co_argcount;
	__u8 entry; /* enum bpfprof_py_entry */
	__u8 lasti; /* f_instr is f_lasti (an int; code units from 3.10, bytes before) */
	__u16 pad[3];
};

_Static_assert(sizeof(struct bpfprof_py_proc) == 80, "struct bpfprof_py_proc layout");
#define BPFPROF_MAX_PY_PROCS 4096
/* bytes read of a frame and of a code object: every offset used is below */
#define BPFPROF_PY_READ 112

/*
 * A HotSpot JVM as user space read it from its vmStructs tables
 * (interp_hotspot.h), in `hs_procs` by tgid: its code cache, each code
 * heap's bounds and segment map (HotSpot's heap.cpp CodeHeap::find_start),
 * and the offsets of the CodeBlob and nmethod fields the walk reads (bytes,
 * each below BPFPROF_HS_BLOB_READ - 8). Interpreter frames are laid out by
 * HotSpot's frame_x86.hpp (not in the tables): Method* at rbp - 24, bcp at
 * rbp - 64, the sender's sp at rbp - 8; the leaf's bcp is in r13.
 */
#define BPFPROF_HS_HEAPS 4
#define BPFPROF_HS_BLOB_READ 320 /* bytes of a CodeBlob read */
struct bpfprof_hotspot_heap {
	__u64 low, high; /* [low, high): the heap's reservation */
	__u64 segmap; /* its segment map: a byte a segment */
	__u32 log2_segment; /* segment size, log2 (7) */
	__u32 pad;
};

struct bpfprof_hotspot_proc {
	__u64 code_low, code_high; /* CodeCache::_low_bound, _high_bound */
	struct bpfprof_hotspot_heap heap[BPFPROF_HS_HEAPS];
	__u16 nr_heaps;
	__u16 heapblock_size; /* sizeof(HeapBlock): a blob follows its header */
	__u16 blob_name; /* CodeBlob::_name (char *) */
	__u16 blob_frame_complete; /* _frame_complete_offset (int or int16: read as s16) */
	__u16 blob_frame_size; /* _frame_size (int, words) */
	__u16 blob_code_begin; /* _code_begin (pointer) or _code_offset (int: code_offsets) */
	__u16 nm_compile_id; /* nmethod's _compile_id (int) */
	__u16 nm_orig_pc; /* _orig_pc_offset (int) */
	__u16 nm_deopt; /* the deopt handler: pointer, or int offset (deopt_offsets) */
	__u16 blob_size; /* CodeBlob::_size (int, bytes from the blob) */
	__u8 code_offsets; /* blob_code_begin is an int offset from the blob (JDK 23+) */
	__u8 deopt_offsets; /* nm_deopt is an int offset from the blob */
};

_Static_assert(sizeof(struct bpfprof_hotspot_proc) == 16 + 32 * BPFPROF_HS_HEAPS + 24,
	       "struct bpfprof_hotspot_proc layout");
#define BPFPROF_MAX_HS_PROCS 256

/*
 * The interpreters' unwinders one load of the sampler walks with (rodata
 * interp_walks, bpf/interp.bpf.h): the verifier drops the others' code, and
 * user space loads the program again with them when such a process appears
 * (user/capture/session.c, sample_prog_widen). A bit per enum interp_kind.
 */
#define BPFPROF_WALK_PYTHON (1u << 0)
#define BPFPROF_WALK_HOTSPOT (1u << 1)
#define BPFPROF_WALK_V8 (1u << 2)
#define BPFPROF_WALK_INTERPS (BPFPROF_WALK_PYTHON | BPFPROF_WALK_HOTSPOT | BPFPROF_WALK_V8)

/*
 * A V8 process (node) as user space found it (interp_v8.h, from the
 * v8dbg_* postmortem metadata of its binary), in `v8_procs` by tgid: the
 * slots below a JavaScript frame's frame pointer (V8's frame-constants.h:
 * a typed frame's marker, type << 1, or a standard frame's context, a
 * tagged pointer, at fp_marker; the JSFunction at fp_function; an
 * interpreted frame's BytecodeArray at fp_bytecode_array and bytecode
 * offset, a Smi, at fp_bytecode_offset) and
 * the fields that classify the frame: JSFunction's map's instance type
 * (a closure: [type_function_first, type_function_last]), its Code
 * (JSFunction.code) with the code's start, size and kind. Object offsets
 * are bytes from the object's start (the tagged pointer - 1), each below
 * BPFPROF_V8_READ; fp offsets are negative, multiples of 8.
 *
 * Each JavaScript frame on the chain becomes two words of the record's
 * interpreter frames (struct bpfprof_sample), newest first. Word 0 is an
 * object of the old or code space, which the young generation's scavenges
 * do not move (a closure, the JSFunction, may be moved before user space
 * reads it): the SharedFunctionInfo (interpreted, baseline, function only),
 * or the Code (optimized), a tagged pointer.
 *   word 1  bits 0-31: the offset: the bytecode offset slot's value
 *           (interpreted; the BytecodeArray's header included), or the
 *           frame's pc - Code's instruction start (baseline, optimized);
 *           bits 32-47: a check value: BPFPROF_V8_CODE_CHECK of the Code
 *           (baseline, optimized), BPFPROF_V8_PTR_CHECK of the frame's
 *           BytecodeArray (interpreted), 0 (function only), against an
 *           address reused or code replaced since;
 *           bits 48-57: the native frame it stands for (0: the leaf, k:
 *           the user address k after it); bits 58-60: enum bpfprof_v8_frame;
 *           bit 61 (BPFPROF_V8_AFTER): the native frame stays, the
 *           JavaScript one goes after it: the leaf ran code not the
 *           function's own (an Ignition handler, a builtin called without
 *           a frame of its own, whose return address into the function's
 *           code was found at sp: the offset is that return address's)
 */
enum bpfprof_v8_frame {
	BPFPROF_V8_INTERPRETED = 1, /* Ignition: offset is the bytecode offset slot */
	BPFPROF_V8_BASELINE = 2, /* Sparkplug: offset in the Code's instructions */
	BPFPROF_V8_OPTIMIZED = 3, /* Maglev, TurboFan: offset in the Code's instructions */
	BPFPROF_V8_FUNCTION = 4, /* a JavaScript frame with no offset known (a builtin's, a Code replaced) */
};

#define BPFPROF_V8_CODE_CHECK(size, kind) ((__u16)(((__u32)(size) << 4) | ((__u32)(kind)&15)))
#define BPFPROF_V8_PTR_CHECK(p) ((__u16)(((p) >> 3) ^ ((p) >> 19)))
#define BPFPROF_V8_AFTER (1ull << 61)
#define BPFPROF_V8_WORD1(off, check, idx, kind)                                        \
	((__u64)(__u32)(off) | ((__u64)(__u16)(check) << 32) | ((__u64)((idx)&0x3ff) << 48) | \
	 ((__u64)((kind)&7) << 58))
#define BPFPROF_V8_OFF(w1) ((__u32)(w1))
#define BPFPROF_V8_CHECK(w1) ((__u16)((w1) >> 32))
#define BPFPROF_V8_IDX(w1) ((__u32)((w1) >> 48) & 0x3ff)
#define BPFPROF_V8_KIND(w1) ((__u32)((w1) >> 58) & 7)

/* flags of struct bpfprof_v8_proc */
#define BPFPROF_V8_COMPRESSED 1 /* tagged fields are 32-bit offsets from the cage (4 GiB) base */
#define BPFPROF_V8_CODE_START_PTR 2 /* Code's instruction start is a pointer field (V8 11.1+) */
/* Code holds its instructions, code_start bytes after its start (V8 before 11.1: node 18) */
#define BPFPROF_V8_CODE_START_INLINE 4
/* The bytes of a JSFunction and of a Code read: every offset used is below */
#define BPFPROF_V8_READ 64

struct bpfprof_v8_proc {
	__s8 fp_marker, fp_function, fp_bytecode_array, fp_bytecode_offset;
	__s8 fp_low; /* the lowest slot read */
	__u8 flags; /* BPFPROF_V8_* */
	__u8 code_kind_shift;
	__u8 kind_baseline; /* CodeKind::BASELINE; higher kinds are optimized (Maglev, TurboFan) */
	__u8 smi_shift; /* a Smi's value is its word >> smi_shift (32; 1 with 31-bit Smis) */
	__u8 pad0;
	__u16 type_function_first, type_function_last;
	__u16 map_instance_type; /* Map::instance_type, a u16 */
	__u16 fn_shared, fn_code; /* JSFunction's */
	/* Code's: start (a pointer field, or the header's size: flags), size (u32), flags (u32) */
	__u16 code_start, code_size, code_flags;
	__u16 pad1;
	__u32 code_kind_mask; /* kind = (flags >> shift) & mask */
};

_Static_assert(sizeof(struct bpfprof_v8_proc) == 32, "struct bpfprof_v8_proc layout");
#define BPFPROF_MAX_V8_PROCS 4096

/* Target-filter modes, set in rodata before load. */
enum bpfprof_filter {
	BPFPROF_FILTER_ALL = 0, /* every task except the idle task */
	BPFPROF_FILTER_TGID = 1, /* tgids listed in the `targets` map */
};

#define BPFPROF_MAX_TARGETS 8192
/*
 * The targets by slot (`target_slots`, tgid % BPFPROF_TARGET_SLOTS, 64-bit
 * values): 0 no target there, a tgid the only one,
 * BPFPROF_TARGET_SLOT_SHARED two or more (the `targets` map then decides). Set by compare-and-swap from 0, then
 * only to SHARED; never cleared, as `targets` entries are never removed.
 */
#define BPFPROF_TARGET_SLOTS 4096
#define BPFPROF_TARGET_SLOT_SHARED 0xffffffffffffffffULL
#define BPFPROF_MAX_CGROUPS 64
/* ancestor levels checked for --cgroup subtrees */
#define BPFPROF_MAX_CGROUP_DEPTH 16

/*
 * Unwind tables (--call-graph dwarf): user space turns each executable
 * file's CFI (.eh_frame, else .debug_frame) into sorted rows, one per address
 * range with one rule, and the BPF program walks user stacks with them.
 *
 *   unwind_mappings  LPM trie      (tgid, address) -> table id + bias, one
 *                                  entry per aligned power-of-two piece of
 *                                  each executable mapping of a process
 *   unwind_tables    array         table id -> struct bpfprof_unwind_table
 *   unwind_rows      array of maps table id -> that table's own array of
 *                                  words, sized to it (created when the
 *                                  file is first mapped, freed when it goes:
 *                                  kernel memory follows the files in use,
 *                                  up to a byte budget, --unwind-memory)
 *
 * A row's pc is its range's start relative to its table's base (an ELF
 * virtual address chosen by the builder, usually the lowest FDE start); for
 * an address A of mapping entry E: pc = A - E.bias (bias = load bias +
 * table base). An address before the first row, or at or past a
 * BPFPROF_UNWIND_NONE row, has no CFI.
 *
 * A table's words (__u32, two to an array element: array values are 8-byte
 * aligned), in pages of pc (BPFPROF_UNWIND_PAGE_SHIFT: 4 KiB) as the
 * OpenTelemetry profiler stores its stack deltas in 64 KiB ones (4 bytes a
 * row, against 8 for {pc, rule}):
 *
 *   [0, nr_pages]           page index: page p's rows are rows
 *                           [index[p], index[p + 1])
 *   [nr_pages + 1, rules)   rows: bits 0-15 the pc's low 16 bits, bits
 *                           16-31 an index into the table's rules; sorted
 *                           within a page. Where the rule in force at a
 *                           page's start is not NONE, the page has a row at
 *                           offset 0; so an address before its page's first
 *                           row, or in an empty page, has no CFI
 *   [rules, rules + nr_rules)  the table's distinct rule words
 *
 * Rule word (x86-64; DWARF registers: rbp 6, rsp 7, return address 16):
 *   bits 0-2   kind, enum bpfprof_unwind_kind
 *   bit  3     CFA register: 0 rsp, 1 rbp                      (CFA only)
 *   bits 4-19  CFA offset in bytes, unsigned                   (CFA, PLT)
 *   bits 20-31 signed: where rbp was saved, in 8-byte units from
 *              the CFA; 0 means "rbp unchanged" (same value)   (CFA)
 *              the PLT expression's threshold, 10 or 11        (PLT)
 * The return address is always at CFA - 8 (rows whose CFI says otherwise
 * are NONE). Everything CFI can say that this cannot (expressions, other
 * registers, offsets out of range) is NONE: a frame-pointer step, never END.
 */
enum bpfprof_unwind_kind {
	BPFPROF_UNWIND_NONE = 0, /* no usable CFI: frame-pointer step */
	BPFPROF_UNWIND_CFA = 1, /* CFA = reg + off; ra = [CFA - 8]; rbp per bits 20-31 */
	BPFPROF_UNWIND_END = 2, /* return address undefined: _start, clone3's child */
	/* the standard PLT entry: CFA = rsp + off + ((rip & 15) >= threshold ? 8 : 0) */
	BPFPROF_UNWIND_PLT = 3,
	/* rt_sigreturn trampoline (__restore_rt): registers from the ucontext at rsp */
	BPFPROF_UNWIND_SIGNAL = 4,
};

#define BPFPROF_UNWIND_KIND(rule) ((rule)&7u)
#define BPFPROF_UNWIND_CFA_RBP (1u << 3)
#define BPFPROF_UNWIND_CFA_OFF(rule) (((rule) >> 4) & 0xffffu)
#define BPFPROF_UNWIND_RBP_SLOT(rule) ((__s32)(rule) >> 20) /* signed, 8-byte units; 0: unchanged */
#define BPFPROF_UNWIND_RULE(kind, cfa_rbp, cfa_off, rbp_slot)                                 \
	((__u32)(kind) | ((cfa_rbp) ? BPFPROF_UNWIND_CFA_RBP : 0) | ((__u32)(cfa_off) << 4) | \
	 ((__u32)(rbp_slot) << 20))
#define BPFPROF_UNWIND_CFA_OFF_MAX 0xffff
#define BPFPROF_UNWIND_RBP_SLOT_MIN (-2048)
#define BPFPROF_UNWIND_RBP_SLOT_MAX 2047

/* A row as the builder makes it (user space only: the maps hold compact rows) */
struct bpfprof_unwind_row {
	__u32 pc; /* start of the range, relative to the table's base */
	__u32 rule; /* BPFPROF_UNWIND_RULE(...) */
};

_Static_assert(sizeof(struct bpfprof_unwind_row) == 8, "struct bpfprof_unwind_row layout");

/* Where a table's parts are in its words (see above) */
struct bpfprof_unwind_table {
	__u32 nr_pages; /* pages of pc covered; 0: slot empty (no rows loaded) */
	__u32 rules; /* word index of the rules */
	__u32 nr_rules;
	__u32 used; /* written by the walk: bpf_ktime_get_ns() >> 30 when last used */
	/*
	 * The load this description is of: user space gives every table it
	 * puts in a slot a new non-zero number, written with the description,
	 * after the words. The walk's per-CPU cache of rules found
	 * (bpf/unwind.bpf.h rule_cache) holds a rule for (slot, gen), so a slot
	 * loaded again with another file's table finds none of the old ones.
	 */
	__u32 gen;
	__u32 pad;
};

_Static_assert(sizeof(struct bpfprof_unwind_table) == 24, "struct bpfprof_unwind_table layout");

/* Two words of a table: one element of its array */
struct bpfprof_unwind_words {
	__u32 w[2];
};

/*
 * 4 KiB pages: a page holds tens to a few hundred rows, and the walk's
 * search reads a few cache lines of them (bpf/unwind.bpf.h find_rule),
 * where a 64 KiB page of a large library (libc: 1,000-3,000 rows) took
 * five more reads into cold memory a frame; the index costs a word a page
 */
#define BPFPROF_UNWIND_PAGE_SHIFT 12
#define BPFPROF_UNWIND_ROW_PC(word) ((word)&0xffffu)
#define BPFPROF_UNWIND_ROW_RULE(word) ((word) >> 16)
/* Table ids (unwind_tables, unwind_rows) */
#define BPFPROF_MAX_UNWIND_TABLES 16384

/* A mapping whose code has no table (JIT, no CFI): frame-pointer steps there. */
#define BPFPROF_UNWIND_NO_TABLE 0xffffffffu

struct bpfprof_unwind_key {
	__u32 prefixlen; /* LPM: 32 (tgid) + significant address bits */
	__u32 tgid; /* big-endian, as LPM keys compare bytes */
	__u64 addr; /* big-endian */
};

struct bpfprof_unwind_mapping {
	__u32 table; /* unwind_tables index, or BPFPROF_UNWIND_NO_TABLE */
	__u32 pad;
	__u64 bias; /* row pc = address - bias */
	/*
	 * The whole mapping, [start, end), of which the entry is a piece: the
	 * walk keeps it for the next frames, which skip the trie while in it
	 */
	__u64 start, end;
};

/*
 * --check-unwind: the registers of a sample taken in user mode and a copy of
 * the top of its user stack, next to the BPF walk's result, so that user
 * space unwinds the same stack with libdwfl (as perf report does for
 * --call-graph dwarf) and compares. regs[] are in DWARF x86-64 order:
 * rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip. Only the first
 * offsetof(stack) + stack_size bytes are sent.
 */
#define BPFPROF_CHECK_STACK_SIZE 8192
#define BPFPROF_CHECK_NR_REGS 17
struct bpfprof_ustack_copy {
	__u32 type; /* BPFPROF_REC_USTACK_COPY */
	__u32 tgid;
	__u32 tid;
	__u16 nr_user; /* ips[] of the BPF walk, leaf first */
	__u16 end_reached; /* the BPF walk ended at a BPFPROF_UNWIND_END row */
	__u64 regs[BPFPROF_CHECK_NR_REGS];
	__u64 stack_size; /* bytes copied from regs[7] (rsp) upwards */
	__u64 ips[BPFPROF_MAX_STACK];
	__u8 stack[BPFPROF_CHECK_STACK_SIZE];
};

#define BPFPROF_USTACK_COPY_HDR_SIZE (16 + 8 * BPFPROF_CHECK_NR_REGS + 8 + 8 * BPFPROF_MAX_STACK)
_Static_assert(sizeof(struct bpfprof_ustack_copy) ==
		       BPFPROF_USTACK_COPY_HDR_SIZE + BPFPROF_CHECK_STACK_SIZE,
	       "struct bpfprof_ustack_copy layout");

/*
 * A sample whose user stack the BPF program did not walk, for want of
 * tables (the process's are still being built; or its walk met a pc in no
 * registered mapping: a library mapped since), with what user space needs
 * to walk it with the same rules once they are built: the user registers
 * and a copy of the top of the user stack, as perf's PERF_SAMPLE_REGS_USER
 * and PERF_SAMPLE_STACK_USER. Only the first
 *   BPFPROF_SAMPLE_COPY_HDR_SIZE + nr_kernel * 8 + stack_size
 * bytes are sent:
 *   hdr    struct bpfprof_sample's first BPFPROF_SAMPLE_HDR_SIZE bytes
 *          (nr_user 0, nr_py 0: no Python walk without the native one)
 *   data   the hdr's nr_kernel kernel addresses, leaf first, then
 *          stack_size bytes of the user stack from regs[7] (rsp) upwards,
 *          copied a page at a time, at most BPFPROF_COPY_STACK_SIZE (perf
 *          copies 8 KiB by default, ddprof 32). A page not present (rsp's
 *          own in the page fault that brings a new stack page in; the
 *          untouched middle of a large frame) is a hole: bit k of holes,
 *          k the page's index from rsp's page (0), its bytes zero; the copy
 *          ends after the last page read
 * regs[] are in DWARF x86-64 order as in struct bpfprof_ustack_copy; code[]
 * the 4 bytes at rip - 1 (the walk's leaf-prologue check) when code_ok.
 * after_syscall: rip follows a `syscall` instruction where the registers were
 * saved at kernel entry: the leaf's row is looked up at rip - 1 (walk_begin).
 */
#define BPFPROF_COPY_STACK_SIZE 32768
struct bpfprof_sample_copy {
	__u32 type; /* BPFPROF_REC_SAMPLE_COPY */
	__u32 stack_size; /* bytes of user stack in data[], after the kernel addresses */
	__u8 why; /* BPFPROF_STAT_COPY_NOT_READY, _NO_MAPPING or _FP_UNMAPPED */
	__u8 holes; /* pages of the copy not present: bit k, the k-th from rsp's page */
	__u8 code_ok;
	__u8 after_syscall;
	__u8 code[4];
	__u64 regs[BPFPROF_CHECK_NR_REGS];
	__u8 hdr[BPFPROF_SAMPLE_HDR_SIZE];
	__u8 data[BPFPROF_MAX_STACK * 8 + BPFPROF_COPY_STACK_SIZE];
};

#define BPFPROF_SAMPLE_COPY_HDR_SIZE (16 + 8 * BPFPROF_CHECK_NR_REGS + BPFPROF_SAMPLE_HDR_SIZE)
_Static_assert(BPFPROF_COPY_STACK_SIZE / 4096 <= 8, "holes: a bit a page");
_Static_assert(sizeof(struct bpfprof_sample_copy) ==
		       BPFPROF_SAMPLE_COPY_HDR_SIZE + BPFPROF_MAX_STACK * 8 + BPFPROF_COPY_STACK_SIZE,
	       "struct bpfprof_sample_copy layout");

/*
 * --off-cpu: one block of a task in scope, at least the threshold long,
 * with the task's stacks while it was blocked: the kernel stack from
 * __schedule down to the kernel entry, the user stack from the user
 * registers saved at that entry (none when the block was not in a system
 * call; see bpf/offcpu.bpf.h). s is laid out as a sample (s.type is
 * BPFPROF_REC_SAMPLE, s.time_ns is when the task was picked to run again,
 * s.cpu the CPU it was picked on); only the first 16 +
 * BPFPROF_SAMPLE_HDR_SIZE + (s.nr_kernel + s.nr_user) * 8 bytes are sent.
 */
struct bpfprof_offcpu {
	__u32 type; /* BPFPROF_REC_OFFCPU */
	__u32 pad;
	__u64 off_ns; /* time off the CPU: from switch-out to running again */
	struct bpfprof_sample s;
};

#define BPFPROF_OFFCPU_HDR_SIZE 16
_Static_assert(sizeof(struct bpfprof_offcpu) ==
		       BPFPROF_OFFCPU_HDR_SIZE + sizeof(struct bpfprof_sample),
	       "struct bpfprof_offcpu layout");

/* Long blocks waiting at once for their task's system call exit (`offcpu_pending`). */
#define BPFPROF_MAX_OFFCPU_PENDING 4096
/* Threads blocked at once whose switch-out time is kept, where task storage is missing (before 5.13) */
#define BPFPROF_MAX_OFFCPU_BLOCKED 16384

#endif /* BPFPROF_ABI_H */
