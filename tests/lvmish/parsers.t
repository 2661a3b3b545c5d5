#!/bin/sh
# lfsvol's parsers (SIZE, IG lists, policy names, shelf names, lfs.conf with
# file:line errors), as a C unit test built with ASan/UBSan by `make`.
t=lvmish/lfsvol/test_parsers
if [ ! -x "$t" ]; then
	echo "not ok 1 - $t is built (run make)"
	echo "1..1"
	exit 1
fi
exec "$t"
