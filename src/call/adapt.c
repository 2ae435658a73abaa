/* Decisions that check themselves where they run (see adapt.h and
 * docs/adapt.md).
 *
 * A check's calls, counted per decision alike on every rank, from L =
 * KCOLL_ADAPT_SETTLE on a first check (KCOLL_ADAPT_SETTLE_LARGE from
 * KCOLL_ADAPT_WARM_BYTES; 1 on a check again):
 *   0 .. L - 1             the choice, untimed (the program settles)
 *   L .. L + K - 1         the choice, timed
 *   L + K .. L + K + W - 1 the runner-up, untimed (warm-up)
 *   .. L + 2K + W - 1      the runner-up, timed
 *   L + 2K + W             the sharing: every rank's times shared, the
 *                          winner runs this call and the ones after
 * with K = KCOLL_ADAPT_CALLS, W = KCOLL_ADAPT_WARM_HOST for a first check
 * of a pattern below KCOLL_ADAPT_WARM_BYTES whose runner-up is the host MPI
 * (it settles as the choice did, and longer: adapt.h),
 * KCOLL_ADAPT_WARM_KCOLL where it is kcoll's algorithm,
 * else 1. A call's time is this rank's, from the line-up to the call's return
 * (host or kcoll), and for kcoll's candidate also from the call's entry to
 * the line-up (adapt.h): what kcoll spends describing, deciding and
 * agreeing is counted on its side, as a program pays it at every call,
 * while the host's repeats skip all of it (the shortcut).
 *
 * Cost: a call of a checked pattern that is not timed costs a few
 * loads and stores more than before. The lead's calls (0 .. L - 1) run
 * the choice as a decided pattern's calls do, so the memo (call/call.c)
 * and the shortcut (call/shortcut.h) take them where the choice is the
 * host (kcoll_adapt_leading: counted, and call L reaches this selection
 * on every rank alike); from call L on neither is used until the pattern
 * is decided.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/params.h"
#include "base/stats.h"
#include "call/adapt.h"
#include "sched/share.h"

/* This thread's timed call: the decision it belongs to, its candidate,
 * the sharing that lines the ranks up before it, and when it began. */
typedef struct {
    kcoll_team_t *team;
    int key, cand;
    int kcoll; /* the candidate is one of kcoll's algorithms (not the host) */
    uint64_t ticket;
    int64_t t0;
} kcoll_timed_t;

static __thread __attribute__((tls_model("initial-exec"))) kcoll_timed_t kcoll_timed;
__thread __attribute__((tls_model("initial-exec"))) void *kcoll_adapt_timed;
_Atomic int kcoll_adapt_watch;
__thread __attribute__((tls_model("initial-exec"))) int64_t kcoll_adapt_entry;
/* calls that note their entry after a call of a pattern under check: more
 * than a whole check's, so the watch lasts while any check runs */
#define KCOLL_ADAPT_WATCH 600

typedef __typeof__(((kcoll_decisions_t *)0)->e[0]) kcoll_dentry_t;

/* KCOLL_TEST_ADAPT_SLOW "R:US": team rank R waits US microseconds at the
 * start of every timed call of a decision's own choice. Returns the wait in
 * ns for team rank `rank`, 0 for none. */
static int64_t kcoll_adapt_slow_ns(int rank)
{
    const char *v = kcoll_param_str(KCOLL_P_TEST_ADAPT_SLOW);
    int r;
    long us;
    if (!v || !*v || sscanf(v, "%d:%ld", &r, &us) != 2 || r != rank || us <= 0)
        return 0;
    return (int64_t)us * 1000;
}

/* Side `which` of entry e (0: the choice, 1: the runner-up) as a choice
 * (a checked decision is never a forced one); returns its result. */
static kcoll_select_t kcoll_adapt_side(const kcoll_dentry_t *e, int which, kcoll_choice_t *ch)
{
    const int algo = which ? e->alt_algo : e->algo;
    const kcoll_select_t res = (kcoll_select_t)(which ? e->alt_result : e->result);
    ch->algo = res == KCOLL_SELECT_KCOLL && algo >= 0 ? &kcoll_algos[algo] : NULL;
    ch->prm = which ? e->alt_prm : e->prm;
    ch->forced = 0;
    ch->engine = which ? e->alt_engine : e->engine;
    return res;
}

/* r runs side `which` of entry e: its result. */
static kcoll_select_t kcoll_adapt_apply(kcoll_req_t *r, const kcoll_dentry_t *e, int which)
{
    return kcoll_adapt_side(e, which, &r->choice);
}

