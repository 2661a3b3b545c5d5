#!/bin/bash
# The client library's reply parser (librarian/client/client_json.c: yajl
# building jansson values) against jansson's json_loadb, which it replaces
# for speed: the same texts accepted with equal values, the same refused,
# on fixed cases (numbers at the edges, escapes, surrogates, bad UTF-8, NUL,
# whitespace JSON does not allow, nesting at jansson's limit) and on
# random mutations of a shelf list reply; then a real list of a running
# librarian read through the library.
. tests/lib/tap.sh
. tests/librarian/lib.sh
J=build/tests/lib-json
[ -x "$J" ] || { echo "Bail out! $J not built (make -C tests)"; exit 1; }

out=$("$J" cases)
t_is "$?" 0 "fixed cases: $(tail -n 1 <<<"$out")" || printf '%s\n' "$out" | head -n 20 | sed 's/^/#   /'
t_like "$(tail -n 1 <<<"$out")" "^[0-9]+ same \(1[0-9] of them accepted\), 0 differ$" \
	"  both accepted and both refused cases among them"
for seed in 101 202; do
	out=$("$J" fuzz "$seed" 4000)
	t_is "$?" 0 "4,000 mutations of a list reply (seed $seed): $(tail -n 1 <<<"$out")" ||
		printf '%s\n' "$out" | head -n 20 | sed 's/^/#   /'
done
out=$("$J" list 1000 3)
t_is "$?" 0 "a list of 1,000 shelves parses to the same values" || printf '%s\n' "$out" | sed 's/^/#   /'
t_diag "$(head -n 1 <<<"$out") (sanitized build)"

lt_keys admin
lt_conf "$LT_FABRIC"
lt_start || { t_ok 1 "librarian starts"; lt_done; }
seq -f 'j%03g' 1 300 | jq -R -c '{op:"shelf.create", name:., books:0}' |
	"$CLI" client --connect "unix:$SOCK" --stdin >/dev/null
lc attr.set '{"name":"j001","key":"user.t","value":"tab\there \u00e9 \u0001"}' >/dev/null
got=$(lc shelf.list '{"limit":1000}' | jq -c '[.shelves | length, (.[] | select(.name == "j001") | .name)]')
t_is "$got" '[300,"j001"]' "a list of 300 shelves read through the client library"
t_is "$(lc attr.get '{"name":"j001","key":"user.t"}' | jq -r .value)" "$(printf 'tab\there \u00e9 \u0001')" \
	"  and a value with a control character (a \\u escape on the wire) read back whole"
lt_stop
lt_done
