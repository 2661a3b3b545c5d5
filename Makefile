# LFS top-level Makefile.
#   make            build lfs.ko and all userspace
#   make deps       install the Debian packages everything needs (root)
#   make check      deps + build + the whole test suite (host and VM tests)
#   make demo       deps + build + the emulated Machine walk-through
#   make install    install module, tools, configs, udev rules, units, man pages

KVER ?= $(shell ls /lib/modules 2>/dev/null | grep -- '-amd64$$' | sort -V | tail -n 1)
KDIR ?= /lib/modules/$(KVER)/build
PREFIX ?= /usr/local
DESTDIR ?=
export KVER PREFIX DESTDIR

SUBDIRS := lvmish librarian lvmish/lfsvol

.PHONY: all module userspace helpers deps check check-host check-vm demo install clean lint $(SUBDIRS)

all: module userspace helpers

# Test and benchmark helpers (tests/Makefile, bench/Makefile).
helpers: userspace
	$(MAKE) -C tests
	$(MAKE) -C bench

module:
	@test -n "$(KVER)" -a -d "$(KDIR)" || { echo "no kernel build tree for KVER='$(KVER)' (install linux-headers-amd64 or set KVER=)" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

userspace: $(SUBDIRS)

$(SUBDIRS):
	$(MAKE) -C $@

# lfsvol links the driver client library (lvmish) and the librarian client.
lvmish/lfsvol: lvmish librarian

deps:
	@tools/install-deps

# check and demo install dependencies first, then build, then run.
check: deps
	$(MAKE) all
	tests/run

check-host: deps
	$(MAKE) all
	tests/run host

check-vm: deps
	$(MAKE) all
	tests/run vm

demo: deps
	$(MAKE) all
	tests/demo

lint:
	tools/lint

install: all
	install -D -m 0644 driver/lfs.ko $(DESTDIR)/lib/modules/$(KVER)/extra/lfs.ko
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
	install -D -m 0644 dkms.conf $(DESTDIR)/usr/src/lfs-$(shell cat VERSION)/dkms.conf
	@cp -r Kbuild driver $(DESTDIR)/usr/src/lfs-$(shell cat VERSION)/
	@rm -f $(DESTDIR)/usr/src/lfs-$(shell cat VERSION)/driver/*.o $(DESTDIR)/usr/src/lfs-$(shell cat VERSION)/driver/*.ko $(DESTDIR)/usr/src/lfs-$(shell cat VERSION)/driver/.*.cmd $(DESTDIR)/usr/src/lfs-$(shell cat VERSION)/driver/*.mod*
	-[ -z "$(DESTDIR)" ] && depmod -a $(KVER)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	@for d in $(SUBDIRS); do $(MAKE) -C $$d clean; done
