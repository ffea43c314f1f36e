# SPDX-License-Identifier: MIT
# Build bpfprof: BPF object (clang, CO-RE) -> skeleton (bpftool) -> userspace
# (gcc, libbpf + libelf + zlib via pkg-config). Objects go to $(OUTPUT).
# Layout after libbpf-bootstrap's examples/c/Makefile.

OUTPUT ?= .output
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= gcc
PKG_CONFIG ?= pkg-config

ARCH ?= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' \
	-e 's/ppc64le/powerpc/' -e 's/s390x/s390/' -e 's/riscv64/riscv/')
VMLINUX_DIR := vmlinux/$(ARCH)

# libcurl (--push) and libdebuginfod (debug files by build-id) are compiled
# against but not linked: user/lib/lazy_*.c dlopen them on first use, sparing
# every other run the ~30 libraries they pull in (include/lazy_lib.h).
LAZY_PC := libcurl libdebuginfod
LINK_PC := libbpf libelf libdw zlib libprotobuf-c liblzma libdeflate
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(LINK_PC) $(LAZY_PC) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(LINK_PC) 2>/dev/null)
CMOCKA_LIBS := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)

CFLAGS ?= -g -O2
CFLAGS += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
CPPFLAGS += -Iinclude -I$(OUTPUT) -I$(OUTPUT)/proto $(PKG_CFLAGS) -D_GNU_SOURCE
DEPFLAGS = -MMD -MP
# -liberty: libiberty.a's demangler (demangle.h), a static archive only
LDLIBS += $(PKG_LIBS) -liberty -pthread -ldl

# Include the system's arch-specific headers for BPF, as clang -target bpf
# does not (libbpf-bootstrap's CLANG_BPF_SYS_INCLUDES).
CLANG_BPF_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

ifeq ($(V),1)
	Q =
	msg =
else
	Q = @
	msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Everything but main.c, interval.c and session.c (which call the BPF session):