double kcoll_adapt_typical(double *t, int n)
{
    if (n <= 0)
        return 0;
    qsort(t, (size_t)n, sizeof *t, kcoll_double_cmp);
    int m = 1;
    while (m < n && t[m] <= KCOLL_ADAPT_SPIKE * t[0])
        m++;
    return kcoll_median_sorted(t, m); /* of the first m, sorted above */
}

int kcoll_adapt_winner(const double med[2], int host)
{
    /* kcoll's side runs where it is faster by more than the margins, the
     * host's everywhere else: a tie is the host's (never slower), whichever
     * side ran before, so a pattern cannot flap either */
    const double k = med[!host], h = med[host];
    return k < h * (1 - KCOLL_ADAPT_MARGIN) && k < h - KCOLL_ADAPT_MARGIN_S ? !host : host;
}

int kcoll_adapt_key(const kcoll_req_t *r)
{
    return kcoll_decision_key(r->call.coll, r->policy_bytes,
                              kcoll_param_int(KCOLL_P_MIN_BYTES) < 0,
                              r->cache == KCOLL_CACHE_HOT);
}

kcoll_select_t kcoll_adapt_select(kcoll_req_t *r, kcoll_select_t s, int *share)
{
    *share = 0;
    /* (a forced choice has no entry: one of the key's is the model's,
     * kept for when the family is left to it again) */
    if (s == KCOLL_SELECT_BAD || r->choice.forced ||
        !kcoll_select_sized(r->call.coll, r->policy_bytes))
        return s;
    const int key = kcoll_adapt_key(r);
    kcoll_dentry_t *e = &r->team->decisions.e[key % KCOLL_DECISIONS];
    if (e->key != key)
        return s;
    if (e->phase == KCOLL_ADAPT_NEW) {
        const int64_t max = kcoll_param_int(KCOLL_P_ADAPT_MAX_BYTES);
        e->phase = e->has_alt && kcoll_param_int(KCOLL_P_ADAPT) &&
                           kcoll_param_int(KCOLL_P_ADAPT_CALLS) > 0 &&
                           (max < 0 || r->policy_bytes == KCOLL_BYTES_UNKNOWN ||
                            kcoll_class_bytes(r->policy_bytes) <= (size_t)max)
                       ? KCOLL_ADAPT_TRY
                       : KCOLL_ADAPT_OFF;
    }
    if (e->phase == KCOLL_ADAPT_OFF)
        return s;
    /* not timed: runs what the pattern runs now */
    if (r->mode != KCOLL_MODE_BLOCKING)
        return kcoll_adapt_apply(r, e, e->cur);
    if (e->phase == KCOLL_ADAPT_SET) {
        kcoll_adapt_memo(&r->team->decisions, key % KCOLL_DECISIONS);
        return kcoll_adapt_apply(r, e, e->cur);
    }
    int64_t k = kcoll_param_int(KCOLL_P_ADAPT_CALLS);
    if (k > KCOLL_ADAPT_SAMPLES)
        k = KCOLL_ADAPT_SAMPLES;
    /* A first check waits KCOLL_ADAPT_SETTLE calls (running the choice;
     * KCOLL_ADAPT_SETTLE_LARGE of large patterns):
     * a host's own first calls of a size can be many times slower than
     * its later ones (MPICH 4.0's 256-byte Allreduce: 6 us for its first
     * 20 calls, 3.3 us for the next 20, 1.0 us from the 43rd on). Then
     * each candidate's calls come in a block, the runner-up's first one
     * untimed: a call after one of the other side finds the caches where
     * the other left them, and a program repeats one side, not both. */
    const uint32_t lead = kcoll_adapt_lead(&r->team->decisions, key % KCOLL_DECISIONS);
    const uint32_t kk = (uint32_t)k;
    /* the runner-up settles too (the 64 calls of the choice did nothing
     * for it: MPICH 4.0.2's 4 KiB Gather takes 10-13 us for its first 32
     * calls, 2 us after), where its calls are short; kcoll's own settles
     * in a few (adapt.h) */
    const uint32_t warm = kcoll_adapt_warm(&r->team->decisions, key % KCOLL_DECISIONS);
    /* relaxed: a count of calls (adapt.h), ordering nothing */
    atomic_store_explicit(&kcoll_adapt_watch, KCOLL_ADAPT_WATCH, memory_order_relaxed);
    const uint32_t i = e->calls++;
    if (i < lead)
        return kcoll_adapt_apply(r, e, 0);
    const uint32_t j = i - lead;
    if (j >= 2 * kk + warm) {
        *share = 1; /* kcoll_adapt_share decides this call */
        return kcoll_adapt_apply(r, e, e->cur);
    }
    const int cand = j >= kk;
    if (j < kk || j >= kk + warm) {
        kcoll_timed.team = r->team;
        kcoll_timed.key = key;
        kcoll_timed.cand = cand;
        kcoll_timed.ticket = ++r->team->share_ticket;
        kcoll_timed.t0 = 0; /* kcoll_adapt_begin */
        kcoll_adapt_timed = &kcoll_timed;
    }
    const kcoll_select_t res = kcoll_adapt_apply(r, e, cand);
    if (kcoll_adapt_timed)
        kcoll_timed.kcoll = res == KCOLL_SELECT_KCOLL;
    return res;
}

