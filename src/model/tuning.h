/* Tuning files: the machine's model parameters and pinned rules as JSON
 * (docs/tuning.md describes every field), written by hand or by a tool;
 * kcoll reads one at MPI_Init from KCOLL_TUNING (else the documented
 * default place), on one rank, and shares it.
 *
 * Reading never fails hard: a file that cannot be read, is not JSON, or
 * holds a field of the wrong type or out of range gives -1 with one line
 * naming the file, the line and what is wrong, and the output holds the
 * built-in defaults (the caller warns and goes on). Fields a file leaves
 * out keep their defaults; unknown fields are errors (a typo must not pass
 * silently).
 */
#ifndef KCOLL_MODEL_TUNING_H
#define KCOLL_MODEL_TUNING_H

#include <stddef.h>
#include <stdio.h>

#include "model/machine.h"

/* Parse `len` bytes of JSON text; `file` names it in messages. On success
 * 0 and *out = defaults overlaid with the file's values (out->file =
 * file). On failure -1, *out = the built-in defaults (out->file = ""), and
 * err = "<file>:<line>: <what is wrong>". */
int kcoll_tuning_parse(const char *text, size_t len, const char *file, kcoll_tuning_t *out,
                       char *err, size_t errlen);
/* Read and parse a file (the same contract; a missing or unreadable file
 * is an error naming it and the reason). */
int kcoll_tuning_load(const char *file, kcoll_tuning_t *out, char *err, size_t errlen);
/* Write t as a complete tuning file (every field, units in the names);
 * what kcoll_tuning_parse reads back to the same values. Returns 0, or -1
 * on an output error. */
int kcoll_tuning_write(FILE *f, const kcoll_tuning_t *t);

#endif
