# The VM harness's test-only module (tests/vm/warnmod: a WARN on load, which
# tests/vm/harness.t expects to fail the run), built for the kernel KVER
# (default: the 6.1 of the kernel matrix) into build/tests/warnmod/KVER/;
# a guest loads the one for the kernel it booted ($LFS_WARN_KO).
KVER ?= $(shell $(TOP)/tools/kernels resolve 6.1)
HELPERS += warnmod

.PHONY: warnmod
warnmod:
	+$(TOP)/tools/kernels build $(KVER) $(TOP)/tests/vm/warnmod $(TOP)/build/tests/warnmod/$(KVER)
