/* The vmsplice engine's pipes (paper 001 section 3.1; docs/engines.md).
 *
 * A two-sided engine like shm, whose bytes travel through a pipe instead
 * of the bounce cells: the producer vmsplice()s its pages into the pipe
 * (the kernel takes references to them, no copy), the consumer readv()s
 * them out (the one copy). Without SPLICE_F_GIFT the producer's pages
 * must stay as they are until the consumer has read them: the channel's
 * consumer counter says when (xfer/chan.c), and a step ends only then.
 * The channel's protocol (mailboxes, requests, serving) is shared with
 * shm; this file makes the pipes.
 *
 * Each rank of a team owns one pipe, the one its own transfers use in
 * either direction (one transfer at a time per rank). It is a FIFO made in
 * /dev/shm under a unique name, which the peers open by that name (the
 * name travels in the team's segment) and which is unlinked as soon as
 * every rank has opened it, as the segment is: nothing stays behind, and
 * it works where /proc/<pid>/fd is closed to peers. Every fd is opened for
 * reading and writing (so no end ever sees EOF or SIGPIPE when a peer
 * dies) and non-blocking (vmsplice and readv move what fits and return).
 * Its capacity is raised to KCOLL_PIPE_SIZE with F_SETPIPE_SZ (an
 * unprivileged process up to /proc/sys/fs/pipe-max-size). A team holds p
 * fds per process while it lives.
 */
#ifndef KCOLL_XFER_VMSPLICE_H
#define KCOLL_XFER_VMSPLICE_H

#include <stddef.h>
#include <stdint.h>

/* Make this rank's pipe of `bytes` capacity: a FIFO under a unique name
 * (written to name), opened. The fd, or -1 with a reason. */
int kcoll_vmsplice_make(char *name, size_t namelen, size_t bytes, char *why, size_t whylen);
/* Open a peer's pipe by its name: the fd, or -1 with a reason. */
int kcoll_vmsplice_open(const char *name, char *why, size_t whylen);
/* Remove the name (every rank has opened the pipe). */
void kcoll_vmsplice_unlink(const char *name);
/* The probe: splice the 8-byte word into the pipe fd (a peer's), or read
 * one from fd (this rank's own). 0, or -1 with a reason. */
int kcoll_vmsplice_probe_put(int fd, const uint64_t *word, char *why, size_t whylen);
int kcoll_vmsplice_probe_get(int fd, uint64_t *word, char *why, size_t whylen);

#endif
