# LFS top-level Makefile.
#   make            build lfs.ko (for KVER) and all userspace
#   make modules    lfs.ko and the harness's test module for every kernel of KERNELS
#   make deps       install the Debian packages and the kernels of KERNELS (root)
#   make check      deps + build + tests: the whole suite on the first kernel of
#                   KERNELS, the driver, machine and CXL VM tests on the others
#   make check-debug  deps + the debug kernel (tools/debugkernel, hours the
#                   first time) + the driver tests and the long netlink fuzz
#                   on it; not part of check (docs/TESTING.md)
#   make demo       deps + build + the emulated Machine walk-through
#   make install    install module, tools, configs, udev rules, units, man pages
#
# KERNELS: the kernel matrix (tools/kernels list: 6.1 6.12 7), e.g.
# make check KERNELS="6.1 7". KVER: the kernel `make module` builds for, a
# series of the matrix or an installed release (default 6.1, Debian 12's).
# Each kernel's lfs.ko is build/module/RELEASE/lfs.ko (docs/TESTING.md).

TOP := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
KERNELS ?= $(shell $(TOP)/tools/kernels list)
KVER ?= 6.1
override KVER := $(or $(shell $(TOP)/tools/kernels resolve $(KVER) 2>/dev/null),$(KVER))
PREFIX ?= /usr/local
DESTDIR ?=
VERSION := $(shell cat $(TOP)/VERSION)
# The DKMS source tree (dkms.conf, docs/TESTING.md "DKMS")
DKMS_SRC = $(DESTDIR)/usr/src/lfs-$(VERSION)
export KVER PREFIX DESTDIR
# Parallel jobs of the builds that check, demo and friends start (the
# machine's processors; the module builds take most of a CI's first minutes)
JOBS ?= $(shell nproc)

SUBDIRS := lvmish librarian lvmish/agent lvmish/lfsvol

.PHONY: all module modules userspace helpers deps check check-host check-vm check-debug demo install clean lint $(SUBDIRS)

all: module userspace helpers

# Test and benchmark helpers (tests/Makefile, bench/Makefile).
helpers: userspace
	$(MAKE) -C tests
	$(MAKE) -C bench

# driver/lfs.ko links to the default kernel's build, for scripts that
# predate the kernel matrix; guests use $LFS_KO (tests/vm/guest-init).
# `+': the kernel's make joins this make's jobserver (without it, it runs
# one job at a time: "jobserver unavailable")
module:
	+tools/kernels build $(KVER) driver build/module/$(KVER)
	@[ "$(KVER)" != "$$(tools/kernels resolve 6.1 2>/dev/null)" ] || \
		ln -sfn ../build/module/$(KVER)/lfs.ko driver/lfs.ko

# Every kernel's module at once, sharing the jobs (-j) between them.
modules: $(addprefix module-,$(KERNELS))

module-%:
	+$(MAKE) --no-print-directory module KVER=$*
	+$(MAKE) --no-print-directory -C tests warnmod KVER=$$(tools/kernels resolve $*)

userspace: $(SUBDIRS)

$(SUBDIRS):
	$(MAKE) -C $@

# lfsvol links the node agent (lvmish/agent), the driver's netlink library
# (lvmish) and the librarian's client library (librarian).
lvmish/agent: lvmish librarian
lvmish/lfsvol: lvmish/agent lvmish librarian

deps:
	@tools/install-deps
	@tools/kernels install $(KERNELS)
	@tools/qemu10 install
	@tools/bootroot install

# check and demo install dependencies first, then build, then run.
check: deps
	$(MAKE) -j$(JOBS) all
	$(MAKE) -j$(JOBS) modules
	tests/run --kernels "$(KERNELS)"

check-host: deps
	$(MAKE) -j$(JOBS) all
	tests/run host

check-vm: deps
	$(MAKE) -j$(JOBS) all
	tests/run vm

# The debug kernel's run: what a driver change must pass before it is
# called done. Guests there run several times slower, hence the timeouts.
DEBUG_TIMEOUT_FACTOR ?= 6
check-debug: deps
	tools/debugkernel build
	$(MAKE) -j$(JOBS) all
	rel=$$(tools/debugkernel release) && \
	$(MAKE) module KVER=$$rel && \
	$(MAKE) -C tests warnmod KVER=$$rel && \
	LFS_VM_TIMEOUT_FACTOR=$(DEBUG_TIMEOUT_FACTOR) LFS_VM_CPUS=2 \
		tests/run --kernels "$$rel" driver namespace fencing debug

demo: deps
	$(MAKE) -j$(JOBS) all
	tests/demo

lint:
	tools/lint

install: all
	install -D -m 0644 build/module/$(KVER)/lfs.ko $(DESTDIR)/lib/modules/$(KVER)/extra/lfs.ko
	@for d in $(SUBDIRS); do $(MAKE) -C $$d install || exit 1; done
	install -d $(DESTDIR)/etc/lfs
	@for f in config/*.conf; do [ -e "$$f" ] || continue; \
		install -m 0644 $$f $(DESTDIR)/etc/lfs/$$(basename $$f).example; done
	@for f in config/*.service; do [ -e "$$f" ] || continue; \
		install -d $(DESTDIR)/lib/systemd/system; \
		sed 's#/usr/local/s\?bin/#$(PREFIX)/sbin/#g' $$f >$(DESTDIR)/lib/systemd/system/$$(basename $$f); done
	@for f in udev/*.rules; do [ -e "$$f" ] || continue; \
		install -d $(DESTDIR)/lib/udev/rules.d; \
		sed 's#/usr/local/s\?bin/#$(PREFIX)/sbin/#g' $$f >$(DESTDIR)/lib/udev/rules.d/$$(basename $$f); done
	@for f in man/*.[1-8]; do [ -e "$$f" ] || continue; s=$${f##*.}; \
		install -D -m 0644 $$f $(DESTDIR)$(PREFIX)/share/man/man$$s/$$(basename $$f); done
	install -d $(DKMS_SRC)/driver/uapi
	sed 's/@VERSION@/$(VERSION)/' dkms.conf >$(DKMS_SRC)/dkms.conf
	install -m 0644 Kbuild $(DKMS_SRC)/
	install -m 0644 driver/Kbuild driver/*.c driver/*.h $(DKMS_SRC)/driver/
	install -m 0644 driver/uapi/*.h $(DKMS_SRC)/driver/uapi/
	@if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); \
	elif [ -e $(DESTDIR)/lib/modules/$(KVER)/modules.order ]; then depmod -b $(DESTDIR) $(KVER); fi

clean:
	rm -rf build/module build/tests/warnmod
	rm -f driver/lfs.ko
	@for d in $(SUBDIRS); do $(MAKE) -C $$d clean; done
