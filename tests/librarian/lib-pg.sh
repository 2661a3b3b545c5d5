# PostgreSQL for the librarian host tests (sourced by lib.sh when
# LFS_TEST_STORE=pg): a cluster of the test's own, made with initdb and
# started with pg_ctl in a temporary directory, listening on a unix socket
# there only (listen_addresses = ''), never a system service. As root the
# cluster runs as the postgres user (initdb refuses root). A test file run
# by another (tests/librarian/pg.t) that exports LT_PG_HOST uses that
# cluster: each file gets a database of its own (createdb), so the cluster
# is made once.
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
LT_PG_OWN=

lt_pg_as() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# lt_pg_cluster DIR: a running cluster with its socket in DIR (0 or 1).
lt_pg_cluster() {
	local d=$1
	[ -x "$PGBIN/initdb" ] || { echo "Bail out! $PGBIN/initdb missing (apt-get install postgresql-15)"; exit 1; }
	[ "$(id -u)" = 0 ] && chown postgres: "$d"
	# fsync off: a test's cluster does not outlive the machine; commits still wait for the WAL write
	lt_pg_as "$PGBIN/initdb" -D "$d/data" -A trust -U postgres --no-sync -E UTF8 --locale=C \
		>"$d/initdb.log" 2>&1 || { sed 's/^/#   /' "$d/initdb.log" | tail -n 20; return 1; }
	lt_pg_as "$PGBIN/pg_ctl" -D "$d/data" -l "$d/log" -w -t 60 \
		-o "-c listen_addresses='' -k $d -c fsync=off -c max_connections=40" start >/dev/null ||
		{ sed 's/^/#   /' "$d/log" | tail -n 20; return 1; }
}

lt_pg_stop() {
	if [ -z "$LT_PG_OWN" ]; then # a cluster shared by several files: drop this file's databases
		lt_sql "SELECT datname FROM pg_database WHERE datname LIKE '${LT_PG_DB}%'" 2>/dev/null |
			while read -r d; do lt_pg_cmd dropdb --force "$d" >/dev/null 2>&1; done
		return 0
	fi
	lt_pg_as "$PGBIN/pg_ctl" -D "$LT_PG_HOST/data" -m immediate -w -t 60 stop >/dev/null 2>&1
	rm -rf "$LT_PG_HOST"
	LT_PG_OWN=
}

if [ -z "${LT_PG_HOST:-}" ]; then
	LT_PG_HOST=$(mktemp -d /tmp/lfs-pg.XXXXXX)
	LT_PG_OWN=1
	lt_pg_cluster "$LT_PG_HOST" || { echo "Bail out! cannot start PostgreSQL in $LT_PG_HOST"; lt_pg_stop; exit 1; }
fi
LT_PG_DB=lfs_$(basename "$T" | tr -c 'a-zA-Z0-9\n' _ | tr 'A-Z' 'a-z')
lt_pg_as "$PGBIN/createdb" -h "$LT_PG_HOST" -U postgres "$LT_PG_DB" ||
	{ echo "Bail out! createdb $LT_PG_DB failed"; lt_pg_stop; exit 1; }
LT_DB="postgresql:///$LT_PG_DB?host=$LT_PG_HOST&user=postgres"

# lt_sql SQL: the rows of a query on the catalogue (columns joined by |, as sqlite3 prints them)
lt_sql() { lt_pg_as "$PGBIN/psql" -X -q -A -t -h "$LT_PG_HOST" -U postgres -d "$LT_PG_DB" -c "$1"; }
lt_sqlw() { lt_sql "$1" >/dev/null; }
lt_pg_cmd() { lt_pg_as "$PGBIN/$1" -h "$LT_PG_HOST" -U postgres "${@:2}"; }
lt_fresh() { lt_pg_cmd dropdb --force "$LT_PG_DB" && lt_pg_cmd createdb "$LT_PG_DB"; }
# a copy is a database made from the catalogue as its template
lt_db_copy() {
	lt_pg_cmd createdb -T "$LT_PG_DB" "${LT_PG_DB}_$1" &&
		echo "postgresql:///${LT_PG_DB}_$1?host=$LT_PG_HOST&user=postgres"
}
lt_db_put() {
	lt_pg_cmd dropdb --force "$LT_PG_DB" &&
		lt_sqlw_db postgres "ALTER DATABASE ${LT_PG_DB}_$1 RENAME TO $LT_PG_DB"
}
# lt_sqlw_db DB SQL: SQL on another database of the cluster
lt_sql_db() { lt_pg_as "$PGBIN/psql" -X -q -A -t -h "$LT_PG_HOST" -U postgres -d "$1" -c "$2"; }
lt_sqlw_db() { lt_sql_db "$@" >/dev/null; }
lt_sql_copy() { lt_sql_db "${LT_PG_DB}_$1" "$2"; }
lt_sqlw_copy() { lt_sqlw_db "${LT_PG_DB}_$1" "$2"; }
# (without pg_dump's \restrict lines: their key is random)
lt_db_sum() { lt_pg_cmd pg_dump -d "${LT_PG_DB}_$1" | grep -v '^\\\(un\)\?restrict ' | md5sum; }
