# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# ASX: one entry point for asx.ko, libasx, the tools and every test.
#
#   make [all]        libasx (shared + static), tools, benchmarks, asx.ko
#   make lib          build/lib/libasx.so.0 and build/lib/libasx.a
#   make tools        build/bin/* (asx-bench, ...)
#   make kmod         kmod/asx.ko against KDIR (default: the first kernel of the tested
#                     matrix installed: 6.1, 6.12, 6.12-rt; KVER= or KDIR= to choose)
#   make check        every test: CMocka suite plain, ASan+UBSan and TSan,
#                     the kernel selftests in the test VM on each kernel of the
#                     matrix, the install test
#   make check-kernels  the kernel selftests alone (KERNELS="6.12 6.12-rt": some)
#   make check-aarch64  libasx cross-built for aarch64 (build/aarch64), the ASC
#                     suites under qemu-user (not in `check`)
#   make check-debug  the kernel selftests in a debug kernel (KASAN, lockdep,
#                     kmemleak, ...; not in `check`: the kernel's first build is long);
#                     DEBUG_KERNEL=6.12 or 6.12-rt (PREEMPT_RT) instead of 6.1
#   make demo         build everything, run the benchmark suite, write build/demo/report.html
#                     (DEMO_FLAGS=--quick or --full, --runs N: passed to tools/demo.sh)
#   make demo-kernel  the kernel half: asx.ko's kstream, sa-latency, capsule-block
#                     --activations in the test VM (KERNEL=6.1, 6.12 or 6.12-rt),
#                     merged into build/demo/report.html (DEMO_FLAGS too)
#   make bench        build build/bin/asx-bench
#   make fuzz         libFuzzer targets (clang) in build/fuzz/; fuzz-replay: corpus replayers
#   make install      PREFIX=/usr/local DESTDIR= LIBDIR= INCLUDEDIR= BINDIR=
#                     GDBAUTOLOADDIR= (libasx's gdb commands: Documentation/asc.rst)
#   make style        checkpatch.pl on kmod/ and uapi/, asx.ko's one-way includes,
#                     libasx's one-way includes and calls (tools/lib-layers.sh),
#                     lib/src/svc's one-way calls
#   make setup        install the Debian/PyPI packages the tree needs
#   make clean
#
# URING=0 builds libasx without liburing (the Proactor then runs on the
# Reactor alone: lib/src/proactor/deps.mk).
# V=1 shows the commands.  SAN=asan or SAN=tsan builds a sanitised tree
# under build/asan or build/tsan (used by `make check`).

VERSION      := 0.1.0
SOVERSION    := 0

PREFIX       ?= /usr/local
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
BINDIR       ?= $(PREFIX)/bin
SBINDIR      ?= $(PREFIX)/sbin
MANDIR       ?= $(PREFIX)/share/man
# the bcc tools and their shared module; SBINDIR gets links to them
BCCDIR       ?= $(PREFIX)/lib/asx/bcc
SVCDIR       ?= $(PREFIX)/lib/asx/services
SYSCONFDIR   ?= /etc
UNITDIR      ?= $(PREFIX)/lib/systemd/system
DATADIR      ?= $(PREFIX)/share/asx
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# gdb's auto-load tree: gdb reads <it>/<libasx.so's real path>-gdb.py by
# itself when it is its own ($(datadir)/gdb/auto-load: PREFIX=/usr)
GDBAUTOLOADDIR ?= $(PREFIX)/share/gdb/auto-load
DESTDIR      ?=

CC           ?= gcc
# a cross build (make check-aarch64): CROSS_COMPILE=aarch64-linux-gnu- CC=...gcc
CROSS_COMPILE ?=
OBJCOPY      ?= $(CROSS_COMPILE)objcopy
OBJDUMP      ?= $(CROSS_COMPILE)objdump
SAN          ?=

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s %s\n' $(1) $(2);
endif

TOP   := $(CURDIR)
O     := build$(if $(SAN),/$(SAN))
OBJ   := $(O)/obj

WARN      := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
             -Wno-unused-parameter
SAN_asan  := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_tsan  := -fsanitize=thread -fno-omit-frame-pointer
SANFLAGS  := $(SAN_$(SAN))
OPT       := $(if $(SAN),-O1,-O2)