# plain C that tests link without BPF.
# user/ holds main.c, cli.c and the model (profile.c); the stages' sources are
# in its folders, in the order data flows (docs/ARCHITECTURE.md, "Layout"). Objects are named
# by file alone ($(OUTPUT)/agg.o): vpath finds each source in its folder.
USER_DIRS := user/capture user/unwind user/symbolize user/write user/xray user/lib
vpath %.c user $(USER_DIRS)
# The source of object NAME.o, by name (not $<, which an old .d file's
# user/NAME.c from before the stage folders would take over)
src_of = $(firstword $(wildcard $(addsuffix /$(1).c,user $(USER_DIRS))))
LIB_SRCS := $(filter-out user/main.c user/interval.c user/capture/session.c,$(wildcard user/*.c $(addsuffix /*.c,$(USER_DIRS))))
LIB_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(notdir $(LIB_SRCS)))
# pprof's profile.proto, encoded by protoc-c's generated code
LIB_OBJS += $(OUTPUT)/profile.pb-c.o
# Pyroscope's push API (proto/pyroscope, vendored), for --push
LIB_OBJS += $(OUTPUT)/push.pb-c.o $(OUTPUT)/types.pb-c.o
# OpenTelemetry's OTLP profiles (proto/opentelemetry, vendored v1.11.0), for .otlp and --push-api otlp
OTLP_PB_OBJS := $(patsubst %,$(OUTPUT)/%.pb-c.o,common resource profiles profiles_service)
LIB_OBJS += $(OTLP_PB_OBJS)
APP_OBJS := $(OUTPUT)/main.o $(OUTPUT)/interval.o $(OUTPUT)/session.o
TEST_SRCS := $(wildcard tests/test_*.c)
TEST_BINS := $(patsubst tests/%.c,$(OUTPUT)/tests/%,$(TEST_SRCS))
WORKLOADS := $(OUTPUT)/workload/hotcold $(OUTPUT)/workload/jitswap $(OUTPUT)/workload/jitshort $(OUTPUT)/workload/offcpu $(OUTPUT)/workload/nofp \
	$(OUTPUT)/workload/gold/nofp $(OUTPUT)/workload/cxxnames
# Names as people read them (tests/integration/names.sh): a Rust workload in
# both manglings and a Go one built three ways, where rustc and go are at
# hand (tools/install-deps.sh installs them; names.sh skips without them)
RUSTC ?= rustc
GO ?= go
ifneq ($(shell command -v $(RUSTC) 2>/dev/null),)
WORKLOADS += $(OUTPUT)/workload/rustnames $(OUTPUT)/workload/rustnames-v0
endif
ifneq ($(shell command -v $(GO) 2>/dev/null),)
WORKLOADS += $(OUTPUT)/workload/gonames $(OUTPUT)/workload/gonames-sw $(OUTPUT)/workload/gonames-strip
endif

.PHONY: all deps demo check test unit integration kernels san test-san fuzz fuzz-ci valgrind vmlinux format clean
# The binary; the sanitizer build puts its own under its OUTPUT.
BIN ?= bpfprof

all: $(BIN) $(WORKLOADS)

deps:
	$(Q)tools/install-deps.sh

$(BIN): $(APP_OBJS) $(OUTPUT)/libbpfprof.a
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT) $(OUTPUT)/tests $(OUTPUT)/workload:
	$(Q)mkdir -p $@

# The BPF program in variants for what kernels offer (bpf/compat.bpf.h,
# "Variants"; user/capture/kernel_features.c picks one at run time): profile is
# 5.17+ with bpf_loop and task storage, tw and tw7 add the task work kfunc of
# 6.18 and of 7.x, legacy runs from 5.10 on.
BPF_VARIANT_profile :=
BPF_VARIANT_profile_tw := -DBPFPROF_TASK_WORK=1
BPF_VARIANT_profile_tw7 := -DBPFPROF_TASK_WORK=2
BPF_VARIANT_profile_legacy := -DBPFPROF_LEGACY=1
BPF_EXTRA_VARIANTS := profile_tw profile_tw7 profile_legacy

$(patsubst %,$(OUTPUT)/%.bpf.o,profile $(BPF_EXTRA_VARIANTS)): \
$(OUTPUT)/%.bpf.o: bpf/profile.bpf.c $(wildcard bpf/*.bpf.h) include/bpfprof_abi.h include/unwind_walk_step.h \
		include/arch.h include/arch_x86.h bench/bench.bpf.h $(VMLINUX_DIR)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 --target=bpf -Wall -Werror $(BPF_CFLAGS) $(BPF_VARIANT_$*) -D__TARGET_ARCH_$(ARCH) \
		-I$(VMLINUX_DIR) -Iinclude $(CLANG_BPF_SYS_INCLUDES) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp

$(OUTPUT)/profile.skel.h: $(OUTPUT)/profile.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name profile_bpf > $@

# Another variant's object bytes (NAME_bpf__elf_bytes), opened through the
# profile_bpf skeleton: its maps, programs and variables must be the same
# (tools/skel-layout.sh), else the build stops here.
$(OUTPUT)/profile_%.skel.h: $(OUTPUT)/profile_%.bpf.o $(OUTPUT)/profile.skel.h tools/skel-layout.sh
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name profile_bpf >$@.tmp
	$(Q)tools/skel-layout.sh $@.tmp >$@.layout && tools/skel-layout.sh $(OUTPUT)/profile.skel.h | \
		cmp -s - $@.layout || \
		{ echo "$<: maps, programs or variables differ from profile.bpf.o's (bpf/compat.bpf.h, Variants)" >&2; \
		  rm -f $@.tmp $@.layout; exit 1; }
	$(Q)rm -f $@.tmp $@.layout
	$(Q)$(BPFTOOL) gen skeleton $< name profile_$*_bpf > $@

# Kernel frames' names by the kernel's own lookup (bpf/kernel_names.bpf.c),
# loaded when a profile is named rather than /proc/kallsyms read whole
$(OUTPUT)/kernel_names.bpf.o: bpf/kernel_names.bpf.c include/kernel_names_abi.h $(VMLINUX_DIR)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 --target=bpf -Wall -Werror -D__TARGET_ARCH_$(ARCH) \
		-I$(VMLINUX_DIR) -Iinclude $(CLANG_BPF_SYS_INCLUDES) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp

$(OUTPUT)/kernel_names.skel.h: $(OUTPUT)/kernel_names.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name kernel_names_bpf > $@

$(OUTPUT)/kernel_names.o: $(OUTPUT)/kernel_names.skel.h

$(OUTPUT)/session.o: $(OUTPUT)/profile.skel.h $(patsubst %,$(OUTPUT)/%.skel.h,$(BPF_EXTRA_VARIANTS))

$(OUTPUT)/%.o: %.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c $(call src_of,$*) -o $@

$(OUTPUT)/proto/profile.pb-c.c $(OUTPUT)/proto/profile.pb-c.h &: proto/profile.proto
	$(call msg,PROTOC,$@)
	$(Q)mkdir -p $(OUTPUT)/proto && protoc-c --proto_path=proto --c_out=$(OUTPUT)/proto $<

$(OUTPUT)/profile.pb-c.o: $(OUTPUT)/proto/profile.pb-c.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(OUTPUT)/write_pprof.o $(OUTPUT)/tests/test_write_pprof: $(OUTPUT)/proto/profile.pb-c.h

PYROSCOPE_PROTOS := proto/pyroscope/push/v1/push.proto proto/pyroscope/types/v1/types.proto
$(OUTPUT)/proto/push/v1/push.pb-c.c $(OUTPUT)/proto/push/v1/push.pb-c.h \
$(OUTPUT)/proto/types/v1/types.pb-c.c $(OUTPUT)/proto/types/v1/types.pb-c.h &: $(PYROSCOPE_PROTOS)
	$(call msg,PROTOC,$@)
	$(Q)mkdir -p $(OUTPUT)/proto && protoc-c --proto_path=proto/pyroscope --c_out=$(OUTPUT)/proto \
		$(patsubst proto/pyroscope/%,%,$(PYROSCOPE_PROTOS))

$(OUTPUT)/push.pb-c.o: $(OUTPUT)/proto/push/v1/push.pb-c.c $(OUTPUT)/proto/types/v1/types.pb-c.h | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(OUTPUT)/types.pb-c.o: $(OUTPUT)/proto/types/v1/types.pb-c.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(OUTPUT)/push.o $(OUTPUT)/tests/test_push: $(OUTPUT)/proto/push/v1/push.pb-c.h $(OUTPUT)/proto/types/v1/types.pb-c.h

OTLP_PROTOS := common/v1/common.proto resource/v1/resource.proto \
	profiles/v1development/profiles.proto collector/profiles/v1development/profiles_service.proto
OTLP_PB_DIR := $(OUTPUT)/proto/opentelemetry/proto
OTLP_PB_SRCS := $(patsubst %.proto,$(OTLP_PB_DIR)/%.pb-c.c,$(OTLP_PROTOS))
OTLP_PB_HDRS := $(OTLP_PB_SRCS:.c=.h)
$(OTLP_PB_SRCS) $(OTLP_PB_HDRS) &: $(addprefix proto/opentelemetry/opentelemetry/proto/,$(OTLP_PROTOS))
	$(call msg,PROTOC,$(OTLP_PB_DIR))
	$(Q)mkdir -p $(OUTPUT)/proto && protoc-c --proto_path=proto/opentelemetry --c_out=$(OUTPUT)/proto \
		$(addprefix opentelemetry/proto/,$(OTLP_PROTOS))

$(OTLP_PB_OBJS): $(OUTPUT)/%.pb-c.o: $(OTLP_PB_HDRS) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c $(filter %/$*.pb-c.c,$(OTLP_PB_SRCS)) -o $@

$(OUTPUT)/write_otlp.o $(OUTPUT)/push.o $(OUTPUT)/tests/test_write_otlp $(OUTPUT)/tests/test_push: $(OTLP_PB_HDRS)

$(OUTPUT)/libbpfprof.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# Test workloads: -O0 so that every function, leaves too, sets up its frame
# pointer (gcc 12 omits it in leaf functions at -O1 and above even with
# -fno-omit-frame-pointer), so the known callers survive.
# The unwinding workload is built as distribution code is: -O2, no frame
# pointers, a PLT call into a shared library of its own (found through its rpath);
# no identical-code folding or constant-propagation clones, which would rename
# its known functions.
$(OUTPUT)/workload/libnofp_lib.so: tests/workload/nofp_lib.c | $(OUTPUT)/workload
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O2 -fomit-frame-pointer -fPIC -shared $< -o $@

$(OUTPUT)/workload/nofp: tests/workload/nofp.c $(OUTPUT)/workload/libnofp_lib.so | $(OUTPUT)/workload
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -fno-ipa-icf -fno-ipa-cp $< -L$(@D) -lnofp_lib \
		-Wl,-rpath,'$$ORIGIN' -pthread -o $@

# The same built by clang-14 and linked by GNU gold, which type .eh_frame
# SHT_X86_64_UNWIND (tests/integration/unwind.sh checks it), as Debian's LLVM is built.
CLANG14 ?= clang-14
$(OUTPUT)/workload/gold/libnofp_lib.so: tests/workload/nofp_lib.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CLANG14) -g -O2 -fomit-frame-pointer -fuse-ld=gold -fPIC -shared $< -o $@

$(OUTPUT)/workload/gold/nofp: tests/workload/nofp.c $(OUTPUT)/workload/gold/libnofp_lib.so
	$(call msg,CC,$@)
	$(Q)$(CLANG14) -g -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -fuse-ld=gold $< -L$(@D) \
		-lnofp_lib -Wl,-rpath,'$$ORIGIN' -pthread -o $@

# -O0 and frame pointers, as the C workloads: every function out of line
$(OUTPUT)/workload/cxxnames: tests/workload/cxxnames.cpp | $(OUTPUT)/workload
	$(call msg,CXX,$@)
	$(Q)$(CXX) -g -O0 -fno-omit-frame-pointer $< -o $@

# rustc's default mangling (legacy up to now), and v0
$(OUTPUT)/workload/rustnames: tests/workload/rustnames.rs | $(OUTPUT)/workload
	$(call msg,RUSTC,$@)
	$(Q)MAKEFLAGS= $(RUSTC) -g -C opt-level=1 -C force-frame-pointers=yes $< -o $@

$(OUTPUT)/workload/rustnames-v0: tests/workload/rustnames.rs | $(OUTPUT)/workload
	$(call msg,RUSTC,$@)
	$(Q)MAKEFLAGS= $(RUSTC) -g -C opt-level=1 -C force-frame-pointers=yes -C symbol-mangling-version=v0 $< -o $@

# The Go workload as Go services are built: as is, without .symtab and DWARF
# (-ldflags="-s -w", container images), and that stripped of every section
# strip can drop: .gopclntab alone names its functions. Offline: no modules
# to fetch, the local toolchain only.
GO_ENV := GOFLAGS=-mod=mod GOTOOLCHAIN=local GO111MODULE=off GOCACHE=$(abspath $(OUTPUT))/go-cache
$(OUTPUT)/workload/gonames: tests/workload/gonames/main.go | $(OUTPUT)/workload
	$(call msg,GO,$@)
	$(Q)$(GO_ENV) $(GO) build -o $@ $<

$(OUTPUT)/workload/gonames-sw: tests/workload/gonames/main.go | $(OUTPUT)/workload
	$(call msg,GO,$@)
	$(Q)$(GO_ENV) $(GO) build -ldflags="-s -w" -o $@ $<

$(OUTPUT)/workload/gonames-strip: $(OUTPUT)/workload/gonames-sw
	$(call msg,STRIP,$@)
	$(Q)strip --strip-all -o $@ $<

$(OUTPUT)/workload/%: tests/workload/%.c | $(OUTPUT)/workload
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O0 -fno-omit-frame-pointer $< -o $@ -pthread

$(OUTPUT)/tests/%: tests/%.c $(OUTPUT)/libbpfprof.a | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) $< $(OUTPUT)/libbpfprof.a \
		$(CMOCKA_LIBS) $(LDLIBS) -o $@

# interval.c calls the session: its driver links interval.o beside the
# library, with stubs of those calls of its own.
$(OUTPUT)/tests/test_interval: tests/test_interval.c $(OUTPUT)/interval.o $(OUTPUT)/libbpfprof.a | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) $< $(OUTPUT)/interval.o $(OUTPUT)/libbpfprof.a \
		$(CMOCKA_LIBS) $(LDLIBS) -o $@

# The README's test command: unit tests (no root) then integration (root, BPF).
# ASan + UBSan build of everything, tests included, in its own OUTPUT.
SAN_OUTPUT := .output-san
SAN_FLAGS := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined

san:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(SAN_OUTPUT) BIN=$(SAN_OUTPUT)/bpfprof \
		CFLAGS="$(SAN_FLAGS)" LDFLAGS="$(SAN_FLAGS)" $(SAN_OUTPUT)/bpfprof \
		$(patsubst $(OUTPUT)/%,$(SAN_OUTPUT)/%,$(TEST_BINS))

# The README's test command, what CI runs (tests/run-all.sh): the kernel
# matrix beside the unit tests and then every libFuzzer harness
# (FUZZ_CI_TIME seconds each on its corpus in tests/fuzz/corpus, fuzz-ci
# below), then the integration scripts, two at a time on 2 CPUs; one total
# at the end. The sanitizer build's pass is make test-san.
FUZZ_CI_TIME ?= 1
NPROC := $(shell nproc)
test: deps
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) all $(TEST_BINS) $(FUZZ_BINS)
	$(Q)tools/check-layering.sh
	$(Q)FUZZ_TIME=$(FUZZ_CI_TIME) tests/run-all.sh $(OUTPUT)

# The ASan + UBSan build's unit tests and the parser and writer scripts on it
# (tests/run-all.sh san_scripts): 2 min 29 s on 2 CPUs (198 CPU seconds),
# build included. Out of make test, whose 7 minutes on 2 CPUs it would
# pass; the fuzzers (ASan) and valgrind.sh stay in make test.
test-san: deps
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) all san
	$(Q)SAN_ONLY=1 tests/run-all.sh $(OUTPUT) $(SAN_OUTPUT)

unit: $(TEST_BINS)
	$(Q)tests/run-unit.sh $(OUTPUT)

integration: all
	$(Q)for t in tests/integration/*.sh; do $$t || exit 1; done

# The kernel matrix alone (part of make test): Debian's stock kernels under
# QEMU, each running the checks of tests/kernels/checks.sh (docs/TESTING.md);
# KERNELS="5.10 6.1" picks some.
kernels: deps all
	$(Q)tests/kernels/run.sh

# The README's demo command: profile the bundled workload and show the result.
demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/demo.sh

# libFuzzer harnesses, one per reader (tests/fuzz/fuzz_<reader>.c). Their
# corpora live in the tree (tests/fuzz/corpus/<reader>): `make fuzz` fuzzes
# each for FUZZ_TIME seconds and merges what found new coverage into it
# (libFuzzer -merge=1), to be reviewed and committed; CI only reads them.
FUZZ_TIME ?= 60
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(OUTPUT)/fuzz/%,$(FUZZ_SRCS))
FUZZ_LIB_SRCS := read_xray.c profile.c log.c xray_instr_map.c sym_elf.c sym_gopclntab.c array.c procmaps.c kallsyms.c \
	sym_jitdump.c sym_perfmap.c sym_minidebug.c unwind_table.c unwind_rows_fast.c unwind_compact.c unwind_cache.c jvm_attach.c proc_file.c lib_hashmap.c lib_hash_words.c lib_io.c \
	py_code.c hotspot_vmstructs.c hotspot_names.c v8_metadata.c v8_srcpos.c

# the library sources are compiled once for all harnesses (fuzzer-no-link
# instruments them), each harness then links them
FUZZ_CFLAGS := -g -O1 -fsanitize=address,undefined -D_GNU_SOURCE -Iinclude $(PKG_CFLAGS)
FUZZ_LIB_OBJS := $(patsubst %.c,$(OUTPUT)/fuzz/obj/%.o,$(FUZZ_LIB_SRCS))

$(OUTPUT)/fuzz/obj/%.o: %.c
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(DEPFLAGS) -c $(call src_of,$*) -o $@

$(OUTPUT)/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB_OBJS)
	$(call msg,FUZZ-LD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB_OBJS) \
		$(shell $(PKG_CONFIG) --libs libelf libdw libbpf liblzma zlib) -o $@

fuzz: $(FUZZ_BINS)
	$(Q)for f in $(FUZZ_BINS); do \
		name=$${f##*/fuzz_}; new=$(OUTPUT)/fuzz/new-$$name; rm -rf $$new; mkdir -p $$new tests/fuzz/corpus/$$name; \
		$$f -max_total_time=$(FUZZ_TIME) -print_final_stats=1 -timeout=25 -rss_limit_mb=2048 \
			$$new tests/fuzz/corpus/$$name || exit 1; \
		$$f -merge=1 -timeout=25 -rss_limit_mb=2048 tests/fuzz/corpus/$$name $$new 2>&1 | tail -1 || exit 1; \
	done

# CI's fuzzing, as make test runs it (tests/run-fuzz.sh): each harness
# FUZZ_CI_TIME seconds, FUZZ_JOBS at once (default: the CPUs), new inputs in a
# throwaway corpus under $(OUTPUT)/fuzz-ci so that tests/ stays as it is; one
# line per harness with executions and coverage, a crash fails it.
fuzz-ci: $(FUZZ_BINS)
	$(Q)FUZZ_TIME=$(FUZZ_CI_TIME) tests/run-fuzz.sh $(OUTPUT)

# The quick tier (after FUZZ_BINS: prerequisites are expanded where read): every cmocka driver (in parallel) and every fuzz corpus file
# replayed once through its harness; no root, no BPF, seconds.
check: $(TEST_BINS) $(FUZZ_BINS)
	$(Q)tools/check-layering.sh && tests/run-unit.sh $(OUTPUT) && tests/run-fuzz.sh --replay $(OUTPUT)

# One whole run under valgrind memcheck (tests/integration/valgrind.sh, part of make test).
valgrind: all
	$(Q)BPFPROF=$(abspath $(BIN)) HOTCOLD=$(abspath $(OUTPUT))/workload/hotcold tests/integration/valgrind.sh

# Benchmarks (bench/, results in docs/BENCHMARKS.md): bpfprof against perf record,
# perf report and go tool pprof on this machine. Needs root; takes about 8
# minutes, QUICK=1 about 1 for a sanity run. Not part of `make test`.
BENCH_BINS := $(OUTPUT)/bench/agg_replay $(OUTPUT)/bench/symload $(OUTPUT)/bench/writers_replay $(OUTPUT)/bench/spin \
	$(OUTPUT)/bench/runstat
.PHONY: bench bench-floor-bin bench-offcpu-agg-bin

$(OUTPUT)/bench/agg_replay $(OUTPUT)/bench/symload $(OUTPUT)/bench/writers_replay: $(OUTPUT)/bench/%: bench/%.c $(OUTPUT)/libbpfprof.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $< $(OUTPUT)/libbpfprof.a $(LDLIBS) -o $@

# the load keeps its frame pointers, as the test workloads do
$(OUTPUT)/bench/spin: bench/spin.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O0 -fno-omit-frame-pointer $< -o $@ -pthread

$(OUTPUT)/bench/runstat: bench/runstat.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< -o $@

# The bench builds' BPF programs: the production one with bench/bench.bpf.h's hooks
BENCH_BPF_CFLAGS := -DBPFPROF_BENCH -Ibench

# bench/floor.sh: bpfprof whose BPF program returns at once, in its own OUTPUT
FLOOR_OUTPUT := .output-bench-empty
bench-floor-bin:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(FLOOR_OUTPUT) BIN=$(FLOOR_OUTPUT)/bpfprof \
		BPF_CFLAGS="$(BENCH_BPF_CFLAGS) -DBPFPROF_BENCH_EMPTY_PROGRAM" $(FLOOR_OUTPUT)/bpfprof

# bench/bpf-cost.sh's floor: bpfprof whose BPF program does a record's primitives alone
PRIMITIVES_OUTPUT := .output-bench-primitives
bench-primitives-bin:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(PRIMITIVES_OUTPUT) BIN=$(PRIMITIVES_OUTPUT)/bpfprof \
		BPF_CFLAGS="$(BENCH_BPF_CFLAGS) -DBPFPROF_BENCH_PRIMITIVES" $(PRIMITIVES_OUTPUT)/bpfprof

# bench/offcpu.sh: bpfprof whose off-CPU blocks are aggregated in BPF instead of sent
OFFCPU_AGG_OUTPUT := .output-bench-offcpu-agg
bench-offcpu-agg-bin:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(OFFCPU_AGG_OUTPUT) BIN=$(OFFCPU_AGG_OUTPUT)/bpfprof \
		BPF_CFLAGS="$(BENCH_BPF_CFLAGS) -DBPFPROF_BENCH_OFFCPU_AGG" $(OFFCPU_AGG_OUTPUT)/bpfprof

bench: deps
	$(Q)$(MAKE) --no-print-directory $(BIN) $(BENCH_BINS) bench-floor-bin bench-offcpu-agg-bin \
		bench-primitives-bin
	$(Q)OUTPUT=$(abspath $(OUTPUT)) BPFPROF=$(abspath $(BIN)) QUICK=$(QUICK) \
		PRIMITIVES=$(abspath $(PRIMITIVES_OUTPUT))/bpfprof bench/run.sh

# make install / uninstall: the files docs/HOST.md lists (and
# tests/integration/install.sh checks), under DESTDIR + PREFIX. The unit gets
# the real paths; an existing /etc/default/bpfprof is kept.
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(if $(filter /usr/local,$(PREFIX)),/etc,$(PREFIX)/etc))
INSTALL ?= install
.PHONY: install uninstall

