# ccxd: keeps processes that talk to each other on one CCX.
#
#   make            build ccxd, ccxctl and the test helpers
#   make run        build and run ccxd in the foreground on conf/ccxd.conf
#   make check      build and run every test; ends with "N passed, N failed"
#   make install    PREFIX (default /usr/local) and DESTDIR are honoured
#
# WERROR=1 turns warnings into errors (on by default when CI=true); SANITIZE=address,undefined
# builds everything with those sanitizers.

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
MANDIR     ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
UNITDIR    ?= $(PREFIX)/lib/systemd/system

VERSION    := 0.1.0
PKGS       := libsystemd libnl-3.0 hwloc inih json-c

# Install whatever is missing before anything is compiled (not for clean/uninstall).
ifeq ($(filter clean distclean uninstall,$(MAKECMDGOALS)),)
ifneq ($(shell tools/install-deps --check >/dev/null 2>&1 && echo ok),ok)
$(info Installing missing build and test dependencies (tools/install-deps)...)
DEPS_RESULT := $(shell tools/install-deps >&2 && echo ok)
ifneq ($(DEPS_RESULT),ok)
$(error tools/install-deps failed)
endif
endif
endif

CC         ?= cc
WARNINGS   := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
              -Wformat=2 -Wno-format-nonliteral -Wvla
CFLAGS     ?= -O2 -g
CFLAGS     += -std=gnu11 $(WARNINGS) -D_GNU_SOURCE -DCCXD_VERSION='"$(VERSION)"' \
              -Icommon -Idaemon $(shell pkg-config --cflags $(PKGS))
LDLIBS     += $(shell pkg-config --libs $(PKGS)) -lpthread
LDFLAGS    += -Wl,--as-needed
ifeq ($(CI),true)
WERROR     ?= 1
endif
ifeq ($(WERROR),1)
CFLAGS     += -Werror
endif
ifneq ($(SANITIZE),)
CFLAGS     += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
LDFLAGS    += -fsanitize=$(SANITIZE)
endif

COMMON_SRC := $(wildcard common/*.c)
DAEMON_SRC := $(filter-out daemon/main.c,$(wildcard daemon/*.c))
COMMON_OBJ := $(COMMON_SRC:.c=.o)
DAEMON_OBJ := $(DAEMON_SRC:.c=.o)
UNIT_SRC   := $(wildcard tests/unit/test-*.c)
UNIT_BIN   := $(UNIT_SRC:.c=)
HELPER_SRC := $(wildcard tools/helpers/*.c)
HELPER_BIN := $(HELPER_SRC:.c=)

PROGRAMS   := daemon/ccxd tools/ccxctl

all: $(PROGRAMS) $(HELPER_BIN)

common/libcommon.a: $(COMMON_OBJ)
	$(AR) rcs $@ $^

daemon/libccxd.a: $(DAEMON_OBJ)
	$(AR) rcs $@ $^

daemon/ccxd: daemon/main.o daemon/libccxd.a common/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

tools/ccxctl: tools/ccxctl.o common/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

tools/helpers/%: tools/helpers/%.o common/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Static, so that the program it execs starts within microseconds of its
# execve: the exec-to-pin latency it measures is then ccxd's, not ld.so's.
tools/helpers/ccxt-exec: tools/helpers/ccxt-exec.o common/cpulist.o
	$(CC) $(LDFLAGS) -static -o $@ $^

tests/unit/test-%: tests/unit/test-%.o daemon/libccxd.a common/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Every object depends on every header: the project is small enough that this
# costs nothing and it can never build against a stale header.
HEADERS    := $(wildcard common/*.h daemon/*.h tests/unit/*.h)
%.o: %.c $(HEADERS) Makefile
	$(CC) $(CFLAGS) -c -o $@ $<

run: all
	./daemon/ccxd --config conf/ccxd.conf

check: all $(UNIT_BIN)
	@tests/run

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSCONFDIR)
	install -m 0755 daemon/ccxd $(DESTDIR)$(SBINDIR)/ccxd
	install -m 0755 tools/ccxctl $(DESTDIR)$(BINDIR)/ccxctl
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/ccxd.conf ]; then \
		echo "keeping existing $(DESTDIR)$(SYSCONFDIR)/ccxd.conf"; \
	else \
		install -m 0644 conf/ccxd.conf $(DESTDIR)$(SYSCONFDIR)/ccxd.conf; \
	fi

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/ccxd $(DESTDIR)$(BINDIR)/ccxctl
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/ccxd.conf ] && cmp -s conf/ccxd.conf $(DESTDIR)$(SYSCONFDIR)/ccxd.conf; then \
		rm -f $(DESTDIR)$(SYSCONFDIR)/ccxd.conf; \
	elif [ -e $(DESTDIR)$(SYSCONFDIR)/ccxd.conf ]; then \
		echo "keeping modified $(DESTDIR)$(SYSCONFDIR)/ccxd.conf"; \
	fi

clean:
	rm -f common/*.o daemon/*.o tools/*.o tools/helpers/*.o tests/unit/*.o \
	      common/libcommon.a daemon/libccxd.a $(PROGRAMS) $(UNIT_BIN) $(HELPER_BIN)

.PHONY: all run check install uninstall clean
.SECONDARY:
