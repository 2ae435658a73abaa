/* Tuning files: the defaults written and read back field for field; a
 * hand-written file with every field lands in the right fields with the
 * right units; every error names its line and leaves exactly the built-in
 * defaults; a file that sets one field keeps every other default; files
 * on disk load, and a missing one says so. */
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "model/tuning.h"

static int close_to(double a, double b)
{
    return a == b || fabs(a - b) <= 1e-6 * fmax(fabs(a), fabs(b));
}

/* The first field in which a and b differ (relative 1e-6), or NULL. */
static const char *machine_diff(const kcoll_machine_t *a, const kcoll_machine_t *b)
{
#define D(f)                                                                                       \
    if (!close_to(a->f, b->f))                                                                     \
        return #f;
    if (strcmp(a->source, b->source))
        return "source";
    D(alpha) D(beta) D(beta_write) D(l) D(page) D(pkg_cores) D(copy_alpha) D(copy_beta) D(package_bw) D(link_bw) D(stream_beta)
    D(flag) D(step) D(call) D(call_data) D(host_alpha) D(host_beta) D(net_alpha) D(net_beta)
    for (int i = 0; i < KCOLL_NRCLASS; i++)
        D(reduce_beta[i])
    const kcoll_gamma_t *ga[2] = {&a->gamma_intra, &a->gamma_inter};
    const kcoll_gamma_t *gb[2] = {&b->gamma_intra, &b->gamma_inter};
    for (int g = 0; g < 2; g++) {
        for (int i = 0; i < 3; i++)
            if (!close_to(ga[g]->poly[i], gb[g]->poly[i]))
                return g ? "gamma_inter.poly" : "gamma_intra.poly";
        if (ga[g]->nmeasured != gb[g]->nmeasured)
            return g ? "gamma_inter.nmeasured" : "gamma_intra.nmeasured";
        for (int i = 0; i < ga[g]->nmeasured; i++)
            if (!close_to(ga[g]->measured[i], gb[g]->measured[i]))
                return g ? "gamma_inter.measured" : "gamma_intra.measured";
    }
    for (int c = 0; c < KCOLL_NCOLL; c++) {
        D(nhost[c])
        for (int i = 0; i < a->nhost[c]; i++) {
            D(host[c][i].p) D(host[c][i].bytes) D(host[c][i].t)
        }
    }
    return NULL;
#undef D
}

static const char *tuning_diff(const kcoll_tuning_t *a, const kcoll_tuning_t *b)
{
    const char *d = machine_diff(&a->m, &b->m);
    if (d)
        return d;
    if (a->nrules != b->nrules)
        return "nrules";
    for (int i = 0; i < a->nrules; i++) {
        const kcoll_trule_t *x = &a->rules[i], *y = &b->rules[i];
        if (x->coll != y->coll || x->pmin != y->pmin || x->pmax != y->pmax || x->bmin != y->bmin ||
            x->bmax != y->bmax || x->cache != y->cache || strcmp(x->spec, y->spec))
            return "rules";
    }
    return NULL;
}

/* t written to a string (malloc'ed). */
static char *write_str(const kcoll_tuning_t *t, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    *rc = kcoll_tuning_write(f, t);
    fclose(f);
    return buf;
}

static int parse_str(const char *text, kcoll_tuning_t *out, char *err, size_t errlen)
{
    memset(out, 0xab, sizeof *out); /* whatever the caller had */
    return kcoll_tuning_parse(text, strlen(text), "t.json", out, err, errlen);
}

/* text with the first `from` replaced by `to` (a static buffer). */
static const char *replace(const char *text, const char *from, const char *to)
{
    static char buf[4096];
    const char *at = strstr(text, from);
    if (!at)
        return text;
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return buf;
}

static kcoll_tuning_t defaults;

/* text must fail at `line` with a message holding every word given. */
static void expect_error(const char *what, const char *text, int line, ...)
{
    static kcoll_tuning_t out;
    char err[512], where[32];
    int rc = parse_str(text, &out, err, sizeof err);
    snprintf(where, sizeof where, "t.json:%d: ", line);
    CHECK(rc == -1, "%s: parse fails", what);
    CHECK(!strncmp(err, where, strlen(where)), "%s: the message names line %d: %s", what, line,
          err);
    CHECK(!strchr(err, '\n'), "%s: one line: %s", what, err);
    va_list ap;
    va_start(ap, line);
    for (const char *w; (w = va_arg(ap, const char *));)
        CHECK(strstr(err, w) != NULL, "%s: the message says '%s': %s", what, w, err);
    va_end(ap);
    CHECK(!memcmp(&out.m, &defaults.m, sizeof out.m), "%s: the machine is the defaults", what);
    CHECK(out.nrules == 0 && out.file[0] == '\0', "%s: no rules, no file", what);
    CHECK(!memcmp(&out, &defaults, sizeof out), "%s: all of it is the defaults", what);
}