int kcoll_adapt_begin(kcoll_req_t *r)
{
    if (!kcoll_adapt_timed || kcoll_timed.t0)
        return 0;
    /* kcoll's candidate: from the call's entry, less the line-up (its
     * entry noted within the last millisecond: this call's) */
    const int64_t before = kcoll_now_ns();
    const int64_t pre = kcoll_timed.kcoll && kcoll_adapt_entry > 0 &&
                                kcoll_adapt_entry <= before && before - kcoll_adapt_entry < 1000000
                            ? before - kcoll_adapt_entry
                            : 0;
    kcoll_adapt_entry = 0;
    /* Line the ranks up first: a rank's time in a call otherwise holds
     * its wait for ranks still in the previous one (a broadcast's root
     * that returned early waits in the next call for the others), and
     * that wait would be charged to whichever candidate comes next. */
    if (kcoll_share(&r->team->ctl, kcoll_timed.ticket, NULL, NULL, kcoll_progress, r->errmsg,
                    sizeof r->errmsg) != KCOLL_OK) {
        kcoll_adapt_timed = NULL;
        return -1;
    }
    kcoll_timed.t0 = kcoll_now_ns() - pre;
    const int64_t ns = kcoll_timed.cand == 0 ? kcoll_adapt_slow_ns(r->call.rank) : 0;
    if (ns > 0) {
        struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
        nanosleep(&ts, NULL);
    }
    return 0;
}

void kcoll_adapt_end_timed(void)
{
    const double dt = (double)(kcoll_now_ns() - kcoll_timed.t0) * 1e-9;
    kcoll_team_t *t = kcoll_timed.team;
    kcoll_adapt_timed = NULL;
    kcoll_team_lock(t);
    kcoll_dentry_t *e = &t->decisions.e[kcoll_timed.key % KCOLL_DECISIONS];
    const int c = kcoll_timed.cand;
    if (e->key == kcoll_timed.key && e->phase == KCOLL_ADAPT_TRY && e->n[c] < KCOLL_ADAPT_SAMPLES)
        e->t[c][e->n[c]++] = (float)dt;
    kcoll_team_unlock(t);
}

/* The checks this process closed, for the statistics report. */
#define KCOLL_ADAPT_EVENTS 32
typedef struct {
    int row, p, hot, cur, was;
    size_t bytes;
    double t[2]; /* median completion time of each candidate, seconds */
    char spec[2][48];
} kcoll_adapt_event_t;
static kcoll_adapt_event_t kcoll_events[KCOLL_ADAPT_EVENTS];
static int kcoll_nevents;
static pthread_mutex_t kcoll_events_lock = PTHREAD_MUTEX_INITIALIZER;

static void kcoll_adapt_spec(const kcoll_dentry_t *e, int which, char *out, size_t len)
{
    kcoll_choice_t ch;
    kcoll_adapt_side(e, which, &ch);
    kcoll_choice_spec(&ch, out, len);
}

_Static_assert(KCOLL_SHARE_VALS >= 2 * KCOLL_ADAPT_SAMPLES + 2, "a sharing holds a check's times");

