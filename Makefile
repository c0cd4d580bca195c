# ccxd: keeps processes that talk to each other on one CCX.
#
#   make            build ccxd, ccxctl and the test helpers
#   make run        build and run ccxd in the foreground on conf/ccxd.conf
#   make check      build and run every test; ends with "N passed, N failed"
#   make install    PREFIX (default /usr/local) and DESTDIR are honoured
#   make check-systemd  boot a real systemd in a container and run ccxd under it
#   make fuzz       run each libFuzzer harness (tests/fuzz) for FUZZ_SECONDS (default 60)
#
# check, check-systemd and fuzz first install the Debian packages that are
# missing (tools/install-deps), run those building needs; every other goal
# only names them and stops.
#
# WERROR=1 turns warnings into errors (on by default when CI=true); SANITIZE=address,undefined
# builds everything with those sanitizers (any report fails the test that caused it).

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
MANDIR     ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
BASHCOMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPLETIONDIR ?= $(PREFIX)/share/zsh/vendor-completions
FISHCOMPLETIONDIR ?= $(PREFIX)/share/fish/vendor_completions.d
DATADIR    ?= $(PREFIX)/share
PKGDATADIR ?= $(DATADIR)/ccxd
# The packages' presets, read with /etc/ccxd.conf and its drop-ins: built
# into ccxd, so that the ccxd installed reads them where it is installed.
PRESETSDIR ?= $(PKGDATADIR)/ccxd.conf.d

VERSION    := 0.1.0
PKGS       := libsystemd libnl-3.0 hwloc inih json-c libbpf

# Dependencies, before anything is compiled (not for clean/uninstall). The
# goals a developer runs on a fresh machine install whatever is missing
# (tools/install-deps, apt-get): the tests' tools and servers for the goals
# that test, what building needs for make run. Every other goal (make, make
# all, make install) only names what building needs and is missing, and
# stops: building, and packaging in a chroot, never run apt-get.
DEPS_TEST_GOALS := check check-systemd fuzz
DEPS_INSTALL_GOALS := run $(DEPS_TEST_GOALS)
DEPS_WHAT := $(if $(filter $(DEPS_TEST_GOALS),$(MAKECMDGOALS)),,--build)
ifeq ($(filter clean distclean uninstall,$(MAKECMDGOALS)),)
ifneq ($(filter $(DEPS_INSTALL_GOALS),$(MAKECMDGOALS)),)
DEPS_CHECK := $(shell tools/install-deps --check $(DEPS_WHAT) 2>&1; echo "rc=$$?")
ifeq ($(filter rc=1,$(DEPS_CHECK)),rc=1)
$(info Installing missing dependencies (tools/install-deps $(DEPS_WHAT))...)
DEPS_RESULT := $(shell tools/install-deps $(DEPS_WHAT) >&2 && echo ok)
ifneq ($(DEPS_RESULT),ok)
$(error tools/install-deps failed)
endif
endif
else
DEPS_CHECK := $(shell tools/install-deps --check --build 2>&1; echo "rc=$$?")
ifeq ($(filter rc=1,$(DEPS_CHECK)),rc=1)
$(error $(filter-out rc=%,$(DEPS_CHECK)); building needs them. tools/install-deps installs them (as root), and so do make run and make check)
endif
endif
ifeq ($(filter rc=2,$(DEPS_CHECK)),rc=2)
$(warning $(filter-out rc=%,$(DEPS_CHECK)))
endif
endif

CC         ?= cc
WARNINGS   := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
              -Wformat=2 -Wno-format-nonliteral -Wvla
CFLAGS     ?= -O2 -g
CFLAGS     += -std=gnu11 $(WARNINGS) -D_GNU_SOURCE -DCCXD_VERSION='"$(VERSION)"' \
              -DTASKITER_OBJECT='"$(TASKITER_OBJECT)"' -DTRAFFIC_OBJECT='"$(TRAFFIC_OBJECT)"' -DEXECS_OBJECT='"$(EXECS_OBJECT)"' \
              $(INCLUDES) $(shell pkg-config --cflags $(PKGS))
