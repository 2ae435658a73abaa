/* Decisions kept between jobs (docs/model.md, "Kept between jobs").
 *
 * The cost model's decisions depend only on what it prices with: kcoll's
 * own code, the machine's terms (the tuning in force: a file, the quick
 * calibration or the built-in defaults), the parameters other than the
 * algorithm choices, and the call's shape (collective, size class,
 * processes, their levels, the crowding, the engine), which the model's
 * memo keys them by (model/select.c). A job's memo is written at its end
 * into the per-user cache folder (base/cache.h) under a hash of the first
 * three, and a later job whose hash is the same starts with it: on a
 * machine that ran a program before, its first calls of a size class do
 * not wait for pricing. A decision read from the file is the one pricing
 * would make (the same inputs, the same code), so ranks that read it and
 * ranks that price agree; one file per folder, the last job's kept
 * (KCOLL_KEEP_DECISIONS=0: neither read nor written). */
#ifndef KCOLL_MODEL_KEEP_H
#define KCOLL_MODEL_KEEP_H

#include <stddef.h>

/* At start-up, once the tuning is in force: the memo starts with the
 * kept decisions whose hash is this process's. Returns how many were
 * read (0: none, or no file). */
int kcoll_keep_load(void);
/* At the end: the memo's decisions priced since the start (with those
 * the file holds already) are written, if there are new ones. Returns how
 * many were written, 0 for none, -1 where the file could not be written. */
int kcoll_keep_save(void);

/* The kept file's path into path, and how many decisions it holds (for
 * whichever hash), or -1 where there is none (or keeping is off). */
int kcoll_keep_file(char *path, size_t len);

#endif
