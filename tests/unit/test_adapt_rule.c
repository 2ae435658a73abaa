/* The rule that ends a check of a decision (call/adapt.h,
 * kcoll_adapt_winner): kcoll's side runs only where its median is lower
 * than the host's by more than KCOLL_ADAPT_MARGIN of the host's time and
 * by more than KCOLL_ADAPT_MARGIN_S; otherwise the host runs, whether the
 * model had chosen it (side 0) or kcoll's algorithm (side 1, the host then
 * the runner-up). */
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
    return check_report("test_adapt_rule");
}