int kcoll_adapt_share(kcoll_req_t *r)
{
    kcoll_team_t *t = r->team;
    const int key = kcoll_adapt_key(r), slot = key % KCOLL_DECISIONS, p = r->call.p;
    const int S = KCOLL_ADAPT_SAMPLES, V = KCOLL_SHARE_VALS;
    float mine[KCOLL_SHARE_VALS] = {0};
    kcoll_team_lock(t);
    kcoll_dentry_t *e = &t->decisions.e[slot];
    for (int c = 0; c < 2; c++) {
        for (int i = 0; i < e->n[c]; i++)
            mine[c * S + i] = e->t[c][i];
        mine[2 * S + c] = e->n[c];
    }
    kcoll_team_unlock(t);
    float *all = malloc((size_t)p * KCOLL_SHARE_VALS * sizeof *all);
    if (!all) {
        snprintf(r->errmsg, sizeof r->errmsg, "out of memory for the check of a decision");
        return -1;
    }
    if (kcoll_req_share(r, mine, all)) {
        free(all);
        return -1;
    }
    /* Every rank computes the same numbers from the same values: for each
     * timed call, its time on the slowest rank (the ranks started it
     * together: the call's completion), then the median over the calls of
     * each candidate, as kcoll-bench measures, its spikes left out
     * (kcoll_adapt_typical). Timed call i of a candidate is the same call
     * on every rank. */
    double med[2] = {0, 0};
    int complete = 1;
    for (int c = 0; c < 2; c++) {
        double worst[KCOLL_ADAPT_SAMPLES];
        int n = S;
        for (int q = 0; q < p; q++)
            if (all[q * V + 2 * S + c] < n)
                n = (int)all[q * V + 2 * S + c];
        for (int i = 0; i < n; i++) {
            double w = 0;
            for (int q = 0; q < p; q++)
                if (all[q * V + c * S + i] > w)
                    w = all[q * V + c * S + i];
            worst[i] = w;
        }
        complete &= n > 0;
        med[c] = kcoll_adapt_typical(worst, n);
    }
    free(all);

    kcoll_team_lock(t);
    e = &t->decisions.e[slot];
    const int was = e->cur;
    int cur = was;
    if (complete)
        cur = kcoll_adapt_winner(med, e->result == KCOLL_SELECT_HOST ? 0 : 1);
    e->cur = (int8_t)cur;
    e->phase = KCOLL_ADAPT_SET;
    e->again = 1;
    e->calls = 0;
    e->n[0] = e->n[1] = 0;
    kcoll_adapt_event_t ev = {.row = r->row, .p = p, .hot = r->cache == KCOLL_CACHE_HOT,
                              .cur = cur, .was = was,
                              .bytes = r->policy_bytes == KCOLL_BYTES_UNKNOWN ? 0 : r->policy_bytes,
                              .t = {med[0], med[1]}};
    kcoll_adapt_spec(e, 0, ev.spec[0], sizeof ev.spec[0]);
    kcoll_adapt_spec(e, 1, ev.spec[1], sizeof ev.spec[1]);
    const kcoll_select_t res = kcoll_adapt_apply(r, e, cur);
    kcoll_team_unlock(t);

    kcoll_stats_add(r->row, KCOLL_PATH_ADAPT_CHECK, r->stat_bytes, kcoll_team_threads);
    if (cur != was)
        kcoll_stats_add(r->row, KCOLL_PATH_ADAPT_SWITCH, r->stat_bytes, kcoll_team_threads);
    pthread_mutex_lock(&kcoll_events_lock);
    kcoll_events[kcoll_nevents++ % KCOLL_ADAPT_EVENTS] = ev;
    pthread_mutex_unlock(&kcoll_events_lock);
    if (kcoll_param_int(KCOLL_P_TRACE)) {
        char name[48];
        fprintf(stderr,
                "kcoll: trace: %s checked at %zu bytes (%s), %d ranks: %s %.2f us, %s %.2f us "
                "(median completion times): %s%s\n",
                kcoll_stats_row_name(r->row, name, sizeof name), ev.bytes,
                ev.hot ? "hot" : "cold", p, ev.spec[0], med[0] * 1e6, ev.spec[1], med[1] * 1e6,
                ev.spec[cur], cur != was ? " from now on" : " stays");
    }
    return (int)res;
}

void kcoll_adapt_report(FILE *out)
{
    pthread_mutex_lock(&kcoll_events_lock);
    const int n = kcoll_nevents < KCOLL_ADAPT_EVENTS ? kcoll_nevents : KCOLL_ADAPT_EVENTS;
    if (n)
        fprintf(out, "# decisions checked by measurement on this rank's communicators "
                     "(median completion times; KCOLL_ADAPT, docs/adapt.md)\n");
    for (int i = kcoll_nevents - n; i < kcoll_nevents; i++) {
        const kcoll_adapt_event_t *ev = &kcoll_events[i % KCOLL_ADAPT_EVENTS];
        char name[48];
        fprintf(out, "  %-20s %d ranks %10zu bytes %-4s  %s %.2f us, %s %.2f us: %s%s\n",
                kcoll_stats_row_name(ev->row, name, sizeof name), ev->p, ev->bytes,
                ev->hot ? "hot" : "cold", ev->spec[0], ev->t[0] * 1e6, ev->spec[1],
                ev->t[1] * 1e6, ev->spec[ev->cur], ev->cur != ev->was ? " (switched)" : "");
    }
    pthread_mutex_unlock(&kcoll_events_lock);
}
