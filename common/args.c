// SPDX-License-Identifier: MIT
/* The tools' command-line rules: a flag that may stand anywhere among a command's words. */
#include <string.h>

#include "lfs_rules.h"

int lfs_args_take(int argc, char **argv, const char *flag, bool *seen)
{
	int i, k = 1;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], flag))
			*seen = true;
		else
			argv[k++] = argv[i];
	}
	while (i < argc)
		argv[k++] = argv[i++];
	argv[k] = NULL;
	return k;
}
