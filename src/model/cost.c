/* The pricer: all ranks' schedules of one call, walked together in time.
 *
 * Walk-through. Each rank has a clock. Its next step can run once what it
 * depends on is visible: a WAIT the first SIGNAL of the awaited value (a
 * flag's values only grow, so that is also the earliest), a READ or WRITE
 * the peer's EXPOSE of the buffer, an EXTERN the start of every rank that
 * runs it. The step then starts at the later of the rank's clock and that
 * moment, and the clock moves past its duration. Ranks are advanced in
 * turns until all are done (or none can move: a deadlock, which the
 * simulator's tests rule out for every builder).
 *
 * Durations (m: the machine, model/machine.h):
 *   READ / WRITE of n bytes, paper 003 section III:
 *       alpha + n beta' + l gamma(c) ceil(n / s) + step
 *     (beta of a READ; a WRITE has its own, beta_write, which
 *     kcoll-calibrate measures with two ranks exchanging at once)
 *     alpha is paid once per batch of consecutive copies to one peer (the
 *     executor moves up to 64 of them in one system call); c is the
 *     average number of CMA copies locking the same process's pages while
 *     this one runs (itself included), but at most its own number of
 *     pages: Table IV's gamma was fitted to many-page copies, where the
 *     contention is sustained; taken at face value for a one-page copy it
 *     would make 64 readers 80x slower than one on KNL, where paper 003's
 *     Fig. 6 shows 64 readers of small messages moving more bytes per
 *     second than one (and parallel read winning small Scatters, Fig. 7).
 *     A copy that locks n pages queues behind at most as many others'
 *     acquisitions per page as it has pages. gamma blends the intra- and
 *     inter-package curves by the share of those accessors that run on
 *     another package than this copy's process (the lock's cache line
 *     then travels between packages; accessors all on one package, even
 *     a remote one, contend like neighbours); beta' =
 *     max(beta, b / package_bw) with b the average number of copies
 *     moving bytes through the same package's memory at once (paper 003
 *     section III's "bandwidth" view of Fig. 6: past a point more readers
 *     only share the memory); and a copy between two packages moves its
 *     bytes through the links between them, beta'' = max(beta', x /
 *     link_bw) with x the average number of copies crossing at once
 *     (paper 000 section IV: what a hierarchy saves is the traffic over
 *     the links; without link_bw, crossing costs nothing more).
 *     Other engines (c->engine, docs/engines.md): direct, loads and
 *     stores, a COPY's price and no lock; shm, shm_alpha (per batch) +
 *     (n u + max(0, 2 - u) min(n, cell)) shm_beta, u the owner's load:
 *     the average number of copies the owner makes meanwhile, its own
 *     data steps and the streams it serves (itself included: 1 when it is
 *     idle, 2 when it also copies), since the owner makes one of the two
 *     copies; the second term is the pipeline's fill (one cell one side
 *     copies while the other waits), which an owner busy with copies of
 *     its own hides (measured at two ranks: an exchange of n bytes each
 *     way costs about 2 n shm_beta, a transfer from an idle owner n +
 *     min(n, cell));
 *     vmsplice, vms_alpha + n vms_beta u likewise (the owner splices).
 *   COPY of n bytes: copy_alpha + n copy_beta' + step (same sharing).
 *   REDUCE of n bytes: n reduce_beta[class] + u stream_beta + step, with
 *     u the operand bytes (of 2n) that none of the rank's last few data
 *     steps read or wrote: a chunk just read into scratch is in cache,
 *     the rank's own send buffer is not (reduce_beta is the in-cache
 *     rate; kcoll-calibrate measures the stream of an off-cache operand).
 *   EXPOSE, SIGNAL: step, visible to others flag later.
 *   WAIT: step once the awaited signal is visible.
 *   EXTERN: step to start; done once every participant has started, plus
 *     a flag round trip per round of a binary tree over them.
 * Crowded nodes (c->cores < p: more ranks than cores, as on a laptop or
 * an oversubscribed CI runner). A rank that must wait gives its core away
 * (sched/wait.h) and runs again only after the scheduler hands it a core:
 * a WAIT, or a copy waiting for an exposure, that finds its signal not yet
 * there starts handover after it. And every data step (READ, WRITE, COPY,
 * REDUCE) needs one of the cores for its duration: it starts at the
 * earliest moment, not before it could start otherwise, at which a core
 * has that long free (each core's booked intervals are kept). So copies
 * that would run side by side take turns, at most `cores` of them overlap
 * (and contend), and algorithms that need many ranks copying at once, or
 * long chains of waits (trees, rings), cost what they cost when the ranks
 * cannot all run.
 * The call itself adds a fixed cost to its time: call, and call_data more
 * where it moves data (not a Barrier, not 0 bytes). Its steps do not show
 * it: in a call that starts after a barrier, with its buffers and kcoll's
 * state out of cache (as kcoll-bench times, and as the host MPI's measured
 * points were taken), the first touches of each miss the cache.
 * kcoll-calibrate measures it as the time of real calls minus the price of
 * their schedules.
 *
 * Contention and sharing depend on which copies overlap, which depends on
 * the durations: the walk runs first without contention, then again with
 * each copy's c and b taken from the previous walk's intervals, until the
 * predicted time moves by less than 0.5% (at most 6 walks). A copy's c is
 * the integral of the number of copies active on its target over its own
 * interval, divided by its length: a sweep over sorted start and end
 * times gives it for all copies in O(m log m).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/cost.h"
#include "op/op.h"
#include "xfer/engine.h"

#define KCOLL_PRICE_WALKS 10
#define KCOLL_PRICE_BATCH 64 /* copies per system call (xfer/engine.c) */

typedef struct {
    double v;    /* value */
    double t;    /* visible from */
} kcoll_sig_t;

typedef struct {
    kcoll_sig_t *s;
    int n, cap;
} kcoll_siglog_t;

/* One data step of one walk: its interval and what it touches. */
typedef struct {
    double s, e;
    int rank;   /* who runs it */
    int target; /* CMA: the process whose pages it locks; -1 local */
    int src_pkg, dst_pkg;
} kcoll_ival_t;

typedef struct {
    const kcoll_machine_t *m;
    const kcoll_pcall_t *c;
    int p;
    kcoll_sched_t *sch;
    int *first;          /* first[r]: global number of rank r's step 0 */
    int nsteps;
    const int *pkg;
    /* per global step, from the previous walk */
    double *conc, *far, *share, *xshare;
    /* per global step, this walk (-1: not a data step) */
    int *ival_of;
    kcoll_ival_t *iv;
    int niv;
    /* the owner load's room, kept from walk to walk (kcoll_owner_load) */
    void *scratch;
    size_t scratch_len;
    int damp; /* average with the previous walk's values (from the third walk) */
    int crowded; /* fewer cores than ranks (c->cores) */
} kcoll_pricer_t;

static int kcoll_pkg(const kcoll_pricer_t *P, int r)
{
    return P->pkg ? P->pkg[r] : 0;
}

