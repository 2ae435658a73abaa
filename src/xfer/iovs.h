/* Lists of memory pieces, as the engines take them: a growable iovec list
 * and a cursor that walks one (entry, offset), shared by every engine that
 * moves bytes piece by piece (cma's windows, the channel's copies). */
#ifndef KCOLL_XFER_IOVS_H
#define KCOLL_XFER_IOVS_H

#include <stddef.h>
#include <sys/uio.h>

/* A growable iovec list. */
typedef struct {
    struct iovec *v;
    int n, cap;
} kcoll_iovs_t;

/* Append len bytes at p, merged into the last entry where they continue
 * it (nothing for len 0). Returns 0, or -1 when out of memory. */
int kcoll_iovs_push(kcoll_iovs_t *out, char *p, size_t len);
void kcoll_iovs_free(kcoll_iovs_t *l);

/* A position in an iovec list: entry i, byte off inside it. */
typedef struct {
    const struct iovec *v;
    int n;
    int i;
    size_t off;
} kcoll_iovcur_t;

static inline void kcoll_iovcur_init(kcoll_iovcur_t *c, const struct iovec *v, int n)
{
    c->v = v;
    c->n = n;
    c->i = 0;
    c->off = 0;
}
/* Move the cursor on by `bytes`. */
void kcoll_iovcur_advance(kcoll_iovcur_t *c, size_t bytes);
/* Copy up to len bytes between the pieces at the cursor and flat memory
 * (to_flat: from the pieces into flat, else from flat into the pieces),
 * moving the cursor; returns the bytes copied (fewer when the list ends). */
size_t kcoll_iovcur_copy(kcoll_iovcur_t *c, char *flat, size_t len, int to_flat);
/* Copy into out[] the entries from the cursor on, at most max of them and
 * at most limit bytes (the last entry is cut short); empty entries are
 * skipped. The cursor is not moved. Returns the entry count; *bytes
 * receives their total. (A system call's window: it takes at most IOV_MAX
 * entries.) */
int kcoll_iovcur_window(const kcoll_iovcur_t *c, struct iovec *out, int max, size_t limit,
                        size_t *bytes);
/* Total bytes of a list; -1 if it overflows or the list is malformed. */
int kcoll_iovs_total(const struct iovec *v, int n, size_t *total);

#endif
