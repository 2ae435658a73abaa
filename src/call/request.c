/* Requests: starting, advancing, completing and recycling them, and the
 * progress engine (see request.h for the states).
 *
 * Every started request is on one list of this process. kcoll_progress
 * walks it and advances each request as far as it goes without waiting;
 * a waiting loop (kcoll_req_wait) calls it and pauses between rounds
 * (sched/wait.h), so a rank that waits for one collective keeps all its
 * others going: a peer may be waiting for this rank in any of them.
 *
 * Lanes (sched/ctl.h). A request enters its lane, seq % KCOLL_LANES, when
 * the lane is free on this rank and the lane's previous collective has
 * entered it before (lanes are used in sequence order); it leaves it when
 * it completes. Until then it stays QUEUED: a start never waits.
 *
 * A blocking call's request is not on the list: only the thread that made
 * the call advances it, in its waiting loop, between rounds of
 * kcoll_progress for the others.
 *
 * Threads. With MPI_THREAD_MULTIPLE several threads may advance requests
 * at once: the list has a lock (taken only when threads are enabled), a
 * request on it is advanced by one thread at a time (its busy flag), a
 * team's lanes and pool are under the team's lock, and completion is
 * published through the request's `completed` flag. A thread that finds
 * the list busy skips the round: whoever holds it advances everybody.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hot.h"
#include "base/log.h"
#include "base/params.h"
#include "base/stats.h"
#include "call/adapt.h"
#include "call/request.h"
#include "model/nodes.h"
#include "sched/share.h"

static kcoll_req_t *kcoll_active; /* started, not completed */
static pthread_mutex_t kcoll_active_lock = PTHREAD_MUTEX_INITIALIZER;
/* relaxed: a count read as a hint (is anything pending?), ordering nothing;
 * read by every call the shortcut takes: on the hot page (base/hot.h) */
KCOLL_HOT _Atomic int kcoll_npending;
/* 1 while this thread runs kcoll_progress: a host MPI that calls back into
 * kcoll from its own progress (mpi/progress.c) must not recurse */
static __thread __attribute__((tls_model("initial-exec"))) int kcoll_in_progress;

static void kcoll_active_lock_take(void)
{
    if (kcoll_team_threads)
        pthread_mutex_lock(&kcoll_active_lock);
}

static void kcoll_active_lock_drop(void)
{
    if (kcoll_team_threads)
        pthread_mutex_unlock(&kcoll_active_lock);
}

static void kcoll_active_add(kcoll_req_t *r)
{
    kcoll_active_lock_take();
    r->prev = NULL;
    r->next = kcoll_active;
    if (kcoll_active)
        kcoll_active->prev = r;
    kcoll_active = r;
    kcoll_active_lock_drop();
    /* relaxed: a hint, ordering nothing */
    atomic_fetch_add_explicit(&kcoll_npending, 1, memory_order_relaxed);
}

/* Called with the list lock held (by the progress round that completes r). */
static void kcoll_active_remove(kcoll_req_t *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        kcoll_active = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->next = r->prev = NULL;
    /* relaxed: a hint, ordering nothing */
    atomic_fetch_sub_explicit(&kcoll_npending, 1, memory_order_relaxed);
}

const kcoll_layout_t *kcoll_req_layouts(kcoll_req_t *r)
{
    const kcoll_ctl_t *c = &r->team->ctl;
    const size_t p = (size_t)c->p;
    for (int q = 0; q < c->p; q++) {
        const size_t *tab = kcoll_agree_table(c, q, r->seq);
        r->lay[q].scount = tab;
        r->lay[q].sdispl = tab + p;
        r->lay[q].rcount = tab + 2 * p;
        r->lay[q].rdispl = tab + 3 * p;
    }
    return r->lay;
}

/* This rank is done reading the agreement data of r's collective. */
static void kcoll_req_seen(kcoll_req_t *r)
{
    if (!r->seen) {
        kcoll_agree_seen(&r->team->ctl, r->seq);
        r->seen = 1;
    }
}

/* Leave the lane, record the outcome, tell the owner. A listed request
 * finishes inside a progress round, which holds the list lock. */
/* the layer above's packer (kcoll_call_set_packer), set once at start-up */
static const kcoll_packer_t *kcoll_packer;

static void kcoll_req_unschedule(kcoll_req_t *r);

static void kcoll_req_finish(kcoll_req_t *r, kcoll_status_t st)
{
    kcoll_team_t *t = r->team;
    if (r->state >= KCOLL_REQ_AGREE) {
        if (st != KCOLL_OK) /* the peers must not wait for this rank here */
            kcoll_ctl_give_up(&t->ctl, r->seq);
        kcoll_req_seen(r);
        kcoll_team_lock(t);
        t->lane[kcoll_lane_of(r->seq)] = NULL;
        kcoll_team_unlock(t);
    }
    if (r->x.sched) { /* the executor ran: what it read of the peers goes */
        kcoll_stats_engines(&r->x);
        kcoll_exec_finish(&r->x);
    }
    if (r->unpack && st == KCOLL_OK && r->unpack_host) {
        const kcoll_side_t *s = &r->call.recv;
        if (kcoll_packer->unpack(&r->call, 1, r->packed[r->unpack - 1],
                                 r->lens[KCOLL_BUF_RECV] / s->size,
                                 (char *)r->bufs[KCOLL_BUF_RECV] - s->lb)) {
            snprintf(r->errmsg, sizeof r->errmsg, "unpacking the received data failed");
            st = KCOLL_ERR_PROTO;
        }
    } else if (r->unpack && st == KCOLL_OK) {
        kcoll_dmap_unpack(r->maps[KCOLL_BUF_RECV], r->bufs[KCOLL_BUF_RECV],
                          r->lens[KCOLL_BUF_RECV], r->packed[r->unpack - 1]);
    }
    r->unpack = r->unpack_host = 0;
    r->status = st;
    r->state = KCOLL_REQ_DONE;
    if (r->mode != KCOLL_MODE_PERSISTENT)
        kcoll_req_unschedule(r);
    if (r->listed) {
        kcoll_active_remove(r);
        r->listed = 0;
    }
    /* release: r's outcome is visible to a thread that acquires completed */
    atomic_store_explicit(&r->completed, 1, memory_order_release);
    if (r->done)
        r->done(r, r->done_ctx);
}

/* Page-aligned memory of at least len bytes in *mem (capacity *cap), kept
 * with the request between uses: TMP for the chosen algorithm, the packed
 * SEND and RECV. NULL when out of memory (*mem unchanged). */
static void *kcoll_req_room(void **mem, size_t *cap, size_t len)
{
    if (len <= *cap && *mem)
        return *mem;
    void *fresh = NULL;
    size_t want = (len + 4095) / 4096 * 4096;
    if (posix_memalign(&fresh, 4096, want ? want : 4096))
        return NULL;
    kcoll_scratch_add((int64_t)(want ? want : 4096) - (int64_t)(*mem ? *cap : 0));
    free(*mem);
    *mem = fresh;
    *cap = want ? want : 4096;
    return fresh;
}

/* The buffers the executor runs on: a SEND or RECV laid out by a map of
 * short segments (KCOLL_DTYPE_PACK_BELOW: the kernel pins the pages of
 * every remote piece of a process_vm_readv separately, so a 4 MiB column
 * Bcast at 2 ranks moved piece by piece took 96 ms in 8-byte pieces, where
 * the host MPI, which packs, took 2.5 ms; 2.5 ms in 512-byte pieces
 * (host 0.48 ms); 0.46 ms in 4 KiB pieces (host 0.57 ms)) is packed
 * into a contiguous buffer of the request first
 * (each rank decides for its own buffers: its exposure says whether peers
 * see a map), and a packed RECV is unpacked when the run has succeeded
 * (kcoll_req_finish), when every peer access to it is over. SEND and RECV
 * that are one buffer (in place) stay one. A call across nodes packs every
 * map: its host collectives move bytes; and a side with a datatype kcoll
 * has no map for, through the layer above's packer (KCOLL_TYPE_HOSTPACK).
 * 0, or -1 when out of memory (or the packer failed). */
void kcoll_call_set_packer(const kcoll_packer_t *p)
{
    kcoll_packer = p;
}

static int kcoll_req_pack(kcoll_req_t *r, void *bufs[KCOLL_NBUF],
                          const kcoll_dmap_t *maps[KCOLL_NBUF])
{
    const uint64_t below = (uint64_t)kcoll_param_int(KCOLL_P_DTYPE_PACK_BELOW);
    r->unpack = r->unpack_host = 0;
    /* the host's call whole (kcoll_across_t.settle) takes the program's
     * buffers and datatypes as they are */
    const int whole = r->across && r->xa.layout == KCOLL_NODES_HOST;
    for (int b = KCOLL_BUF_SEND; b <= KCOLL_BUF_RECV; b++) {
        bufs[b] = r->bufs[b];
        maps[b] = r->maps[b];
        if (whole)
            continue;
        const kcoll_dmap_t *m = r->maps[b];
        const kcoll_side_t *side = b == KCOLL_BUF_SEND ? &r->call.send : &r->call.recv;
        /* (the families that judge a call across nodes rank by rank: the
         * others send such a datatype to the host MPI on every rank) */
        const int host = r->across && r->fam->across && !m &&
                         (side->type & KCOLL_TYPE_HOSTPACK) && kcoll_packer;
        /* across nodes the host's collectives take the bytes whole */
        if ((!m && !host) || !r->bufs[b] || !r->lens[b] ||
            (!r->across && kcoll_dmap_mean_piece(m) >= below))
            continue;
        if (b == KCOLL_BUF_RECV && !host && r->bufs[b] == r->bufs[KCOLL_BUF_SEND] &&
            m == r->maps[KCOLL_BUF_SEND]) {
            bufs[b] = bufs[KCOLL_BUF_SEND];
            maps[b] = NULL;
            r->unpack = 1 + KCOLL_BUF_SEND;
            continue;
        }
        if (!kcoll_req_room(&r->packed[b], &r->packed_cap[b], r->lens[b]))
            return -1;
        /* RECV is written whole, except in place, at a broadcast's root
         * (its data), and for the v-variants (the bytes between the blocks
         * must come back unchanged) */
        if (b == KCOLL_BUF_SEND || r->args.in_place || kcoll_coll_is_v(r->args.coll) ||
            (r->args.coll == KCOLL_COLL_BCAST && r->call.rank == r->call.root)) {
            if (!host)
                kcoll_dmap_pack(m, r->bufs[b], r->lens[b], r->packed[b]);
            else if (kcoll_packer->pack(&r->call, b == KCOLL_BUF_RECV, (char *)r->bufs[b] - side->lb,
                                        r->lens[b] / side->size, r->packed[b]))
                return -1;
        }
        bufs[b] = r->packed[b];
        maps[b] = NULL;
        if (b == KCOLL_BUF_RECV) {
            r->unpack = 1 + KCOLL_BUF_RECV;
            r->unpack_host = host;
        }
    }
    return 0;
}