static int kcoll_siglog_push(kcoll_siglog_t *l, double v, double t)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        kcoll_sig_t *s = realloc(l->s, (size_t)cap * sizeof *s);
        if (!s)
            return -1;
        l->s = s;
        l->cap = cap;
    }
    l->s[l->n].v = v;
    l->s[l->n].t = t;
    l->n++;
    return 0;
}

/* Time the first signal >= v became visible, or -1 if none yet. */
static double kcoll_siglog_find(const kcoll_siglog_t *l, double v)
{
    int lo = 0, hi = l->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (l->s[mid].v >= v)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo < l->n ? l->s[lo].t : -1;
}

/* Sweep: for intervals iv[idx[0..n)], the average number of them active
 * during each one (itself included), into avg[k] for idx[k]. `count`
 * selects which intervals add to the level (the others are only
 * measured): NULL: all. */
typedef struct {
    double t;
    int d;
} kcoll_ev_t;

/* An event and the interval it belongs to. */
typedef struct {
    kcoll_ev_t ev;
    int i;
} kcoll_iev_t;

/* An interval's start and end, and its number: a rank's run of them in
 * one place, so that the merge below reads each run in order (reading
 * them through the intervals' numbers, scattered over all the steps,
 * missed the cache at almost every event: a quarter of a 128-rank price). */
typedef struct {
    double s, e;
    int i;
} kcoll_rival_t;

static int kcoll_ev_cmp(const void *a, const void *b)
{
    const kcoll_ev_t *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->d - y->d; /* ends before starts at the same moment */
}

static int kcoll_sweep(const kcoll_ival_t *iv, const int *idx, int n, const char *count,
                       double *avg)
{
    int ne = 0;
    kcoll_ev_t *ev = malloc((size_t)(2 * n + 1) * sizeof *ev);
    double *cum = malloc((size_t)(2 * n + 1) * sizeof *cum);
    int *lev = malloc((size_t)(2 * n + 1) * sizeof *lev);
    if (!ev || !cum || !lev) {
        free(ev);
        free(cum);
        free(lev);
        return -1;
    }
    for (int k = 0; k < n; k++) {
        if (count && !count[k])
            continue;
        ev[ne++] = (kcoll_ev_t){iv[idx[k]].s, +1};
        ev[ne++] = (kcoll_ev_t){iv[idx[k]].e, -1};
    }
    qsort(ev, (size_t)ne, sizeof *ev, kcoll_ev_cmp);
    /* cum[k]: integral of the level up to ev[k].t; lev[k]: level after it */
    int level = 0;
    double acc = 0;
    for (int k = 0; k < ne; k++) {
        if (k)
            acc += level * (ev[k].t - ev[k - 1].t);
        level += ev[k].d;
        cum[k] = acc;
        lev[k] = level;
    }
    for (int k = 0; k < n; k++) {
        double s = iv[idx[k]].s, e = iv[idx[k]].e, F[2];
        double at[2] = {s, e};
        for (int w = 0; w < 2; w++) {
            /* last event at or before at[w] */
            int lo = 0, hi = ne;
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (ev[mid].t <= at[w])
                    lo = mid + 1;
                else
                    hi = mid;
            }
            F[w] = lo ? cum[lo - 1] + lev[lo - 1] * (at[w] - ev[lo - 1].t) : 0;
        }
        avg[k] = e > s ? (F[1] - F[0]) / (e - s) : 1;
    }
    free(ev);
    free(cum);
    free(lev);
    return 0;
}

/* Is event a before event b (kcoll_ev_cmp's order)? */
static int kcoll_ev_before(const kcoll_ev_t *a, const kcoll_ev_t *b)
{
    return a->t < b->t || (a->t == b->t && a->d < b->d);
}

/* Every interval's two events in time order, into all[0, 2 n). A rank's
 * intervals follow each other (the walk appends them as the rank's clock
 * advances, each starting after the one before ends), so its events are
 * in order already: the p ranks' runs are merged through a heap, n log p
 * comparisons instead of a sort's 2 n log 2n. The times never go back;
 * at one moment a step of no length may give its start before its end,
 * against kcoll_ev_cmp, which the sweep does not mind: it reads the
 * level and its integral only after the last event of a moment, and
 * those are the same in any order within it. work: room for 3 (p + 1)
 * ints, head for p + 1 events, rv for n runs' intervals (the owner
 * load's scratch). */
static void kcoll_events_merged(const kcoll_pricer_t *P, kcoll_iev_t *all, int *work,
                                kcoll_ev_t *head, kcoll_rival_t *rv)
{
    const int n = P->niv, p = P->p;
    int *first = work, *pos = first + p + 1, *heap = pos + p + 1;
    memset(first, 0, 2 * ((size_t)p + 1) * sizeof *first); /* first and pos */
    for (int i = 0; i < n; i++)
        first[P->iv[i].rank + 1]++;
    for (int r = 0; r < p; r++)
        first[r + 1] += first[r];
    for (int r = 0; r < p; r++)
        pos[r] = first[r];
    for (int i = 0; i < n; i++) {
        const kcoll_ival_t *v = &P->iv[i];
        rv[pos[v->rank]++] = (kcoll_rival_t){v->s, v->e, i};
    }
    /* pos[r]: rank r's next event, 2 per interval (start, end) from 0 */
    int hn = 0;
    for (int r = 0; r < p; r++) {
        pos[r] = 0;
        if (first[r + 1] > first[r]) {
            head[r] = (kcoll_ev_t){rv[first[r]].s, +1};
            /* sift the new rank up */
            int c = hn++;
            while (c > 0 && kcoll_ev_before(&head[r], &head[heap[(c - 1) / 2]])) {
                heap[c] = heap[(c - 1) / 2];
                c = (c - 1) / 2;
            }
            heap[c] = r;
        }
    }
    for (int k = 0; hn > 0; k++) {
        const int r = heap[0];
        all[k] = (kcoll_iev_t){head[r], rv[first[r] + pos[r] / 2].i};
        if (++pos[r] < 2 * (first[r + 1] - first[r])) {
            const kcoll_rival_t *v = &rv[first[r] + pos[r] / 2];
            head[r] = pos[r] % 2 ? (kcoll_ev_t){v->e, -1} : (kcoll_ev_t){v->s, +1};
        } else {
            heap[0] = heap[--hn];
            if (!hn)
                break;
        }
        /* sift heap[0] down */
        const int x = heap[0];
        int c = 0;
        for (;;) {
            int l = 2 * c + 1, m = c;
            const kcoll_ev_t *best = &head[x];
            if (l < hn && kcoll_ev_before(&head[heap[l]], best)) {
                m = l;
                best = &head[heap[l]];
            }
            if (l + 1 < hn && kcoll_ev_before(&head[heap[l + 1]], best))
                m = l + 1;
            if (m == c)
                break;
            heap[c] = heap[m];
            c = m;
        }
        heap[c] = x;
    }
}

