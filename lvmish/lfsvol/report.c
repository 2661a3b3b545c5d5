// SPDX-License-Identifier: GPL-2.0
/* Reports: fields chosen with -o, printed as columns or JSON (report.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lfs_rules.h"
#include "lfsvol.h"
#include "report.h"
#include "result.h"

#define CELL_MAX 256

enum { OPT_NOHEAD = 0x100, OPT_SEP, OPT_BYTES };

const struct option lfsvol_report_long[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "options", required_argument, NULL, 'o' },
	{ "noheadings", no_argument, NULL, OPT_NOHEAD },
	{ "separator", required_argument, NULL, OPT_SEP },
	{ "bytes", no_argument, NULL, OPT_BYTES },
	{ NULL, 0, NULL, 0 },
};

bool lfsvol_report_option(struct lfsvol_report_opts *ro, int c, const char *arg)
{
	if (c == 'j')
		lfsvol_json_on();
	else if (c == 'o')
		ro->spec = arg;
	else if (c == OPT_NOHEAD)
		ro->noheadings = true;
	else if (c == OPT_SEP)
		ro->separator = arg;
	else if (c == OPT_BYTES)
		ro->bytes = true;
	else
		return false;
	return true;
}

bool lfsvol_report_plain(const struct lfsvol_report_opts *ro)
{
	return !ro->spec && !ro->noheadings && !ro->separator && !ro->bytes;
}

static void report_help(const struct lfsvol_report *rep)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < rep->nfields; i++) {
		const struct lfsvol_field *f = &rep->fields[i];

		if (f->detail && !rep->detail)
			continue;
		if (lfsvol_json)
			json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "name", f->name,
							     "header", f->header, "help", f->help));
		else
			printf("  %-14s %s\n", f->name, f->help);
	}
	if (lfsvol_json)
		lfsvol_print_json(arr);
	else
		printf("The default: -o %s; -o +FIELD adds to it.\n", rep->defaults);
	json_decref(arr);
}

static int add_col(const struct lfsvol_report *rep, struct lfsvol_report_opts *ro, const char *name,
		   size_t len)
{
	const char *cmd = rep->command;

	if (!len)
		return lfsvol_usage("empty field name in `-o %s'", ro->spec);
	if (ro->ncols == LFSVOL_REPORT_COLS)
		return lfsvol_usage("more than %d fields in `-o %s'", LFSVOL_REPORT_COLS, ro->spec);
	for (size_t i = 0; i < rep->nfields; i++) {
		const struct lfsvol_field *f = &rep->fields[i];

		if (strlen(f->name) != len || strncmp(f->name, name, len))
			continue;
		if (f->detail && !rep->detail)
			return lfsvol_usage("field `%s' is shown by `show' only, not by `%s'",
					    f->name, cmd);
		ro->cols[ro->ncols++] = f;
		return 0;
	}
	return lfsvol_usage("unknown field `%.*s' for `%s'; `%s %s -o help' lists them", (int)len,
			    name, cmd, lfsvol_prog, cmd);
}

static int add_cols(const struct lfsvol_report *rep, struct lfsvol_report_opts *ro,
		    const char *list)
{
	const char *p = list, *end;
	int r;

	for (;;) {
		end = strchrnul(p, ',');
		r = add_col(rep, ro, p, (size_t)(end - p));
		if (r || !*end)
			return r;
		p = end + 1;
	}
}

int lfsvol_report_select(const struct lfsvol_report *rep, struct lfsvol_report_opts *ro)
{
	const char *spec = ro->spec;
	int r;

	ro->ncols = 0;
	if (spec && !strcmp(spec, "help")) {
		report_help(rep);
		return 1;
	}
	if (!spec || spec[0] == '+') {
		r = add_cols(rep, ro, rep->defaults);
		if (r || !spec)
			return r;
		spec++;
	}
	return add_cols(rep, ro, spec);
}

/* An array's elements, comma-separated. */
static const char *join(json_t *v, char *buf, size_t len)
{
	size_t i, n = 0;
	json_t *el;

	buf[0] = '\0';
	json_array_foreach(v, i, el) {
		if (n >= len)
			break;
		if (json_is_string(el))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "," : "",
					      json_string_value(el));
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? "," : "",
					      (long long)json_integer_value(el));
	}
	return buf;
}

static const char *cell(const struct lfsvol_field *f, json_t *row, bool bytes, char *buf,
			size_t len)
{
	json_t *v = json_object_get(row, f->name);
	char *s;

	if (!v || json_is_null(v) || (json_is_array(v) && !json_array_size(v)) ||
	    (json_is_object(v) && !json_object_size(v)))
		return f->none ? f->none : "-";
	if (f->fmt)
		return f->fmt(v, buf, len);
	if (json_is_string(v))
		return json_string_value(v);
	if (f->kind == LFSVOL_F_SIZE && json_is_integer(v) && !bytes)
		return lfs_size_human((uint64_t)json_integer_value(v), buf, len);
	if (json_is_integer(v)) {
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	if (f->kind == LFSVOL_F_LIST && json_is_array(v))
		return join(v, buf, len);
	s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
	snprintf(buf, len, "%s", s ? s : "?");
	free(s);
	return buf;
}

/* One line: the last column is padded only if right-aligned (as the tables always were). */
static void print_line(const struct lfsvol_report_opts *ro, const char *const *cells)
{
	for (size_t i = 0; i < ro->ncols; i++) {
		const struct lfsvol_field *f = ro->cols[i];
		bool last = i + 1 == ro->ncols;

		if (ro->separator)
			printf("%s%s", i ? ro->separator : "", cells[i]);
		else if (last && f->width < 0)
			printf("%s%s", i ? " " : "", cells[i]);
		else
			printf("%s%*s", i ? " " : "", f->width, cells[i]);
	}
}

static void print_text(const struct lfsvol_report_opts *ro, json_t *rows, void (*tail)(json_t *row))
{
	static char bufs[LFSVOL_REPORT_COLS][CELL_MAX];
	const char *cells[LFSVOL_REPORT_COLS];
	json_t *row;
	size_t i, k;

	if (!ro->noheadings) {
		for (k = 0; k < ro->ncols; k++)
			cells[k] = ro->cols[k]->header;
		print_line(ro, cells);
		putchar('\n');
	}
	json_array_foreach(rows, i, row) {
		for (k = 0; k < ro->ncols; k++)
			cells[k] = cell(ro->cols[k], row, ro->bytes, bufs[k], CELL_MAX);
		print_line(ro, cells);
		if (tail)
			tail(row);
		putchar('\n');
	}
}

/* The rows with exactly the chosen keys, in the order of -o. */
static json_t *project(const struct lfsvol_report_opts *ro, json_t *rows)
{
	json_t *out = json_array(), *row;
	size_t i;

	json_array_foreach(rows, i, row) {
		json_t *o = json_object();

		for (size_t k = 0; k < ro->ncols; k++) {
			json_t *v = json_object_get(row, ro->cols[k]->name);

			json_object_set(o, ro->cols[k]->name, v ? v : json_null());
		}
		json_array_append_new(out, o);
	}
	return out;
}

void lfsvol_report_print(const struct lfsvol_report_opts *ro, json_t *rows,
			 void (*tail)(json_t *row))
{
	json_t *out;

	if (!lfsvol_json) {
		print_text(ro, rows, tail);
		return;
	}
	out = ro->spec ? project(ro, rows) : json_incref(rows);
	lfsvol_print_json(out);
	json_decref(out);
}
