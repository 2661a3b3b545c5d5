#!/bin/bash
# Host test: liblfsnl's BOOKS/UUID parsers and lfsctl's use of the shared rules
# (SIZE, names; ASan/UBSan build), and lfsctl's own checks of its arguments,
# which need no kernel module.
. tests/lib/tap.sh
L=lvmish/lfsctl/lfsctl

t_run "build the liblfsnl parser unit test (ASan/UBSan)" make -s -C tests "$PWD/build/tests/test_parse" || t_done
out=$(build/tests/test_parse 2>&1)
t_ok $? "parser unit test (tests/lvmish/test_parse.c): $(grep -c '^ok' <<<"$out") checks" ||
	grep -v '^ok' <<<"$out" | sed 's/^/#   /'

usage_error() { # DESC REGEX ARGS...: exit status 2 and the message
	local desc=$1 re=$2 out rc
	shift 2
	out=$("$L" "$@" 2>&1)
	rc=$?
	t_is "$rc" 2 "$desc: exit 2"
	t_like "$out" "$re" "$desc: says why"
}
usage_error "no command" "^usage: lfsctl \[--json\] COMMAND"
usage_error "unknown command" "unknown command \`frob'" frob
usage_error "create without books" "usage: lfsctl create NAME BOOKS" create a
usage_error "bad book token" "invalid book \`0-1': expected IG:BOOK" create a 0:0,0-1
usage_error "bad shelf name" "shelf name 'a/b' may contain only letters" create a/b 0:0
usage_error "bad size" "invalid unit \`Q' in SIZE \`12Q'" attach /dev/pmem0 --ig 0 --book-size 12Q
usage_error "IG out of range" "invalid interleave group \`70000'" attach /dev/pmem0 --ig 70000 --book-size 2M
usage_error "attach without --book-size" "usage: lfsctl attach DEVICE" attach /dev/pmem0 --ig 0
usage_error "shrink to zero books" "invalid book count \`0'" shrink a --books 0
usage_error "bad UUID" "invalid UUID \`xyz'" create a 0:0 --uuid xyz
usage_error "fence by a bad UUID" "fence: invalid UUID \`00-11'" fence --uuid 00-11
usage_error "fence --uuid without one" "usage: lfsctl fence NAME \| --uuid UUID" fence --uuid
t_like "$("$L" --help)" "attach DEVICE --ig N --book-size SIZE" "--help lists the commands"
t_like "$("$L" create --help)" "usage: lfsctl create NAME BOOKS" "create --help"
t_done