/* The load on each process over each copy that targets it, into conc,
 * for every process at once: with `own`, a two-sided engine's owner load
 * (its own data steps and the streams it serves: the intervals run by or
 * targeting it), else the CMA copies that lock its pages (those targeting
 * it).
 * The events of all intervals come in time order once
 * (kcoll_events_merged) and are dealt, in that order, to the owners their
 * interval touches, so each owner's come sorted without a sort of its
 * own; and since the times asked are the intervals' own ends, the
 * integral at each is read off the owner's pass where the sweep would
 * search for it (a sweep per owner over all the intervals cost p scans, p
 * sorts and 2 searches per interval: 70% of a price on shm at 64 ranks).
 * 0, or -1 when out of memory. */
static int kcoll_owner_load(kcoll_pricer_t *P, double *conc, int own)
{
    const int n = P->niv, p = P->p;
    /* one block for the arrays that grow with the steps, kept for the
     * next walk (the same steps): fresh pages every walk cost a fifth of
     * the time */
    const size_t nall = (size_t)(2 * n + 1), nev = (size_t)(4 * n + 1), np1 = (size_t)p + 1;
    /* ints: lev, at, fill, and the merge's (kcoll_events_merged) */
    const size_t nint = nev + 2 * np1 + 3 * np1;
    const size_t need = (nev + nall) * sizeof(double) + (nall + nev) * sizeof(kcoll_iev_t) +
                        ((size_t)n + 1) * sizeof(kcoll_rival_t) + np1 * sizeof(kcoll_ev_t) +
                        nint * sizeof(int);
    if (P->scratch_len < need) {
        free(P->scratch);
        P->scratch_len = 0;
        if (!(P->scratch = malloc(need)))
            return -1;
        P->scratch_len = need;
    }
    double *cum = P->scratch, *F = cum + nev; /* F[2 i]: at i's start, [2 i + 1]: end */
    kcoll_iev_t *all = (kcoll_iev_t *)(void *)(F + nall), *ev = all + nall;
    kcoll_rival_t *rv = (kcoll_rival_t *)(void *)(ev + nev);
    kcoll_ev_t *head = (kcoll_ev_t *)(void *)(rv + n + 1);
    int *lev = (int *)(void *)(head + np1), *at = lev + nev, *fill = at + np1, *work = fill + np1;
    memset(at, 0, np1 * sizeof *at);
    /* each owner's room: two events per interval it touches */
    for (int i = 0; i < n; i++) {
        const kcoll_ival_t *v = &P->iv[i];
        if (own)
            at[v->rank + 1] += 2;
        if (v->target >= 0 && (!own || v->target != v->rank))
            at[v->target + 1] += 2;
    }
    for (int o = 0; o < p; o++)
        at[o + 1] += at[o];
    kcoll_events_merged(P, all, work, head, rv);
    for (int o = 0; o < p; o++)
        fill[o] = at[o];
    for (int k = 0; k < 2 * n; k++) {
        const kcoll_ival_t *v = &P->iv[all[k].i];
        if (own)
            ev[fill[v->rank]++] = all[k];
        if (v->target >= 0 && (!own || v->target != v->rank))
            ev[fill[v->target]++] = all[k];
    }
    for (int o = 0; o < p; o++) {
        const int a = at[o], b = at[o + 1];
        /* cum[k]: integral of the level up to ev[k].t; lev[k]: after it */
        int level = 0;
        double acc = 0;
        for (int k = a; k < b; k++) {
            if (k > a)
                acc += level * (ev[k].ev.t - ev[k - 1].ev.t);
            level += ev[k].ev.d;
            cum[k] = acc;
            lev[k] = level;
        }
        /* the integral up to an event's moment: cum at the moment's last
         * event (what the sweep's search finds), for the streams o serves */
        double moment = 0;
        for (int k = b - 1; k >= a; k--) {
            if (k == b - 1 || ev[k].ev.t != ev[k + 1].ev.t)
                moment = cum[k];
            const int i = ev[k].i;
            if (P->iv[i].target == o)
                F[2 * i + (ev[k].ev.d < 0)] = moment;
        }
    }
    for (int i = 0; i < n; i++) {
        const kcoll_ival_t *v = &P->iv[i];
        if (v->target >= 0)
            conc[i] = v->e > v->s ? (F[2 * i + 1] - F[2 * i]) / (v->e - v->s) : 1;
    }
    return 0;
}

static int kcoll_ival_by_target(const void *a, const void *b, void *ctx)
{
    const kcoll_ival_t *iv = ctx;
    int x = *(const int *)a, y = *(const int *)b;
    if (iv[x].target != iv[y].target)
        return iv[x].target - iv[y].target;
    return x - y;
}

/* The intervals that touch key: moving bytes of package key (bandwidth). */
static int kcoll_ival_of_package(const kcoll_ival_t *v, int key)
{
    return v->src_pkg == key || v->dst_pkg == key;
}

/* The intervals for which in(iv, key) holds, into idx, and the average
 * number of them active over each (avg[j] for idx[j]). Their count, or -1
 * when out of memory. */
static int kcoll_sweep_those(const kcoll_pricer_t *P, int (*in)(const kcoll_ival_t *, int), int key,
                             int *idx, double *avg)
{
    int k = 0;
    for (int i = 0; i < P->niv; i++)
        if (in(&P->iv[i], key))
            idx[k++] = i;
    return k && kcoll_sweep(P->iv, idx, k, NULL, avg) ? -1 : k;
}

/* From one walk's intervals: each CMA step's contention and far share,
 * each data step's bandwidth sharers, for the next walk. */
