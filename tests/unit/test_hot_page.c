/* The hot page (base/hot.h): every variable that a call handed straight to
 * the host MPI reads (the shortcut's and the host streak's fast paths)
 * lies on one page, the first of section kcoll_hot, and the section is no
 * larger than that page. The linker names the section's bounds
 * (__start_kcoll_hot, __stop_kcoll_hot); the library links the same
 * objects in the same order as this program; tests/unit/hot_page_library.sh
 * checks the library itself. */
#include <stdint.h>

#include "base/hot.h"
#include "base/params.h"
#include "call/call.h"
#include "call/shortcut.h"
#include "check.h"
#include "team/team.h"

extern char __start_kcoll_hot[], __stop_kcoll_hot[];

static int on_page(const void *p, size_t len)
{
    const uintptr_t a = (uintptr_t)p, first = (uintptr_t)__start_kcoll_hot;
    return a >= first && a + len <= first + KCOLL_HOT_PAGE;
}

int main(void)
{
    const uintptr_t start = (uintptr_t)__start_kcoll_hot;
    CHECK(start % KCOLL_HOT_PAGE == 0, "the section starts a page (at %#lx)",
          (unsigned long)start);
    CHECK((size_t)(__stop_kcoll_hot - __start_kcoll_hot) <= KCOLL_HOT_PAGE,
          "the section fits in a page: %zu bytes",
          (size_t)(__stop_kcoll_hot - __start_kcoll_hot));
    CHECK(on_page(&kcoll_params_gen, sizeof kcoll_params_gen), "the parameter generation");
    CHECK(on_page(&kcoll_npending, sizeof kcoll_npending), "the count of pending requests");
    CHECK(on_page(&kcoll_team_threads, sizeof kcoll_team_threads), "the threads flag");
    CHECK(on_page(kcoll_shortcuts, sizeof kcoll_shortcuts), "the shortcuts");
    CHECK(on_page(kcoll_streak_fasts, sizeof kcoll_streak_fasts), "the streaks' fast paths");
    CHECK(on_page(kcoll_host_fns, sizeof kcoll_host_fns), "the host functions they call");
    return check_report("test_hot_page");
}
