#!/bin/bash
# Online backup while the librarian serves and clients write; a librarian
# started on the copy has every shelf with its policies, attributes and books.
# On PostgreSQL (LFS_TEST_STORE=pg) the copy is pg_dump's and the restore
# pg_restore's into a new database, as docs/HA.md says; `librarian backup`
# points to pg_dump there.
. tests/lib/tap.sh
. tests/librarian/lib.sh
# backup DEST: a copy of the live catalogue; restore DEST NAME: a catalogue
# made from it, printed as a --db (docs/HA.md, "Backup and restore")
if [ "$LT_STORE" = pg ]; then
	backup() { lt_pg_cmd pg_dump -Fc -d "$LT_PG_DB" >"$1"; }
	restore() {
		lt_pg_cmd createdb "${LT_PG_DB}_$2" && lt_pg_as "$PGBIN/pg_restore" -h "$LT_PG_HOST" \
			-U postgres -d "${LT_PG_DB}_$2" <"$1" &&
			lt_sqlw_db "${LT_PG_DB}_$2" "UPDATE books SET zeroed = 0 WHERE state = 0; UPDATE igs SET zero = 0" &&
			echo "postgresql:///${LT_PG_DB}_$2?host=$LT_PG_HOST&user=postgres"
	}
else
	backup() { "$LIB" backup --db "$T/cat.db" "$1"; }
	restore() { echo "$1"; }
fi

lt_keys admin n1 n2 n3 n4 n5 n6
lt_conf "$LT_FABRIC"
lt_start || { t_ok 1 "librarian starts"; lt_done; }
lcn n1 shelf.create '{"name":"db","books":5,"policy":"LocalNode","attrs":{"user.app":"pg"}}' >/dev/null
lc shelf.create '{"name":"mirror","books":4,"anti_affinity":"db"}' >/dev/null
lc shelf.create '{"name":"rr","books":6,"policy":"RequestIG","igs":[6,3]}' >/dev/null
ltls n2 shelf.activate '{"name":"rr"}' >/dev/null
# bad memory: a book of shelf db and a free book of n1's (book.bad)
ltls n1 book.bad "{\"ranges\":[$(lc shelf.get '{"name":"db"}' | jq -c '.map[2] + [8192, 4096]'),[1,19,0,4096]]}" >/dev/null

# writers keep changing the catalogue while backups are taken
"$STRESS" "unix:$SOCK" run load "$T/j-load" 7 & load=$!
for i in 1 2 3; do
	backup "$T/live$i.db" >"$T/backup.out" 2>&1
	t_is "$?" "0" "backup $i while serving and under load"
done
if [ "$LT_STORE" = sqlite ]; then
	t_like "$(cat "$T/backup.out")" "live3.db: consistent copy of" "backup reports the consistent copy"
else
	t_like "$("$LIB" backup --db "$LT_DB" "$T/x.db" 2>&1)" "pg_dump" "librarian backup points to pg_dump"
fi
t_run "the live copy passes the consistency check" "$LIB" check --db "$(restore "$T/live3.db" live3)"
kill $load 2>/dev/null; wait $load 2>/dev/null
lc shelf.list '{"prefix":"load-"}' | jq -c '.shelves[] | {op:"shelf.destroy", name}' |
	"$CLI" client --connect "unix:$SOCK" --stdin >/dev/null

if lt_sqlite_only 3 "librarian backup's own copy (-c, a failed copy)"; then
	t_run "backup with -c FILE" "$LIB" backup -c "$T/lib.conf" "$T/final.db"
	t_fails "backup into a missing directory fails" "$LIB" backup --db "$T/cat.db" "$T/no/such/dir/x.db"
	t_is "$(ls "$T"/no 2>/dev/null; ls "$T" | grep -c '\.tmp\.')" "0" "a failed backup leaves no temporary file"
else
	backup "$T/final.db"
fi
want=$(lc shelf.list | jq -r '.shelves[].name' | while read -r n; do lc shelf.get "{\"name\":\"$n\"}"; done | jq -cs .)
stats=$(lc stats | jq -c .books)
bad=$(lc book.bad_list | jq -c '[.bad[] | [.ig, .book, .offset, .length, .state, .shelf, .seq, .node, .since]]')
lt_stop

# restore: a librarian on the copy, with the same fabric
if [ "$LT_STORE" = sqlite ]; then
	mv "$T/cat.db" "$T/orig.db"; rm -f "$T/cat.db-wal" "$T/cat.db-shm"
	cp "$T/final.db" "$T/cat.db"
else
	restore "$T/final.db" final >/dev/null && lt_db_put final
fi
lt_start || t_ok 1 "librarian starts on the backup"
got=$(lc shelf.list | jq -r '.shelves[].name' | while read -r n; do lc shelf.get "{\"name\":\"$n\"}"; done | jq -cs .)
t_is "$(jq -r 'map(.name) | join(",")' <<<"$got")" "db,mirror,rr" "the restored catalogue has every shelf"
t_is "$got" "$want" "every shelf with its policy, attributes, books and activations"
t_is "$(lc stats | jq -c .books)" "$stats" "book counts are the same"
t_like "$stats" '"bad":1}' "(one BAD book among them)"
t_is "$(lc book.bad_list | jq -c '[.bad[] | [.ig, .book, .offset, .length, .state, .shelf, .seq, .node, .since]]')" "$bad" \
	"the bad ranges are restored, with their shelf, reporter and time"
t_is "$(lc attr.get '{"name":"db","key":"user.app"}' | jq -r .value)" "pg" "user attributes are restored"
t_run "the restored catalogue is consistent" lt_check_db
lt_stop
lt_done
