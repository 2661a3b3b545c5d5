#!/bin/sh
# lfsvol's parsers (SIZE, IG lists, policy names, shelf names, lfs.conf with
# file:line errors), as a C unit test built with ASan/UBSan (tests/lvmish/helpers.mk).
t=build/tests/test_parsers
if ! make -s -C tests "$PWD/$t" >&2; then
	echo "not ok 1 - $t is built"
	echo "1..1"
	exit 1
fi
exec "$t"