/* Every field, two rules (one naming a v-variant, one "host"). */
static const char full[] =
    "{\n"                                                                        /* 1 */
    "  \"kcoll_tuning\": 1,\n"                                                   /* 2 */
    "  \"source\": \"bench \\\"node7\\\" \\u00e9\\ttab\",\n"                     /* 3 */
    "  \"cma\": {\"alpha_us\": 1.25, \"beta_GBps\": 4, \"write_GBps\": 4.5, \"l_us\": 0.2,\n" /* 4 */
    "          \"page_bytes\": 65536, \"package_cores\": 10},\n"                 /* 5 */
    "  \"gamma\": {\n"                                                           /* 6 */
    "    \"intra\": {\"poly\": [0.5, 1.5, 0.25], \"measured\": [1, 1.4, 2.5]},\n" /* 7 */
    "    \"inter\": {\"poly\": [-1, 3, 0.5e-1], \"measured\": []}\n"             /* 8 */
    "  },\n"                                                                     /* 9 */
    "  \"memory\": {\"copy_alpha_us\": 0.07, \"copy_GBps\": 20, \"package_GBps\": 60, \"link_GBps\": 30,\n"
    "             \"reduce_GBps\": {\"int\": 10, \"float\": 6, \"double\": 5, \"user\": 0.5},\n"
    "             \"stream_GBps\": 25},\n"
    "  \"sync\": {\"flag_us\": 0.3, \"step_us\": 0, \"call_us\": 0.45, \"call_data_us\": 1.5},\n"
    "  \"host\": {\"alpha_us\": 2, \"beta_GBps\": 3.5,\n"
    "           \"times\": {\"MPI_Bcast\": [[2, 1024, 1.5], [8, 1048576, 250]],\n"
    "                     \"MPI_Reduce_scatter_block\": [[4, 0, 3]]}},\n"
    "  \"net\": {\"alpha_us\": 2.5, \"GBps\": 25},\n"
    "  \"rules\": [\n"
    "    {\"collective\": \"MPI_Bcast\", \"procs\": [3, 16], \"bytes\": [0, 65536],\n"
    "     \"algorithm\": \"knomial:k=8\"},\n"
    "    {\"collective\": \"MPI_Scatterv\", \"algorithm\": \"host\"}\n"
    "  ]\n"
    "}\n";