static void kcoll_req_fail(kcoll_req_t *r, kcoll_status_t st, const char *why)
{
    if (why != r->errmsg)
        snprintf(r->errmsg, sizeof r->errmsg, "%s", why);
    kcoll_req_finish(r, st);
}

int kcoll_req_share(kcoll_req_t *r, const float *mine, float *all)
{
    kcoll_team_t *t = r->team;
    kcoll_team_lock(t);
    const uint64_t ticket = ++t->share_ticket;
    kcoll_team_unlock(t);
    return kcoll_share(&t->ctl, ticket, mine, all, kcoll_progress, r->errmsg, sizeof r->errmsg) ==
                   KCOLL_OK
               ? 0
               : -1;
}

/* One sharing of a decision the team's ranks price together (the share
 * of model/select.h's kcoll_split_t; ctx: the call). */
static int kcoll_call_price_share(void *ctx, const float *mine, float *all)
{
    return kcoll_req_share(ctx, mine, all);
}

int kcoll_call_select(kcoll_req_t *r)
{
    /* the decision cache is the team's: under its lock when threads may
     * select at once (MPI_THREAD_MULTIPLE, the drive thread) */
    int share;
    const int host_ok = kcoll_param_int(KCOLL_P_MIN_BYTES) < 0;
    kcoll_team_lock(r->team);
    /* A decision the model prices, at a blocking call: every rank of the
     * node is in this call (and waits there for the others in any case),
     * so they price it together (model/select.h), outside the lock (the
     * sharing advances other calls while it waits). A non-blocking call
     * may not wait for the others to start it: each rank prices alone. */
    if (r->mode == KCOLL_MODE_BLOCKING && r->call.p > 1 &&
        kcoll_param_int(KCOLL_P_SHARED_PRICING) &&
        !kcoll_select_decided(&r->team->decisions, r->call.coll, r->call.p, host_ok,
                              r->policy_bytes, r->cache)) {
        kcoll_split_t split = {.q = r->call.p, .me = r->call.rank,
                               .share = kcoll_call_price_share, .ctx = r};
        kcoll_team_unlock(r->team);
        if (kcoll_select_warm(&r->team->decisions, r->call.coll, r->call.p, &r->team->levels,
                              host_ok, r->policy_bytes, r->cache, &split) < 0)
            return -1;
        kcoll_team_lock(r->team);
    }
    kcoll_select_t s = kcoll_select_cache(&r->team->decisions, r->call.coll, r->call.p,
                                          &r->team->levels, host_ok, r->policy_bytes, r->cache,
                                          &r->choice);
    /* the decision's check by measurement (call/adapt.h) */
    s = kcoll_adapt_select(r, s, &share);
    kcoll_team_unlock(r->team);
    if (share) {
        const int res = kcoll_adapt_share(r);
        if (res < 0)
            return -1;
        s = (kcoll_select_t)res;
    }
    if (kcoll_adapt_begin(r) < 0)
        return -1;
    if (s == KCOLL_SELECT_BAD)
        return KCOLL_R_BAD_ALGO;
    if (s == KCOLL_SELECT_HOST)
        return KCOLL_R_SMALL;
    return 0;
}

/* The shape of a call that fixes its schedule (the team fixes p and the
 * rank; across nodes, the node team fixes the layout's view of the nodes
 * but its segment): 0 if it is not cached (layouts of a v-variant,
 * per-rank counts, persistent requests, which keep their own). A call
 * across nodes is keyed by its layout where another names its algorithm,
 * and by whether its operation commutes (a layout refuses a
 * non-commutative one on some placements). */
