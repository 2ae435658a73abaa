/* A minimal checker for kcoll's unit tests: CHECK records a failure with
 * its location and goes on; check_report prints "N passed, M failed" and
 * gives the exit status. */
#ifndef KCOLL_CHECK_H
#define KCOLL_CHECK_H

#include <stdio.h>

static long check_passed, check_failed;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (cond) {                                                                        \
            check_passed++;                                                                \
        } else {                                                                           \
            check_failed++;                                                                \
            if (check_failed <= 50) {                                                      \
                fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);   \
                fprintf(stderr, __VA_ARGS__);                                              \
                fputc('\n', stderr);                                                       \
            }                                                                              \
        }                                                                                  \
    } while (0)

static inline int check_report(const char *name)
{
    printf("%s: %ld passed, %ld failed\n", name, check_passed, check_failed);
    return check_failed ? 1 : 0;
}

#endif
