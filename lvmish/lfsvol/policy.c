// SPDX-License-Identifier: GPL-2.0
/* Policy names, IG lists and shelf names: checked before anything is sent. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lfsvol.h"

const char *const lfsvol_policies[] = {
	"RandomBooks", "LocalNode", "Nearest", "NearestRemote", "NearestEnc",
	"NearestRack", "NonLocal_Enc", "LZAascending", "LZAdescending",
	"RequestIG", "Spread", NULL
};

/* Levenshtein distance, small strings only (names < 32 chars). */
static int edit_distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b);
	int d[33][33];

	if (la > 32 || lb > 32)
		return 99;
	for (int i = 0; i <= la; i++)
		d[i][0] = i;
	for (int j = 0; j <= lb; j++)
		d[0][j] = j;
	for (int i = 1; i <= la; i++) {
		for (int j = 1; j <= lb; j++) {
			int c = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			int m = d[i - 1][j - 1] + c;

			if (d[i - 1][j] + 1 < m)
				m = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < m)
				m = d[i][j - 1] + 1;
			d[i][j] = m;
		}
	}
	return d[la][lb];
}

const char *lfsvol_policy_lookup(const char *name, const char **hint)
{
	int best = 4;

	*hint = NULL;
	for (int i = 0; lfsvol_policies[i]; i++)
		if (!strcasecmp(name, lfsvol_policies[i]))
			return lfsvol_policies[i];
	for (int i = 0; lfsvol_policies[i]; i++) {
		int d = edit_distance(name, lfsvol_policies[i]);

		if (d < best) {
			best = d;
			*hint = lfsvol_policies[i];
		}
	}
	return NULL;
}

/* "0,1,3" or "0-3": at most max IGs, each 0..65535, no duplicates. */
int lfsvol_parse_ig_list(const char *s, uint32_t *igs, int max, char *msg, size_t msglen)
{
	const char *p = s;
	int n = 0;

	if (!*s) {
		snprintf(msg, msglen, "empty IG list: give e.g. --ig 0,1 or --ig 0-3");
		return -EINVAL;
	}
	while (*p) {
		char *end;
		unsigned long a, b;

		if (!isdigit((unsigned char)*p))
			goto bad;
		a = strtoul(p, &end, 10);
		b = a;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				goto bad;
			b = strtoul(end + 1, &end, 10);
		}
		if (a > 65535 || b > 65535 || b < a)
			goto bad;
		for (unsigned long ig = a; ig <= b; ig++) {
			for (int i = 0; i < n; i++) {
				if (igs[i] == ig) {
					snprintf(msg, msglen, "IG %lu listed twice in `%s'", ig, s);
					return -EINVAL;
				}
			}
			if (n >= max) {
				snprintf(msg, msglen, "IG list `%s' is longer than %d entries", s, max);
				return -E2BIG;
			}
			igs[n++] = (uint32_t)ig;
		}
		p = end;
		if (*p == ',') {
			p++;
			if (!*p)
				goto bad;
		} else if (*p) {
			goto bad;
		}
	}
	return n;
bad:
	snprintf(msg, msglen, "invalid IG list `%s': expected numbers 0-65535 like 0,1 or 0-3", s);
	return -EINVAL;
}

bool lfsvol_valid_name(const char *name)
{
	size_t n = strlen(name);

	if (n < 1 || n > LFSVOL_NAME_MAX || name[0] == '-' || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (!isalnum(c) && c != '.' && c != '_' && c != '-')
			return false;
	}
	return true;
}
