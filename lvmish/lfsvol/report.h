/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reports (list, show, fabric): one table of fields each, one definition for
 * the text columns and the JSON keys, so the two cannot disagree. A field's
 * name is what -o takes and its JSON key. Options, as lvs(8) has them:
 *   -o FIELD[,FIELD...]   these columns, in this order (-o +F: the defaults and F;
 *                         -o help: the fields, one line each)
 *   --noheadings          no header line
 *   --separator S         columns joined by S, without padding
 *   --bytes               sizes in bytes, without a unit
 * Under --json a report prints an array of objects: every key without -o,
 * exactly the named ones with it.
 */
#ifndef LFSVOL_REPORT_H
#define LFSVOL_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <getopt.h>
#include <jansson.h>

enum lfsvol_field_kind {
	LFSVOL_F_STR,
	LFSVOL_F_INT,
	LFSVOL_F_SIZE, /* bytes; human units in text unless --bytes */
	LFSVOL_F_LIST, /* an array of strings or numbers, comma-separated in text */
	LFSVOL_F_JSON, /* anything else: compact JSON in text */
};

/* Text of a value for fields that need their own; buf has len bytes. */
typedef const char *lfsvol_field_fmt(json_t *v, char *buf, size_t len);

struct lfsvol_field {
	const char *name; /* -o's name and the JSON key */
	const char *header;
	int width; /* printf's: negative is left-aligned */
	enum lfsvol_field_kind kind;
	lfsvol_field_fmt *fmt; /* instead of kind's text, if set */
	const char *none; /* text for null, absent or empty; "-" if NULL */
	bool detail; /* in the one-object report (show) only */
	const char *help;
};

struct lfsvol_report {
	const char *command; /* for messages: "list" */
	const struct lfsvol_field *fields;
	size_t nfields;
	const char *defaults; /* the columns without -o, comma-separated */
	bool detail; /* detail fields allowed */
};

#define LFSVOL_REPORT_COLS 32
struct lfsvol_report_opts {
	const char *spec; /* -o */
	const char *separator;
	bool noheadings, bytes;
	const struct lfsvol_field *cols[LFSVOL_REPORT_COLS];
	size_t ncols;
};

/* getopt_long's options of a report: --json (-j), -o, --noheadings, --separator, --bytes */
#define LFSVOL_REPORT_SHORT "jo:"
extern const struct option lfsvol_report_long[];

/* Take getopt's c (and optarg) if it is a report option. */
bool lfsvol_report_option(struct lfsvol_report_opts *ro, int c, const char *arg);
/*
 * The columns of -o (the defaults without it), before anything is asked of
 * anyone: 0; 1 if -o help printed the fields (exit 0); a usage failure
 * naming the field that is not one (nothing printed on stdout).
 */
int lfsvol_report_select(const struct lfsvol_report *rep, struct lfsvol_report_opts *ro);
/* No report option given: the command's own text layout may add to the table. */
bool lfsvol_report_plain(const struct lfsvol_report_opts *ro);
/*
 * rows (an array of objects) as the table or, under --json, as the array;
 * tail (may be NULL) adds to each text line before its newline.
 */
void lfsvol_report_print(const struct lfsvol_report_opts *ro, json_t *rows,
			 void (*tail)(json_t *row));

#endif /* LFSVOL_REPORT_H */