static void check_full(const kcoll_tuning_t *t)
{
    const kcoll_machine_t *m = &t->m;
    CHECK(!strcmp(m->source, "bench \"node7\" \xc3\xa9\ttab"), "source unescaped: %s", m->source);
    CHECK(close_to(m->alpha, 1.25e-6) && close_to(m->beta, 1 / 4e9) &&
              close_to(m->beta_write, 1 / 4.5e9) && close_to(m->l, 0.2e-6) &&
              m->page == 65536 && m->pkg_cores == 10,
          "cma");
    CHECK(m->gamma_intra.poly[0] == 0.5 && m->gamma_intra.poly[1] == 1.5 &&
              m->gamma_intra.poly[2] == 0.25 && m->gamma_intra.nmeasured == 3 &&
              m->gamma_intra.measured[1] == 1.4 && m->gamma_intra.measured[2] == 2.5 &&
              m->gamma_intra.measured[3] == 0,
          "gamma intra");
    CHECK(m->gamma_inter.poly[0] == -1 && m->gamma_inter.poly[2] == 0.05 &&
              m->gamma_inter.nmeasured == 0,
          "gamma inter");
    CHECK(close_to(m->copy_alpha, 0.07e-6) && close_to(m->copy_beta, 1 / 20e9) &&
              close_to(m->package_bw, 60e9) && close_to(m->link_bw, 30e9) &&
              close_to(m->stream_beta, 1 / 25e9),
          "memory");
    CHECK(close_to(m->reduce_beta[KCOLL_RCLASS_INT], 1 / 10e9) &&
              close_to(m->reduce_beta[KCOLL_RCLASS_FLOAT], 1 / 6e9) &&
              close_to(m->reduce_beta[KCOLL_RCLASS_DOUBLE], 1 / 5e9) &&
              close_to(m->reduce_beta[KCOLL_RCLASS_USER], 1 / 0.5e9),
          "reduce rates");
    CHECK(close_to(m->flag, 0.3e-6) && m->step == 0 && close_to(m->call, 0.45e-6) &&
              close_to(m->call_data, 1.5e-6),
          "sync");
    CHECK(close_to(m->host_alpha, 2e-6) && close_to(m->host_beta, 1 / 3.5e9), "host terms");
    CHECK(close_to(m->net_alpha, 2.5e-6) && close_to(m->net_beta, 1 / 25e9), "net terms");
    CHECK(m->nhost[KCOLL_COLL_BCAST] == 2 && m->host[KCOLL_COLL_BCAST][1].p == 8 &&
              m->host[KCOLL_COLL_BCAST][1].bytes == 1048576 &&
              close_to(m->host[KCOLL_COLL_BCAST][1].t, 250e-6) &&
              close_to(m->host[KCOLL_COLL_BCAST][0].t, 1.5e-6),
          "host times of MPI_Bcast");
    CHECK(m->nhost[KCOLL_COLL_REDUCE_SCATTER_BLOCK] == 1 &&
              m->nhost[KCOLL_COLL_REDUCE_SCATTER] == defaults.m.nhost[KCOLL_COLL_REDUCE_SCATTER] &&
              m->host[KCOLL_COLL_REDUCE_SCATTER_BLOCK][0].p == 4,
          "host times stay with their own collective, not the family");
    /* the lists the file does not give keep the built-in defaults' */
    int others = 0, kept = 0;
    for (int c = 0; c < KCOLL_NCOLL; c++) {
        others += m->nhost[c];
        if (c != KCOLL_COLL_BCAST && c != KCOLL_COLL_REDUCE_SCATTER_BLOCK)
            kept += defaults.m.nhost[c];
    }
    CHECK(others == 3 + kept, "no other host times: %d, want %d", others, 3 + kept);
    CHECK(t->nrules == 2, "two rules");
    CHECK(t->rules[0].coll == KCOLL_COLL_BCAST && t->rules[0].pmin == 3 &&
              t->rules[0].pmax == 16 && t->rules[0].bmin == 0 && t->rules[0].bmax == 65536 &&
              !strcmp(t->rules[0].spec, "knomial:k=8"),
          "rule 1");
    CHECK(t->rules[1].coll == KCOLL_COLL_SCATTER && t->rules[1].pmin == 1 &&
              t->rules[1].pmax == 0 && t->rules[1].bmin == 0 && t->rules[1].bmax == 0 &&
              !strcmp(t->rules[1].spec, "host"),
          "rule 2: the family of MPI_Scatterv, no bounds");
}

