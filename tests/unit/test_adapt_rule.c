/* The rule that ends a check of a decision (call/adapt.h,
 * kcoll_adapt_winner): kcoll's side runs only where its median is lower
 * than the host's by more than KCOLL_ADAPT_MARGIN of the host's time and
 * by more than KCOLL_ADAPT_MARGIN_S; otherwise the host runs, whether the
 * model had chosen it (side 0) or kcoll's algorithm (side 1, the host then
 * the runner-up), each side's median without its spikes
 * (kcoll_adapt_typical). And the count of a check's calls that the memo and the
 * shortcut may take (kcoll_adapt_memo, kcoll_adapt_calls_left,
 * kcoll_adapt_count): a first check's lead of KCOLL_ADAPT_SETTLE calls
 * (KCOLL_ADAPT_SETTLE_LARGE from a quarter MiB),
 * which run the choice untimed, but never the timed calls after it; a
 * decided pattern's calls up to its next check. */
#include <string.h>

#include "call/adapt.h"
#include "check.h"

#define US 1e-6

/* the side that wins when kcoll's median is kc_us and the host's h_us */
static int kcoll_wins(double kc_us, double h_us, int host)
{
    double med[2];
    med[host] = h_us * US;
    med[!host] = kc_us * US;
    return kcoll_adapt_winner(med, host) == !host;
}