static int kcoll_sched_key(const kcoll_req_t *r, uint64_t key[8])
{
    const kcoll_args_t *a = &r->args;
    if (a->lay || a->counts || r->mode == KCOLL_MODE_PERSISTENT ||
        (r->across && r->xa.layout == KCOLL_NODES_HOST))
        return 0;
    const uint64_t how = r->across ? 0x80u | (uint64_t)r->xa.layout
                                   : (uint64_t)kcoll_algo_index(r->choice.algo);
    key[0] = (uint64_t)a->coll | how << 8 | (uint64_t)(a->in_place != 0) << 16 |
             (uint64_t)(a->op && kcoll_op_has_rev(a->op)) << 17 |
             (uint64_t)(a->op && a->op->commute) << 18 | 1ull << 63;
    key[1] = (uint64_t)(uint32_t)a->root;
    key[2] = a->bytes;
    key[3] = a->count;
    key[4] = a->esize;
    key[5] = (uint64_t)(uint32_t)a->prm.k | (uint64_t)(uint32_t)a->prm.j << 32;
    key[6] = (uint64_t)(uint32_t)a->prm.chunk;
    key[7] = r->across ? (uint64_t)r->xa.cl.segment : 0;
    return 1;
}

/* A call across nodes (kcoll_call_prepare_across): its layout's builder
 * and scratch (src/cluster/registry.c; the layout was found there). */
static size_t kcoll_req_across_tmp(const kcoll_req_t *r)
{
    const kcoll_across_t *x = &r->xa;
    if (x->layout == KCOLL_NODES_HOST)
        return 0;
    const kcoll_cluster_algo_t *al =
        kcoll_cluster_find(r->args.coll, x->layout == KCOLL_NODES_LANES);
    return al && al->tmp ? al->tmp(&r->args, &x->cl, x->root_node, x->root_local) : 0;
}

static kcoll_status_t kcoll_req_across_build(kcoll_req_t *r)
{
    const kcoll_across_t *x = &r->xa;
    if (x->layout == KCOLL_NODES_HOST) { /* settled so: the host's call, whole */
        kcoll_sched_xcoll(&r->sched, &(kcoll_xcoll_t){.coll = KCOLL_XC_CALL, .esize = 1});
        return r->sched.err;
    }
    const kcoll_cluster_algo_t *al =
        kcoll_cluster_find(r->args.coll, x->layout == KCOLL_NODES_LANES);
    return al ? al->build(&r->args, &x->cl, x->root_node, x->root_local, &r->sched)
              : KCOLL_ERR_UNSUPPORTED;
}

/* Order of host collectives. The host MPI matches the collectives of a
 * group's communicator in the order each member starts them, and a node's
 * team may run several calls across nodes at once (non-blocking ones),
 * each reaching its host collectives at its own pace. So a call starts a
 * host collective only when every call numbered before it on the team has
 * started all of its own (team->xturn): every rank starts them in call
 * order, the order in which every rank of the communicator made the calls.
 * A call below xturn's is done with them when it has started the last one
 * (xleft 0) or left its lane; one not yet admitted to its lane holds the
 * turn (its schedule is not built: it may have some). */
static int kcoll_req_xturn(kcoll_req_t *r)
{
    kcoll_team_t *t = r->team;
    kcoll_team_lock(t);
    while (t->xturn < r->seq) {
        const uint64_t s = t->xturn;
        const int l = kcoll_lane_of(s);
        const kcoll_req_t *q = t->lane[l];
        if (t->lane_next[l] <= s || (q && q->seq == s && q->xleft))
            break;
        t->xturn++;
    }
    const int mine = t->xturn == r->seq;
    kcoll_team_unlock(t);
    return mine;
}

static kcoll_status_t kcoll_req_xstart(void *data, int id, const kcoll_xcoll_t *x,
                                       const size_t *vlen, void *const bufs[KCOLL_NBUF], int split,
                                       char *err, size_t errlen)
{
    kcoll_req_t *r = data;
    if (!kcoll_req_xturn(r))
        return KCOLL_IN_PROGRESS;
    kcoll_status_t rc = r->xa.xhost->start(r->xa.data, id, x, vlen, bufs, split, err, errlen);
    if (rc != KCOLL_IN_PROGRESS) {
        kcoll_team_lock(r->team);
        r->xleft--; /* started (or failed: the request ends and leaves its lane) */
        kcoll_team_unlock(r->team);
    }
    return rc;
}

static kcoll_status_t kcoll_req_xtest(void *data, int id, char *err, size_t errlen)
{
    kcoll_req_t *r = data;
    return r->xa.xhost->test(r->xa.data, id, err, errlen);
}

static kcoll_status_t kcoll_req_xpoll(void *data, char *err, size_t errlen)
{
    kcoll_req_t *r = data;
    return r->xa.xhost->poll(r->xa.data, err, errlen);
}

static const kcoll_xhost_t kcoll_req_xhost = {kcoll_req_xstart, kcoll_req_xtest, kcoll_req_xpoll};

/* r's schedule from the team's cache, or built (and then kept there when
 * an entry is free). 0, or -1 when building failed. */
static int kcoll_req_schedule(kcoll_req_t *r)
{
    kcoll_team_t *t = r->team;
    uint64_t key[8];
    int cacheable = kcoll_sched_key(r, key);
    r->run = &r->sched;
    r->cache_slot = -1;
    if (cacheable) {
        kcoll_team_lock(t);
        for (int i = 0; i < KCOLL_SCHED_CACHE; i++)
            if (t->scache[i].valid && !memcmp(t->scache[i].key, key, sizeof key)) {
                t->scache[i].users++;
                r->run = &t->scache[i].sched;
                r->cache_slot = i;
                break;
            }
        kcoll_team_unlock(t);
        if (r->cache_slot >= 0)
            return 0;
    }
    kcoll_sched_reset(&r->sched);
    if ((r->across ? kcoll_req_across_build(r) : r->choice.algo->build(&r->args, &r->sched)) !=
        KCOLL_OK)
        return -1;
    if (!cacheable)
        return 0;
    kcoll_team_lock(t);
    for (unsigned n = 0; n < KCOLL_SCHED_CACHE; n++) {
        kcoll_sched_entry_t *e = &t->scache[(t->scache_next + n) % KCOLL_SCHED_CACHE];
        if (e->users)
            continue;
        kcoll_sched_reset(&e->sched);
        kcoll_sched_append(&e->sched, &r->sched);
        e->valid = e->sched.err == KCOLL_OK;
        memcpy(e->key, key, sizeof key);
        t->scache_next = (t->scache_next + n + 1) % KCOLL_SCHED_CACHE;
        break;
    }
    kcoll_team_unlock(t);
    return 0;
}

/* r no longer runs a cached schedule. */
static void kcoll_req_unschedule(kcoll_req_t *r)
{
    if (r->cache_slot < 0)
        return;
    kcoll_team_lock(r->team);
    r->team->scache[r->cache_slot].users--;
    kcoll_team_unlock(r->team);
    r->cache_slot = -1;
    r->run = &r->sched;
}

/* KCOLL_TEST_FAIL: does r's collective fail on purpose on this rank? */
static int kcoll_req_fails_on_purpose(const kcoll_req_t *r)
{
    const char *v = kcoll_param_str(KCOLL_P_TEST_FAIL);
    int rank;
    unsigned long long seq;
    return v[0] && sscanf(v, "%d:%llu", &rank, &seq) == 2 && rank == r->team->ctl.rank &&
           seq == r->seq;
}

void kcoll_req_build(kcoll_req_t *r)
{
    const kcoll_team_t *t = r->team;
    if (kcoll_req_fails_on_purpose(r)) {
        kcoll_req_fail(r, KCOLL_ERR_PROTO, "failed on purpose (KCOLL_TEST_FAIL)");
        return;
    }
    if (!r->built) {
        const kcoll_algo_t *a = r->choice.algo;
        if (!r->across)
            r->args.prm = r->choice.prm;
        r->args.lv = &t->levels;
        for (int b = 0; b < KCOLL_NBUF; b++) {
            r->bufs[b] = NULL;
            r->lens[b] = 0;
        }
        for (int b = 0; b < KCOLL_NBUF; b++)
            r->maps[b] = NULL;
        r->fam->buffers(r);
        size_t tlen = r->across ? kcoll_req_across_tmp(r) : a->tmp ? a->tmp(&r->args) : 0;
        if (tlen && !(r->bufs[KCOLL_BUF_TMP] = kcoll_req_room(&r->tmp, &r->tmp_cap, tlen))) {
            kcoll_req_fail(r, KCOLL_ERR_NOMEM, "out of memory for scratch");
            return;
        }
        r->lens[KCOLL_BUF_TMP] = tlen;
        if (kcoll_req_schedule(r)) {
            kcoll_req_fail(r, KCOLL_ERR_NOMEM, "building the schedule failed (out of memory?)");
            return;
        }
        r->built = 1;
    }
    kcoll_req_seen(r); /* the layouts are not read after the build */
    if (r->across) { /* its host collectives to start, in call order (kcoll_req_xturn) */
        int xcolls = 0;
        for (int i = 0; i < r->run->n; i++)
            xcolls += KCOLL_STEP_XSTARTS(&r->run->steps[i]);
        kcoll_team_lock(r->team);
        r->xleft = xcolls;
        kcoll_team_unlock(r->team);
    }
    kcoll_call_stat(r,
                    !r->across                            ? kcoll_algo_index(r->choice.algo)
                    : r->xa.layout == KCOLL_NODES_LANES   ? KCOLL_PATH_LANES
                    : r->xa.layout == KCOLL_NODES_LEADERS ? KCOLL_PATH_LEADERS
                                                          : KCOLL_PATH_REASON(KCOLL_R_MULTINODE),
                    r->stat_bytes);
    /* the team's engine, or the one the selector chose for this call
     * (every rank chose alike, from the same inputs) */
    const kcoll_engine_t *engine =
        r->choice.engine >= 0 ? kcoll_engine((kcoll_engine_id_t)r->choice.engine) : t->engine;
    if (kcoll_param_int(KCOLL_P_TRACE)) {
        char spec[96], row[48];
        if (r->across)
            snprintf(spec, sizeof spec, "across %d nodes, %s layout (node %d, local rank %d of %d)",
                     r->xa.cl.nodes, kcoll_nodes_layout_name((kcoll_nodes_layout_t)r->xa.layout),
                     r->xa.cl.node, r->xa.cl.me, r->xa.cl.pn);
        else
            kcoll_algo_spec(r->choice.algo, &r->args.prm, spec, sizeof spec);
        fprintf(stderr,
                "kcoll: trace: %s %s, %zu bytes, root %d, collective %" PRIu64 ", engine %s\n",
                kcoll_stats_row_name(r->row, row, sizeof row), spec, r->stat_bytes, r->args.root,
                r->seq, engine->name);
        kcoll_sched_print(r->run, t->ctl.rank, stderr);
    }
    void *bufs[KCOLL_NBUF] = {NULL, NULL, r->bufs[KCOLL_BUF_TMP]};
    const kcoll_dmap_t *maps[KCOLL_NBUF] = {NULL, NULL, NULL};
    if (kcoll_req_pack(r, bufs, maps)) {
        kcoll_req_fail(r, KCOLL_ERR_NOMEM, "out of memory for packing a datatype's data");
        return;
    }
    kcoll_exec_start(&r->x, &t->ctl, engine, r->run, bufs, r->lens, r->seq);
    r->x.op = r->args.op;
    if (r->across) {
        r->x.xhost = &kcoll_req_xhost;
        r->x.xdata = r;
    }
    for (int b = 0; b < KCOLL_NBUF; b++)
        r->x.maps[b] = maps[b];
    kcoll_watch_init(&r->watch);
    r->state = KCOLL_REQ_RUN;
}

/* Enter the lane if it is this request's turn. */
static int kcoll_req_admit(kcoll_req_t *r)
{
    kcoll_team_t *t = r->team;
    const int l = kcoll_lane_of(r->seq);
    int in = 0;
    kcoll_team_lock(t);
    if (!t->lane[l] && t->lane_next[l] == r->seq) {
        t->lane[l] = r;
        t->lane_next[l] += KCOLL_LANES;
        in = 1;
    }
    kcoll_team_unlock(t);
    return in;
}

/* A call across nodes whose layout an agreement of the host's decides
 * (kcoll_across_t.settle): KCOLL_IN_PROGRESS until it is in; then, in the
 * lanes, the call's own part judged with the node's layouts as a blocking
 * one's is (kcoll_family_t.across: the agreement said every rank can take
 * part). Holds the turn of the team's host collectives meanwhile (its
 * xleft is not yet known: kcoll_req_xturn). */
static kcoll_status_t kcoll_req_settle(kcoll_req_t *r)
{
    if (!r->xa.settle)
        return KCOLL_OK;
    kcoll_status_t rc = r->xa.settle(&r->xa, r->errmsg, sizeof r->errmsg);
    if (rc != KCOLL_OK)
        return rc;
    r->xa.settle = NULL;
    if (r->xa.layout != KCOLL_NODES_HOST && r->fam->across && r->fam->across(r)) {
        snprintf(r->errmsg, sizeof r->errmsg,
                 "%s across nodes: this rank's arguments do not match the agreed call",
                 kcoll_coll_name(r->call.coll));
        return KCOLL_ERR_ARG;
    }
    return KCOLL_OK;
}

/* The agreement is in: a blocking call's caller decides; a non-blocking
 * one is committed to kcoll, so an inconsistency is an error. */
static void kcoll_req_agreed(kcoll_req_t *r)
{
    if (r->mode == KCOLL_MODE_BLOCKING) {
        r->state = KCOLL_REQ_AGREED;
        return;
    }
    int why = r->fam->decide(r);
    if (why) {
        kcoll_req_seen(r);
        snprintf(r->errmsg, sizeof r->errmsg,
                 "the ranks passed arguments kcoll cannot run together (%s: %s); a "
                 "non-blocking collective decides at its start, so datatypes must have the "
                 "same layout on every rank (or set KCOLL_DISABLE=1)",
                 kcoll_reason_name((kcoll_reason_t)why),
                 why == KCOLL_R_INVALID ? "invalid or inconsistent arguments on some rank"
                                        : "a datatype kcoll does not move on some rank");
        kcoll_req_finish(r, KCOLL_ERR_ARG);
        return;
    }
    /* the algorithm: one forced at the start stays; otherwise the rules
     * or the model choose among kcoll's own (the call is committed) for
     * the agreed sizes. Not from the parameters in force now: the program
     * may have changed them (alike on every rank) after the start, and
     * another rank's agreement may have come in before that change */
    if (!r->choice.forced &&
        kcoll_select_unforced(r->call.coll, r->call.p, &r->team->levels, 0, r->policy_bytes,
                              r->cache, &r->team->decisions, &r->choice) != KCOLL_SELECT_KCOLL) {
        kcoll_req_fail(r, KCOLL_ERR_ARG, "no valid algorithm for this call");
        return;
    }
    kcoll_req_build(r);
}

int kcoll_req_advance(kcoll_req_t *r)
{
    kcoll_status_t rc;
    int moved = 0;
    switch (r->state) {
    case KCOLL_REQ_QUEUED:
        if (!kcoll_req_admit(r))
            return 0;
        moved = 1;
        /* a call across nodes has no agreement: every rank judged its own
         * part (kcoll_family_t.across) */
        if (r->fam->vote && !r->built && !r->across) {
            kcoll_agree_init(&r->ag, &r->team->ctl, r->seq, r->fam->vote(r), r->fam->fill, r,
                             r->votes);
            kcoll_watch_init(&r->watch);
            r->state = KCOLL_REQ_AGREE;
            r->ag.op.start(&r->ag.op, r->errmsg, sizeof r->errmsg);
        } else {
            r->state = KCOLL_REQ_AGREE; /* holds the lane */
            if (!r->across || !r->xa.settle) { /* (one that settles: below) */
                kcoll_req_build(r);
                if (r->state != KCOLL_REQ_RUN)
                    return 1;
            }
        }
        if (r->state == KCOLL_REQ_RUN)
            goto run;
        /* fall through */
    case KCOLL_REQ_AGREE:
        /* the node's agreement through the control segment; a call across
         * nodes, the host's (kcoll_req_settle), whose peers the host watches */
        rc = r->across ? kcoll_req_settle(r)
                       : r->ag.op.test(&r->ag.op, r->errmsg, sizeof r->errmsg);
        if (rc == KCOLL_IN_PROGRESS) {
            if (!r->across && (rc = kcoll_watch(&r->watch, &r->team->ctl, r->ag.op.peer, r->seq,
                                                r->errmsg, sizeof r->errmsg)))
                kcoll_req_fail(r, rc, r->errmsg);
            return moved;
        }
        if (rc) {
            kcoll_req_fail(r, rc, r->errmsg);
            return 1;
        }
        if (r->across)
            kcoll_req_build(r);
        else
            kcoll_req_agreed(r);
        if (r->state != KCOLL_REQ_RUN)
            return 1;
        moved = 1;
        /* fall through */
    case KCOLL_REQ_RUN:
    run: {
        int pc = r->x.pc;
        rc = kcoll_exec_progress(&r->x);
        if (rc == KCOLL_OK) {
            kcoll_req_finish(r, KCOLL_OK);
            return 1;
        }
        if (rc != KCOLL_IN_PROGRESS) {
            kcoll_req_fail(r, rc, r->x.errmsg);
            return 1;
        }
        if (r->x.pc != pc) {
            kcoll_watch_reset(&r->watch);
            return 1;
        }
        if ((rc = kcoll_watch(&r->watch, &r->team->ctl, r->x.blocked_on, r->seq, r->errmsg,
                              sizeof r->errmsg)))
            kcoll_req_fail(r, rc, r->errmsg);
        return moved;
    }
    default:
        return 0;
    }
}

int kcoll_progress_inner(void)
{
    int moved = 0;
    if (kcoll_in_progress || !kcoll_pending())
        return 0;
    if (kcoll_team_threads && pthread_mutex_trylock(&kcoll_active_lock))
        return 0; /* another thread is advancing everybody */
    kcoll_in_progress = 1;
    for (kcoll_req_t *r = kcoll_active, *next; r; r = next) {
        next = r->next;
        /* acquire: pairs with the release below; the previous advancer's
         * changes to r are visible */
        if (atomic_exchange_explicit(&r->busy, 1, memory_order_acquire))
            continue;
        moved += kcoll_req_advance(r);
        int release = r->state == KCOLL_REQ_DONE && r->detached;
        /* release: this thread's changes to r are visible to the next advancer */
        atomic_store_explicit(&r->busy, 0, memory_order_release);
        if (release)
            kcoll_req_release(r);
    }
    kcoll_in_progress = 0;
    kcoll_active_lock_drop();
    return moved;
}

int kcoll_progress(void)
{
    return kcoll_progress_inner();
}

void kcoll_req_start(kcoll_req_t *r, void (*done)(kcoll_req_t *r, void *ctx), void *ctx)
{
    r->done = done;
    r->done_ctx = ctx;
    if (r->state != KCOLL_REQ_PREPARED && r->state != KCOLL_REQ_DONE)
        return; /* a blocking call that agreed is running already */
    if (r->mode == KCOLL_MODE_PERSISTENT) {
        /* each start is a new collective of the team */
        kcoll_team_t *t = r->team;
        kcoll_team_lock(t);
        r->seq = ++t->seq;
        kcoll_team_unlock(t);
        r->seen = 0; /* the statistics count each start when it is built or reused */
    }
    r->status = KCOLL_OK;
    r->errmsg[0] = '\0';
    r->xleft = r->across ? -1 : 0; /* ordered before its admission by the team lock there */
    r->state = KCOLL_REQ_QUEUED;
    /* relaxed: nobody else sees r before it is listed, which the list lock orders */
    atomic_store_explicit(&r->completed, 0, memory_order_relaxed);
    /* relaxed: as above */
    atomic_store_explicit(&r->busy, 0, memory_order_relaxed);
    if (r->mode == KCOLL_MODE_BLOCKING) {
        kcoll_req_advance(r);
    } else {
        r->listed = 1;
        kcoll_active_add(r);
    }
    kcoll_progress(); /* every kcoll call advances the others too */
}

void kcoll_req_wait_state(kcoll_req_t *r, kcoll_req_state_t state)
{
    kcoll_pause_t pause;
    kcoll_pause_init(&pause);
    for (;;) {
        int moved = 0;
        if (!r->listed && r->state < state)
            moved = kcoll_req_advance(r);
        /* acquire: pairs with the release in kcoll_req_finish */
        if (r->state >= state || atomic_load_explicit(&r->completed, memory_order_acquire))
            return;
        moved += kcoll_progress();
        /* acquire: as above */
        if (atomic_load_explicit(&r->completed, memory_order_acquire))
            return;
        if (moved)
            kcoll_pause_reset(&pause);
        else if (r->state == KCOLL_REQ_RUN && !r->listed && !kcoll_pending())
            /* this blocking request alone, waiting for one flag: a crowded node sleeps on it */
            kcoll_pause_on(&pause, r->x.blocked_line, r->x.blocked_want);
        else
            kcoll_pause(&pause);
    }
}

kcoll_status_t kcoll_req_wait(kcoll_req_t *r)
{
    kcoll_req_wait_state(r, KCOLL_REQ_DONE);
    return r->status;
}

kcoll_status_t kcoll_req_status(const kcoll_req_t *r)
{
    return r->status;
}

const char *kcoll_req_error(const kcoll_req_t *r)
{
    return r->errmsg;
}

int kcoll_req_completed(const kcoll_req_t *r)
{
    /* acquire: pairs with the release in kcoll_req_finish (status, error) */
    return atomic_load_explicit(&r->completed, memory_order_acquire);
}

kcoll_coll_t kcoll_req_coll(const kcoll_req_t *r)
{
    return r->call.coll;
}

const kcoll_op_t *kcoll_req_op(const kcoll_req_t *r)
{
    return r->args.op;
}

void kcoll_req_detach(kcoll_req_t *r)
{
    r->detached = 1;
}

void kcoll_req_abandon(kcoll_req_t *r)
{
    kcoll_req_finish(r, KCOLL_OK); /* a blocking request: not listed */
    kcoll_req_release(r);
}

void kcoll_req_release(kcoll_req_t *r)
{
    kcoll_team_t *t = r->team;
    int held = r->holds_team;
    r->holds_team = 0;
    r->built = 0; /* a pooled request builds afresh */
    if (r->across && r->xa.drop)
        r->xa.drop(r->xa.data);
    r->across = 0;
    free(r->mapcopy[0]);
    free(r->mapcopy[1]);
    r->mapcopy[0] = r->mapcopy[1] = NULL;
    r->done = NULL;
    kcoll_team_lock(t);
    r->next = t->pool;
    t->pool = r;
    kcoll_team_unlock(t);
    if (held)
        kcoll_team_unref(t, kcoll_call_release_team);
}

static void kcoll_req_free(kcoll_req_t *r)
{
    kcoll_scratch_add(-(int64_t)((r->tmp ? r->tmp_cap : 0) + (r->packed[0] ? r->packed_cap[0] : 0) +
                                 (r->packed[1] ? r->packed_cap[1] : 0)));
    kcoll_sched_free(&r->sched);
    free(r->mapcopy[0]);
    free(r->mapcopy[1]);
    free(r->varrays);
    free(r->packed[0]);
    free(r->packed[1]);
    free(r->votes);
    free(r->lay);
    free(r->counts);
    free(r->xdispl);
    free(r->tmp);
    free(r);
}

void kcoll_call_release_team(kcoll_team_t *t)
{
    for (int c = 0; c < KCOLL_NCOLL; c++)
        free(t->memo[c].vcounts);
    while (t->pool) {
        kcoll_req_t *r = t->pool;
        t->pool = r->next;
        kcoll_req_free(r);
    }
}
