/* The hot page: the few words that a call handed straight to the host MPI
 * reads (the call layer's shortcut, call/shortcut.h: the parameter
 * generation, the count of pending requests, the shortcuts' keys; the
 * host's functions it then calls, call/shortcut.h), kept together on one
 * page of the library's data.
 *
 * Between two calls of an application the caches and the TLB are often
 * emptied by its own work (a solver's sweep over its matrix before the
 * dot product's 8-byte MPI_Allreduce). Such a call then pays, for every
 * page kcoll touches, a walk of the page tables (up to four memory reads,
 * one after another) before the line itself: some 0.3-0.5 us a page on a
 * 2-core AMD EPYC guest, where the host does an 8-byte MPI_Bcast in 2 us
 * from cold. Words read on every call, spread over the data segment by
 * their files, cost one walk each; on one page they cost one walk in all.
 *
 * How: a section of its own, "kcoll_hot" (no leading dot, so the linker
 * keeps it as one output section, its input sections in link order, and
 * does not mix it into .data). The first variable in link order (the
 * parameter generation: src/base comes first in the core's objects) is
 * page aligned, which aligns the section; the others are aligned to a
 * cache line. Only the core defines hot variables (in the library the
 * entry points' objects come first, and one of theirs would then open
 * the section before the aligned one: two pages). The whole must stay
 * under a page: the unit test test_hot_page checks that every hot
 * variable lies on the first one's.
 */
#ifndef KCOLL_BASE_HOT_H
#define KCOLL_BASE_HOT_H

#define KCOLL_HOT_PAGE 4096
/* the first variable of the hot page (one, in base/params.c) */
#define KCOLL_HOT_FIRST __attribute__((section("kcoll_hot"), aligned(KCOLL_HOT_PAGE)))
/* every other one */
#define KCOLL_HOT __attribute__((section("kcoll_hot"), aligned(64)))

#endif