int main(void)
{
    const double m = KCOLL_ADAPT_MARGIN, ms = KCOLL_ADAPT_MARGIN_S / US;
    for (int host = 0; host < 2; host++) {
        /* kcoll clearly faster (half the time, many us apart): kcoll */
        CHECK(kcoll_wins(10.0, 20.0, host), "host side %d: 10 us against 20 us", host);
        /* equal: the host */
        CHECK(!kcoll_wins(10.0, 10.0, host), "host side %d: a tie", host);
        /* faster by half the margin (a fraction): the host */
        CHECK(!kcoll_wins(100.0 * (1 - m / 2), 100.0, host), "host side %d: within %g", host, m);
        /* past the fraction, but by less than the margin in time: the host */
        CHECK(!kcoll_wins(2.0 - ms / 2, 2.0, host), "host side %d: %g us apart", host, ms / 2);
        /* past both: kcoll */
        CHECK(kcoll_wins(2.0 - 2 * ms, 2.0, host), "host side %d: %g us apart", host, 2 * ms);
        /* the host faster: the host */
        CHECK(!kcoll_wins(20.0, 10.0, host), "host side %d: the host faster", host);
    }
    /* the cases that were wrong: the model chose kcoll's split_rw (side 0,
     * the host side 1); the check read it 2.47 us and the host 2.41 us
     * (a tie the incumbent kept), then 2.07 us against 2.15 us (4% apart,
     * 0.08 us: the line-up's start costs the host that much) */
    CHECK(!kcoll_wins(2.47, 2.41, 1), "split_rw 2.47 us against the host's 2.41 us");
    CHECK(!kcoll_wins(2.07, 2.15, 1), "split_rw 2.07 us against the host's 2.15 us");

    /* A side's median leaves its spikes out (kcoll_adapt_typical): a
     * check of Intel MPI 2021.14's 8 B Allgather at 2 ranks in its first
     * 512 calls (each call's completion on the slower rank, us), against
     * kcoll's ring_neighbor. With the spikes the host read 8.2 us and lost
     * the pattern to kcoll; without them it keeps it. */
    double host8[8] = {38.0, 38.0, 1.1, 1.2, 38.8, 1.3, 38.4, 1.5};
    double ring8[8] = {3.5, 3.9, 3.3, 3.0, 3.0, 3.5, 4.2, 3.1};
    double med[2];
    med[0] = kcoll_adapt_typical(host8, 8) * US;
    med[1] = kcoll_adapt_typical(ring8, 8) * US;
    CHECK(med[0] > 1.24 * US && med[0] < 1.26 * US, "the host without its spikes: %.2f us (1.25)",
          med[0] / US);
    CHECK(med[1] > 3.39 * US && med[1] < 3.41 * US, "ring_neighbor, none left out: %.2f us (3.40)",
          med[1] / US);
    CHECK(kcoll_adapt_winner(med, 0) == 0, "the host keeps the 8 B Allgather");
    /* a call up to KCOLL_ADAPT_SPIKE times the fastest counts; one call
     * alone is its own median; none is 0 */
    double edge[4] = {4.0 * KCOLL_ADAPT_SPIKE, 4.0, 4.0 * KCOLL_ADAPT_SPIKE + 0.5, 5.0};
    const double typical = kcoll_adapt_typical(edge, 4);
    CHECK(typical == 5.0, "4, 5, %g count, %g does not: %g (5)", 4.0 * KCOLL_ADAPT_SPIKE,
          4.0 * KCOLL_ADAPT_SPIKE + 0.5, typical);
    double one[1] = {7.0};
    CHECK(kcoll_adapt_typical(one, 1) == 7.0 && kcoll_adapt_typical(one, 0) == 0,
          "one call, no call");

    /* A first check's lead: call 0 went through the selection (the
     * pattern's first), then the memo takes calls 1..L-1 and the shortcut
     * may take what is left of them; call L (the first timed) is the
     * selection's again. */
    static kcoll_decisions_t d;
    memset(&d, 0, sizeof d);
    /* a 1 KiB Bcast's decision (a large one's lead is shorter, below) */
    const int key = kcoll_decision_key(KCOLL_COLL_BCAST, 1024, 1, 0);
    const int slot = key % KCOLL_DECISIONS;
    d.e[slot].key = key;
    d.e[slot].phase = KCOLL_ADAPT_TRY;
    d.e[slot].calls = 1;
    const uint64_t most = 1u << 30;
    CHECK(kcoll_adapt_leading(&d, slot), "call 1 of a first check leads");
    CHECK(kcoll_adapt_memo(&d, slot) == 1 && d.e[slot].calls == 2, "the memo takes call 1");
    CHECK(kcoll_adapt_calls_left(&d, slot, most) == KCOLL_ADAPT_SETTLE - 2,
          "the shortcut may take calls 2..%d: %llu", KCOLL_ADAPT_SETTLE - 1,
          (unsigned long long)kcoll_adapt_calls_left(&d, slot, most));
    CHECK(kcoll_adapt_calls_left(&d, slot, 5) == 5, "at most `most`");
    kcoll_adapt_count(&d, slot, key + 1, 10);
    CHECK(d.e[slot].calls == 2, "another decision's calls are not counted");
    kcoll_adapt_count(&d, slot, key, KCOLL_ADAPT_SETTLE - 2);
    CHECK(d.e[slot].calls == KCOLL_ADAPT_SETTLE, "the shortcut's calls counted");
    CHECK(!kcoll_adapt_leading(&d, slot) && kcoll_adapt_calls_left(&d, slot, most) == 0 &&
              kcoll_adapt_memo(&d, slot) == 0 && d.e[slot].calls == KCOLL_ADAPT_SETTLE,
          "the first timed call is neither the memo's nor the shortcut's");
    /* a check again leads with one call */
    d.e[slot].again = 1;
    d.e[slot].calls = 0;
    CHECK(kcoll_adapt_calls_left(&d, slot, most) == 1 && kcoll_adapt_memo(&d, slot) == 1,
          "a check again: one call of lead");
    CHECK(kcoll_adapt_calls_left(&d, slot, most) == 0 && kcoll_adapt_memo(&d, slot) == 0,
          "a check again: then timed calls");
    /* decided: up to the call that starts the next check, which the memo
     * takes and turns into a check again */
    d.e[slot].phase = KCOLL_ADAPT_SET;
    d.e[slot].calls = 0;
    const uint64_t every = (uint64_t)kcoll_param_int(KCOLL_P_ADAPT_RECHECK);
    CHECK(kcoll_adapt_calls_left(&d, slot, most) == every - 1, "decided: %llu calls",
          (unsigned long long)(every - 1));
    kcoll_adapt_count(&d, slot, key, every - 1);
    CHECK(kcoll_adapt_calls_left(&d, slot, most) == 0 && kcoll_adapt_memo(&d, slot) == 1 &&
              d.e[slot].phase == KCOLL_ADAPT_TRY && d.e[slot].calls == 0,
          "the call reaching KCOLL_ADAPT_RECHECK starts a check");
    /* a first check of a large pattern leads with KCOLL_ADAPT_SETTLE_LARGE
     * calls and warms the runner-up with one: from a quarter MiB, not
     * below (there the host with KCOLL_ADAPT_WARM_HOST) */
    const size_t sizes[] = {KCOLL_ADAPT_WARM_BYTES - 1, KCOLL_ADAPT_WARM_BYTES,
                            16u << 20};
    for (int i = 0; i < 3; i++) {
        const int k = kcoll_decision_key(KCOLL_COLL_ALLREDUCE, sizes[i], 1, 1);
        const int s = k % KCOLL_DECISIONS;
        memset(&d.e[s], 0, sizeof d.e[s]);
        d.e[s].key = (int16_t)k;
        d.e[s].phase = KCOLL_ADAPT_TRY;
        const uint32_t want = i ? KCOLL_ADAPT_SETTLE_LARGE : KCOLL_ADAPT_SETTLE;
        CHECK(kcoll_adapt_lead(&d, s) == want &&
                  kcoll_adapt_calls_left(&d, s, most) == want,
              "%zu bytes: a lead of %u calls (%u)", sizes[i], want, kcoll_adapt_lead(&d, s));
        d.e[s].alt_result = KCOLL_SELECT_HOST;
        const uint32_t warm = i ? 1 : KCOLL_ADAPT_WARM_HOST;
        CHECK(kcoll_adapt_warm(&d, s) == warm, "%zu bytes: the host warms with %u calls (%u)",
              sizes[i], warm, kcoll_adapt_warm(&d, s));
    }
    /* a call of no size (the Barrier's) warms with one, kcoll's runner-up
     * below a quarter MiB with KCOLL_ADAPT_WARM_KCOLL */
    for (int i = 0; i < 2; i++) {
        const int k = kcoll_decision_key(KCOLL_COLL_ALLREDUCE, i ? 4096 : KCOLL_BYTES_UNKNOWN, 1,
                                         1);
        const int s = k % KCOLL_DECISIONS;
        memset(&d.e[s], 0, sizeof d.e[s]);
        d.e[s].key = (int16_t)k;
        d.e[s].phase = KCOLL_ADAPT_TRY;
        d.e[s].alt_result = i ? KCOLL_SELECT_KCOLL : KCOLL_SELECT_HOST;
        const uint32_t warm = i ? KCOLL_ADAPT_WARM_KCOLL : 1;
        CHECK(kcoll_adapt_warm(&d, s) == warm, "%s: a warm-up of %u calls (%u)",
              i ? "4 KiB, kcoll's runner-up" : "no size", warm, kcoll_adapt_warm(&d, s));
        d.e[s].again = 1;
        CHECK(kcoll_adapt_warm(&d, s) == 1, "a check again warms with one call");
    }
    return check_report("test_adapt_rule");
}