int main(void)
{
    char err[512];
    int rc;
    memset(&defaults, 0, sizeof defaults);
    kcoll_machine_defaults(&defaults.m);

    /* (a) the defaults, written and read back */
    char *text = write_str(&defaults, &rc);
    CHECK(rc == 0 && text, "write the defaults");
    kcoll_tuning_t back;
    rc = parse_str(text, &back, err, sizeof err);
    CHECK(rc == 0, "the defaults read back: %s", err);
    const char *d = tuning_diff(&back, &defaults);
    CHECK(!d, "the defaults round-trip: %s differs", d ? d : "");
    CHECK(!strcmp(back.file, "t.json"), "file recorded: %s", back.file);
    CHECK(strstr(text, "\"kcoll_tuning\": 1,\n  \"source\": ") == text + 4 &&
              strstr(text, "\n  \"cma\": {\n    \"alpha_us\": 1.6,\n") &&
              strstr(text, "\"page_bytes\": 4096,") && strstr(text, "\"MPI_Reduce_scatter\": [") &&
              strstr(text, "\"rules\": []"),
          "written in the documented form:\n%s", text);
    /* every field name of the format is written */
    static const char *const names[] = {
        "\"cma\"", "\"beta_GBps\"", "\"write_GBps\"", "\"l_us\"", "\"package_cores\"", "\"gamma\"", "\"intra\"",
        "\"inter\"", "\"poly\"", "\"measured\"", "\"memory\"", "\"copy_alpha_us\"",
        "\"copy_GBps\"", "\"package_GBps\"", "\"link_GBps\"", "\"reduce_GBps\"", "\"stream_GBps\"", "\"int\"", "\"float\"",
        "\"double\"", "\"user\"", "\"sync\"", "\"flag_us\"", "\"step_us\"", "\"call_us\"", "\"call_data_us\"", "\"host\"",
        "\"times\"", "\"net\"", "\"GBps\"", "\"MPI_Bcast\"", "\"MPI_Alltoallv\"", "\"rules\""};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        CHECK(strstr(text, names[i]), "the defaults' file has %s", names[i]);
    free(text);

    /* (b) a hand-written file with every field */
    kcoll_tuning_t t;
    rc = parse_str(full, &t, err, sizeof err);
    CHECK(rc == 0, "the full file parses: %s", err);
    check_full(&t);
    CHECK(!strcmp(t.file, "t.json"), "file recorded");
    /* ...written and read back: the same values, and the same text again */
    text = write_str(&t, &rc);
    CHECK(rc == 0, "write the full file");
    rc = parse_str(text, &back, err, sizeof err);
    CHECK(rc == 0, "the written full file reads back: %s\n%s", err, text);
    d = tuning_diff(&back, &t);
    CHECK(!d, "the full file round-trips: %s differs", d ? d : "");
    check_full(&back);
    char *again = write_str(&back, &rc);
    CHECK(!strcmp(text, again), "writing what was read gives the same text");
    free(again);
    free(text);

    /* values that do not print in 9 digits, exact byte bounds beyond 2^31 */
    kcoll_tuning_t odd = defaults;
    odd.m.alpha = 1.0 / 3.0 * 1e-6;
    odd.m.beta = 1.0 / (7.123456789123 * 1e9);
    odd.m.gamma_intra.nmeasured = KCOLL_GAMMA_MAX;
    for (int i = 0; i < KCOLL_GAMMA_MAX; i++)
        odd.m.gamma_intra.measured[i] = 1 + i / 7.0;
    odd.m.nhost[KCOLL_COLL_ALLTOALLV] = KCOLL_HOST_POINTS;
    for (int i = 0; i < KCOLL_HOST_POINTS; i++)
        odd.m.host[KCOLL_COLL_ALLTOALLV][i] = (kcoll_hostpt_t){i + 1, 3.0 * i, (i + 1) / 3e6};
    odd.nrules = KCOLL_TUNING_RULES;
    for (int i = 0; i < KCOLL_TUNING_RULES; i++)
        odd.rules[i] = (kcoll_trule_t){KCOLL_COLL_ALLREDUCE, 2, 0, 4294967296.0 + i, 0,
                                       i % 3, "partitioned:chunk=64"};
    text = write_str(&odd, &rc);
    CHECK(rc == 0, "write full lists");
    rc = parse_str(text, &back, err, sizeof err);
    CHECK(rc == 0, "full lists read back: %s", err);
    d = tuning_diff(&back, &odd);
    CHECK(!d, "full lists round-trip: %s differs", d ? d : "");
    free(text);
    /* JSON cannot hold an infinite rate: the writer says so */
    odd.m.beta = 0;
    text = write_str(&odd, &rc);
    CHECK(rc == -1, "a zero beta (infinite GB/s) cannot be written");
    free(text);

    /* a decimal-comma locale changes neither the text nor the reading
     * (checked where such a locale is installed) */
    if (setlocale(LC_NUMERIC, "de_DE.UTF-8") || setlocale(LC_NUMERIC, "fr_FR.UTF-8")) {
        text = write_str(&defaults, &rc);
        CHECK(strstr(text, "\"alpha_us\": 0.45,"), "a point under a decimal-comma locale");
        rc = parse_str(text, &back, err, sizeof err);
        CHECK(rc == 0 && !tuning_diff(&back, &defaults), "read under a decimal-comma locale");
        free(text);
        setlocale(LC_NUMERIC, "C");
    }

    /* (c) errors: the line, the words, the pure defaults */
    expect_error("not JSON", "kcoll_tuning = 1\n", 1, "unexpected character 'k'", NULL);
    expect_error("empty file", "", 1, "empty", NULL);
    expect_error("only blanks", "\n\n  \n", 4, "empty", NULL);
    expect_error("not an object", "\n[1, 2]\n", 2, "top level must be an object", NULL);
    expect_error("truncated", "{\n  \"kcoll_tuning\": 1,\n  \"cma\": {\"alpha_us\": 1", 3,
                 "end of file", NULL);
    expect_error("truncated string", "{\n  \"kcoll_tuning\": 1,\n  \"source\": \"abc", 3,
                 "end of file", NULL);
    expect_error("string across lines", "{\"kcoll_tuning\": 1,\n\"source\": \"a\nb\"}", 2,
                 "not closed", NULL);
    expect_error("trailing garbage", "{\"kcoll_tuning\": 1}\n\n}", 3, "after the end", NULL);
    expect_error("two objects", "{\"kcoll_tuning\": 1}\n{\"kcoll_tuning\": 1}", 2,
                 "after the end", NULL);
    expect_error("missing comma", "{\"kcoll_tuning\": 1\n\"source\": \"x\"}", 2, "','", NULL);
    expect_error("trailing comma", "{\"kcoll_tuning\": 1,\n}", 2, "string key", NULL);
    expect_error("single quotes", "{\n'kcoll_tuning': 1}", 2, "string key", NULL);
    expect_error("bad escape", "{\"kcoll_tuning\": 1,\n\n\"source\": \"a\\qb\"}", 3,
                 "invalid escape \\q", NULL);
    expect_error("bad \\u", "{\"kcoll_tuning\": 1,\n\"source\": \"\\u12\"}", 2, "4 hexadecimal",
                 NULL);
    expect_error("lone surrogate", "{\"kcoll_tuning\": 1,\n\"source\": \"\\udc00\"}", 2,
                 "surrogate", NULL);
    expect_error("NUL escape", "{\"kcoll_tuning\": 1,\n\"source\": \"a\\u0000\"}", 2, "\\u0000",
                 NULL);
    expect_error("leading zero", "{\"kcoll_tuning\": 01}", 1, "malformed number", NULL);
    expect_error("bare point", "{\"kcoll_tuning\": 1,\n\"cma\": {\"l_us\": .5}}", 2,
                 "unexpected character '.'", NULL);
    expect_error("number overflow", "{\"kcoll_tuning\": 1,\n\"cma\": {\"l_us\": 1e999}}", 2,
                 "out of range", NULL);
    expect_error("bad literal", "{\"kcoll_tuning\": tru}", 1, "unexpected character 't'", NULL);
    expect_error("too deep", "{\"kcoll_tuning\": 1,\n\"host\": {\"times\": {\"MPI_Bcast\": "
                             "[\n[[1, 2, 3]]]}}}", 3, "nesting deeper than 5", NULL);
    expect_error("wrong version", "{\n  \"cma\": {\"alhpa_us\": 1},\n  \"kcoll_tuning\": 2\n}", 3,
                 "\"kcoll_tuning\" must be 1", "not 2", NULL);
    expect_error("version as a string", "{\"kcoll_tuning\": \"1\"}", 1, "must be 1",
                 "not a string", NULL);
    expect_error("missing version", "\n{\n  \"cma\": {\"alpha_us\": 1}\n}", 2, "kcoll_tuning",
                 "missing", NULL);
    expect_error("unknown top-level field",
                 "{\n  \"kcoll_tuning\": 1,\n\n  \"machine\": {}\n}", 4,
                 "unknown field \"machine\" at the top level", NULL);
    expect_error("unknown nested field",
                 "{\n  \"kcoll_tuning\": 1,\n  \"cma\": {\n    \"alhpa_us\": 1}\n}", 4,
                 "unknown field \"alhpa_us\" in \"cma\"", "alpha_us", NULL);
    expect_error("unknown field in a curve",
                 "{\"kcoll_tuning\": 1, \"gamma\": {\"intra\":\n {\"polly\": [1, 2, 3]}}}", 2,
                 "unknown field \"polly\" in \"gamma.intra\"", NULL);
    expect_error("unknown reduce class",
                 "{\"kcoll_tuning\": 1, \"memory\": {\"reduce_GBps\":\n {\"long\": 1}}}", 2,
                 "unknown field \"long\" in \"memory.reduce_GBps\"", NULL);
    expect_error("wrong type", "{\"kcoll_tuning\": 1,\n\"cma\": {\"alpha_us\": \"fast\"}}", 2,
                 "\"cma.alpha_us\" must be a number > 0", "not a string", NULL);
    expect_error("section of the wrong type", "{\"kcoll_tuning\": 1,\n\"sync\": [1]}", 2,
                 "\"sync\" must be an object", NULL);
    expect_error("zero alpha", "{\"kcoll_tuning\": 1,\n\n\"cma\": {\"alpha_us\": 0}}", 3,
                 "\"cma.alpha_us\" must be a number > 0, not 0", NULL);
    expect_error("negative l", "{\"kcoll_tuning\": 1,\n\"cma\": {\"l_us\": -0.1}}", 2,
                 "\"cma.l_us\" must be a number >= 0, not -0.1", NULL);
    expect_error("zero GB/s", "{\"kcoll_tuning\": 1,\n\"memory\": {\"copy_GBps\": 0}}", 2,
                 "\"memory.copy_GBps\" must be a number > 0", NULL);
    expect_error("negative package GB/s",
                 "{\"kcoll_tuning\": 1,\n\"memory\": {\"package_GBps\": -1}}", 2,
                 "\"memory.package_GBps\" must be a number >= 0", NULL);
    expect_error("zero reduce rate",
                 "{\"kcoll_tuning\": 1,\n\"memory\": {\"reduce_GBps\": {\"user\": 0}}}", 2,
                 "\"memory.reduce_GBps.user\" must be a number > 0", NULL);
    expect_error("fractional cores", "{\"kcoll_tuning\": 1,\n\"cma\": {\"package_cores\": 2.5}}",
                 2, "\"cma.package_cores\" must be an integer", "2.5", NULL);
    expect_error("poly of 2", "{\"kcoll_tuning\": 1,\n\"gamma\": {\"inter\": {\"poly\": [1, 2]}}}",
                 2, "\"gamma.inter.poly\" must be an array of 3 numbers", NULL);
    expect_error("negative gamma",
                 "{\"kcoll_tuning\": 1, \"gamma\": {\"intra\": {\"measured\": [1,\n -2]}}}", 2,
                 "\"gamma.intra.measured[1]\" must be a number >= 0", NULL);
    {
        char many[1024];
        int n = snprintf(many, sizeof many,
                         "{\"kcoll_tuning\": 1,\n\"gamma\": {\"intra\": {\"measured\": [1");
        for (int i = 1; i <= KCOLL_GAMMA_MAX; i++)
            n += snprintf(many + n, sizeof many - (size_t)n, ", %d", i);
        snprintf(many + n, sizeof many - (size_t)n, "]}}}");
        expect_error("too many measured gammas", many, 2, "\"gamma.intra.measured\" has 65 values",
                     "at most 64", NULL);
    }
    expect_error("source too long",
                 "{\"kcoll_tuning\": 1,\n\"source\": \""
                 "0123456789012345678901234567890123456789012345678901234567890123456789"
                 "0123456789012345678901234567890123456789012345678901234567890123456789"
                 "01234567890123456789\"}",
                 2, "\"source\" is longer than 159", NULL);
    expect_error("unknown collective in times",
                 "{\"kcoll_tuning\": 1, \"host\": {\"times\": {\n\"MPI_Bcats\": []}}}", 2,
                 "unknown collective \"MPI_Bcats\"", NULL);
    expect_error("bad host point",
                 "{\"kcoll_tuning\": 1, \"host\": {\"times\": {\"MPI_Barrier\": [[2, 0, 1],\n"
                 "[0, 0, 1]]}}}",
                 2, "\"host.times.MPI_Barrier[1]\" must be [p, bytes, us]", NULL);
    expect_error("host point with zero time",
                 "{\"kcoll_tuning\": 1, \"host\": {\"times\": {\"MPI_Barrier\": [\n[2, 0, 0]]}}}",
                 2, "us > 0", NULL);
    expect_error("unknown collective in a rule",
                 "{\"kcoll_tuning\": 1, \"rules\": [\n {\"collective\": \"MPI_Bcast\", "
                 "\"algorithm\": \"host\"},\n {\"collective\": \"MPI_Scan\",\n"
                 "  \"algorithm\": \"host\"}]}",
                 3, "rule 2: unknown collective \"MPI_Scan\"", NULL);
    expect_error("bad algorithm",
                 "{\"kcoll_tuning\": 1, \"rules\": [\n {\"collective\": \"MPI_Bcast\",\n"
                 "  \"algorithm\": \"knomal\"}]}",
                 3, "rule 1: ", "MPI_Bcast", "'knomal'", NULL);
    expect_error("bad algorithm parameter",
                 "{\"kcoll_tuning\": 1, \"rules\": [\n {\"collective\": \"MPI_Bcast\",\n"
                 "  \"algorithm\": \"knomial:k=1\"}]}",
                 3, "rule 1: ", "from 2", NULL);
    expect_error("algorithm of another family",
                 "{\"kcoll_tuning\": 1, \"rules\": [\n {\"collective\": \"MPI_Gatherv\",\n"
                 "  \"algorithm\": \"throttled_read\"}]}",
                 3, "rule 1: ", "MPI_Gatherv", NULL);
    expect_error("auto in a rule",
                 "{\"kcoll_tuning\": 1, \"rules\": [\n {\"collective\": \"MPI_Allreduce\",\n"
                 "  \"algorithm\": \"auto\"}]}",
                 3, "rule 1: \"auto\" is not an algorithm", NULL);
    expect_error("empty algorithm",
                 "{\"kcoll_tuning\": 1, \"rules\": [\n {\"collective\": \"MPI_Allreduce\",\n"
                 "  \"algorithm\": \"\"}]}",
                 3, "rule 1: \"\" is not an algorithm", NULL);
    expect_error("spec too long",
                 "{\"kcoll_tuning\": 1, \"rules\": [\n {\"collective\": \"MPI_Bcast\",\n"
                 "  \"algorithm\": \"knomial:k=4,k=4,k=4,k=4,k=4,k=4,k=4,k=4,k=4,k=4,k=4,"
                 "k=4,k=4,k=4,k=4\"}]}",
                 3, "rule 1: algorithm", "longer than 63", NULL);
    expect_error("rule without algorithm",
                 "{\"kcoll_tuning\": 1, \"rules\": [\n {\"collective\": \"MPI_Bcast\"}]}", 2,
                 "rule 1: \"algorithm\" is missing", NULL);
    expect_error("rule without collective",
                 "{\"kcoll_tuning\": 1, \"rules\": [\n {\"algorithm\": \"host\"}]}", 2,
                 "rule 1: \"collective\" is missing", NULL);
    expect_error("unknown field in a rule",
                 "{\"kcoll_tuning\": 1, \"rules\": [{\"collective\": \"MPI_Bcast\",\n"
                 "\"algo\": \"host\"}]}",
                 2, "rule 1: unknown field \"algo\"", NULL);
    expect_error("bad cache state",
                 "{\"kcoll_tuning\": 1, \"rules\": [{\"collective\": \"MPI_Bcast\",\n"
                 "\"cache\": \"warm\", \"algorithm\": \"host\"}]}",
                 2, "rule 1: \"cache\" must be \"cold\" or \"hot\"", NULL);
    expect_error("rule not an object", "{\"kcoll_tuning\": 1, \"rules\": [\n\"MPI_Bcast\"]}", 2,
                 "rule 1 must be an object", NULL);
    expect_error("bad procs",
                 "{\"kcoll_tuning\": 1, \"rules\": [{\"collective\": \"MPI_Bcast\",\n"
                 "\"procs\": [8, 4], \"algorithm\": \"host\"}]}",
                 2, "rule 1: \"procs\" must be [pmin, pmax]", NULL);
    expect_error("procs from 0",
                 "{\"kcoll_tuning\": 1, \"rules\": [{\"collective\": \"MPI_Bcast\",\n"
                 "\"procs\": [0, 4], \"algorithm\": \"host\"}]}",
                 2, "pmin >= 1", NULL);
    expect_error("bad bytes",
                 "{\"kcoll_tuning\": 1, \"rules\": [{\"collective\": \"MPI_Bcast\",\n"
                 "\"bytes\": [4096, 4096], \"algorithm\": \"host\"}]}",
                 2, "rule 1: \"bytes\" must be [bmin, bmax]", NULL);
    {
        static char many[16384];
        int n = snprintf(many, sizeof many, "{\"kcoll_tuning\": 1,\n\"rules\": [");
        for (int i = 0; i <= KCOLL_TUNING_RULES; i++)
            n += snprintf(many + n, sizeof many - (size_t)n,
                          "%s{\"collective\": \"MPI_Bcast\", \"algorithm\": \"host\"}",
                          i ? ",\n" : "");
        snprintf(many + n, sizeof many - (size_t)n, "]}");
        expect_error("too many rules", many, 2, "\"rules\" has 65 rules", NULL);
    }
    expect_error("duplicate key", "{\"kcoll_tuning\": 1,\n\"cma\": {\"l_us\": 1,\n\"l_us\": 2}}",
                 3, "duplicate key \"l_us\"", "line 2", NULL);
    expect_error("duplicate version", "{\"kcoll_tuning\": 1,\n\"kcoll_tuning\": 1}", 2,
                 "duplicate key \"kcoll_tuning\"", NULL);
    /* deep in a long file: the spec's own example, and the second rule */
    expect_error("line 20 of the full file", replace(full, "knomial:k=8", "knomal"), 20,
                 "rule 1: ", "MPI_Bcast", "'knomal'", NULL);
    expect_error("line 21 of the full file", replace(full, "\"host\"}", "\"auto\"}"), 21,
                 "rule 2: \"auto\"", NULL);
    expect_error("line 11 of the full file", replace(full, "\"user\": 0.5", "\"user\": -0.5"), 11,
                 "\"memory.reduce_GBps.user\" must be a number > 0, not -0.5", NULL);
    expect_error("CRLF lines", "{\r\n\"kcoll_tuning\": 1,\r\n\r\n\"cma\": 5\r\n}\r\n", 4,
                 "\"cma\" must be an object, not 5", NULL);
    /* a syntax error after a schema error: the syntax is reported */
    expect_error("syntax first",
                 "{\"kcoll_tuning\": 1, \"cma\": {\"alpha_us\": -1},\n\n\"x\": !}", 3,
                 "unexpected character '!'", NULL);
    /* the error of one file does not linger into the next parse */
    rc = parse_str("{\"kcoll_tuning\": 1}", &t, err, sizeof err);
    CHECK(rc == 0 && err[0] == '\0' && !tuning_diff(&t, &defaults),
          "a minimal file is the defaults");
    /* a tiny error buffer truncates, never overflows */
    char tiny[12];
    memset(tiny, 'x', sizeof tiny);
    rc = kcoll_tuning_parse("{", 1, "t.json", &t, tiny, 8);
    CHECK(rc == -1 && strlen(tiny) == 7 && tiny[8] == 'x', "message truncated to its buffer");
    /* the text need not end in a NUL: the length bounds it */
    rc = kcoll_tuning_parse("{\"kcoll_tuning\": 1}123", 19, "t.json", &t, err, sizeof err);
    CHECK(rc == 0, "text bounded by its length: %s", err);

    /* (d) one field set, every other default kept */
    rc = parse_str("{\"kcoll_tuning\": 1, \"cma\": {\"alpha_us\": 2}}", &t, err, sizeof err);
    CHECK(rc == 0, "one field: %s", err);
    CHECK(t.m.alpha == 2e-6, "alpha set: %g", t.m.alpha);
    kcoll_tuning_t want = defaults;
    want.m.alpha = t.m.alpha;
    snprintf(want.file, sizeof want.file, "t.json");
    CHECK(!memcmp(&t, &want, sizeof t), "every other field the default");
    CHECK(t.m.alpha != defaults.m.alpha, "and alpha is not");

    /* files on disk */
    char path[] = "/tmp/kcoll_tuning_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "temporary file");
    if (fd >= 0) {
        FILE *f = fdopen(fd, "w");
        fputs(full, f);
        fclose(f);
        rc = kcoll_tuning_load(path, &t, err, sizeof err);
        CHECK(rc == 0 && !strcmp(t.file, path), "load %s: %s", path, err);
        check_full(&t);
        f = fopen(path, "w");
        fputs("{\n  \"kcoll_tuning\": 1,\n  \"cma\": {\"alpha_us\": -1}\n}\n", f);
        fclose(f);
        rc = kcoll_tuning_load(path, &t, err, sizeof err);
        char want_err[128];
        snprintf(want_err, sizeof want_err, "%s:3: \"cma.alpha_us\" must be a number > 0", path);
        CHECK(rc == -1 && !strncmp(err, want_err, strlen(want_err)), "load error: %s", err);
        CHECK(!memcmp(&t, &defaults, sizeof t), "load error: the defaults");
        unlink(path);
    }
    rc = kcoll_tuning_load("/nonexistent/kcoll/tune.json", &t, err, sizeof err);
    CHECK(rc == -1 && !strcmp(err, "/nonexistent/kcoll/tune.json: cannot read: No such file or "
                                   "directory"),
          "missing file: %s", err);
    CHECK(!memcmp(&t, &defaults, sizeof t), "missing file: the defaults");
    rc = kcoll_tuning_load("/tmp", &t, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "/tmp: cannot read: ") == err, "a directory: %s", err);
    CHECK(!memcmp(&t, &defaults, sizeof t), "a directory: the defaults");

    return check_report("test_tuning");
}
