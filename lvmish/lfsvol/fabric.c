// SPDX-License-Identifier: GPL-2.0
/* fabric [--json]: geometry and free / used / zombie books per node. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lfs_rules.h"
#include "lfsvol.h"
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

static json_t *fabric_nodes(struct lfsvol_lib *lib, json_t *geo)
{
	json_t *out = json_array(), *rack, *enc, *node;
	size_t ri, ei, ni;

	json_array_foreach(json_object_get(geo, "racks"), ri, rack)
		json_array_foreach(json_object_get(rack, "enclosures"), ei, enc)
			json_array_foreach(json_object_get(enc, "nodes"), ni, node)
				json_array_append_new(out, node_object(lib, rack, enc, node));
	return out;
}

static void fabric_print(json_t *geo, json_t *out)
{
	bool tty = isatty(STDOUT_FILENO);
	char bs[32];
	size_t ni;
	json_t *node;

	printf("book size %s, %lld books in all\n",
	       lfs_size_human((uint64_t)json_integer_value(json_object_get(geo, "book_size")), bs,
			      sizeof(bs)),
	       (long long)json_integer_value(json_object_get(geo, "total_books")));
	printf("%-12s %-8s %-8s %-8s %-8s %7s %7s %7s %7s\n", "NODE", "RACK", "ENCL", "POWER",
	       "STATE", "BOOKS", "FREE", "USED", "ZOMBIE");
	json_array_foreach(out, ni, node) {
		json_t *z = json_object_get(node, "zombie");

		printf("%-12s %-8s %-8s %-8s %-8s %7lld %7lld %7lld ",
		       json_string_value(json_object_get(node, "node")),
		       json_string_value(json_object_get(node, "rack")),
		       json_string_value(json_object_get(node, "enclosure")),
		       json_string_value(json_object_get(node, "power_domain")),
		       json_string_value(json_object_get(node, "state")),
		       (long long)json_integer_value(json_object_get(node, "books")),
		       (long long)json_integer_value(json_object_get(node, "free")),
		       (long long)json_integer_value(json_object_get(node, "used")));
		if (json_is_integer(z))
			printf("%7lld", (long long)json_integer_value(z));
		else
			printf("%7s", "?");
		if (tty) {
			putchar(' ');
			bar(json_integer_value(json_object_get(node, "used")),
			    json_is_integer(z) ? json_integer_value(z) : 0,
			    json_integer_value(json_object_get(node, "books")));
		}
		putchar('\n');
	}
	if (tty)
		printf("bar: # used, z zombie (waiting to be zeroed), . free\n");
}

int cmd_fabric(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
					      { NULL, 0, NULL, 0 } };
	struct lfsvol_lib *lib = NULL;
	json_t *geo = NULL, *out = NULL;
	bool json = false;
	int c, r;

	while ((c = getopt_long(argc, argv, "j", opts, NULL)) != -1) {
		if (c != 'j')
			return LFSVOL_EUSAGE;
		json = true;
	}
	if (optind != argc) {
		lfsvol_err("usage: %s fabric [--json]", lfsvol_prog);
		return LFSVOL_EUSAGE;
	}
	r = lfsvol_lib_open(ctx, &lib);
	if (!r)
		r = lfsvol_lib_request(lib, "reading the fabric geometry", "geometry", NULL, &geo);
	if (!r)
		out = fabric_nodes(lib, geo);
	if (!r && json) {
		char *s = json_dumps(out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

		puts(s ? s : "[]");
		free(s);
	} else if (!r) {
		fabric_print(geo, out);
	}
	json_decref(geo);
	json_decref(out);
	lfsvol_lib_close(lib);
	return lfsvol_exit_code(r);
}
