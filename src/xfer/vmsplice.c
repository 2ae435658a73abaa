/* The vmsplice engine's pipes (see vmsplice.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vmsplice, F_SETPIPE_SZ */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "xfer/vmsplice.h"

int kcoll_vmsplice_make(char *name, size_t namelen, size_t bytes, char *why, size_t whylen)
{
    /* relaxed: only makes names unique between threads; orders nothing */
    static _Atomic unsigned counter;
    snprintf(name, namelen, "/dev/shm/kcoll-pipe-%d-%u-%lx", (int)getpid(),
             atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed),
             (unsigned long)kcoll_now_ns());
    if (mkfifo(name, 0600) != 0) {
        kcoll_fmt(why, whylen, "mkfifo(%s) failed: %s", name, strerror(errno));
        return -1;
    }
    int fd = open(name, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        kcoll_fmt(why, whylen, "opening the pipe %s failed: %s", name, strerror(errno));
        unlink(name);
        return -1;
    }
    /* as large as allowed: a smaller one only means more rounds */
    for (size_t b = bytes; b >= 4096; b /= 2)
        if (fcntl(fd, F_SETPIPE_SZ, (int)(b > (1u << 30) ? 1u << 30 : b)) >= 0)
            break;
    return fd;
}

int kcoll_vmsplice_open(const char *name, char *why, size_t whylen)
{
    int fd = open(name, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        kcoll_fmt(why, whylen, "opening a peer's pipe %s failed: %s", name, strerror(errno));
    return fd;
}

void kcoll_vmsplice_unlink(const char *name)
{
    if (name[0])
        unlink(name);
}

int kcoll_vmsplice_probe_put(int fd, const uint64_t *word, char *why, size_t whylen)
{
    struct iovec v = {(void *)(uintptr_t)word, sizeof *word};
    ssize_t n;
    do {
        n = vmsplice(fd, &v, 1, SPLICE_F_NONBLOCK);
    } while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof *word) {
        kcoll_fmt(why, whylen, "vmsplice into a peer's pipe failed: %s",
                  n < 0 ? strerror(errno) : "a short transfer");
        return -1;
    }
    return 0;
}

int kcoll_vmsplice_probe_get(int fd, uint64_t *word, char *why, size_t whylen)
{
    ssize_t n;
    do {
        n = read(fd, word, sizeof *word);
    } while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof *word) {
        kcoll_fmt(why, whylen, "reading this rank's pipe failed: %s",
                  n < 0 ? strerror(errno) : "a short read");
        return -1;
    }
    return 0;
}
