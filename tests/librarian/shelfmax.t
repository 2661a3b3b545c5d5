#!/bin/bash
# A shelf may hold at most LFS_SHELF_BOOKS_MAX books, the most one node's
# kernel maps (common/lfs_rules.h): on a fabric with more books the
# librarian refuses a bigger shelf (E2BIG, naming the rule) on create and
# resize, by books and by bytes, and nothing changes.
. tests/lib/tap.sh
. tests/librarian/lib.sh

lt_keys admin n1
lt_conf 'racks = ( { name = "r1"; enclosures = ( { name = "e1"; nodes = (
	{ name = "n1"; power_domain = "A"; igs = ( { ig = 0; books = 1048580; } ); } ); } ); } );' \
	'share = "rw";'
sed -i 's/book_size = "8G";/book_size = "2M";/' "$T/lib.conf"
lt_start || { t_ok 1 "librarian starts"; lt_done; }
t_is "$(lc stats | jq .books.total)" 1048580 "the librarian starts on a fabric of 2^20 + 4 books"
lmsg() { "$@" 2>&1 >/dev/null; }
max=1048576

t_like "$(lmsg lc shelf.create "{\"name\":\"big\",\"books\":$((max + 1))}")" \
	"E2BIG: $((max + 1)) books is more than a shelf may hold \\($max\\)" \
	"create with 2^20 + 1 books: E2BIG naming the limit"
t_is "$(lerr lc shelf.get '{"name":"big"}')" "ENOENT" "  no shelf big"
lc shelf.create '{"name":"s","books":0}' >/dev/null
t_ok $? "create s with 0 books"
t_like "$(lmsg lc shelf.resize "{\"name\":\"s\",\"books\":$((max + 1))}")" \
	"E2BIG: $((max + 1)) books is more than a shelf may hold" "resize s to 2^20 + 1 books: E2BIG"
t_like "$(lmsg lc shelf.resize "{\"name\":\"s\",\"bytes\":$((max * 2097152 + 1))}")" \
	"E2BIG: $((max + 1)) books is more than a shelf may hold" \
	"resize s to 2^20 books of bytes + 1 byte: E2BIG"
t_is "$(lc shelf.get '{"name":"s","limit":0}' | jq -c '[.books, .bytes]')" "[0,0]" "  s is unchanged"
t_is "$(lc stats | jq -c '[.books.free, .books.inuse]')" "[1048580,0]" "  every book is still free"
lt_done