static int kcoll_contention(kcoll_pricer_t *P)
{
    const int n = P->niv;
    int *idx = malloc((size_t)(n + 1) * sizeof *idx);
    double *avg = malloc((size_t)(n + 1) * sizeof *avg);
    double *favg = malloc((size_t)(n + 1) * sizeof *favg);
    char *cnt = malloc((size_t)(n + 1));
    int rc = -1;
    if (!idx || !avg || !favg || !cnt)
        goto out;
    double *conc = malloc((size_t)n * sizeof *conc + 1), *far = malloc((size_t)n * sizeof *far + 1),
           *share = malloc((size_t)n * sizeof *share + 1),
           *xshare = malloc((size_t)n * sizeof *xshare + 1);
    if (!conc || !far || !share || !xshare) {
        free(conc);
        free(far);
        free(share);
        free(xshare);
        goto out;
    }
    for (int i = 0; i < n; i++) {
        conc[i] = 1;
        far[i] = 0;
        share[i] = 1;
        xshare[i] = 1;
    }
    /* two-sided engines: each owner's load; CMA: each process's copies
     * (kcoll_owner_load) */
    const int two = P->c->engine == KCOLL_ENGINE_SHM || P->c->engine == KCOLL_ENGINE_VMSPLICE;
    if (kcoll_owner_load(P, conc, two))
        goto fail;
    /* CMA copies, grouped by the process whose pages they lock: how far
     * their accessors are (none where every rank is on one package: far
     * stays 0, and the grouping is skipped) */
    int m = 0, packages = 0;
    for (int r = 1; r < P->p && !packages; r++)
        packages = kcoll_pkg(P, r) != kcoll_pkg(P, 0);
    for (int i = 0; i < n && !two && packages; i++)
        if (P->iv[i].target >= 0)
            idx[m++] = i;
    qsort_r(idx, (size_t)m, sizeof *idx, kcoll_ival_by_target, P->iv);
    for (int a = 0; a < m;) {
        int b = a;
        while (b < m && P->iv[idx[b]].target == P->iv[idx[a]].target)
            b++;
        for (int k = a; k < b; k++)
            far[idx[k]] = 0;
        /* for the accessors on each package g: how many of the others run
         * on other packages (the lock's cache line crosses the link) */
        for (int k0 = a; k0 < b; k0++) {
            const int g = kcoll_pkg(P, P->iv[idx[k0]].rank);
            int first = 1, nfar = 0;
            for (int k = a; k < k0 && first; k++)
                first = kcoll_pkg(P, P->iv[idx[k]].rank) != g;
            if (!first)
                continue; /* package g done already */
            for (int k = a; k < b; k++) {
                cnt[k - a] = kcoll_pkg(P, P->iv[idx[k]].rank) != g;
                nfar += cnt[k - a];
            }
            if (!nfar)
                continue;
            if (kcoll_sweep(P->iv, idx + a, b - a, cnt, favg))
                goto fail;
            for (int k = a; k < b; k++)
                if (!cnt[k - a])
                    far[idx[k]] = favg[k - a];
        }
        a = b;
    }
    /* every data step, grouped by each package whose memory it moves */
    if (P->m->package_bw > 0) {
        int maxpkg = 0;
        for (int i = 0; i < n; i++) {
            if (P->iv[i].src_pkg > maxpkg)
                maxpkg = P->iv[i].src_pkg;
            if (P->iv[i].dst_pkg > maxpkg)
                maxpkg = P->iv[i].dst_pkg;
        }
        for (int g = 0; g <= maxpkg; g++) {
            int k = kcoll_sweep_those(P, kcoll_ival_of_package, g, idx, avg);
            if (k < 0)
                goto fail;
            for (int j = 0; j < k; j++)
                if (avg[j] > share[idx[j]])
                    share[idx[j]] = avg[j];
        }
    }
    /* the copies between packages, all through the links between them */
    if (P->m->link_bw > 0) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (P->iv[i].src_pkg != P->iv[i].dst_pkg)
                idx[k++] = i;
        if (k && kcoll_sweep(P->iv, idx, k, NULL, avg))
            goto fail;
        for (int j = 0; j < k; j++)
            xshare[idx[j]] = avg[j];
    }
    /* hand them to the steps */
    for (int g = 0; g < P->nsteps; g++) {
        int i = P->ival_of[g];
        double c = i >= 0 ? conc[i] : 1, f = i >= 0 ? far[i] : 0, b = i >= 0 ? share[i] : 1;
        double x = i >= 0 ? xshare[i] : 1;
        if (P->damp) { /* halfway from the last walk's values: the walks settle */
            c = 0.5 * (c + P->conc[g]);
            f = 0.5 * (f + P->far[g]);
            b = 0.5 * (b + P->share[g]);
            x = 0.5 * (x + P->xshare[g]);
        }
        P->conc[g] = c;
        P->far[g] = f;
        P->share[g] = b;
        P->xshare[g] = x;
    }
    rc = 0;
fail:
    free(conc);
    free(far);
    free(share);
    free(xshare);
out:
    free(idx);
    free(avg);
    free(favg);
    free(cnt);
    return rc;
}

/* gamma for a copy with average contention c of which `far` accessors run
 * on another package than this copy's own process: the page-table lock
 * then bounces between packages (paper 003 Fig. 5b). */
static double kcoll_gamma_mix(const kcoll_machine_t *m, double c, double far)
{
    double gi = kcoll_gamma(&m->gamma_intra, c);
    if (far <= 0 || c <= 0)
        return gi;
    double gx = kcoll_gamma(&m->gamma_inter, c), f = far / c;
    return gi + (gx > gi ? gx - gi : 0) * (f > 1 ? 1 : f);
}

static int kcoll_ceil_log2(int n)
{
    int r = 0;
    while ((1 << r) < n)
        r++;
    return r;
}

/* What a rank's last data steps left in its cache: the local ranges
 * they read or wrote (a length of 0: nothing). A chunk is a few hundred
 * KiB at most, so the last few steps' ranges are still in L2 or the LLC
 * when the next step touches them; anything else (a send buffer of a
 * fresh call) streams from memory. */
#define KCOLL_HOT_STEPS 8
typedef struct {
    struct {
        int buf;
        size_t off, len;
    } r[KCOLL_HOT_STEPS];
    int next;
} kcoll_hot_t;

static void kcoll_hot_touch(kcoll_hot_t *h, int buf, size_t off, size_t len)
{
    h->r[h->next].buf = buf;
    h->r[h->next].off = off;
    h->r[h->next].len = len;
    h->next = (h->next + 1) % KCOLL_HOT_STEPS;
}

/* Bytes of buf[off, off + len) that no recent range holds (the largest
 * overlap with one range counts as held). */
static size_t kcoll_hot_miss(const kcoll_hot_t *h, int buf, size_t off, size_t len)
{
    size_t held = 0;
    for (int i = 0; i < KCOLL_HOT_STEPS; i++) {
        if (h->r[i].buf != buf || !h->r[i].len)
            continue;
        size_t lo = off > h->r[i].off ? off : h->r[i].off;
        size_t e1 = off + len, e2 = h->r[i].off + h->r[i].len, hi = e1 < e2 ? e1 : e2;
        if (hi > lo && hi - lo > held)
            held = hi - lo;
    }
    return len - held;
}

/* The cores of a crowded node: each one's booked intervals, by start. */
typedef struct {
    double *s, *e;
    int n, cap;
} kcoll_core_t;

/* Books the earliest interval of length dur starting at or after t on
 * any of the nc cores; returns its start, or -1 out of memory. */
static double kcoll_core_book(kcoll_core_t *cores, int nc, double t, double dur)
{
    int best = 0, at_best = 0;
    double best_t = -1;
    for (int c = 0; c < nc; c++) {
        const kcoll_core_t *k = &cores[c];
        double s = t;
        /* a core's intervals never overlap and are kept by start, so their
         * ends rise too: those that end by t are a prefix, found by
         * bisection (a scan from the first made a walk of S data steps
         * cost S^2 / nc: 88% of a crowded price at 16 MiB) */
        int i = 0, hi = k->n;
        while (i < hi) {
            const int mid = i + (hi - i) / 2;
            if (k->e[mid] <= s)
                i = mid + 1;
            else
                hi = mid;
        }
        for (; i < k->n; i++) { /* the first gap from s that holds dur */
            if (k->e[i] <= s)
                continue;
            if (k->s[i] >= s + dur)
                break;
            s = k->e[i];
        }
        if (best_t < 0 || s < best_t) {
            best_t = s;
            best = c;
            at_best = i;
        }
    }
    kcoll_core_t *k = &cores[best];
    if (k->n == k->cap) {
        int cap = k->cap ? 2 * k->cap : 16;
        double *s = realloc(k->s, (size_t)cap * sizeof *s), *e;
        if (!s)
            return -1;
        k->s = s;
        if (!(e = realloc(k->e, (size_t)cap * sizeof *e)))
            return -1;
        k->e = e;
        k->cap = cap;
    }
    memmove(k->s + at_best + 1, k->s + at_best, (size_t)(k->n - at_best) * sizeof *k->s);
    memmove(k->e + at_best + 1, k->e + at_best, (size_t)(k->n - at_best) * sizeof *k->e);
    k->s[at_best] = best_t;
    k->e[at_best] = best_t + dur;
    k->n++;
    return best_t;
}

