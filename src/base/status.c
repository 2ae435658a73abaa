/* Names of kcoll's status codes. */
#include "base/status.h"

const char *kcoll_status_str(kcoll_status_t st)
{
    switch (st) {
    case KCOLL_OK: return "ok";
    case KCOLL_IN_PROGRESS: return "in progress";
    case KCOLL_ERR_NOMEM: return "out of memory";
    case KCOLL_ERR_ARG: return "invalid argument";
    case KCOLL_ERR_SYS: return "system call failed";
    case KCOLL_ERR_PERM: return "cross-memory attach not permitted";
    case KCOLL_ERR_PEER_DEAD: return "peer process died";
    case KCOLL_ERR_PROTO: return "protocol violation by a peer";
    case KCOLL_ERR_UNSUPPORTED: return "not supported on this system";
    case KCOLL_ERR_SCHED: return "invalid schedule";
    }
    return "unknown status";
}
