// SPDX-License-Identifier: MIT
/* The allocation policies' names: one table for every component. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lfs_rules.h"

static const char *const names[LFS_POL_COUNT] = {
	[LFS_POL_RANDOM_BOOKS] = "RandomBooks",
	[LFS_POL_LOCAL_NODE] = "LocalNode",
	[LFS_POL_NEAREST] = "Nearest",
	[LFS_POL_NEAREST_REMOTE] = "NearestRemote",
	[LFS_POL_NEAREST_ENC] = "NearestEnc",
	[LFS_POL_NEAREST_RACK] = "NearestRack",
	[LFS_POL_NONLOCAL_ENC] = "NonLocal_Enc",
	[LFS_POL_LZA_ASCENDING] = "LZAascending",
	[LFS_POL_LZA_DESCENDING] = "LZAdescending",
	[LFS_POL_REQUEST_IG] = "RequestIG",
	[LFS_POL_SPREAD] = "Spread",
};

const char *lfs_policy_name(int p)
{
	return p >= 0 && p < LFS_POL_COUNT ? names[p] : NULL;
}

int lfs_policy_parse(const char *s, enum lfs_policy *p)
{
	for (int i = 0; i < LFS_POL_COUNT; i++) {
		if (!strcmp(s, names[i])) {
			*p = (enum lfs_policy)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* Levenshtein distance ignoring case; names of up to 32 characters. */
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
			int c = tolower((unsigned char)a[i - 1]) !=
				tolower((unsigned char)b[j - 1]);
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

int lfs_policy_lookup(const char *s, enum lfs_policy *p, const char **hint, char *msg, size_t len)
{
	int best = 4;

	*hint = NULL;
	for (int i = 0; i < LFS_POL_COUNT; i++) {
		if (!strcasecmp(s, names[i])) {
			*p = (enum lfs_policy)i;
			return 0;
		}
	}
	for (int i = 0; i < LFS_POL_COUNT; i++) {
		int d = edit_distance(s, names[i]);

		if (d < best) {
			best = d;
			*hint = names[i];
		}
	}
	if (msg && len)
		snprintf(msg, len, "unknown policy `%.80s'%s%s%s", s,
			 *hint ? " (did you mean " : "", *hint ? *hint : "", *hint ? "?)" : "");
	return -EINVAL;
}