/* One walk. Returns 0 (out filled), 1 on a deadlock, -1 out of memory. */
static int kcoll_walk(kcoll_pricer_t *P, kcoll_price_t *out)
{
    const kcoll_machine_t *m = P->m;
    const int p = P->p;
    int rc = -1, nxop = 0;
    for (int r = 0; r < p; r++)
        for (int i = 0; i < P->sch[r].n; i++)
            if (P->sch[r].steps[i].kind == KCOLL_STEP_EXTERN &&
                (int)P->sch[r].steps[i].value >= nxop)
                nxop = (int)P->sch[r].steps[i].value + 1;
    int *idx = calloc((size_t)p, sizeof *idx), *batch = calloc((size_t)p, sizeof *batch);
    double *clk = calloc((size_t)p, sizeof *clk), *busy = calloc((size_t)p, sizeof *busy);
    double *exposed = malloc((size_t)p * KCOLL_NBUF * sizeof *exposed);
    kcoll_siglog_t *sig = calloc((size_t)p * KCOLL_NFLAG, sizeof *sig);
    kcoll_price_t *term = calloc((size_t)p, sizeof *term);
    int *xparts = calloc((size_t)nxop + 1, sizeof *xparts), *xstarted = calloc((size_t)nxop + 1, sizeof *xstarted);
    double *xmax = calloc((size_t)nxop + 1, sizeof *xmax);
    kcoll_hot_t *hot = calloc((size_t)p, sizeof *hot);
    const int ncores = P->crowded ? P->c->cores : 0;
    kcoll_core_t *cores = ncores ? calloc((size_t)ncores, sizeof *cores) : NULL;
    if (!idx || !batch || !clk || !busy || !exposed || !sig || !term || !xparts || !xstarted ||
        !xmax || !hot || (ncores && !cores))
        goto out;
    for (int i = 0; i < p * KCOLL_NBUF; i++)
        exposed[i] = -1;
    for (int r = 0; r < p; r++) {
        int seen[64] = {0};
        for (int i = 0; i < P->sch[r].n; i++) {
            const kcoll_step_t *st = &P->sch[r].steps[i];
            if (st->kind == KCOLL_STEP_EXTERN && st->value < 64 && !seen[st->value]) {
                seen[st->value] = 1;
                xparts[st->value]++;
            }
        }
    }
    P->niv = 0;
    int left = p, moved = 1;
    for (int r = 0; r < p; r++)
        if (!P->sch[r].n)
            left--;
    while (left && moved) {
        moved = 0;
        for (int r = 0; r < p; r++) {
            kcoll_sched_t *s = &P->sch[r];
            while (idx[r] < s->n) {
                const kcoll_step_t *st = &s->steps[idx[r]];
                const int g = P->first[r] + idx[r];
                double start = clk[r], dur = m->step, vis = -1;
                kcoll_price_t *T = &term[r];
                if (st->kind == KCOLL_STEP_WAIT) {
                    vis = kcoll_siglog_find(&sig[st->peer * KCOLL_NFLAG + st->flag], st->value);
                    if (vis < 0)
                        break;
                } else if (st->kind == KCOLL_STEP_READ || st->kind == KCOLL_STEP_WRITE) {
                    vis = exposed[st->peer * KCOLL_NBUF + st->pbuf];
                    if (vis < 0)
                        break;
                } else if (st->kind == KCOLL_STEP_EXTERN) {
                    int x = (int)st->value;
                    if (P->ival_of[g] == -2) { /* started: wait for the others */
                        if (xstarted[x] < xparts[x])
                            break;
                        vis = xmax[x] + 2 * m->flag * kcoll_ceil_log2(xparts[x]);
                    } else {
                        P->ival_of[g] = -2;
                        xstarted[x]++;
                        if (clk[r] > xmax[x])
                            xmax[x] = clk[r];
                        continue;
                    }
                }
                if (vis > start) {
                    /* crowded: the waiter gave its core away and needs it back */
                    if (P->crowded)
                        vis += m->handover;
                    T->wait += vis - start;
                    start = vis;
                }
                int ivi = -1;
                switch (st->kind) {
                case KCOLL_STEP_READ:
                case KCOLL_STEP_WRITE: {
                    const kcoll_step_t *pv = idx[r] ? &s->steps[idx[r] - 1] : NULL;
                    int batched = pv && pv->kind == st->kind && pv->peer == st->peer &&
                                  batch[r] < KCOLL_PRICE_BATCH;
                    batch[r] = batched ? batch[r] + 1 : 1;
                    /* a write moves its bytes for beta_write / beta of a
                     * read's time, with the package's memory shared too
                     * (kcoll-calibrate measures it with two ranks copying) */
                    const double wr = st->kind == KCOLL_STEP_WRITE ? m->beta_write / m->beta : 1;
                    const int src = st->kind == KCOLL_STEP_READ ? st->peer : r;
                    const int dst = st->kind == KCOLL_STEP_READ ? r : st->peer;
                    double beta = m->beta * wr;
                    if (m->package_bw > 0 && P->share[g] / m->package_bw * wr > beta)
                        beta = P->share[g] / m->package_bw * wr;
                    if (m->link_bw > 0 && kcoll_pkg(P, src) != kcoll_pkg(P, dst) &&
                        P->xshare[g] / m->link_bw * wr > beta)
                        beta = P->xshare[g] / m->link_bw * wr;
                    double pages = ceil((double)st->len / m->page);
                    double a = batched ? 0 : m->alpha;
                    /* a copy of few pages cannot meet more contention than it
                     * has lock acquisitions (see the walk-through) */
                    double c = P->conc[g] < pages ? P->conc[g] : pages;
                    /* crowded: no more copies run at once than there are cores */
                    if (P->crowded && c > P->c->cores)
                        c = P->c->cores;
                    double far = P->far[g] < c ? P->far[g] : c;
                    double lk = m->l * kcoll_gamma_mix(m, c, far) * pages;
                    const double n = (double)st->len, u = P->conc[g] > 1 ? P->conc[g] : 1;
                    int target = st->peer;
                    switch (P->c->engine) {
                    case KCOLL_ENGINE_DIRECT: /* loads and stores */
                        a = m->copy_alpha;
                        beta = m->copy_beta * wr;
                        lk = 0;
                        target = -1;
                        break;
                    case KCOLL_ENGINE_SHM: { /* the owner copies in, this rank out */
                        /* the pipeline's fill, one cell copied while the
                         * other side waits, shows only where the owner has
                         * little else to do: under a load of 2 (an
                         * exchange) each side's serving fills its gaps */
                        const double fill = u < 2 ? 2 - u : 0;
                        a = batched ? 0 : m->shm_alpha;
                        beta = m->shm_beta * (u + fill * (n < m->shm_cell ? n : m->shm_cell) / n);
                        lk = 0;
                        break;
                    }
                    case KCOLL_ENGINE_VMSPLICE: /* the owner splices, this rank copies */
                        a = batched ? 0 : m->vms_alpha;
                        beta = m->vms_beta * u;
                        lk = 0;
                        break;
                    default:
                        break;
                    }
                    T->alpha += a;
                    T->bytes += n * beta;
                    T->lock += lk;
                    dur += a + n * beta + lk;
                    if (P->conc[g] > out->cmax)
                        out->cmax = P->conc[g];
                    ivi = P->niv++;
                    P->iv[ivi] = (kcoll_ival_t){0, 0, r, target, kcoll_pkg(P, src),
                                                kcoll_pkg(P, dst)};
                    kcoll_hot_touch(&hot[r], st->lbuf, st->loff, st->len);
                    break;
                }
                case KCOLL_STEP_COPY: {
                    double beta = m->copy_beta;
                    if (m->package_bw > 0 && P->share[g] / m->package_bw > beta)
                        beta = P->share[g] / m->package_bw;
                    double c = m->copy_alpha + (double)st->len * beta;
                    T->copy += c;
                    dur += c;
                    ivi = P->niv++;
                    P->iv[ivi] = (kcoll_ival_t){0, 0, r, -1, kcoll_pkg(P, r), kcoll_pkg(P, r)};
                    kcoll_hot_touch(&hot[r], st->sbuf, st->soff, st->len);
                    kcoll_hot_touch(&hot[r], st->dbuf, st->doff, st->len);
                    break;
                }
                case KCOLL_STEP_REDUCE: {
                    /* in-cache rate, plus the stream of every operand byte
                     * the rank's recent steps did not bring into cache */
                    size_t miss = kcoll_hot_miss(&hot[r], st->sbuf, st->soff, st->len) +
                                  kcoll_hot_miss(&hot[r], st->dbuf, st->doff, st->len);
                    double c = (double)st->len * m->reduce_beta[P->c->rclass] +
                               (double)miss * m->stream_beta;
                    kcoll_hot_touch(&hot[r], st->sbuf, st->soff, st->len);
                    kcoll_hot_touch(&hot[r], st->dbuf, st->doff, st->len);
                    T->reduce += c;
                    dur += c;
                    ivi = P->niv++;
                    P->iv[ivi] = (kcoll_ival_t){0, 0, r, -1, kcoll_pkg(P, r), kcoll_pkg(P, r)};
                    break;
                }
                default:
                    break;
                }
                if (st->kind != KCOLL_STEP_READ && st->kind != KCOLL_STEP_WRITE)
                    batch[r] = 0;
                if (ncores && ivi >= 0) { /* crowded: a data step needs a core */
                    double at = kcoll_core_book(cores, ncores, start, dur);
                    if (at < 0)
                        goto out;
                    T->wait += at - start;
                    start = at;
                }
                T->sync += m->step;
                clk[r] = start + dur;
                if (ivi >= 0) {
                    P->iv[ivi].s = start;
                    P->iv[ivi].e = clk[r];
                }
                P->ival_of[g] = ivi;
                if (st->kind != KCOLL_STEP_WAIT && st->kind != KCOLL_STEP_EXTERN)
                    busy[r] = clk[r];
                if (st->kind == KCOLL_STEP_SIGNAL &&
                    kcoll_siglog_push(&sig[r * KCOLL_NFLAG + st->flag], st->value,
                                      clk[r] + m->flag))
                    goto out;
                if (st->kind == KCOLL_STEP_EXPOSE)
                    exposed[r * KCOLL_NBUF + st->lbuf] = clk[r] + m->flag;
                idx[r]++;
                moved = 1;
                if (idx[r] == s->n)
                    left--;
            }
        }
    }
    if (left) {
        rc = 1;
        goto out;
    }
    /* the time: the last rank's end; the terms: of the rank whose own work
     * ends last (a root that only waits for the others' "done" ends after
     * them, but they explain the time) */
    int crit = 0;
    double end = 0;
    for (int r = 0; r < p; r++) {
        if (clk[r] > end)
            end = clk[r];
        if (busy[r] > busy[crit] || (busy[r] == busy[crit] && term[r].wait < term[crit].wait))
            crit = r;
    }
    double cmax = out->cmax;
    *out = term[crit];
    out->t = end;
    out->crit = crit;
    out->cmax = cmax;
    rc = 0;
out:
    for (int i = 0; sig && i < p * KCOLL_NFLAG; i++)
        free(sig[i].s);
    free(sig);
    free(idx);
    free(batch);
    free(clk);
    free(busy);
    free(exposed);
    free(term);
    free(xparts);
    free(xstarted);
    free(xmax);
    free(hot);
    for (int c = 0; cores && c < ncores; c++) {
        free(cores[c].s);
        free(cores[c].e);
    }
    free(cores);
    return rc;
}