CPPFLAGS_ASX := -D_GNU_SOURCE -Ilib/include -Iuapi -Ilib/src
# ASX_DEBUG: libasx's debug checks (core/rcudepth.h), in every SAN= tree or with DEBUG=1
CPPFLAGS_ASX += $(if $(SAN)$(DEBUG),-DASX_DEBUG)
CFLAGS_ASX   := -std=gnu11 $(OPT) -g -pthread $(WARN) $(SANFLAGS) $(CFLAGS)
LIB_CFLAGS   := $(CFLAGS_ASX) -fPIC -fvisibility=hidden
LDFLAGS_ASX  := -pthread $(SANFLAGS) $(LDFLAGS)
LIB_LIBS     := -lpthread
# A component that needs a system library says so in lib/src/<comp>/deps.mk
# (LIB_LIBS += -lfoo); the shared library, the tests and libasx.pc get it.
-include $(sort $(wildcard lib/src/*/deps.mk))

# ---------------------------------------------------------------- libasx
LIB_SRCS := $(sort $(wildcard lib/src/*/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(OBJ)/%.o)
LIB_SO   := $(O)/lib/libasx.so.$(SOVERSION)
LIB_A    := $(O)/lib/libasx.a
LIB_MAP  := lib/libasx.map

# ---------------------------------------------------------------- exp
# exp/: the threading-architecture study, out of libasx: the protocol
# Modules (exp/proto) and the LP/CP/MP runner (exp/arch), compiled against
# the public headers alone into a static archive that asx-bench and the
# tests of exp/tests link together with the shared libasx, so that reaching
# an internal symbol fails to link (Documentation/architecture.rst).
CPPFLAGS_PUB  := -D_GNU_SOURCE -Ilib/include -Iuapi
EXP_SRCS      := $(sort $(wildcard exp/proto/*.c exp/arch/*.c))
EXP_OBJS      := $(EXP_SRCS:%.c=$(OBJ)/%.o)
EXP_A         := $(O)/exp/libasx-exp.a
EXP_TEST_SRCS := $(sort $(wildcard exp/tests/test_*.c))
EXP_TEST_BINS := $(EXP_TEST_SRCS:exp/tests/%.c=$(O)/tests/%)
# what a program links to use the shared libasx of this tree
LIB_SO_LINK    = -L$(O)/lib -l:libasx.so.$(SOVERSION) $(TOOL_RPATH)

# ---------------------------------------------------------------- tools
BENCH_SRCS := $(sort $(wildcard tools/bench/*.c))
BENCH_OBJS := $(BENCH_SRCS:%.c=$(OBJ)/%.o)
BENCH      := $(O)/bin/asx-bench
TOOL_RPATH := -Wl,-rpath,'$$ORIGIN/../lib'
# libtirpc is a benchmark/test baseline only; libasx never links it.
TIRPC_CFLAGS := -I/usr/include/tirpc
TIRPC_LIBS   := -ltirpc
TOOL_LIBS    := -lpthread -lm $(TIRPC_LIBS)

TTCP_SRCS  := $(sort $(wildcard tools/ttcp/*.c))
TTCP_OBJS  := $(TTCP_SRCS:%.c=$(OBJ)/%.o)
TTCP       := $(if $(TTCP_SRCS),$(O)/bin/asx-ttcp)
# asx-bench ttcp moves its bytes with asx-ttcp's back ends and loops (one
# code path for both tools): every tools/ttcp object but asx-ttcp's main
BENCH_OBJS += $(filter-out %/main.o,$(TTCP_OBJS))

# asxd: the Service Configurator's daemon (installed in SBINDIR); asxctl
# shares its control protocol (tools/asxd/svcproto.c) and its client half
# (tools/asxd/svcclient.c)
ASXD_SRCS := $(sort $(wildcard tools/asxd/*.c))
ASXD_OBJS := $(ASXD_SRCS:%.c=$(OBJ)/%.o)
ASXD      := $(O)/bin/asxd
# example services asxd loads (tools/asxd/services/NAME.c -> NAME.so),
# installed in SVCDIR; they take libasx's symbols from the program
SVC_SRCS  := $(sort $(wildcard tools/asxd/services/*.c))
SVC_SOS   := $(SVC_SRCS:tools/asxd/services/%.c=$(O)/lib/asx/services/%.so)
ASXD_TEST_SOS := $(patsubst tools/asxd/test/%.c,$(O)/asxd/test/%.so,$(sort $(wildcard tools/asxd/test/*.c)))
# ... and test_svc_policy's ASC policies and task Module, for tools/asxd/test-asxd-asc.sh
ASXD_LIBTEST_SOS := $(O)/asxd/test/svc_policy.so $(O)/asxd/test/ascwork.so
ASXD_TEST_SOS += $(ASXD_LIBTEST_SOS)

ASXCTL_SRCS := $(sort $(wildcard tools/asxctl/*.c)) tools/asxd/svcproto.c tools/asxd/svcclient.c
ASXCTL_OBJS := $(ASXCTL_SRCS:%.c=$(OBJ)/%.o)
ASXCTL      := $(if $(ASXCTL_SRCS),$(O)/bin/asxctl)

# tools/bcc: Python scripts (Debian's bcc), nothing to build but the
# workloads their tests trace, linked with the shared libasx they probe
BCC_TOOLS   := $(sort $(filter-out %.txt,$(wildcard tools/bcc/asx-*)))
BCC_MANS    := $(sort $(wildcard tools/bcc/man/*.8))
# man pages: tools/man/NAME.SECTION, installed in MANDIR/manSECTION
GEN_MANS    := $(patsubst tools/man/%.in,$(O)/man/%,$(sort $(wildcard tools/man/*.[1-8].in)))
MANS        := $(sort $(wildcard tools/man/*.[1-8]) $(BCC_MANS) $(GEN_MANS))
LOCKLOAD    := $(O)/bcc/lockload
CTXLOAD     := $(O)/bcc/ctxload
QLOAD       := $(O)/bcc/qload
NEWCOMER    := $(O)/bcc/newcomer

# ---------------------------------------------------------------- fuzzing
# lib/fuzz/fuzz_<name>.c each define LLVMFuzzerTestOneInput.  `make fuzz`
# builds libFuzzer binaries with clang; `make fuzz-replay` builds the same
# targets with gcc + ASan/UBSan around lib/fuzz/replay.c, which feeds them
# every file of lib/fuzz/corpus/<name>/ (what `make check` runs).
FUZZ_SRCS    := $(filter-out lib/fuzz/replay.c,$(sort $(wildcard lib/fuzz/fuzz_*.c)))
FUZZ_BINS    := $(FUZZ_SRCS:lib/fuzz/%.c=build/fuzz/%)
REPLAY_BINS  := $(FUZZ_SRCS:lib/fuzz/fuzz_%.c=build/fuzz/replay_%)

# ---------------------------------------------------------------- tests
TEST_SRCS  := $(sort $(wildcard lib/tests/test_*.c))
TEST_BINS  := $(TEST_SRCS:lib/tests/%.c=$(O)/tests/%) $(EXP_TEST_BINS)
TEST_LIBS  := -lcmocka -lpthread -lm $(TIRPC_LIBS)

# lib/tests/mustfail/*.c: programs that misuse the API; each must fail to
# compile, and must compile with -DASX_MUSTFAIL_CONTROL (the correct use),
# so a failure proves the type check, not a typo.  Run by tools/check.sh.
MUSTFAIL_SRCS := $(sort $(wildcard lib/tests/mustfail/*.c))

# The selftests use the kernel's kselftest harness (selftests/asx/asx_harness.h
# includes it): kselftest_harness.h and kselftest.h from Debian's
# linux-source-6.1, extracted at build time into build/kselftest/ as
# tools/checkpatch.sh takes checkpatch.pl; never copied into the tree.
LINUX_SOURCE_TARBALL ?= /usr/src/linux-source-6.1.tar.xz
KSFT_DIR  := build/kselftest
KSFT_HDRS := $(KSFT_DIR)/kselftest_harness.h $(KSFT_DIR)/kselftest.h

SELFTEST_SRCS := $(sort $(wildcard selftests/asx/*_test.c))
SELFTEST_BINS := $(SELFTEST_SRCS:selftests/asx/%.c=$(O)/selftests/%)
# selftests/asx/lib: libasx against the module (they link libasx.a)
SELFTEST_LIB_SRCS := $(sort $(wildcard selftests/asx/lib/*_test.c))
SELFTEST_BINS += $(SELFTEST_LIB_SRCS:selftests/asx/lib/%.c=$(O)/selftests/%)

# ---------------------------------------------------------------- kernel
# The kernel we build for is the one the test VM boots: the first of the
# tested matrix (6.1, 6.12, 6.12-rt) that has both /boot/vmlinuz-VER and
# /lib/modules/VER/build (tools/vm/asx-vm --kver; installing another kernel
# does not change it). KVER=VER or KDIR=DIR choose another; ASX_VM_KVER=NAME
# one of the matrix by name (ASX_VM_KVER=6.12-rt).
KVER ?= $(shell ASX_VM_KVER='$(ASX_VM_KVER)' tools/vm/asx-vm --kver 2>/dev/null)
KDIR ?= $(if $(KVER),/lib/modules/$(KVER)/build)

DEPFLAGS = -MMD -MP

.PHONY: fuzz fuzz-replay all lib tools bench kmod check check-lib check-lib-plain check-lib-asan \
        check-lib-tsan check-kmod check-kernels check-debug check-install check-tools demo demo-kmod install uninstall \
        style setup clean selftests kselftest-headers tests bcc-tests dkms-src FORCE

all: lib tools selftests kmod

lib: $(LIB_SO) $(LIB_A) $(O)/lib/libasx.so $(O)/lib/libasx.pc
tools: $(BENCH) $(TTCP) $(ASXCTL) $(ASXD) $(SVC_SOS) $(O)/asxd/asxd.service $(O)/asxd/svc.conf \
       $(ASXD_TEST_SOS) $(GEN_MANS)
bcc-tests: $(LOCKLOAD) $(CTXLOAD) $(QLOAD) $(NEWCOMER)
bench: $(BENCH)
tests: $(TEST_BINS)
selftests: $(SELFTEST_BINS)

# Every code section of a libasx object (.text, .text.unlikely, .text.startup,
# ...) is renamed asx_text, so that wherever libasx is linked, libasx.so or a
# static executable, its code is one output section between the linker's
# __start_asx_text and __stop_asx_text: the preemption tick does not switch
# threads there (lib/src/asc/preempt.c, Documentation/asc.rst).  -fno-plt: no
# calls through the executable's PLT stubs, which are outside that range.
# -include core/errno.h: errno read afresh after a user thread moved VP
# (lib/src/core/errno.h).
$(OBJ)/lib/%.o: lib/%.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS_ASX) $(LIB_CFLAGS) -fno-plt -include core/errno.h $(DEPFLAGS) \
		-MT $@ -MF $(@:.o=.d) -c -o $@.tmp $<
	$(Q)$(OBJCOPY) $$($(OBJDUMP) -h $@.tmp | awk '/^ *[0-9]/ { n = $$2 } \
		/CODE/ { print "--rename-section " n "=asx_text" }') $@.tmp $@ && rm -f $@.tmp

$(LIB_SO): $(LIB_OBJS) $(LIB_MAP)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,-soname,libasx.so.$(SOVERSION) \
		-Wl,--version-script=$(LIB_MAP) -Wl,--no-undefined \
		-o $@ $(LIB_OBJS) $(LDFLAGS_ASX) $(LIB_LIBS)

$(O)/lib/libasx.so: $(LIB_SO)
	$(Q)ln -sf libasx.so.$(SOVERSION) $@

$(LIB_A): $(LIB_OBJS)
	$(call msg,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $(LIB_OBJS)

$(O)/lib/libasx.pc: lib/libasx.pc.in Makefile FORCE
	@mkdir -p $(@D)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		-e 's|@LIBS_PRIVATE@|$(LIB_LIBS)|' $< > $@.tmp && \
		{ cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@; }

$(OBJ)/tools/%.o: tools/%.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS_ASX) -Itools/bench $(TIRPC_CFLAGS) $(CFLAGS_ASX) $(DEPFLAGS) \
		-c -o $@ $<

# asx-bench writes the flags it was built with into its results' context
BENCH_BUILT := $(strip $(CFLAGS_ASX))
$(OBJ)/tools/bench/main.o: CFLAGS_ASX += -DASX_BENCH_CFLAGS='"$(BENCH_BUILT)"'

# exp/ and asx-bench see the public headers only (and exp/'s own); they
# link the shared libasx, whose internal symbols they cannot reach.
$(OBJ)/exp/%.o: exp/%.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS_PUB) -Iexp $(CFLAGS_ASX) $(DEPFLAGS) -c -o $@ $<

$(EXP_A): $(EXP_OBJS)
	$(call msg,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $(EXP_OBJS)

$(BENCH_OBJS): CPPFLAGS_ASX := $(CPPFLAGS_PUB) -Iexp

$(BENCH): $(BENCH_OBJS) $(EXP_A) $(LIB_SO) $(O)/lib/libasx.so
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -o $@ $(BENCH_OBJS) $(EXP_A) $(LIB_SO_LINK) $(LDFLAGS_ASX) $(TOOL_LIBS) \
		$(ACE_LINK)

# asx-bench ace: ACE 7's halves (tools/bench/ace/*.cpp, g++), built and
# linked only when pkg-config finds ACE (Debian's libace-dev; tools/setup.sh
# installs it); NO_ACE=1 builds without them, as a host without ACE would
# (`asx-bench ace` then prints why in one line and writes no record).
ACE_FOUND := $(if $(NO_ACE),,$(shell pkg-config --exists ACE 2>/dev/null && echo yes))
# bench_ace.o is compiled again when that choice changes
$(OBJ)/tools/bench/ace-found: FORCE
	@mkdir -p $(@D)
	$(Q)echo '$(ACE_FOUND)' > $@.tmp && { cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@; }
$(OBJ)/tools/bench/bench_ace.o: $(OBJ)/tools/bench/ace-found
ifeq ($(ACE_FOUND),yes)
ACE_LIBS     := $(shell pkg-config --libs ACE)
ACE_CXXFLAGS := -std=gnu++17 $(OPT) -g -pthread -Wall -Wextra -Werror $(SANFLAGS) \
		$(shell pkg-config --cflags ACE)
ACE_OBJS     := $(OBJ)/tools/bench/ace/ace_side.o
ACE_SVC_SO   := $(O)/lib/asx/bench/ace_echo_svc.so
$(OBJ)/tools/bench/bench_ace.o: CFLAGS_ASX += -DASX_BENCH_ACE
ACE_LINK     := $(ACE_OBJS) $(ACE_LIBS) -lstdc++
$(BENCH): $(ACE_OBJS) $(ACE_SVC_SO)

$(OBJ)/tools/bench/ace/%.o: tools/bench/ace/%.cpp tools/bench/ace/ace_side.h
	$(call msg,CXX,$@)
	@mkdir -p $(@D)
	$(Q)$(CXX) $(ACE_CXXFLAGS) -c -o $@ $<

$(ACE_SVC_SO): tools/bench/ace/ace_echo_svc.cpp
	$(call msg,CXX,$@)
	@mkdir -p $(@D)
	$(Q)$(CXX) $(ACE_CXXFLAGS) -fPIC -shared -o $@ $< $(ACE_LIBS)
endif

$(O)/bin/asxctl: $(ASXCTL_OBJS) $(LIB_SO)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -o $@ $(ASXCTL_OBJS) -L$(O)/lib -l:libasx.so.$(SOVERSION) \
		$(TOOL_RPATH) $(LDFLAGS_ASX) -lpthread

$(OBJ)/tools/asxd/asxd.o: CFLAGS_ASX += -DASXD_DEFAULT_CONFIG='"$(SYSCONFDIR)/asx/svc.conf"'
$(O)/asxd/%: tools/asxd/%.in Makefile FORCE
	@mkdir -p $(@D)
	$(Q)sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		-e 's|@BINDIR@|$(BINDIR)|g' \
		-e 's|@SVCDIR@|$(SVCDIR)|g' $< > $@.tmp && \
		{ cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@; }

$(ASXD): $(ASXD_OBJS) $(LIB_SO)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -o $@ $(ASXD_OBJS) -L$(O)/lib -l:libasx.so.$(SOVERSION) \
		$(TOOL_RPATH) $(LDFLAGS_ASX) -lpthread

# services only tools/asxd/test-asxd.sh loads (not installed)
$(O)/asxd/test/%.so: tools/asxd/test/%.c lib/include/asx/svc.h
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS_ASX) $(CFLAGS_ASX) -fPIC -shared -o $@ $< $(LDFLAGS_ASX)
$(ASXD_LIBTEST_SOS): $(O)/asxd/test/%.so: lib/tests/svc/%.c lib/include/asx/asc_policy.h \
		lib/tests/fifoq.h
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS_ASX) $(CFLAGS_ASX) -fPIC -shared -o $@ $< $(LDFLAGS_ASX)

# man pages that name installed paths: made from NAME.SECTION.in with this
# build's PREFIX, SYSCONFDIR, SVCDIR, DATADIR
$(O)/man/%: tools/man/%.in Makefile FORCE
	@mkdir -p $(@D)
	$(Q)sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		-e 's|@SVCDIR@|$(SVCDIR)|g' -e 's|@DATADIR@|$(DATADIR)|g' $< > $@.tmp && \
		{ cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@; }

$(O)/lib/asx/services/%.so: tools/asxd/services/%.c $(wildcard tools/asxd/services/*.h) \
		lib/include/asx/svc.h lib/include/asx/acceptor.h
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS_ASX) $(CFLAGS_ASX) -fPIC -shared -o $@ $< $(LDFLAGS_ASX)

$(O)/bcc/%: tools/bcc/tests/%.c $(LIB_SO)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS_ASX) $(CFLAGS_ASX) -o $@ $< -L$(O)/lib -l:libasx.so.$(SOVERSION) \
		$(TOOL_RPATH) $(LDFLAGS_ASX) -lpthread

$(O)/bin/asx-ttcp: $(TTCP_OBJS) $(LIB_SO)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -o $@ $(TTCP_OBJS) -L$(O)/lib -l:libasx.so.$(SOVERSION) \
		$(TOOL_RPATH) $(LDFLAGS_ASX) -lpthread -lm

# test_svc loads the services of lib/tests/svc/ (shared objects beside it);
# it is linked with -rdynamic so that they find libasx and its callbacks in it.
SVC_TEST_SOS := $(patsubst lib/tests/svc/%.c,$(O)/tests/svc/%.so,$(sort $(wildcard lib/tests/svc/*.c)))
$(O)/tests/svc/%.so: lib/tests/svc/%.c lib/tests/svc/svc_test.h lib/include/asx/svc.h
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS_ASX) $(CFLAGS_ASX) -fPIC -shared -o $@ $< $(SANFLAGS)
# ... and the example codec Module shipped with asxd, built the same way
SVC_TEST_SOS += $(O)/tests/svc/codec.so
$(O)/tests/svc/codec.so: tools/asxd/services/codec.c tools/asxd/services/codec.h \
		lib/include/asx/svc.h lib/include/asx/xdr.h
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS_ASX) $(CFLAGS_ASX) -fPIC -shared -o $@ $< $(SANFLAGS)
$(O)/tests/test_svc: $(SVC_TEST_SOS)
$(O)/tests/test_svc: LDFLAGS_ASX += -rdynamic
# test_svc_policy loads the ASC policies of lib/tests/svc/svc_policy.c
$(O)/tests/svc/svc_policy.so: lib/include/asx/asc_policy.h lib/tests/fifoq.h
$(O)/tests/svc/rr2.so: examples/asc-policy/rr2.c examples/asc-policy/rr2.h \
		lib/include/asx/asc_policy.h
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS_ASX) $(CFLAGS_ASX) -fPIC -shared -o $@ $< $(SANFLAGS)
$(O)/tests/test_svc_policy: $(SVC_TEST_SOS) $(O)/tests/svc/rr2.so
$(O)/tests/test_svc_policy: LDFLAGS_ASX += -rdynamic

# test_mux looks where a message goes at the moment a link sets the upcall.
$(O)/tests/test_mux: LDFLAGS_ASX += -Wl,--wrap=asx__stream_set_upcall

# The tests of exp/ are the study's: public headers, the shared libasx.
$(EXP_TEST_BINS): $(O)/tests/%: exp/tests/%.c $(EXP_A) $(LIB_SO) $(wildcard exp/*/*.h)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS_PUB) -Iexp $(CFLAGS_ASX) -o $@ $< $(EXP_A) $(LIB_SO_LINK) \
		$(LDFLAGS_ASX) $(TEST_LIBS)

# Tests link the static library, so they may reach internal symbols too.
$(O)/tests/%: lib/tests/%.c $(LIB_A) $(wildcard lib/tests/*.h)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS_ASX) -Ilib/tests $(TIRPC_CFLAGS) $(CFLAGS_ASX) -o $@ $< \
		$(LIB_A) $(LDFLAGS_ASX) $(LIB_LIBS) $(TEST_LIBS)

fuzz: $(FUZZ_BINS)
fuzz-replay: $(REPLAY_BINS)

build/fuzz/fuzz_%: lib/fuzz/fuzz_%.c $(LIB_SRCS)
	$(call msg,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)clang $(CPPFLAGS_ASX) -std=gnu11 -O1 -g -fsanitize=fuzzer,address,undefined \
		-o $@ $< $(LIB_SRCS) $(LIB_LIBS)

build/fuzz/replay_%: lib/fuzz/fuzz_%.c lib/fuzz/replay.c $(LIB_A)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS_ASX) -std=gnu11 -O1 -g $(WARN) $(SAN_asan) \
		-o $@ $< lib/fuzz/replay.c $(LIB_SRCS) $(LIB_LIBS)

kselftest-headers: $(KSFT_HDRS)

# tar keeps the archive's mtimes: touch, or they would be older than the tarball
$(KSFT_DIR)/kselftest.h: $(KSFT_DIR)/kselftest_harness.h
$(KSFT_DIR)/kselftest_harness.h: $(wildcard $(LINUX_SOURCE_TARBALL))
	$(call msg,TAR,$(KSFT_DIR))
	@if [ ! -f "$(LINUX_SOURCE_TARBALL)" ]; then \
		echo "make: $(LINUX_SOURCE_TARBALL) not found: the selftests take the kernel's" \
			"kselftest_harness.h from it; run tools/setup.sh" \
			"(apt-get install linux-source-6.1)" >&2; \
		exit 1; \
	fi
	@rm -rf $(KSFT_DIR).tmp
	@mkdir -p $(KSFT_DIR).tmp $(KSFT_DIR)
	$(Q)top=$(basename $(basename $(notdir $(LINUX_SOURCE_TARBALL)))); \
		tar -xJf $(LINUX_SOURCE_TARBALL) -C $(KSFT_DIR).tmp --strip-components=4 \
		"$$top/tools/testing/selftests/kselftest_harness.h" \
		"$$top/tools/testing/selftests/kselftest.h"
	@touch $(KSFT_DIR).tmp/kselftest.h $(KSFT_DIR).tmp/kselftest_harness.h
	@mv $(KSFT_DIR).tmp/kselftest.h $(KSFT_DIR)/kselftest.h
	@mv $(KSFT_DIR).tmp/kselftest_harness.h $@
	@rmdir $(KSFT_DIR).tmp

# asx_util.h's ioctl helpers are libasx's asx_kstream_* wrappers: link libasx.a
# (built with $(SANFLAGS) under SAN=, so these link with them too).
$(O)/selftests/%: selftests/asx/%.c $(wildcard selftests/asx/*.h) uapi/linux/asx.h $(KSFT_HDRS) \
		$(LIB_A)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -Iuapi -Ilib/include \
		-Iselftests/asx -I$(KSFT_DIR) $(SANFLAGS) -o $@ $< $(LIB_A) $(LDFLAGS_ASX) \
		$(LIB_LIBS)

$(O)/selftests/%: selftests/asx/lib/%.c $(wildcard selftests/asx/*.h) uapi/linux/asx.h \
		$(KSFT_HDRS) $(LIB_A) lib/tests/seqmsg.h
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS_ASX) -Iselftests/asx -Ilib/tests -I$(KSFT_DIR) $(CFLAGS_ASX) -o $@ $< \
		$(LIB_A) $(LDFLAGS_ASX) $(LIB_LIBS)

# svc_test loads the example codec.so (build/lib/asx/services) into itself
$(O)/selftests/svc_test: $(O)/lib/asx/services/codec.so tools/asxd/services/codec.h
$(O)/selftests/svc_test: LDFLAGS_ASX += -rdynamic

# The module's sources for DKMS (dkms.conf): DESTDIR/usr/src/asx-VERSION.
# The version must be dkms.conf's: dkms finds the tree by name and version.
DKMS_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
DKMS_SRC     := $(DESTDIR)/usr/src/asx-$(DKMS_VERSION)
dkms-src:
	@test "$(DKMS_VERSION)" = "$(VERSION)" || { echo "dkms-src: dkms.conf says" \
		"$(DKMS_VERSION), the Makefile $(VERSION)" >&2; exit 1; }
	rm -rf $(DKMS_SRC)
	install -d $(DKMS_SRC)
	install -m 0644 dkms.conf Kbuild $(DKMS_SRC)/
	cd $(TOP) && find kmod uapi -type f \( -name '*.[ch]' -o -name Kbuild -o -name Makefile \) \
		! -name '*.mod.c' -exec install -D -m 0644 {} $(DKMS_SRC)/{} \;

kmod:
	@if [ -z "$(KDIR)" ]; then \
		ASX_VM_KVER='$(ASX_VM_KVER)' tools/vm/asx-vm --kver >/dev/null; \
		echo "kmod: no kernel to build for; pass KVER= or KDIR=" >&2; exit 1; \
	fi
	@test -d "$(KDIR)" || { echo "kmod: no kernel build tree at '$(KDIR)';" \
		"run 'make setup' or pass KDIR=" >&2; exit 1; }
	$(Q)$(MAKE) -C $(KDIR) M=$(TOP) $(if $(V),V=$(V)) \
		$(if $(ASX_WERROR),ASX_WERROR=$(ASX_WERROR)) modules

# ---------------------------------------------------------------- checks
check: setup
	$(Q)tools/check.sh

check-lib-plain check-lib-asan check-lib-tsan:
	$(Q)tools/check.sh $(@:check-lib-%=lib-%)
check-lib:
	$(Q)tools/check.sh lib-plain lib-asan lib-tsan
check-kmod: setup
	$(Q)tools/check.sh kmod
# the selftests on the kernels of the matrix named in KERNELS (default: all
# three), e.g. make check-kernels KERNELS=6.12-rt
check-kernels: setup
	$(Q)ASX_KERNELS='$(KERNELS)' tools/check.sh kmod
check-install:
	$(Q)tools/check.sh install
# Not part of `check`: libasx cross-built for aarch64, the ASC suites under
# qemu-user (tools/check.sh aarch64; Documentation/testing.rst)
.PHONY: check-aarch64
check-aarch64:
	$(Q)tools/check.sh aarch64
# Not part of `check`: the selftests in a KASAN/lockdep/kmemleak kernel built
# once per machine (tools/vm/debug-kernel.sh; the first build takes long).
# DEBUG_KERNEL=6.1 (the default), 6.12 or 6.12-rt chooses the source and flavour.
check-debug: setup
	$(Q)tools/vm/check-debug.sh $(if $(DEBUG_KERNEL),--kernel '$(DEBUG_KERNEL)')

# The experiment suite needs no asx.ko: the module is built if it can be, and
# otherwise one line says why the kernel half was left out.
demo: setup lib tools demo-kmod
	$(Q)tools/demo.sh $(DEMO_FLAGS)
demo-kmod:
	$(Q)mkdir -p build/demo; if $(MAKE) -s kmod > build/demo/kmod.log 2>&1; then \
		echo "demo: asx.ko built for $(or $(KVER),$(KDIR)) (kmod/asx.ko)"; \
	else \
		echo "demo: asx.ko left out, the suite needs none:" \
			"$$(grep -m1 -iE 'error|no kernel|kmod:' build/demo/kmod.log ||" \
			"tail -n 1 build/demo/kmod.log) (build/demo/kmod.log)"; \
	fi

# The kernel half of the report: kstream, sa-latency and capsule-block --activations
# in the test VM (qemu TCG) booting KERNEL of the matrix (default 6.1), with asx.ko
# built for it; their records in build/demo/results-kernel.json, merged into the
# report of the last `make demo` (Documentation/experiments.rst, "The kernel half").
.PHONY: demo-kernel
demo-kernel: setup lib tools
	$(Q)tools/demo.sh --kernel-only --vm-kernel '$(or $(KERNEL),6.1)' $(DEMO_FLAGS)

# ---------------------------------------------------------------- install
install: lib tools
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/asx \
		$(DESTDIR)$(INCLUDEDIR)/linux $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(BINDIR)
	install -m 0755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/libasx.so.$(SOVERSION)
	ln -sf libasx.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libasx.so
	install -m 0644 $(LIB_A) $(DESTDIR)$(LIBDIR)/libasx.a
	install -m 0644 lib/include/asx/*.h $(DESTDIR)$(INCLUDEDIR)/asx/
	install -m 0644 uapi/linux/asx.h $(DESTDIR)$(INCLUDEDIR)/linux/asx.h
	install -m 0644 $(O)/lib/libasx.pc $(DESTDIR)$(PKGCONFIGDIR)/libasx.pc
	install -m 0755 $(BENCH) $(DESTDIR)$(BINDIR)/asx-bench
	install -d $(DESTDIR)$(DATADIR)/report
	install -m 0755 tools/report/asx-report $(DESTDIR)$(DATADIR)/report/asx-report
	install -m 0644 tools/report/asxrecords.py tools/report/papers.json \
		$(DESTDIR)$(DATADIR)/report/
	ln -sf $$(realpath -m --relative-to=$(BINDIR) $(DATADIR)/report)/asx-report \
		$(DESTDIR)$(BINDIR)/asx-report
	$(if $(TTCP),install -m 0755 $(TTCP) $(DESTDIR)$(BINDIR)/asx-ttcp)
	$(if $(ASXCTL),install -m 0755 $(ASXCTL) $(DESTDIR)$(BINDIR)/asxctl)
	install -d $(DESTDIR)$(BCCDIR) $(DESTDIR)$(SBINDIR)
	install -m 0644 tools/bcc/asxbcc.py $(DESTDIR)$(BCCDIR)/asxbcc.py
	for t in $(BCC_TOOLS); do \
		install -m 0755 $$t $(DESTDIR)$(BCCDIR)/ && \
		ln -sf $$(realpath -m --relative-to=$(SBINDIR) $(BCCDIR))/$${t##*/} \
			$(DESTDIR)$(SBINDIR)/$${t##*/} || exit 1; \
	done
	for m in $(MANS); do \
		install -D -m 0644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/} || exit 1; \
	done
	install -m 0755 $(ASXD) $(DESTDIR)$(SBINDIR)/asxd
	install -d $(DESTDIR)$(SVCDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(DATADIR)
	install -m 0644 $(SVC_SOS) $(DESTDIR)$(SVCDIR)/
	install -m 0644 $(O)/asxd/asxd.service $(DESTDIR)$(UNITDIR)/asxd.service
	install -m 0644 $(O)/asxd/svc.conf $(DESTDIR)$(DATADIR)/svc.conf.sample
	install -D -m 0644 tools/gdb/libasx-gdb.py \
		$(DESTDIR)$(GDBAUTOLOADDIR)$(LIBDIR)/libasx.so.$(SOVERSION)-gdb.py

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libasx.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libasx.so \
		$(DESTDIR)$(LIBDIR)/libasx.a $(DESTDIR)$(PKGCONFIGDIR)/libasx.pc \
		$(DESTDIR)$(INCLUDEDIR)/linux/asx.h $(DESTDIR)$(BINDIR)/asx-bench \
		$(DESTDIR)$(BINDIR)/asx-report \
		$(DESTDIR)$(BINDIR)/asx-ttcp $(DESTDIR)$(BINDIR)/asxctl \
		$(patsubst tools/bcc/%,$(DESTDIR)$(SBINDIR)/%,$(BCC_TOOLS)) \
		$(foreach m,$(MANS),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m))) \
		$(DESTDIR)$(SBINDIR)/asxd $(DESTDIR)$(UNITDIR)/asxd.service \
		$(DESTDIR)$(GDBAUTOLOADDIR)$(LIBDIR)/libasx.so.$(SOVERSION)-gdb.py
	rm -rf $(DESTDIR)$(INCLUDEDIR)/asx $(DESTDIR)$(BCCDIR) $(DESTDIR)$(SVCDIR) $(DESTDIR)$(DATADIR)

style: lib
	$(Q)/usr/bin/python3 tools/doc-check.py
	$(Q)tools/checkpatch.sh
	$(Q)tools/kmod-layers.sh
	$(Q)tools/svc-calls.sh --self-test
	$(Q)tools/svc-calls.sh
	$(Q)tools/lib-layers.sh
	$(Q)tools/lib-layers.sh --self-test

setup:
	$(Q)tools/setup.sh --quiet

clean:
	rm -rf build
	$(Q)if [ -d "$(KDIR)" ]; then $(MAKE) -s -C $(KDIR) M=$(TOP) clean; fi

FORCE:

-include $(LIB_OBJS:.o=.d) $(EXP_OBJS:.o=.d) $(BENCH_OBJS:.o=.d) $(TTCP_OBJS:.o=.d) $(ASXCTL_OBJS:.o=.d) $(ASXD_OBJS:.o=.d)
