// SPDX-License-Identifier: GPL-2.0
/* fabric [-o FIELDS] [--json]: geometry, free / used / zombie books per node, bad books. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lfs_rules.h"
#include "lfsvol.h"
#include "report.h"
#include "session.h"

#define BAR 30

static void bar(json_int_t used, json_int_t zombie, json_int_t total)
{
	int u = total ? (int)(used * BAR / total) : 0;
	int z = total ? (int)(zombie * BAR / total) : 0;

	putchar('[');
	for (int i = 0; i < BAR; i++)
		putchar(i < u ? '#' : i < u + z ? 'z' : '.');
	putchar(']');
}

/* One node of the geometry, with its ZOMBIE count if the librarian tells it (own node, admin). */
static json_t *node_object(struct lfsvol_lib *lib, json_t *rack, json_t *enc, json_t *node)
{
	json_int_t total = 0, freeb = 0, zombie = -1;
	json_t *z = NULL, *igs = json_array(), *ig;
	size_t gi;

	json_array_foreach(json_object_get(node, "igs"), gi, ig) {
		total += json_integer_value(json_object_get(ig, "books"));
		freeb += json_integer_value(json_object_get(ig, "free"));
		json_array_append_new(igs,
				      json_integer(json_integer_value(json_object_get(ig, "ig"))));
	}
	if (!lfsvol_lib_call(lib, "zombie.list",
			     json_pack("{s:O,s:i}", "node", json_object_get(node, "name"), "limit",
				       65536),
			     &z))
		zombie = (json_int_t)json_array_size(json_object_get(z, "books"));
	json_decref(z);
	return json_pack("{s:O,s:O,s:O,s:O,s:O,s:o,s:I,s:I,s:I,s:o}", "node",
			 json_object_get(node, "name"), "rack", json_object_get(rack, "name"),
			 "enclosure", json_object_get(enc, "name"), "power_domain",
			 json_object_get(node, "power_domain"), "state",
			 json_object_get(node, "state"), "igs", igs, "books", total, "free", freeb,
			 "used", total - freeb - (zombie > 0 ? zombie : 0), "zombie",
			 zombie >= 0 ? json_integer(zombie) : json_null());
}

/* Every node's object, with the bad books on its IGs (bad: NULL if not told). */
static json_t *fabric_nodes(struct lfsvol_lib *lib, json_t *geo, json_t *bad)
{
	json_t *out = json_array(), *rack, *enc, *node;
	size_t ri, ei, ni;

	json_array_foreach(json_object_get(geo, "racks"), ri, rack)
		json_array_foreach(json_object_get(rack, "enclosures"), ei, enc)
			json_array_foreach(json_object_get(enc, "nodes"), ni, node) {
				json_t *o = node_object(lib, rack, enc, node);

				json_object_set_new(o, "bad",
						    lfsvol_bad_of_igs(bad,
								      json_object_get(o, "igs")));
				json_array_append_new(out, o);
			}
	return out;
}

/* The node's fields: fabric --json's keys and the columns. */
static const struct lfsvol_field node_fields[] = {
	{ "node", "NODE", -12, LFSVOL_F_STR, NULL, NULL, false, "the node's name" },
	{ "rack", "RACK", -8, LFSVOL_F_STR, NULL, NULL, false, "its rack" },
	{ "enclosure", "ENCL", -8, LFSVOL_F_STR, NULL, NULL, false, "its enclosure" },
	{ "power_domain", "POWER", -8, LFSVOL_F_STR, NULL, NULL, false, "its power domain" },
	{ "state", "STATE", -8, LFSVOL_F_STR, NULL, NULL, false, "online, offline, fencing" },
	{ "igs", "IGS", -8, LFSVOL_F_LIST, NULL, NULL, false, "its interleave groups (IGs)" },
	{ "books", "BOOKS", 7, LFSVOL_F_INT, NULL, NULL, false, "books on its IGs" },
	{ "free", "FREE", 7, LFSVOL_F_INT, NULL, NULL, false, "of them FREE" },
	{ "used", "USED", 7, LFSVOL_F_INT, NULL, NULL, false, "in shelves" },
	{ "zombie", "ZOMBIE", 7, LFSVOL_F_INT, NULL, "?", false,
	  "freed, waiting to be zeroed (? if the librarian does not tell)" },
	{ "bad", "BAD", -24, LFSVOL_F_JSON, NULL, NULL, false,
	  "bad memory on its IGs: IG, book, offset, length, state, shelf and place" },
};

static const struct lfsvol_report fabric_report = { "fabric", node_fields, ARRAY_SIZE(node_fields),
						    "node,rack,enclosure,power_domain,state,books,"
						    "free,used,zombie",
						    false };

/* On a terminal: a usage bar after the counts. */
static void bar_tail(json_t *node)
{
	json_t *z = json_object_get(node, "zombie");

	putchar(' ');
	bar(json_integer_value(json_object_get(node, "used")),
	    json_is_integer(z) ? json_integer_value(z) : 0,
	    json_integer_value(json_object_get(node, "books")));
}

/* The table; without report options a summary line first and, on a terminal, usage bars. */
static void fabric_print(const struct lfsvol_report_opts *ro, json_t *geo, json_t *out, json_t *bad)
{
	bool plain = lfsvol_report_plain(ro) && !lfsvol_json;
	bool tty = plain && isatty(STDOUT_FILENO);
	char bs[32];

	if (plain)
		printf("book size %s, %lld books in all\n",
		       lfs_size_human(
			       (uint64_t)json_integer_value(json_object_get(geo, "book_size")), bs,
			       sizeof(bs)),
		       (long long)json_integer_value(json_object_get(geo, "total_books")));
	lfsvol_report_print(ro, out, tty ? bar_tail : NULL);
	if (tty)
		printf("bar: # used, z zombie (waiting to be zeroed), . free\n");
	if (plain)
		lfsvol_bad_print(bad);
}

int cmd_fabric(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	struct lfsvol_report_opts ro = { 0 };
	struct lfsvol_lib *lib = NULL;
	json_t *geo = NULL, *out = NULL, *bad = NULL;
	int c, r;

	while ((c = getopt_long(argc, argv, LFSVOL_REPORT_SHORT, lfsvol_report_long, NULL)) != -1)
		if (!lfsvol_report_option(&ro, c, optarg))
			return LFSVOL_EUSAGE;
	if (optind != argc) {
		lfsvol_err("usage: %s fabric [-o FIELDS] [--json]", lfsvol_prog);
		return LFSVOL_EUSAGE;
	}
	r = lfsvol_report_select(&fabric_report, &ro);
	if (r)
		return r > 0 ? LFSVOL_OK : lfsvol_exit_code(r);
	r = lfsvol_lib_open(ctx, &lib);
	if (!r)
		r = lfsvol_lib_request(lib, "reading the fabric geometry", "geometry", NULL, &geo);
	if (!r) {
		bad = lfsvol_bad_books(lib, NULL);
		out = fabric_nodes(lib, geo, bad);
		fabric_print(&ro, geo, out, bad);
	}
	json_decref(bad);
	json_decref(geo);
	json_decref(out);
	lfsvol_lib_close(lib);
	return lfsvol_exit_code(r);
}
