#!/bin/bash
# Prometheus metrics (docs/METRICS.md, librarian.conf(5) metrics_listen):
# GET /metrics answers the text format, which Debian's promtool accepts;
# the figures agree with `stats` and follow a change (the snapshot is
# renewed every second: bounded polls); another path is 404; a real
# Prometheus (Debian's, started here on loopback in a temporary directory)
# scrapes the librarian and its HTTP API gives the values back; a bad
# metrics_listen is refused at start, named.
. tests/lib/tap.sh
. tests/librarian/lib.sh
command -v promtool >/dev/null && command -v prometheus >/dev/null ||
	{ echo "Bail out! promtool and prometheus are needed (apt-get install prometheus)"; exit 1; }

PPID_PROM=
trap '[ -n "$PPID_PROM" ] && kill -9 "$PPID_PROM" 2>/dev/null; lt_cleanup' EXIT
lt_keys admin n1
MPORT=$(lt_free_port)
lt_conf "$LT_FABRIC" "metrics_listen = \"127.0.0.1:$MPORT\"; audit_log = \"audit.jsonl\";
max_connections_per_node = 7; max_admin_connections = 9;"
lt_start
t_ok $? "the librarian starts with metrics_listen" || lt_done

# get PORT PATH: the HTTP reply (head and body) of GET PATH on loopback
get() {
	{ exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
	printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3
	timeout 10 cat <&3
	exec 3<&-
}
body() { get "$MPORT" /metrics | tr -d '\r' | sed '1,/^$/d'; }
# value NAME: the sample's value in the current text
value() { body | awk -v n="$1" '$1 == n { print $2 }'; }
# until_value NAME WANT: poll (bounded, 10 s) until the sample is WANT
until_value() {
	local i
	for i in $(seq 1 100); do [ "$(value "$1")" = "$2" ] && return 0; sleep 0.1; done
	return 1
}

reply=$(get "$MPORT" /metrics | tr -d '\r')
t_like "$(head -n 1 <<<"$reply")" "^HTTP/1.0 200 OK$" "GET /metrics: 200"
t_like "$reply" "Content-Type: text/plain; version=0.0.4" "  in the text format"
out=$(body | promtool check metrics 2>&1)
t_is "$?/$out" "0/" "  promtool check metrics accepts it, with no lint"
t_like "$(get "$MPORT" /other | tr -d '\r' | head -n 1)" "^HTTP/1.0 404 Not Found$" "another path: 404"

for s in a b c; do lc shelf.create "{\"name\":\"$s\",\"books\":3}" >/dev/null; done
until_value lfs_shelves 3
t_ok $? "three shelves made: lfs_shelves follows (3)"
st=$(lc stats)
until_value 'lfs_books{state="inuse"}' "$(jq .books.inuse <<<"$st")"
t_ok $? "  lfs_books{state=\"inuse\"} equals stats' ($(jq .books.inuse <<<"$st"))"
t_is "$(value 'lfs_books{state="free"}') $(value lfs_fabric_books)" "$(jq -r '"\(.books.free) \(.books.total)"' <<<"$st")" \
	"  and the free and total books"
t_is "$(value 'lfs_nodes{state="online"}')" 6 "  six nodes online"
# per IG: the free and total books add up to the fabric's, and each IG is one of geometry's
sums=$(body | awk -F'[{}]' '$1 == "lfs_ig_books" { split($3, v, " "); if ($2 ~ /state="free"/) f += v[1]; if ($2 ~ /state="total"/) { t += v[1]; n++ } }
	END { print f, t, n }')
t_is "$sums" "$(jq -r '"\(.books.free) \(.books.total)"' <<<"$st") $(lc geometry | jq '[.racks[].enclosures[].nodes[].igs[]] | length')" \
	"  lfs_ig_books: free and total per IG add up to the fabric's, one row each per IG"
t_is "$(value lfs_librarian_leader)" 1 "  it serves"
t_is "$(value 'lfs_librarian_connection_limit{kind="per_node"}') $(value 'lfs_librarian_connection_limit{kind="admin"}')" "7 9" \
	"  the connection budgets as librarian.conf sets them"
until_value lfs_librarian_audit_records_total $((LT_START_AUDIT + 3))
t_ok $? "  three audit records (and PostgreSQL's leader.took)"
L=lfs_librarian_request_duration_seconds
until_value "${L}_count{op=\"shelf.create\"}" 3
t_ok $? "request latencies: three shelf.create counted"
# the histogram's shape: buckets cumulative and ending at the count, a sum
body | awk -v m="$L" -v op='op="shelf.create"' '
	index($1, m "_bucket{" op ",") == 1 { if ($2 < last) bad = 1; last = $2; n++; if ($1 ~ /le="\+Inf"/) inf = $2 }
	$1 == m "_count{" op "}" { count = $2 }
	$1 == m "_sum{" op "}" { sum = $2 }
	END { exit !(n == 12 && !bad && inf == count && count == 3 && sum > 0) }'
t_ok $? "  12 cumulative buckets, +Inf equal to the count, a positive sum"
out=$(body | promtool check metrics 2>&1)
t_is "$?/$out" "0/" "  promtool check metrics accepts the histograms, with no lint"

# a real Prometheus scrapes it
PPORT=$(lt_free_port)
cat >"$T/prom.yml" <<EOC
global: { scrape_interval: 1s, evaluation_interval: 1s }
scrape_configs:
  - job_name: lfs-librarian
    static_configs: [ { targets: [ "127.0.0.1:$MPORT" ] } ]
EOC
prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/prom" \
	--web.listen-address="127.0.0.1:$PPORT" >"$T/prom.log" 2>&1 &
PPID_PROM=$!
# query Q: the value of instant query Q at Prometheus
query() { get "$PPORT" "/api/v1/query?query=$1" | tr -d '\r' | sed '1,/^$/d' | jq -r '.data.result[0].value[1] // empty' 2>/dev/null; }
got=
for _ in $(seq 1 600); do # bounded: 60 s (Prometheus starts, then scrapes every second)
	got=$(query lfs_shelves)
	[ "$got" = 3 ] && break
	sleep 0.1
done
t_is "$got" 3 "Prometheus scraped it: its API gives lfs_shelves 3"
t_is "$(query 'up{job="lfs-librarian"}')" 1 "  and up is 1"
lc shelf.destroy '{"name":"a"}' >/dev/null
for _ in $(seq 1 300); do got=$(query lfs_shelves); [ "$got" = 2 ] && break; sleep 0.1; done
t_is "$got" 2 "  a shelf destroyed: it reads 2"
q="${L}_count%7Bop%3D%22shelf.destroy%22%7D"
for _ in $(seq 1 300); do got=$(query "$q"); [ "$got" = 1 ] && break; sleep 0.1; done
t_is "$got" 1 "  its latency histogram counts the shelf.destroy"
got=$(query "histogram_quantile(0.5,${L}_bucket%7Bop%3D%22shelf.create%22%7D)")
t_like "$got" '^[0-9.e+-]+$' "  and histogram_quantile gives shelf.create's median ($got s)"
kill "$PPID_PROM"
wait "$PPID_PROM" 2>/dev/null
PPID_PROM=
lt_stop
t_ok $? "the librarian stops cleanly (the metrics thread too)"

for bad in nonsense 127.0.0.1:99999; do
	lt_conf "$LT_FABRIC" "metrics_listen = \"$bad\";"
	out=$(timeout 20 "$LIB" -c "$T/lib.conf" 2>&1)
	t_is "$?" 1 "metrics_listen '$bad': the librarian does not start"
	t_like "$out" "metrics_listen: listen address '$bad'" "  naming it"
done
lt_done
