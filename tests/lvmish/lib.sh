# Shared setup of the lfsvol tests: a librarian on the host (loopback TCP
# plus a unix socket), node keys, lfs.conf. Source after tests/lib/tap.sh.
# LV_BOOKS books of LV_BOOK_SIZE per IG, LV_IGS IGs on the one node "node01".

LFSVOL=${LFSVOL:-lvmish/lfsvol/lfsvol}
LIBRARIAN=${LIBRARIAN:-librarian/librarian}
for b in "$LFSVOL" "$LIBRARIAN"; do
	[ -x "$b" ] || { echo "Bail out! $b not built (run make)"; exit 1; }
done
command -v jq >/dev/null || { echo "Bail out! jq is needed"; exit 1; }

LV=$(mktemp -d /tmp/lfsvol-test.XXXXXX)
LPID=
PORT=

lv_cleanup() {
	if [ -n "$LPID" ] && kill -0 "$LPID" 2>/dev/null; then
		kill -CONT "$LPID" 2>/dev/null
		kill "$LPID" 2>/dev/null
		wait "$LPID" 2>/dev/null
	fi
	rm -rf "$LV"
}

lv_free_port() {
	local p
	for p in $(shuf -i 20000-32000 -n 50); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# lv_start_librarian BOOK_SIZE BOOKS_PER_IG IGS [HEARTBEAT_INTERVAL]
# The librarian allocates only books known to read as zeroes; new memory is
# taken as zeroes (new_books = "zero") unless LV_NEW_BOOKS=unknown: then the
# node agent checks or zeroes it first. LV_LEASE sets lease_time (default 5
# heartbeats), LV_GRACE fence_grace, LV_NODES the nodes (node01, node02, ...;
# only node01 has a key).
lv_start_librarian() {
	PORT=$(lv_free_port) || return 1
	mkdir -p "$LV/keys"
	chmod 700 "$LV/keys"
	"$LIBRARIAN" genkey "$LV/keys/node01.key" || return 1
	cat >"$LV/lib.conf" <<EOC
librarian = {
	database = "$LV/cat.db";
	listen = [ "127.0.0.1:$PORT", "unix:$LV/sock" ];
	book_size = "$1";
	keys_dir = "$LV/keys";
	default_policy = "Spread";
	heartbeat_interval = ${4:-1};
	lease_time = ${LV_LEASE:-$(( ${4:-1} * 5 ))};
	fence_grace = ${LV_GRACE:-2};
	new_books = "${LV_NEW_BOOKS:-zero}";
};
fabric = { compact = { nodes = ${LV_NODES:-1}; igs = $3; books = $2; }; };
EOC
	lv_run_librarian
}

# (Re)start the librarian on $LV/lib.conf (same port, keys and database).
lv_run_librarian() {
	local i
	"$LIBRARIAN" -c "$LV/lib.conf" >>"$LV/librarian.log" 2>&1 &
	LPID=$!
	# ready when it answers on its unix socket (bounded: 10 s)
	for i in $(seq 100); do
		"$LIBRARIAN" client --connect "unix:$LV/sock" --timeout 500 stats >/dev/null 2>&1 && return 0
		kill -0 "$LPID" 2>/dev/null || break
		sleep 0.1
	done
	echo "# librarian did not start:"; sed 's/^/#   /' "$LV/librarian.log"
	return 1
}

lv_stop_librarian() {
	[ -n "$LPID" ] || return 0
	kill "$LPID" 2>/dev/null
	wait "$LPID" 2>/dev/null
	LPID=
}

# lv_conf FILE ADDR KEYFILE [EXTRA...]: an lfs.conf for node01
lv_conf() {
	local f=$1 addr=$2 key=$3
	shift 3
	{
		printf 'librarian = "%s";\nnode = "node01";\nkey_file = "%s";\nconnect_timeout = 2;\n' "$addr" "$key"
		printf '%s\n' "$@"
	} >"$f"
}

# lv_expect DESC RC REGEX CMD...: exit status RC and stderr+stdout matching REGEX
lv_expect() {
	local desc=$1 want=$2 re=$3 out rc
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" = "$want" ] && printf '%s' "$out" | grep -Eq -- "$re"; then
		t_ok 0 "$desc"
		return 0
	fi
	t_ok 1 "$desc"
	t_diag "command: $*"
	t_diag "expected exit $want and output matching: $re"
	t_diag "got exit $rc, output:"
	printf '%s\n' "$out" | sed 's/^/#   /' | tail -n 10
	return 1
}
