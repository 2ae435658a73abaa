/* Parameters and algorithm specs: parsing, defaults, the environment,
 * invalid values rejected with the default kept. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "coll/coll.h"
#include "base/params.h"

int main(void)
{
    int64_t v;
    CHECK(kcoll_parse_size("16384", &v) == 0 && v == 16384, "plain");
    CHECK(kcoll_parse_size("16k", &v) == 0 && v == 16384, "k");
    CHECK(kcoll_parse_size("16KiB", &v) == 0 && v == 16384, "KiB");
    CHECK(kcoll_parse_size("2M", &v) == 0 && v == 2 << 20, "M");
    CHECK(kcoll_parse_size("1GB", &v) == 0 && v == 1 << 30, "GB");
    CHECK(kcoll_parse_size("0", &v) == 0 && v == 0, "zero");
    CHECK(kcoll_parse_size("-1", &v) != 0, "negative");
    CHECK(kcoll_parse_size("12q", &v) != 0, "junk suffix");
    CHECK(kcoll_parse_size("", &v) != 0, "empty");

    setenv("KCOLL_MIN_BYTES", "64k", 1);
    setenv("KCOLL_STATS", "yes", 1);
    setenv("KCOLL_SPIN", "notanumber", 1);
    setenv("KCOLL_WARN", "0", 1); /* the warning about KCOLL_SPIN stays quiet */
    kcoll_params_load();
    CHECK(kcoll_param_int(KCOLL_P_MIN_BYTES) == 65536, "env size");
    CHECK(kcoll_param_int(KCOLL_P_STATS) == 1, "env bool");
    CHECK(kcoll_param_int(KCOLL_P_SPIN) == atoi(kcoll_param_desc[KCOLL_P_SPIN].def),
          "bad value keeps default");
    CHECK(!strcmp(kcoll_param_str(KCOLL_P_BCAST_ALGO), "auto"), "string default");

    CHECK(kcoll_params_set("BCAST_ALGO", "knomial:k=8") == 0, "set by short name");
    CHECK(!strcmp(kcoll_params_get("KCOLL_BCAST_ALGO"), "knomial:k=8"), "get by long name");
    CHECK(kcoll_params_set("NO_SUCH_PARAM", "1") == -1, "unknown name");
    CHECK(kcoll_params_set("DISABLE", "maybe") == -1, "bad bool");
    CHECK(kcoll_param_int(KCOLL_P_DISABLE) == 0, "bad set keeps value");

    const kcoll_algo_t *a;
    int k;
    char err[256];
    CHECK(kcoll_algo_parse(KCOLL_COLL_BCAST, "auto", &a, &k, err, sizeof err) == 0 && !a, "auto");
    CHECK(kcoll_algo_parse(KCOLL_COLL_BCAST, "", &a, &k, err, sizeof err) == 0 && !a, "empty");
    CHECK(kcoll_algo_parse(KCOLL_COLL_BCAST, "knomial", &a, &k, err, sizeof err) == 0 && a &&
              k == a->param_default,
          "default k");
    CHECK(kcoll_algo_parse(KCOLL_COLL_BCAST, "knomial:k=7", &a, &k, err, sizeof err) == 0 &&
              k == 7,
          "k=7");
    CHECK(kcoll_algo_parse(KCOLL_COLL_BCAST, "knomial:k=1", &a, &k, err, sizeof err) == -1 &&
              strstr(err, ">= 2"),
          "k=1 refused: %s", err);
    CHECK(kcoll_algo_parse(KCOLL_COLL_BCAST, "knomial:j=3", &a, &k, err, sizeof err) == -1,
          "wrong parameter name");
    CHECK(kcoll_algo_parse(KCOLL_COLL_BCAST, "direct_read:k=3", &a, &k, err, sizeof err) == -1 &&
              strstr(err, "no parameter"),
          "parameter to a parameterless algorithm: %s", err);
    CHECK(kcoll_algo_parse(KCOLL_COLL_BCAST, "fastest", &a, &k, err, sizeof err) == -1 &&
              strstr(err, "split_rw"),
          "unknown name lists the known ones: %s", err);
    for (int i = 0; i < kcoll_nalgos; i++)
        CHECK(kcoll_algo_parse(kcoll_algos[i].coll, kcoll_algos[i].name, &a, &k, err, sizeof err) ==
                      0 &&
                  a == &kcoll_algos[i],
              "registry name %s", kcoll_algos[i].name);

    /* the default rule returns an algorithm of the right collective */
    for (int p = 2; p <= 64; p *= 2)
        for (size_t n = 1; n <= (64u << 20); n *= 8) {
            a = kcoll_bcast_select(p, n, &k);
            CHECK(a && a->coll == KCOLL_COLL_BCAST && (!a->param || k >= a->param_min),
                  "select p=%d n=%zu", p, n);
        }

    /* kcoll_split covers [0, n) exactly, in order */
    for (size_t n = 0; n < 200000; n = n * 3 + 1)
        for (int parts = 1; parts <= 9; parts++) {
            size_t next = 0;
            for (int i = 0; i < parts; i++) {
                size_t off, len;
                kcoll_split(n, parts, i, &off, &len);
                CHECK(off == next, "split n=%zu parts=%d i=%d", n, parts, i);
                next = off + len;
            }
            CHECK(next == n, "split covers n=%zu parts=%d", n, parts);
        }
    return check_report("test_params");
}
