/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --json for every command (docs/LFSVOL.md, "JSON output"): stdout carries
 * exactly one JSON document. A report (list, show, fabric, status) prints
 * its own array on success; a command that changes things fills in its
 * result object here, and main() prints it on success as
 * {"command": NAME, ...}. On failure main() prints, for every command,
 * {"command": NAME, ..., "error": {"code": EXIT, "reason": WORD,
 * "message": LAST LINE, "messages": [EVERY LINE]}} with the exit status
 * unchanged; a changing command's members say what it did before it failed.
 * Outside --json every call here is a no-op.
 */
#ifndef LFSVOL_RESULT_H
#define LFSVOL_RESULT_H

#include <stdbool.h>
#include <jansson.h>

/* Set member key of the result to v (stolen; ignored outside --json). */
void lfsvol_result_set(const char *key, json_t *v);
/* Append v (stolen) to the result's array key, made if need be. */
void lfsvol_result_append(const char *key, json_t *v);
/* main(): the document of command NAME that exited with status; report: prints its own. */
void lfsvol_result_print(const char *command, int status, bool report);
/* Print v indented, in insertion order, with a newline ("[]" if it cannot). */
void lfsvol_print_json(json_t *v);

#endif /* LFSVOL_RESULT_H */
