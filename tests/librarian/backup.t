#!/bin/bash
# Online backup while the librarian serves and clients write; a librarian
# started on the copy has every shelf with its policies, attributes and books.
. tests/lib/tap.sh
. tests/librarian/lib.sh

lt_keys admin n1 n2 n3 n4 n5 n6
lt_conf "$LT_FABRIC"
lt_start || { t_ok 1 "librarian starts"; lt_done; }
lcn n1 shelf.create '{"name":"db","books":5,"policy":"LocalNode","attrs":{"user.app":"pg"}}' >/dev/null
lc shelf.create '{"name":"mirror","books":4,"anti_affinity":"db"}' >/dev/null
lc shelf.create '{"name":"rr","books":6,"policy":"RequestIG","igs":[6,3]}' >/dev/null
ltls n2 shelf.activate '{"name":"rr"}' >/dev/null

# writers keep changing the catalogue while backups are taken
"$STRESS" "unix:$SOCK" run load "$T/j-load" 7 & load=$!
for i in 1 2 3; do
	"$LIB" backup --db "$T/cat.db" "$T/live$i.db" >"$T/backup.out" 2>&1
	t_is "$?" "0" "backup $i while serving and under load"
done
t_like "$(cat "$T/backup.out")" "live3.db: consistent copy of" "backup reports the consistent copy"
t_run "the live copy passes the consistency check" "$LIB" check --db "$T/live3.db"
kill $load 2>/dev/null; wait $load 2>/dev/null
lc shelf.list '{"prefix":"load-"}' | jq -c '.shelves[] | {op:"shelf.destroy", name}' |
	"$CLI" client --connect "unix:$SOCK" --stdin >/dev/null

t_run "backup with -c FILE" "$LIB" backup -c "$T/lib.conf" "$T/final.db"
t_fails "backup into a missing directory fails" "$LIB" backup --db "$T/cat.db" "$T/no/such/dir/x.db"
t_is "$(ls "$T"/no 2>/dev/null; ls "$T" | grep -c '\.tmp\.')" "0" "a failed backup leaves no temporary file"
want=$(lc shelf.list | jq -r '.shelves[].name' | while read -r n; do lc shelf.get "{\"name\":\"$n\"}"; done | jq -cs .)
stats=$(lc stats | jq -c .books)
lt_stop

# restore: a librarian on the copy, with the same fabric
mv "$T/cat.db" "$T/orig.db"; rm -f "$T/cat.db-wal" "$T/cat.db-shm"
cp "$T/final.db" "$T/cat.db"
lt_start || t_ok 1 "librarian starts on the backup"
got=$(lc shelf.list | jq -r '.shelves[].name' | while read -r n; do lc shelf.get "{\"name\":\"$n\"}"; done | jq -cs .)
t_is "$(jq -r 'map(.name) | join(",")' <<<"$got")" "db,mirror,rr" "the restored catalogue has every shelf"
t_is "$got" "$want" "every shelf with its policy, attributes, books and activations"
t_is "$(lc stats | jq -c .books)" "$stats" "book counts are the same"
t_is "$(lc attr.get '{"name":"db","key":"user.app"}' | jq -r .value)" "pg" "user attributes are restored"
t_run "the restored catalogue is consistent" lt_check_db
lt_stop
lt_done