int kcoll_price(const kcoll_machine_t *m, const kcoll_algo_t *a, const kcoll_aparam_t *prm,
                const kcoll_pcall_t *c, kcoll_price_t *out)
{
    const int p = c->p;
    kcoll_pricer_t P = {.m = m, .c = c, .p = p, .crowded = c->cores > 0 && c->cores < p};
    kcoll_op_t op = {.kind = KCOLL_OP_SUM, .type = KCOLL_T_DOUBLE, .esize = 8};
    if (c->rclass == KCOLL_RCLASS_USER)
        op.kind = KCOLL_OP_USER;
    size_t esize = c->esize ? c->esize : 8;
    op.esize = esize;
    int rc = -1;
    memset(out, 0, sizeof *out);
    P.sch = calloc((size_t)p, sizeof *P.sch);
    P.first = calloc((size_t)p + 1, sizeof *P.first);
    if (!P.sch || !P.first)
        goto out;
    /* the memory domains: given, or the outermost level's groups */
    P.pkg = c->pkg;
    if (!P.pkg && c->lv && c->lv->n > 0)
        P.pkg = c->lv->group[c->lv->n - 1];
    kcoll_coll_t coll = c->coll;
    if (kcoll_coll_is_v(coll))
        coll = kcoll_coll_family(coll);
    if (coll == KCOLL_COLL_REDUCE_SCATTER)
        coll = KCOLL_COLL_REDUCE_SCATTER_BLOCK;
    for (int r = 0; r < p; r++) {
        kcoll_sched_init(&P.sch[r]);
        kcoll_args_t args = {.coll = coll, .p = p, .rank = r, .root = c->root, .bytes = c->bytes,
                             .prm = *prm, .count = c->bytes / esize, .esize = esize, .op = &op,
                             .lv = c->lv};
        if (a->build(&args, &P.sch[r]))
            goto out;
        P.first[r + 1] = P.first[r] + P.sch[r].n;
    }
    P.nsteps = P.first[p];
    size_t ns = (size_t)P.nsteps + 1;
    P.conc = malloc(ns * sizeof *P.conc);
    P.far = malloc(ns * sizeof *P.far);
    P.share = malloc(ns * sizeof *P.share);
    P.xshare = malloc(ns * sizeof *P.xshare);
    P.ival_of = malloc(ns * sizeof *P.ival_of);
    P.iv = malloc(ns * sizeof *P.iv);
    if (!P.conc || !P.far || !P.share || !P.xshare || !P.ival_of || !P.iv)
        goto out;
    for (int g = 0; g < P.nsteps; g++) {
        P.conc[g] = 1;
        P.far[g] = 0;
        P.share[g] = 1;
        P.xshare[g] = 1;
    }
    double last = -1;
    for (int w = 0; w < KCOLL_PRICE_WALKS; w++) {
        kcoll_price_t pr = {0};
        for (int g = 0; g < P.nsteps; g++)
            P.ival_of[g] = -1;
        if (kcoll_walk(&P, &pr))
            goto out;
        pr.steps = P.nsteps;
        *out = pr;
        if (last >= 0 && fabs(pr.t - last) <= 0.005 * last)
            break;
        last = pr.t;
        P.damp = w > 0;
        if (kcoll_contention(&P))
            goto out;
    }
    out->call = m->call + (coll != KCOLL_COLL_BARRIER && c->bytes > 0 ? m->call_data : 0);
    out->t += out->call;
    rc = 0;
out:
    for (int r = 0; P.sch && r < p; r++)
        kcoll_sched_free(&P.sch[r]);
    free(P.sch);
    free(P.first);
    free(P.conc);
    free(P.far);
    free(P.share);
    free(P.xshare);
    free(P.ival_of);
    free(P.iv);
    free(P.scratch);
    return rc;
}

/* -- the host MPI -- */

/* The shape the host's formulas see: N nodes of p ranks in all, the
 * fullest and the emptiest node's ranks, the root's node's (node 0); W,
 * bytes per second the node's memory gives all copies at once (0: no
 * limit); flows, how many flows share each node's link to the network. */
typedef struct {
    int N, p, qmax, qmin, q0;
    double W, flows;
    double k; /* the host's own terms (on-node messages, reducing, copying) times k */
} kcoll_hshape_t;

/* Seconds per byte of a two-copy message inside a node while c messages
 * of the node move at once: each message's bytes go through the node's
 * memory twice (copied in, copied out), so c of them share W as 2 c
 * copies; never below one message's measured rate (host_beta times the
 * measured scale: what the host's software adds is not memory traffic
 * the limit would count again). */
static double kcoll_host_onnode_beta(const kcoll_machine_t *m, const kcoll_hshape_t *s, double c)
{
    const double shared = s->W > 0 ? 2 * c / s->W : 0, alone = s->k * m->host_beta;
    return shared > alone ? shared : alone;
}

/* The rounds of a binomial tree inside a node of q ranks, each at its own
 * sharing: with distance d (q/2 ... 1, largest first) the ranks at
 * multiples of 2d that have a partner d away send at once, ceil((q - d) /
 * (2d)) messages. Returns the sum over the rounds of a + bytes * (the
 * round's per-byte cost + extra). */
static double kcoll_host_tree_inside(const kcoll_machine_t *m, const kcoll_hshape_t *s, double a,
                                     double bytes, double extra)
{
    double t = 0;
    for (int d = (1 << kcoll_ceil_log2(s->qmax)) / 2; d >= 1; d /= 2) {
        const double c = ceil((double)(s->qmax - d) / (2.0 * d));
        t += a + bytes * (kcoll_host_onnode_beta(m, s, c) + extra);
    }
    return t;
}

/* The textbook cost of the algorithm MPI libraries use for the
 * collective (Thakur, Rabenseifner and Gropp's formulas, with the host's
 * latency and two-copy per-byte cost; reductions add the reduction rate
 * g): binomial trees below the large-message switch, the bandwidth-
 * optimal two-phase algorithms above it. Over N nodes placed in blocks,
 * two kinds of messages: inside a node at host_alpha and host_beta,
 * between nodes at net_alpha and net_beta. A tree has ceil(log2 N) rounds
 * between nodes (distance >= a node) and ceil(log2 q) inside them, q the
 * fullest node's ranks; a ring runs at the pace of its slowest kind of
 * link; a pairwise exchange moves p - q blocks between nodes and q - 1
 * inside (the rank of the node that waits longest: the emptiest node
 * sends more over the network, the fullest more inside), the q ranks of
 * a node sending between nodes at once, each at 1/q of the node's link
 * (most of its steps pair every rank with one on another node); a linear root,
 * p - q0 and q0 - 1, q0 the root's node's ranks. One node (N = 1) is the
 * host on one node; N nodes of one rank, the host between nodes'
 * leaders.
 * Sharing (s->W > 0, kcoll_host_formula_nodes): the on-node messages
 * that run at once share the node's memory (kcoll_host_onnode_beta).
 * Where every rank moves data at once (rings, pairwise exchanges, the
 * recursive halving and doubling of the two-phase algorithms) a node has
 * q messages going: q - 1 on the node and, for a ring across nodes, the
 * one arriving from the network and the one leaving it, which the node's
 * memory also carries (one copy each, counted together as one more
 * message). A tree's rounds inside a node have 1, 2, 4... messages at
 * once (kcoll_host_tree_inside); the scatter half of the broadcast's
 * scatter-allgather moves its largest pieces while few messages run and
 * is priced unshared; a linear root has one message going. s->flows
 * multiplies the network's per-byte cost (flows sharing the link); s->k
 * the host's own terms, on-node latency and per-byte cost, reducing and
 * copying (kcoll_host_measured_scale), never the network's. */
static double kcoll_host_core(const kcoll_machine_t *m, kcoll_coll_t coll, const kcoll_hshape_t *s,
                              double n, kcoll_rclass_t rc)
{
    const int p = s->p, N = s->N, q = s->qmax;
    if (p <= 1)
        return 0;
    const double aN = m->net_alpha, bN = m->net_beta * s->flows, aL = s->k * m->host_alpha;
    const double g = s->k * m->reduce_beta[rc], cp = s->k * m->copy_beta;
    const double lgN = kcoll_ceil_log2(N), lgq = kcoll_ceil_log2(q);
    const double f = (double)(p - 1) / p, lat = lgN * aN + lgq * aL;
    /* per byte inside a node: alone (one message at a time), and while
     * every rank of the node moves data */
    const double bL = kcoll_host_onnode_beta(m, s, 1), bLq = kcoll_host_onnode_beta(m, s, q);
    /* a ring's pace: its slowest kind of link */
    const double bN1 = N > 1 ? bN : 0, bL1 = q > 1 ? bL : 0, bLq1 = q > 1 ? bLq : 0;
    const double bR = bN1 > bL1 ? bN1 : bL1, bRq = bN1 > bLq1 ? bN1 : bLq1;
    switch (kcoll_coll_family(coll)) {
    case KCOLL_COLL_BCAST: {
        double tree = lgN * (aN + n * bN) + kcoll_host_tree_inside(m, s, aL, n, 0);
        double sag = 2 * lat + f * n * bR + f * n * bRq;
        return tree < sag ? tree : sag;
    }
    /* the blocked collectives also copy the rank's own block (memcpy), as
     * kcoll's schedules do */
    case KCOLL_COLL_SCATTER:
    case KCOLL_COLL_GATHER:
        return lat + (p - s->q0) * n * bN + (s->q0 - 1) * n * bL + n * cp;
    case KCOLL_COLL_ALLGATHER:
        return lat + (p - 1) * n * bRq + n * cp;
    case KCOLL_COLL_ALLTOALL: {
        /* the qk ranks of a node send their p - qk blocks between nodes
         * at once: qk flows share its link */
        double t = 0;
        for (int k = 0; k < 2; k++) {
            const int qk = k ? s->qmax : s->qmin;
            const double tk = (p - qk) * (aN + n * bN * qk) + (qk - 1) * (aL + n * bLq) + n * cp;
            t = tk > t ? tk : t;
        }
        return t;
    }
    case KCOLL_COLL_BARRIER:
        return lat;
    case KCOLL_COLL_REDUCE:
    case KCOLL_COLL_ALLREDUCE: {
        double tree = lgN * (aN + n * bN + n * g) + kcoll_host_tree_inside(m, s, aL, n, g);
        double two = 2 * lat + 2 * f * n * bRq + f * n * g;
        if (kcoll_coll_family(coll) == KCOLL_COLL_ALLREDUCE)
            tree *= 2;
        return tree < two ? tree : two;
    }
    default: /* Reduce_scatter(_block): n is one block */
        return lat + (p - 1) * n * (bRq + g);
    }
}

double kcoll_host_formula(const kcoll_machine_t *m, kcoll_coll_t coll, int N, int q, double n,
                          kcoll_rclass_t rc)
{
    const kcoll_hshape_t s = {.N = N, .p = N * q, .qmax = q, .qmin = q, .q0 = q, .W = 0,
                              .flows = 1, .k = 1};
    return kcoll_host_core(m, coll, &s, n, rc);
}

static double kcoll_price_host_spread(const kcoll_machine_t *m, const kcoll_pcall_t *c);

double kcoll_host_measured_scale(const kcoll_machine_t *m, kcoll_coll_t coll, double n,
                                 kcoll_rclass_t rc)
{
    if (!m->nhost[coll])
        return 1;
    const kcoll_pcall_t c = {.coll = coll, .p = 2, .bytes = (size_t)n, .esize = 8, .rclass = rc};
    const double f = kcoll_host_formula(m, coll, 1, 2, n, rc);
    return f > 0 ? kcoll_price_host_spread(m, &c) / f : 1;
}

double kcoll_host_formula_nodes(const kcoll_machine_t *m, kcoll_coll_t coll, int N, const int *ppn,
                                double n, kcoll_rclass_t rc, double flows)
{
    kcoll_hshape_t s = {.N = N, .W = m->package_bw, .flows = flows > 1 ? flows : 1,
                        .k = kcoll_host_measured_scale(m, coll, n, rc)};
    if (N < 1)
        return 0;
    s.q0 = s.qmax = s.qmin = ppn ? ppn[0] : 1;
    for (int k = 0; k < N; k++) {
        const int qk = ppn ? ppn[k] : 1;
        s.p += qk;
        s.qmax = qk > s.qmax ? qk : s.qmax;
        s.qmin = qk < s.qmin ? qk : s.qmin;
    }
    return kcoll_host_core(m, coll, &s, n, rc);
}

/* log-log interpolation between measured points (linear beyond the
 * last two, constant below the first). */
static double kcoll_host_interp(const kcoll_hostpt_t *pt, int n, double bytes)
{
    if (n == 1 || bytes <= pt[0].bytes)
        return pt[0].t;
    for (int i = 1; i < n; i++) {
        if (bytes <= pt[i].bytes) {
            double x0 = pt[i - 1].bytes, x1 = pt[i].bytes, y0 = pt[i - 1].t, y1 = pt[i].t;
            if (x0 > 0 && y0 > 0 && y1 > 0) {
                double f = log(bytes / x0) / log(x1 / x0);
                return exp(log(y0) + f * (log(y1) - log(y0)));
            }
            return y0 + (y1 - y0) * (bytes - x0) / (x1 - x0);
        }
    }
    double x0 = pt[n - 2].bytes, x1 = pt[n - 1].bytes, y0 = pt[n - 2].t, y1 = pt[n - 1].t;
    double slope = x1 > x0 ? (y1 - y0) / (x1 - x0) : 0;
    return y1 + (slope > 0 ? slope : 0) * (bytes - x1);
}

static int kcoll_hostpt_cmp(const void *a, const void *b)
{
    const kcoll_hostpt_t *x = a, *y = b;
    return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

/* The host's time with a core per rank (the measured points, scaled to p
 * by the formula). */
static double kcoll_price_host_spread(const kcoll_machine_t *m, const kcoll_pcall_t *c)
{
    const int n = m->nhost[c->coll];
    const double bytes = (double)c->bytes;
    double formula = kcoll_host_formula(m, c->coll, 1, c->p, bytes, c->rclass);
    if (!n || c->p <= 1)
        return formula;
    /* the measured process count nearest to p (ties: the larger) */
    int best = -1;
    for (int i = 0; i < n; i++) {
        int d = abs(m->host[c->coll][i].p - c->p), bd = best < 0 ? 1 << 30 : abs(best - c->p);
        if (d < bd || (d == bd && m->host[c->coll][i].p > best))
            best = m->host[c->coll][i].p;
    }
    kcoll_hostpt_t pts[KCOLL_HOST_POINTS];
    int k = 0;
    for (int i = 0; i < n; i++)
        if (m->host[c->coll][i].p == best)
            pts[k++] = m->host[c->coll][i];
    qsort(pts, (size_t)k, sizeof pts[0], kcoll_hostpt_cmp);
    double t = kcoll_host_interp(pts, k, bytes);
    if (best != c->p) {
        double f0 = kcoll_host_formula(m, c->coll, 1, best, bytes, c->rclass);
        if (f0 > 0)
            t *= formula / f0;
    }
    return t;
}

double kcoll_price_host(const kcoll_machine_t *m, const kcoll_pcall_t *c)
{
    double t = kcoll_price_host_spread(m, c);
    /* crowded: the host's ranks take turns on the cores too; its
     * algorithms keep every rank moving data about all the time (trees
     * pipelined, rings, pairwise exchanges), so its time stretches by the
     * ranks per core */
    if (c->cores > 0 && c->cores < c->p)
        t *= (double)c->p / c->cores;
    return t;
}