LDLIBS     += $(shell pkg-config --libs $(PKGS)) -lpthread
LDFLAGS    += -Wl,--as-needed
ifeq ($(CI),true)
WERROR     ?= 1
endif
ifeq ($(WERROR),1)
CFLAGS     += -Werror
endif
ifneq ($(SANITIZE),)
# No recovery: undefined behaviour stops the program, so the test fails
# instead of printing a line nobody reads.
CFLAGS     += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS    += -fsanitize=$(SANITIZE)
endif

COMMON_SRC := $(wildcard common/*.c)
# The probe and its codec: a library of their own, which ccxd (through its
# prober) and ccxctl (probe --local) both link.
PROBE_SRC  := $(wildcard probe/*.c)
# The daemon: its process and event loop at the top, each layer in a folder
# of its own (docs/design.md); every folder is on the include path.
DAEMON_DIRS := daemon daemon/bpf daemon/events daemon/placements daemon/rules daemon/automatic daemon/policy daemon/sample \
               daemon/prober daemon/reports daemon/host daemon/config
# tools/ too, for the tests of ccxctl's printing.
INCLUDES   := -Icommon -Iprobe $(addprefix -I,$(DAEMON_DIRS)) -Itools
DAEMON_SRC := $(filter-out daemon/main.c,$(wildcard $(addsuffix /*.c,$(DAEMON_DIRS))))
COMMON_OBJ := $(COMMON_SRC:.c=.o)
PROBE_OBJ  := $(PROBE_SRC:.c=.o)
DAEMON_OBJ := $(DAEMON_SRC:.c=.o)
UNIT_SRC   := $(wildcard tests/unit/test-*.c)
UNIT_BIN   := $(UNIT_SRC:.c=)
HELPER_SRC := $(filter-out tools/helpers/ccxt-fuse.c,$(wildcard tools/helpers/*.c))
HELPER_BIN := $(HELPER_SRC:.c=) tools/helpers/ccxt-exec-dynamic
# A FUSE file system for the tests, built only where libfuse3 is (make
# check installs it): building ccxd needs it not.
FUSE_HELPER := $(if $(shell pkg-config --exists fuse3 && echo yes),tools/helpers/ccxt-fuse)

PROGRAMS   := daemon/ccxd tools/ccxctl
UNITS      := systemd/ccxd.service systemd/ccxd.socket systemd/ccxd-restore.service
MAN_PAGES  := man/ccxctl.1 man/ccxd.conf.5 man/ccxd.8
COMPLETIONS := completion/ccxctl completion/ccxd
ZSH_COMPLETIONS := completion/_ccxctl completion/_ccxd
FISH_COMPLETIONS := completion/ccxctl.fish completion/ccxd.fish

all: $(PROGRAMS) $(HELPER_BIN)

common/libcommon.a: $(COMMON_OBJ)
	$(AR) rcs $@ $^

probe/libprobe.a: $(PROBE_OBJ)
	$(AR) rcs $@ $^

daemon/libccxd.a: $(DAEMON_OBJ)
	$(AR) rcs $@ $^

daemon/ccxd: daemon/main.o daemon/libccxd.a probe/libprobe.a common/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The printing of replies, apart: the unit test and the fuzzer link it too.
CCXCTL_PRINT := tools/ccxctl-print.o tools/ccxctl-recommend.o tools/ccxctl-text.o
tools/ccxctl: tools/ccxctl.o tools/ccxctl-probe.o tools/ccxctl-run.o tools/ccxctl-svg.o $(CCXCTL_PRINT) probe/libprobe.a common/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

tools/helpers/%: tools/helpers/%.o common/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

tools/helpers/ccxt-fuse: tools/helpers/ccxt-fuse.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(shell pkg-config --cflags fuse3) $(LDFLAGS) -o $@ $< $(shell pkg-config --libs fuse3)

# Static, so that the program it execs starts within microseconds of its
# execve: the exec-to-pin latency it measures is then ccxd's, not ld.so's.
# The sanitizers' runtimes cannot be linked statically: dynamic then.
tools/helpers/ccxt-exec: tools/helpers/ccxt-exec.o common/cpulist.o
	$(CC) $(LDFLAGS) $(if $(SANITIZE),,-static) -o $@ $^
# The same, dynamically linked, as most programs are: the benchmark's other shape.
tools/helpers/ccxt-exec-dynamic: tools/helpers/ccxt-exec.o common/cpulist.o
	$(CC) $(LDFLAGS) -o $@ $^

tests/unit/test-%: tests/unit/test-%.o daemon/libccxd.a probe/libprobe.a common/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
tests/unit/test-ccxctl-text: $(CCXCTL_PRINT)

# Built by tools/bench/read-cost.sh and traffic-cost.sh, which run them.
tools/bench/read-cost tools/bench/traffic-cost: %: %.o daemon/libccxd.a probe/libprobe.a common/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The BPF iterators of the sampler (daemon/sample/taskiter.c), compiled for the BPF
# target and built into ccxd. -g gives the BTF that CO-RE relocates with.
TASKITER_OBJECT := daemon/sample/bpf/taskiter.bpf.o
BPF_CFLAGS := -O2 -g -target bpf -Wall -Werror -I/usr/include/$(shell $(CC) -print-multiarch)
$(TASKITER_OBJECT): daemon/sample/bpf/taskiter.bpf.c daemon/sample/taskiter-records.h daemon/bpf/kernel.h Makefile
	clang $(BPF_CFLAGS) -c -o $@ $<
daemon/sample/taskiter.o: $(TASKITER_OBJECT)

# The traffic counters (daemon/sample/traffic.c), the same way.
TRAFFIC_OBJECT := daemon/sample/bpf/traffic.bpf.o
$(TRAFFIC_OBJECT): daemon/sample/bpf/traffic.bpf.c daemon/sample/traffic-records.h daemon/bpf/kernel.h Makefile
	clang $(BPF_CFLAGS) -c -o $@ $<
daemon/sample/traffic.o: $(TRAFFIC_OBJECT)

# The exec programs (daemon/events/execs.c), the same way.
EXECS_OBJECT := daemon/events/bpf/execs.bpf.o
$(EXECS_OBJECT): daemon/events/bpf/execs.bpf.c daemon/events/execs-records.h daemon/bpf/kernel.h Makefile
	clang $(BPF_CFLAGS) -c -o $@ $<
daemon/events/execs.o: $(EXECS_OBJECT)

# Every object depends on every header: the project is small enough that this
# costs nothing and it can never build against a stale header.
HEADERS    := $(wildcard common/*.h probe/*.h $(addsuffix /*.h,$(DAEMON_DIRS)) tools/*.h tests/unit/*.h)
%.o: %.c $(HEADERS) Makefile .build-flags
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# Rewritten only when the flags change, so that `make check SANITIZE=...`
# after a plain build (or the other way round) rebuilds everything instead
# of linking old objects. The old products are removed rather than left to
# timestamps, which a clock set back would fool.
BUILD_FLAGS := $(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $(SANITIZE)
BUILT      := common/*.o probe/*.o $(addsuffix /*.o,$(DAEMON_DIRS)) tools/*.o tools/helpers/*.o tools/bench/*.o tests/unit/*.o \
              common/libcommon.a probe/libprobe.a daemon/libccxd.a $(PROGRAMS) $(UNIT_BIN) $(HELPER_BIN) tools/helpers/ccxt-fuse tools/bench/read-cost \
              tools/bench/traffic-cost
.build-flags: FORCE
	@echo '$(BUILD_FLAGS)' | cmp -s - $@ || { rm -f $(BUILT); echo '$(BUILD_FLAGS)' > $@; }

# The install paths built in go to the one object that uses them, and are
# recorded apart: make install PREFIX=/usr after make rebuilds that object
# and the archive it is in (so every program that links it), not the tree.
PATH_FLAGS := -DCCXD_PRESETS_DIR='"$(PRESETSDIR)"'
daemon/config/config-file.o: CFLAGS += $(PATH_FLAGS)
daemon/config/config-file.o: .build-paths
.build-paths: FORCE
	@echo '$(PATH_FLAGS)' | cmp -s - $@ || { rm -f daemon/config/config-file.o daemon/libccxd.a; echo '$(PATH_FLAGS)' > $@; }

# ---- fuzzing: libFuzzer harnesses, built with clang in their own directory
# so that their objects never mix with the normal build's ----
FUZZ_CC      ?= clang
FUZZ_DIR     := build/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS  := -O1 -g -fno-omit-frame-pointer -std=gnu11 $(WARNINGS) -D_GNU_SOURCE \
                -DCCXD_VERSION='"$(VERSION)"' -DTASKITER_OBJECT='"$(TASKITER_OBJECT)"' -DTRAFFIC_OBJECT='"$(TRAFFIC_OBJECT)"' -DEXECS_OBJECT='"$(EXECS_OBJECT)"' $(INCLUDES) $(shell pkg-config --cflags $(PKGS)) \
                -fsanitize=fuzzer-no-link $(FUZZ_SAN) \
                -Wno-gnu-variable-sized-type-not-at-end  # the proc connector message layout, as the kernel defines it
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz-*.c)
FUZZ_BIN     := $(patsubst tests/fuzz/%.c,$(FUZZ_DIR)/%,$(FUZZ_SRC))
FUZZ_COMMON  := $(patsubst %.c,$(FUZZ_DIR)/%.o,$(COMMON_SRC))
FUZZ_PROBE   := $(patsubst %.c,$(FUZZ_DIR)/%.o,$(PROBE_SRC))
FUZZ_DAEMON  := $(patsubst %.c,$(FUZZ_DIR)/%.o,$(DAEMON_SRC))
FUZZ_SECONDS ?= 60

$(FUZZ_DIR)/daemon/sample/taskiter.o: $(TASKITER_OBJECT)
$(FUZZ_DIR)/daemon/sample/traffic.o: $(TRAFFIC_OBJECT)
$(FUZZ_DIR)/daemon/events/execs.o: $(EXECS_OBJECT)
$(FUZZ_DIR)/daemon/config/config-file.o: FUZZ_CFLAGS += $(PATH_FLAGS)
$(FUZZ_DIR)/%.o: %.c $(HEADERS) Makefile
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_DIR)/libcommon.a: $(FUZZ_COMMON)
	$(AR) rcs $@ $^

$(FUZZ_DIR)/libprobe.a: $(FUZZ_PROBE)
	$(AR) rcs $@ $^

$(FUZZ_DIR)/libccxd.a: $(FUZZ_DAEMON)
	$(AR) rcs $@ $^

$(FUZZ_DIR)/fuzz-%: $(FUZZ_DIR)/tests/fuzz/fuzz-%.o $(FUZZ_DIR)/libccxd.a $(FUZZ_DIR)/libprobe.a $(FUZZ_DIR)/libcommon.a
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(LDLIBS)
$(FUZZ_DIR)/fuzz-ccxctl-print: $(addprefix $(FUZZ_DIR)/,$(CCXCTL_PRINT))

fuzz-build: $(FUZZ_BIN)

# Each harness for FUZZ_SECONDS, from its seed corpus; new inputs go to a
# temporary directory, crashers are printed for tests/fuzz/corpus/.
fuzz: fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run

run: all
	./daemon/ccxd --config conf/ccxd.conf

# Each fuzzer runs 30 s in make check (tests/fuzz/run, last), FUZZ_SECONDS to change it.
# Without clang (tools/install-deps installs it) the fuzzers are skipped, not the check.
check: all $(UNIT_BIN) $(FUSE_HELPER) $(if $(shell command -v $(FUZZ_CC)),fuzz-build)
	@FUZZ_SECONDS=$(if $(filter command line environment,$(origin FUZZ_SECONDS)),$(FUZZ_SECONDS),30) tests/run

install: $(PROGRAMS)
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSCONFDIR) $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(BASHCOMPLETIONDIR) $(DESTDIR)$(ZSHCOMPLETIONDIR) \
		$(DESTDIR)$(FISHCOMPLETIONDIR) $(addprefix $(DESTDIR)$(MANDIR)/man,1 5 8)
	@# Where the administrator's drop-ins and the packages' presets go.
	install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/ccxd.conf.d $(DESTDIR)$(PRESETSDIR)
	install -m 0755 daemon/ccxd $(DESTDIR)$(SBINDIR)/ccxd
	install -m 0755 tools/ccxctl $(DESTDIR)$(BINDIR)/ccxctl
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/ccxd.conf ]; then \
		echo "keeping existing $(DESTDIR)$(SYSCONFDIR)/ccxd.conf"; \
	else \
		install -m 0644 conf/ccxd.conf $(DESTDIR)$(SYSCONFDIR)/ccxd.conf; \
	fi
	@# The units name the programs where PREFIX=/usr puts them.
	for u in $(UNITS); do \
		sed -e 's|/usr/sbin/ccxd|$(SBINDIR)/ccxd|g' -e 's|/usr/bin/ccxctl|$(BINDIR)/ccxctl|g' $$u \
			> $(DESTDIR)$(UNITDIR)/$${u##*/} && chmod 0644 $(DESTDIR)$(UNITDIR)/$${u##*/} || exit 1; \
	done
	install -m 0644 systemd/ccxd.sysusers $(DESTDIR)$(SYSUSERSDIR)/ccxd.conf
	@# The man pages name the presets' directory where PREFIX puts it.
	for m in $(MAN_PAGES); do \
		sed 's|/usr/share/ccxd/ccxd\.conf\.d|$(PRESETSDIR)|g' $$m > $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/} && \
			chmod 0644 $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/} || exit 1; \
	done
	for c in $(COMPLETIONS); do install -m 0644 $$c $(DESTDIR)$(BASHCOMPLETIONDIR)/$${c##*/} || exit 1; done
	for c in $(ZSH_COMPLETIONS); do install -m 0644 $$c $(DESTDIR)$(ZSHCOMPLETIONDIR)/$${c##*/} || exit 1; done
	for c in $(FISH_COMPLETIONS); do install -m 0644 $$c $(DESTDIR)$(FISHCOMPLETIONDIR)/$${c##*/} || exit 1; done
	@# What a package's scripts would do, on this very system only: make
	@# the service's user, and let a running systemd see the new units.
	@if [ -z "$(DESTDIR)" ] && command -v systemd-sysusers >/dev/null; then \
		systemd-sysusers $(SYSUSERSDIR)/ccxd.conf; \
	fi
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/ccxd $(DESTDIR)$(BINDIR)/ccxctl
	rm -f $(addprefix $(DESTDIR)$(UNITDIR)/,$(notdir $(UNITS))) $(DESTDIR)$(SYSUSERSDIR)/ccxd.conf
	rm -f $(foreach m,$(MAN_PAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m)))
	rm -f $(addprefix $(DESTDIR)$(BASHCOMPLETIONDIR)/,$(notdir $(COMPLETIONS)))
	rm -f $(addprefix $(DESTDIR)$(ZSHCOMPLETIONDIR)/,$(notdir $(ZSH_COMPLETIONS)))
	rm -f $(addprefix $(DESTDIR)$(FISHCOMPLETIONDIR)/,$(notdir $(FISH_COMPLETIONS)))
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/ccxd.conf ] && cmp -s conf/ccxd.conf $(DESTDIR)$(SYSCONFDIR)/ccxd.conf; then \
		rm -f $(DESTDIR)$(SYSCONFDIR)/ccxd.conf; \
	elif [ -e $(DESTDIR)$(SYSCONFDIR)/ccxd.conf ]; then \
		echo "keeping modified $(DESTDIR)$(SYSCONFDIR)/ccxd.conf"; \
	fi
	@# The drop-in and preset directories go only when nothing is left in them.
	@for d in $(DESTDIR)$(SYSCONFDIR)/ccxd.conf.d $(DESTDIR)$(PRESETSDIR) $(DESTDIR)$(PKGDATADIR); do \
		[ ! -d $$d ] || rmdir --ignore-fail-on-non-empty $$d || exit 1; \
		[ ! -d $$d ] || echo "keeping $$d: it is not empty"; \
	done

# Boots Debian 12's systemd in a container (cached rootfs), installs ccxd
# there and runs it as a service; make check runs it too when it can.
check-systemd: all
	@sh tests/integration/test-systemd-nspawn.sh

clean:
	rm -f $(BUILT) $(TASKITER_OBJECT) $(TRAFFIC_OBJECT) $(EXECS_OBJECT) .build-flags .build-paths
	rm -rf $(FUZZ_DIR)

.PHONY: all run check check-systemd install uninstall clean fuzz fuzz-build FORCE
.SECONDARY:
