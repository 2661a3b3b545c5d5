// SPDX-License-Identifier: GPL-2.0
/*
 * lib-json: hold the client library's reply parser (client_json.c, yajl
 * building jansson values) to jansson's json_loadb(text, len, 0): the same
 * texts accepted, the same values (json_equal), the same texts refused.
 * Test helper (tests/librarian/json.t).
 *
 *   lib-json cases              the fixed cases below; one line each that differs
 *   lib-json fuzz SEED N        N mutations (1-3 bytes changed, inserted,
 *                               deleted, or the text cut) of a reply of 8 shelves
 *   lib-json list SHELVES RUNS  a list reply of SHELVES shelves: equal, and the
 *                               best time of RUNS parses with each (ms)
 * Prints "N same (K of them accepted), M differ" last; exits 1 if any differs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client_int.h"

static int same, accepted, differ;

static void compare(const char *what, const char *text, size_t len)
{
	char why[JSON_ERROR_TEXT_LENGTH] = "";
	json_error_t jerr;
	json_t *a = json_loadb(text, len, 0, &jerr);
	json_t *b = lc_json_parse(text, len, why, sizeof(why));

	if ((!a && !b) || (a && b && json_equal(a, b))) {
		same++;
		accepted += a != NULL;
	} else {
		differ++;
		if (getenv("LIB_JSON_KEEP")) { /* the text, for a closer look */
			FILE *f = fopen(getenv("LIB_JSON_KEEP"), "w");

			if (f) {
				fwrite(text, 1, len, f);
				fclose(f);
			}
		}
		printf("DIFF %s: jansson %s, ours %s (%zu bytes: %.*s)\n", what,
		       a ? "accepts" : jerr.text, b ? "accepts" : why, len,
		       len > 80 ? 80 : (int)len, text);
	}
	json_decref(a);
	json_decref(b);
}

/* each with its length: two hold a NUL */
#define C(text)                        \
	{                              \
		text, sizeof(text) - 1 \
	}
static const struct {
	const char *text;
	size_t len;
} cases[] = {
	C("{\"a\":1}"),
	C("[1,2.5,-0,1e3,1E-2,true,false,null,\"x\"]"),
	C("{\"a\":{\"b\":[[],{}]}}"),
	C("{\"a\":1,\"a\":2}"),
	C("[\"\xc3\xa9\"]"),
	C("[\"\\n\\t\\\"\\\\\\/\\b\\f\\r\"]"),
	C("[\"\\u00e9\"]"),
	C("[\"\\ud83d\\ude00\"]"),
	C("[9223372036854775807]"),
	C("[-9223372036854775808]"),
	C(" \n[1] \t"),
	C("{\"\":\"\"}"),
	C(""),
	C(" "),
	C("1"),
	C("\"s\""),
	C("null"),
	C("{"),
	C("{\"a\":}"),
	C("[1,]"),
	C("{\"a\":1}x"),
	C("[01]"),
	C("[1.]"),
	C("[.5]"),
	C("[-]"),
	C("[1e]"),
	C("[+1]"),
	C("[9223372036854775808]"),
	C("[1e400]"),
	C("[\"\\u0000\"]"),
	C("{\"\\u0000\":1}"),
	C("[\"\\ud800\"]"),
	C("[\"\\udc00x\"]"),
	C("[\"\x01\"]"),
	C("[\"\xff\"]"),
	C("[\"\xc0\xaf\"]"),
	C("[\"\xed\xa0\x80\"]"),
	C("[\"\xf4\x90\x80\x80\"]"),
	C("{\"\xff\":1}"),
	C("[\"a\" \"b\"]"),
	C("[1] [2]"),
	C("{1:2}"),
	C("[true false]"),
	C("[nul]"),
	C("[tru]"),
	C("NaN"),
	C("[Infinity]"),
	C("// c\n[1]"),
	C("/* */[1]"),
	C("[1]\0"),
	C("[\"a\0b\"]"),
	C("{\"a\" 1}"),
	C("[\"\\x\"]"),
	C("[\"\\u12\"]"),
	C("[\"unterminated]"),
	C("{\"a\":1,}"),
	C("[[[[[[]]]]]]]"),
};

/* depth opening brackets, closed again (or not) */
static void nest(int depth, bool closed)
{
	char *t = malloc(2 * depth + 1);
	char what[64];

	memset(t, '[', depth);
	memset(t + depth, ']', depth);
	snprintf(what, sizeof(what), "nested %d deep%s", depth, closed ? "" : ", open");
	compare(what, t, closed ? 2 * (size_t)depth : (size_t)depth);
	free(t);
}

static int run_cases(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char what[32];

		snprintf(what, sizeof(what), "case %zu", i);
		compare(what, cases[i].text, cases[i].len);
	}
	for (int d = 2046; d <= 2050; d++)
		nest(d, true);
	nest(100, false);
	return 0;
}

/* A shelf list reply of n shelves, as the librarian writes it (compact). */
static char *list_text(int n, size_t *len)
{
	json_t *shelves = json_array(), *rep;
	char *t;

	for (int i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "bench-list-%05d", i);
		json_array_append_new(
			shelves,
			json_pack("{s:s,s:s,s:s,s:n,s:[],s:I,s:I,s:i,s:I,s:I,s:i,s:s,s:[{s:s,s:s}]}",
				  "name", name, "uuid", "ae251ea3-1265-49be-aed4-c3a16b5574a2",
				  "owner", "admin \xc3\xa9", "tenant", "access", "ctime",
				  (json_int_t)1796681046 + i, "mtime", (json_int_t)1796681046,
				  "books", i % 9, "size", (json_int_t)8589934592 * (i % 9), "bytes",
				  (json_int_t)-1, "gen", i, "policy", "RandomBooks", "activations",
				  "node", "n1", "mode", "rw"));
	}
	rep = json_pack("{s:b,s:I,s:{s:o,s:i,s:i,s:f}}", "ok", 1, "id", (json_int_t)42, "result",
			"shelves", shelves, "total", n, "offset", 0, "took", 0.25);
	t = json_dumps(rep, JSON_COMPACT);
	*len = strlen(t);
	json_decref(rep);
	return t;
}

static int fuzz(unsigned int seed, int n)
{
	static const char pick[] = "{}[]\",:\\0123456789.-eE tfn\xc3\xa9\xff\x01u";
	size_t len, l;
	char *orig = list_text(8, &len), *t = malloc(len + 8);

	srandom(seed);
	for (int i = 0; i < n; i++) {
		int changes = 1 + random() % 3;
		char what[48];

		memcpy(t, orig, len);
		l = len;
		for (int c = 0; c < changes && l; c++) {
			size_t at = random() % l;
			char ch = random() % 2 ? pick[random() % (sizeof(pick) - 1)] :
						 (char)random();

			switch (random() % 4) {
			case 0:
				t[at] = ch;
				break;
			case 1: /* inserted */
				memmove(t + at + 1, t + at, l++ - at);
				t[at] = ch;
				break;
			case 2: /* deleted */
				memmove(t + at, t + at + 1, --l - at);
				break;
			default: /* cut */
				l = at ? at : 1;
			}
		}
		snprintf(what, sizeof(what), "seed %u mutation %d", seed, i);
		compare(what, t, l);
	}
	free(orig);
	free(t);
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int list(int n, int runs)
{
	size_t len;
	char *t = list_text(n, &len), why[JSON_ERROR_TEXT_LENGTH];
	double best_j = 1e9, best_o = 1e9;

	compare("the list", t, len);
	for (int r = 0; r < runs; r++) {
		double t0 = now_ms(), t1, t2;
		json_t *a = json_loadb(t, len, 0, NULL);

		t1 = now_ms();
		json_t *b = lc_json_parse(t, len, why, sizeof(why));

		t2 = now_ms();
		best_j = t1 - t0 < best_j ? t1 - t0 : best_j;
		best_o = t2 - t1 < best_o ? t2 - t1 : best_o;
		json_decref(a);
		json_decref(b);
	}
	printf("list of %d shelves, %zu bytes: json_loadb %.3f ms, lc_json_parse %.3f ms (best of %d)\n",
	       n, len, best_j, best_o, runs);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "cases"))
		run_cases();
	else if (argc == 4 && !strcmp(argv[1], "fuzz"))
		fuzz((unsigned int)strtoul(argv[2], NULL, 10), atoi(argv[3]));
	else if (argc == 4 && !strcmp(argv[1], "list"))
		list(atoi(argv[2]), atoi(argv[3]));
	else {
		fprintf(stderr, "usage: lib-json cases | fuzz SEED N | list SHELVES RUNS\n");
		return 2;
	}
	printf("%d same (%d of them accepted), %d differ\n", same, accepted, differ);
	return differ ? 1 : 0;
}
