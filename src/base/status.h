/* Status codes of kcoll's internal functions (DESIGN.md section 8).
 * 0 is success, KCOLL_IN_PROGRESS means "not finished yet, call again",
 * negative values are errors. */
#ifndef KCOLL_STATUS_H
#define KCOLL_STATUS_H

typedef enum {
    KCOLL_OK = 0,
    KCOLL_IN_PROGRESS = 1,
    KCOLL_ERR_NOMEM = -1,       /* an allocation failed */
    KCOLL_ERR_ARG = -2,         /* bad argument (a bug in the caller) */
    KCOLL_ERR_SYS = -3,         /* a system call failed; errno says why */
    KCOLL_ERR_PERM = -4,        /* cross-memory attach not permitted */
    KCOLL_ERR_PEER_DEAD = -5,   /* the peer process no longer exists */
    KCOLL_ERR_PROTO = -6,       /* a peer broke the protocol (bad exposure) */
    KCOLL_ERR_UNSUPPORTED = -7, /* not available on this system */
    KCOLL_ERR_SCHED = -8        /* a schedule is invalid (simulator finding) */
} kcoll_status_t;

const char *kcoll_status_str(kcoll_status_t st);

#endif
