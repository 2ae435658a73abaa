/* The rule that ends a check of a decision (call/adapt.h,
 * kcoll_adapt_winner): kcoll's side runs only where its median is lower
 * than the host's by more than KCOLL_ADAPT_MARGIN; within the margin the
 * host runs, whether the model had chosen it (side 0) or kcoll's
 * algorithm (side 1, the host then the runner-up). */
#include "call/adapt.h"
#include "check.h"

static int winner(double choice_us, double runner_us, int host)
{
    const double med[2] = {choice_us, runner_us};
    return kcoll_adapt_winner(med, host);
}

int main(void)
{
    const double m = KCOLL_ADAPT_MARGIN;
    for (int host = 0; host < 2; host++) {
        const int kc = !host;
        double t[2];
        /* kcoll clearly faster: kcoll */
        t[host] = 2.0, t[kc] = 1.0;
        CHECK(winner(t[0], t[1], host) == kc, "host side %d: 1.0 against 2.0", host);
        /* kcoll faster, but within the margin: the host */
        t[host] = 1.0, t[kc] = 1.0 - m / 2;
        CHECK(winner(t[0], t[1], host) == host, "host side %d: within the margin", host);
        /* equal: the host */
        t[host] = t[kc] = 1.0;
        CHECK(winner(t[0], t[1], host) == host, "host side %d: a tie", host);
        /* the host faster by a little: the host */
        t[host] = 1.0 - m / 2, t[kc] = 1.0;
        CHECK(winner(t[0], t[1], host) == host, "host side %d: host a little faster", host);
        /* kcoll faster by just over the margin: kcoll */
        t[host] = 1.0, t[kc] = 1.0 - 2 * m;
        CHECK(winner(t[0], t[1], host) == kc, "host side %d: past the margin", host);
    }
    /* the case that was wrong: the model chose kcoll's split_rw (side 0),
     * the check read it 2.47 us and the host 2.41 us; kcoll's kept its
     * place as the incumbent, now the host runs */
    CHECK(winner(2.47, 2.41, 1) == 1, "split_rw 2.47 us against the host's 2.41 us");
    return check_report("test_adapt_rule");
}