install: $(BIN)
	$(Q)$(INSTALL) -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSCONFDIR)/default
	$(Q)$(INSTALL) -m 0755 $(BIN) $(DESTDIR)$(SBINDIR)/bpfprof
	$(Q)$(INSTALL) -m 0644 docs/bpfprof.8 $(DESTDIR)$(MANDIR)/man8/bpfprof.8
	$(Q)$(INSTALL) -m 0644 dist/bash-completion/bpfprof $(DESTDIR)$(BASHCOMPDIR)/bpfprof
	$(Q)sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' dist/systemd/bpfprof.service.in \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/bpfprof.service.tmp
	$(Q)chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/bpfprof.service.tmp
	$(Q)mv $(DESTDIR)$(SYSTEMDUNITDIR)/bpfprof.service.tmp $(DESTDIR)$(SYSTEMDUNITDIR)/bpfprof.service
	$(Q)[ -e $(DESTDIR)$(SYSCONFDIR)/default/bpfprof ] || \
		$(INSTALL) -m 0644 dist/systemd/bpfprof.default $(DESTDIR)$(SYSCONFDIR)/default/bpfprof
	$(call msg,INSTALL,$(DESTDIR)$(SBINDIR)/bpfprof + man page + completion + unit)

# The environment file stays when it was edited (as dpkg keeps a changed conffile).
uninstall:
	$(Q)rm -f $(DESTDIR)$(SBINDIR)/bpfprof $(DESTDIR)$(MANDIR)/man8/bpfprof.8 \
		$(DESTDIR)$(BASHCOMPDIR)/bpfprof $(DESTDIR)$(SYSTEMDUNITDIR)/bpfprof.service
	$(Q)if cmp -s dist/systemd/bpfprof.default $(DESTDIR)$(SYSCONFDIR)/default/bpfprof; then \
		rm -f $(DESTDIR)$(SYSCONFDIR)/default/bpfprof; \
	elif [ -e $(DESTDIR)$(SYSCONFDIR)/default/bpfprof ]; then \
		echo "uninstall: $(DESTDIR)$(SYSCONFDIR)/default/bpfprof was changed: kept"; fi

vmlinux:
	$(Q)tools/gen-vmlinux.sh $(ARCH)

format:
	$(Q)clang-format -i bpf/*.c bpf/*.h user/*.c $(addsuffix /*.c,$(USER_DIRS)) include/*.h tests/*.c tests/*.h \
		tests/fuzz/*.c tests/workload/*.c

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT) $(SAN_OUTPUT) bpfprof $(OFFCPU_AGG_OUTPUT) $(FLOOR_OUTPUT) $(PRIMITIVES_OUTPUT)

# A build made before the move names user/NAME.c in its .d files: those old
# paths are nothing to make (the object is rebuilt once, from its new place).
$(addprefix user/,$(notdir $(wildcard $(addsuffix /*.c,$(USER_DIRS))))):

.DELETE_ON_ERROR:
.SECONDARY:

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/tests/*.d $(OUTPUT)/fuzz/obj/*.d)
