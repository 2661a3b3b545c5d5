// SPDX-License-Identifier: GPL-2.0
/* fabric [--json]: geometry and free / used / zombie books per node. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lfs_librarian.h"
#include "lfsvol.h"

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

int cmd_fabric(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	struct lv_lib *lib = NULL;
	json_t *geo = NULL, *out = json_array(), *rack, *enc, *node, *ig;
	size_t ri, ei, ni, gi;
	bool json = false;
	char bs[32];
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
	r = lfsvol_lib_connect(ctx, &lib);
	if (r)
		goto out;
	r = lfsvol_lib_call(lib, "reading the fabric geometry", "geometry", NULL, &geo);
	if (r)
		goto out;
	json_array_foreach(json_object_get(geo, "racks"), ri, rack) {
		json_array_foreach(json_object_get(rack, "enclosures"), ei, enc) {
			json_array_foreach(json_object_get(enc, "nodes"), ni, node) {
				json_int_t total = 0, freeb = 0, zombie = -1;
				json_t *z = NULL, *igs = json_array();

				json_array_foreach(json_object_get(node, "igs"), gi, ig) {
					total += json_integer_value(json_object_get(ig, "books"));
					freeb += json_integer_value(json_object_get(ig, "free"));
					json_array_append_new(igs, json_integer(json_integer_value(json_object_get(ig, "ig"))));
				}
				/* per-node zombies are readable for one's own node (or as admin) */
				if (!lv_call(lib, "zombie.list", json_pack("{s:O,s:i}", "node",
						  json_object_get(node, "name"), "limit", 65536), &z))
					zombie = (json_int_t)json_array_size(json_object_get(z, "books"));
				json_decref(z);
				json_array_append_new(out, json_pack("{s:O,s:O,s:O,s:O,s:O,s:o,s:I,s:I,s:I,s:o}",
					"node", json_object_get(node, "name"),
					"rack", json_object_get(rack, "name"),
					"enclosure", json_object_get(enc, "name"),
					"power_domain", json_object_get(node, "power_domain"),
					"state", json_object_get(node, "state"),
					"igs", igs, "books", total, "free", freeb,
					"used", total - freeb - (zombie > 0 ? zombie : 0),
					"zombie", zombie >= 0 ? json_integer(zombie) : json_null()));
			}
		}
	}
	if (json) {
		char *s = json_dumps(out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

		puts(s ? s : "[]");
		free(s);
		goto out;
	}
	printf("book size %s, %lld books in all\n",
	       lfsvol_fmt_bytes((uint64_t)json_integer_value(json_object_get(geo, "book_size")), bs, sizeof(bs)),
	       (long long)json_integer_value(json_object_get(geo, "total_books")));
	printf("%-12s %-8s %-8s %-8s %-8s %7s %7s %7s %7s\n", "NODE", "RACK", "ENCL", "POWER", "STATE",
	       "BOOKS", "FREE", "USED", "ZOMBIE");
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
		if (isatty(STDOUT_FILENO)) {
			putchar(' ');
			bar(json_integer_value(json_object_get(node, "used")),
			    json_is_integer(z) ? json_integer_value(z) : 0,
			    json_integer_value(json_object_get(node, "books")));
		}
		putchar('\n');
	}
	if (isatty(STDOUT_FILENO))
		printf("bar: # used, z zombie (waiting to be zeroed), . free\n");
out:
	json_decref(geo);
	json_decref(out);
	lv_close(lib);
	return r;
}
