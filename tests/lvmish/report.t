#!/bin/bash
# LFS-TEST: host
# lfsvol's reports and --json on the host, against a real librarian on
# loopback (lfs.ko is not loaded here): list/show/fabric -o FIELDS (one
# field table for text and JSON), --noheadings, --separator, --bytes, and
# --json on every command: what a changing command did, compared with what
# list and show say afterwards, and the error object of a failure, with
# the exit code of the same command without --json. lfsctl's --json too.
# The kernel's side (activate, deactivate) is checked in lifecycle.t's VM.
. tests/lib/tap.sh
. tests/lvmish/lib.sh
trap lv_cleanup EXIT

lv_start_librarian 64M 8 2
t_ok $? "librarian started on 127.0.0.1:$PORT" || t_done
C=$LV/lfs.conf
lv_conf "$C" "127.0.0.1:$PORT" "$LV/keys/node01.key" "agent = { state_dir = \"$LV/state\"; };"
L() { "$LFSVOL" -c "$C" "$@"; }
# one JSON document on stdout, compact and with sorted keys; the exit code: rc
rc() { cat "$LV/rc"; }
# t_is, where what is compared with must not be empty (both sides empty proves nothing)
t_same() {
	[ -n "$2" ] || { t_ok 1 "$3"; t_diag "nothing to compare with (expected a value)"; return 1; }
	t_is "$@"
}
LFSCTL=${LFSCTL:-lvmish/lfsctl/lfsctl}
J() {
	L "$@" >"$LV/out" 2>"$LV/err"
	echo $? >"$LV/rc"
	jq -cS -s 'if length == 1 then .[0] else error("not one document") end' "$LV/out" ||
		echo "NOT-ONE-JSON-DOCUMENT"
}

# create: the new shelf, as show --json has it
doc=$(J create db -s 100M --json)
t_is "$(rc)" 0 "create --json exits 0"
t_is "$(jq -r .command <<<"$doc")" create "create --json names the command"
t_same "$(jq -c .shelf <<<"$doc")" "$(L show db --json | jq -cS '.[0]')" "create --json's shelf is show --json's"
t_like "$(cat "$LV/err")" "created shelf db" "and its info line went to stderr"
J --json create web -s 1b >/dev/null
t_is "$(rc)" 0 "--json before the command works too"
L attr set db team blue >/dev/null

# list: the text layout is unchanged, and -o with the defaults prints the same
want='NAME                       SIZE   BOOKS POLICY        ACTIVE         DEVICE           FSTYPE'
t_is "$(L list | head -n 1)" "$want" "list's header as it always was"
t_like "$(L list | sed -n 2p)" '^db +128 MiB +2 Spread +- +- +-$' "list's row as it always was"
t_same "$(L list -o name,size,books,policy,active,device,fstype)" "$(L list)" "-o with the default fields prints list exactly"

# the fields of -o help are the keys of --json, for list and for show
help_fields() { L "$@" -o help | awk '/^  /{print $1}' | sort | tr '\n' ' '; }
t_same "$(help_fields list)" "$(L list --json | jq -r '.[0] | keys[]' | sort | tr '\n' ' ')" "list -o help lists exactly list --json's keys"
t_same "$(help_fields show db)" "$(L show db --json | jq -r '.[0] | keys[]' | sort | tr '\n' ' ')" "show -o help lists exactly show --json's keys"
t_same "$(help_fields fabric)" "$(L fabric --json | jq -r '.[0] | keys[]' | sort | tr '\n' ' ')" "fabric -o help lists exactly fabric --json's keys"
t_same "$(L list -o help --json | jq -r '.[].name' | sort | tr '\n' ' ')" "$(help_fields list)" "-o help --json names the same fields"

# -o chooses and orders; --json -o gives exactly those keys, the same values
t_same "$(L list -o books,name --noheadings --separator : | sort)" "$(L list --json | jq -r '.[] | "\(.books):\(.name)"' | sort)" "-o books,name --noheadings --separator :"
t_same "$(J list -o name,books,uuid --json)" "$(L list --json | jq -cS 'map({name, books, uuid})')" "--json -o: exactly those keys"
t_is "$(L list -o +uuid | head -n 1 | awk '{print $1, $NF}')" "NAME UUID" "-o +uuid adds a column at the end"
t_same "$(L list -o name,size --bytes --noheadings --separator , | sort)" "$(L list --json | jq -r '.[] | "\(.name),\(.size)"' | sort)" "--bytes prints sizes in bytes"
t_like "$(L show db -o name,attrs --noheadings)" '^db +\{.*"team":"blue"' "show -o attrs (a show-only field)"
t_is "$(J show db -o name,owner --json)" '[{"name":"db","owner":"node01"}]' "show --json -o name,owner"

# an unknown field: exit 2, named, nothing on stdout; a show-only field in list likewise
before=$(L list --json)
lv_expect "unknown field refused" 2 "unknown field \`bogus' for \`list'" L list -o name,bogus
t_is "$(L list -o name,bogus 2>/dev/null)" "" "and nothing printed on stdout"
lv_expect "show-only field in list refused" 2 "field \`owner' is shown by \`show' only" L list -o owner
lv_expect "empty field refused" 2 "empty field name" L fabric -o node,,free
doc=$(J list -o bogus --json)
t_is "$(rc)/$(jq -c '[.error.code, .error.reason]' <<<"$doc")" '2/[2,"usage"]' "--json: the refusal as an error object, exit 2"
t_like "$(jq -r .error.message <<<"$doc")" "bogus" "whose message names the field"
t_is "$(L list --json)" "$before" "refused -o changed nothing"

# fabric -o: the same numbers as fabric --json
t_same "$(L fabric -o node,books,free,used,zombie --noheadings | tr -s ' ')" "$(L fabric --json | jq -r '.[] | "\(.node) \(.books) \(.free) \(.used) \(.zombie)"')" "fabric -o counts match fabric --json"
t_is "$(L fabric -o igs,node --separator ' ' --noheadings)" "0,1 node01" "fabric -o igs"

# resize, rename, attr: what they did, checked against show and list
doc=$(J resize db -s +1b --json)
t_is "$(rc)/$(jq -c '[.books_before, .changed, .shelf.books]' <<<"$doc")" '0/[2,true,3]' "resize --json: 2 -> 3 books"
t_same "$(jq -c .shelf <<<"$doc")" "$(L show db --json | jq -cS '.[0]')" "resize --json's shelf is show --json's"
doc=$(J rename db db2 --json)
t_is "$(rc)/$(jq -r '"\(.old_name) \(.shelf.name)"' <<<"$doc")" "0/db db2" "rename --json: old and new name"
t_is "$(L list -o name --noheadings | sort | tr '\n' ' ')" "db2 web " "list shows the new name"
t_is "$(J attr set db2 k v --json)" '{"command":"attr","key":"k","name":"db2","value":"v","verb":"set"}' "attr set --json"
t_is "$(J attr get db2 k --json | jq -r .value)" v "attr get --json gives the value set"
t_is "$(J attr list db2 --json | jq -r '.attrs.team')" blue "attr list --json gives the attributes"
J attr rm db2 k --json >/dev/null
t_is "$(rc)/$(L attr list db2 | grep -c '^k=')" "0/0" "attr rm --json removed the key"

# failures: the error object on stdout, the exit code of the command without --json
errobj() {
	local plain
	L "$@" >/dev/null 2>&1
	plain=$?
	doc=$(J "$@" --json)
	t_is "$(rc)/$(jq -r '.error.code' <<<"$doc")" "$plain/$plain" "$* --json: exit $plain, error.code $plain"
}
errobj show nope
t_like "$(jq -r .error.message <<<"$doc")" "no shelf named 'nope'" "the message is the failure, not the hint after it"
t_is "$(jq -r .error.reason <<<"$doc")" no-such-shelf "reason no-such-shelf"
errobj create x -s 10
errobj create big -s 100b
errobj remove db2
t_is "$(jq -r .error.reason <<<"$doc")" refused "remove without -f on the host: refused"
errobj frobnicate
errobj rename web db2
errobj --librarian "127.0.0.1:$(lv_free_port)" list
t_is "$(L list -o name --noheadings | sort | tr '\n' ' ')" "db2 web " "the failures changed nothing"
if [ "$(id -u)" = 0 ] && [ ! -d /sys/module/lfs ]; then
	errobj activate web
	t_is "$(jq -c .shelves <<<"$doc")" "[]" "activate --json failing: no shelf activated"
	errobj deactivate web
	errobj attach
	errobj scrub
fi

# remove: the name and the books freed; the fabric counts them ZOMBIE
z=$(L fabric --json | jq '.[0].zombie')
doc=$(J remove db2 -f --json)
t_is "$(rc)/$(jq -c '[.removed.name, .removed.books, .removed.zombies]' <<<"$doc")" '0/["db2",3,3]' "remove --json: name and books freed"
t_is "$(L fabric --json | jq '.[0].zombie')" "$((z + 3))" "fabric counts those books ZOMBIE"
t_is "$(L list -o name --noheadings)" web "list no longer has it"

# status keeps its array; lfsctl --json errors on the host (lfs.ko not loaded)
t_is "$(J status --json | jq -r 'type')" array "status --json: an array as before"
if [ ! -d /sys/module/lfs ]; then
	doc=$("$LFSCTL" create x 0:0 --json 2>/dev/null)
	t_is "$?/$(jq -c '[.command, .error.code, .error.errno]' <<<"$doc")" '1/["create",1,"ENOENT"]' "lfsctl create --json: module not loaded"
fi
doc=$("$LFSCTL" --json create a/b 0:0 2>/dev/null)
t_is "$?/$(jq -r .error.code <<<"$doc")" "2/2" "lfsctl --json: a bad name is a usage error object"
t_done
