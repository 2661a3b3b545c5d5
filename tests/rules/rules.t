#!/bin/bash
# Host test: the shared rules module (common/lfs_rules.h) and the documents
# that state its rules. Every document listed below must quote, word for
# word, the sentences the module prints for the rules it covers, so a limit
# changed in one place and not in the others fails here.
. tests/lib/tap.sh
B=build/tests/test_rules

t_run "build the rules unit test (ASan/UBSan)" make -s -C tests "$PWD/$B" || t_done
out=$("$B" 2>&1)
t_ok $? "rules unit test: $(grep -c '^ok' <<<"$out") checks" || grep -v '^ok' <<<"$out" | sed 's/^/#   /'

mapfile -t text < <("$B" --text)
t_is "${#text[@]}" 8 "the module states eight rules"

# A document as plain sentences: comment stars, troff and markdown markup
# dropped, lines joined, blanks collapsed.
plain() {
	sed -e 's/^[[:space:]]*\*[[:space:]]\{0,1\}//' -e 's/^\.[A-Z][A-Z]* //' -e 's/\\f[BIRP]//g' \
		-e 's/\\-/-/g' -e 's/\\&//g' -e 's/`//g' -e 's/\*\*//g' "$1" | tr '\n' ' ' | tr -s ' '
}

# DOC RULE-NUMBER...: the document quotes those rules (0-based, in --text order).
quotes() {
	local doc=$1 p i
	shift
	p=$(plain "$doc")
	for i in "$@"; do
		if grep -qF -- "${text[$i]}" <<<"$p"; then
			t_ok 0 "$doc states: ${text[$i]}"
		else
			t_ok 1 "$doc states: ${text[$i]}"
		fi
	done
}
quotes docs/RULES.md 0 1 2 3 4 5 6 7
quotes driver/uapi/lfs.h 0 3 4 7
quotes docs/PROTOCOL.md 0 1 2 6 7
quotes docs/NETLINK.md 0 3
quotes man/lfsvol.8 0 5 6
quotes man/lfsctl.8 0 3
quotes man/lfs.conf.5 0 1 6
quotes man/librarian.conf.5 1 4 6
quotes man/lfs.5 0 6

# Documents must not state another limit for names.
stale=$(grep -nE '[Nn]ames?[^.]*(1-128|128 characters)|\. _ \+ -|_ \+ -' docs/*.md man/* driver/uapi/lfs.h 2>/dev/null | grep -v 'used to take 128')
t_is "$stale" "" "no document states the librarian's old 128-character or '+' rule"
t_done
