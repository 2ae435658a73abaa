/* Tuning files (docs/tuning.md): a small JSON reader, the walk that checks
 * a file against the schema and lays its values over the built-in
 * defaults, and the writer.
 *
 * The reader builds the whole tree first and checks the schema second, so
 * that a syntax error anywhere is reported as such and a file of another
 * format version is reported as that, not as a list of unknown fields.
 * Every value keeps the line it starts on (and a member the line of its
 * key): every message names one line. The tree lives in two flat arrays
 * (values by index, decoded strings by offset), sized by the text: no
 * per-value allocation, and a file is read in time linear in its size.
 *
 * Numbers are read and written in the "C" locale whatever the
 * application set: a tuning file written under a locale with a decimal
 * comma must still read back (and be JSON).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "model/select.h"
#include "model/tuning.h"

#define US 1e-6
#define GB 1e9

/* Containers nest at most this deep: top, "host", "times", a collective's
 * list, one [p, bytes, us] point. Nothing in the format needs more, and
 * the bound keeps the recursive reader's stack small. */
#define TJ_MAX_DEPTH 5
/* The largest object of the format has 14 members ("host.times"); the
 * bound keeps the duplicate-key check cheap on any input. */
#define TJ_MAX_MEMBERS 64
/* Larger than any tuning file (one with every list full is ~100 KiB), small
 * enough not to exhaust memory when pointed at the wrong file. */
#define TJ_MAX_FILE ((size_t)16 << 20)

enum { TJ_NULL, TJ_BOOL, TJ_NUM, TJ_STR, TJ_ARR, TJ_OBJ };

typedef struct {
    int type;
    int line;   /* where the value starts */
    int kline;  /* where its key is (members of objects) */
    int key;    /* offset of the key in strs, -1 for array elements */
    int first;  /* first child (arrays, objects), -1: none */
    int next;   /* next sibling, -1: last */
    int n;      /* children */
    int str;    /* strings: offset of the decoded, NUL-terminated text */
    double num; /* numbers; booleans: 0 or 1 */
} tj_val_t;

typedef struct {
    const char *s, *end; /* the text still to read */
    const char *file;
    int line;
    tj_val_t *v;
    int nv, cap;
    char *strs; /* decoded strings and keys; never longer than the text */
    size_t nstrs;
    char *err;
    size_t errlen;
    int failed;
    kcoll_tuning_t *out;
} tj_t;

/* The first error wins: it is the one the user must fix first. */
__attribute__((format(printf, 3, 4))) static int tj_fail(tj_t *j, int line, const char *fmt, ...)
{
    if (j->failed)
        return -1;
    j->failed = 1;
    if (j->err && j->errlen) {
        int n = snprintf(j->err, j->errlen, "%s:%d: ", j->file, line);
        if (n >= 0 && (size_t)n < j->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(j->err + n, j->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

/* ---- the reader ---- */

static int tj_new(tj_t *j, int type, int line)
{
    if (j->nv == j->cap) {
        int cap = j->cap ? 2 * j->cap : 256;
        tj_val_t *v = realloc(j->v, (size_t)cap * sizeof *v);
        if (!v)
            return tj_fail(j, line, "out of memory");
        j->v = v;
        j->cap = cap;
    }
    tj_val_t *x = &j->v[j->nv];
    memset(x, 0, sizeof *x);
    x->type = type;
    x->line = x->kline = line;
    x->key = x->first = x->next = -1;
    return j->nv++;
}

static void tj_ws(tj_t *j)
{
    while (j->s < j->end) {
        char c = *j->s;
        if (c == '\n')
            j->line++;
        else if (c != ' ' && c != '\t' && c != '\r')
            return;
        j->s++;
    }
}

static int tj_hex4(tj_t *j, unsigned *cp)
{
    *cp = 0;
    for (int i = 0; i < 4; i++) {
        if (j->s == j->end || !isxdigit((unsigned char)*j->s))
            return tj_fail(j, j->line, "\\u must be followed by 4 hexadecimal digits");
        char c = *j->s++;
        int d = isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10;
        *cp = *cp * 16 + (unsigned)d;
    }
    return 0;
}

static void tj_put(tj_t *j, unsigned char c)
{
    j->strs[j->nstrs++] = (char)c;
}

/* A string at j->s (its opening quote), decoded into strs: the offset of
 * its text, or -1. Each byte of the text decodes to at most one byte (an
 * escape is shorter than what it stands for, the closing quote becomes the
 * NUL), so strs never outgrows the text. */
static int tj_string(tj_t *j)
{
    size_t start = j->nstrs;
    j->s++;
    for (;;) {
        if (j->s == j->end)
            return tj_fail(j, j->line, "unexpected end of file in a string");
        unsigned char c = (unsigned char)*j->s++;
        if (c == '"')
            break;
        if (c == '\n')
            return tj_fail(j, j->line, "string not closed before the end of the line");
        if (c < 0x20)
            return tj_fail(j, j->line, "control character 0x%02x in a string (escape it)", c);
        if (c != '\\') {
            tj_put(j, c);
            continue;
        }
        if (j->s == j->end)
            return tj_fail(j, j->line, "unexpected end of file in a string");
        c = (unsigned char)*j->s++;
        unsigned cp;
        switch (c) {
        case '"':
        case '\\':
        case '/':
            tj_put(j, c);
            break;
        case 'b':
            tj_put(j, '\b');
            break;
        case 'f':
            tj_put(j, '\f');
            break;
        case 'n':
            tj_put(j, '\n');
            break;
        case 'r':
            tj_put(j, '\r');
            break;
        case 't':
            tj_put(j, '\t');
            break;
        case 'u':
            if (tj_hex4(j, &cp))
                return -1;
            if (cp >= 0xd800 && cp < 0xdc00) {
                unsigned lo;
                if (j->end - j->s < 2 || j->s[0] != '\\' || j->s[1] != 'u')
                    return tj_fail(j, j->line, "\\u%04x must be followed by a low surrogate", cp);
                j->s += 2;
                if (tj_hex4(j, &lo))
                    return -1;
                if (lo < 0xdc00 || lo >= 0xe000)
                    return tj_fail(j, j->line, "\\u%04x must be followed by a low surrogate", cp);
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            } else if (cp >= 0xdc00 && cp < 0xe000) {
                return tj_fail(j, j->line, "\\u%04x: a low surrogate without a high one", cp);
            }
            if (cp == 0) /* the strings are C strings */
                return tj_fail(j, j->line, "\\u0000 in a string");
            if (cp < 0x80) {
                tj_put(j, (unsigned char)cp);
            } else if (cp < 0x800) {
                tj_put(j, (unsigned char)(0xc0 | cp >> 6));
                tj_put(j, (unsigned char)(0x80 | (cp & 0x3f)));
            } else if (cp < 0x10000) {
                tj_put(j, (unsigned char)(0xe0 | cp >> 12));
                tj_put(j, (unsigned char)(0x80 | ((cp >> 6) & 0x3f)));
                tj_put(j, (unsigned char)(0x80 | (cp & 0x3f)));
            } else {
                tj_put(j, (unsigned char)(0xf0 | cp >> 18));
                tj_put(j, (unsigned char)(0x80 | ((cp >> 12) & 0x3f)));
                tj_put(j, (unsigned char)(0x80 | ((cp >> 6) & 0x3f)));
                tj_put(j, (unsigned char)(0x80 | (cp & 0x3f)));
            }
            break;
        default:
            if (isprint(c))
                return tj_fail(j, j->line, "invalid escape \\%c in a string", c);
            return tj_fail(j, j->line, "invalid escape in a string");
        }
    }
    tj_put(j, '\0');
    return (int)start;
}

static int tj_digits(const char **p, const char *end)
{
    const char *b = *p;
    while (*p < end && isdigit((unsigned char)**p))
        (*p)++;
    return *p > b;
}

/* A number in JSON's grammar (no leading zeros, no '+', no bare '.'). */
static int tj_number(tj_t *j)
{
    const char *p = j->s, *end = j->end;
    if (p < end && *p == '-')
        p++;
    if (p < end && *p == '0')
        p++;
    else if (!tj_digits(&p, end))
        return tj_fail(j, j->line, "malformed number");
    if (p < end && *p == '.') {
        p++;
        if (!tj_digits(&p, end))
            return tj_fail(j, j->line, "malformed number (no digit after '.')");
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (!tj_digits(&p, end))
            return tj_fail(j, j->line, "malformed number (no digit in the exponent)");
    }
    if (p < end && (isalnum((unsigned char)*p) || *p == '.'))
        return tj_fail(j, j->line, "malformed number");
    char buf[64];
    size_t len = (size_t)(p - j->s);
    if (len >= sizeof buf)
        return tj_fail(j, j->line, "number longer than %zu characters", sizeof buf - 1);
    memcpy(buf, j->s, len); /* the text need not end in a NUL */
    buf[len] = '\0';
    double x = strtod(buf, NULL);
    if (!isfinite(x))
        return tj_fail(j, j->line, "number %s out of range", buf);
    int i = tj_new(j, TJ_NUM, j->line);
    if (i < 0)
        return -1;
    j->v[i].num = x;
    j->s = p;
    return i;
}

static int tj_literal(tj_t *j, const char *word, int type, double num)
{
    size_t n = strlen(word);
    if ((size_t)(j->end - j->s) < n || memcmp(j->s, word, n))
        return tj_fail(j, j->line, "unexpected character '%c'", *j->s);
    int i = tj_new(j, type, j->line);
    if (i < 0)
        return -1;
    j->v[i].num = num;
    j->s += n;
    return i;
}

static int tj_value(tj_t *j, int depth);

/* Link child c as the last child of container i (last: its current last
 * child, -1 for none). */
static void tj_link(tj_t *j, int i, int *last, int c)
{
    if (*last < 0)
        j->v[i].first = c;
    else
        j->v[*last].next = c;
    *last = c;
    j->v[i].n++;
}

static int tj_object(tj_t *j, int depth)
{
    int i = tj_new(j, TJ_OBJ, j->line), last = -1;
    if (i < 0)
        return -1;
    j->s++;
    tj_ws(j);
    if (j->s < j->end && *j->s == '}') {
        j->s++;
        return i;
    }
    for (;;) {
        tj_ws(j);
        if (j->s == j->end)
            return tj_fail(j, j->line, "unexpected end of file in an object");
        if (*j->s != '"')
            return tj_fail(j, j->line, "expected a string key in an object");
        int kline = j->line, key = tj_string(j);
        if (key < 0)
            return -1;
        for (int c = j->v[i].first; c >= 0; c = j->v[c].next)
            if (!strcmp(j->strs + j->v[c].key, j->strs + key))
                return tj_fail(j, kline, "duplicate key \"%s\" (first on line %d)", j->strs + key,
                               j->v[c].kline);
        if (j->v[i].n == TJ_MAX_MEMBERS)
            return tj_fail(j, kline, "object with more than %d members", TJ_MAX_MEMBERS);
        tj_ws(j);
        if (j->s == j->end)
            return tj_fail(j, j->line, "unexpected end of file in an object");
        if (*j->s != ':')
            return tj_fail(j, j->line, "expected ':' after key \"%s\"", j->strs + key);
        j->s++;
        int c = tj_value(j, depth + 1);
        if (c < 0)
            return -1;
        j->v[c].key = key;
        j->v[c].kline = kline;
        tj_link(j, i, &last, c);
        tj_ws(j);
        if (j->s == j->end)
            return tj_fail(j, j->line, "unexpected end of file in an object");
        if (*j->s == '}') {
            j->s++;
            return i;
        }
        if (*j->s != ',')
            return tj_fail(j, j->line, "expected ',' or '}' in an object");
        j->s++;
    }
}

static int tj_array(tj_t *j, int depth)
{
    int i = tj_new(j, TJ_ARR, j->line), last = -1;
    if (i < 0)
        return -1;
    j->s++;
    tj_ws(j);
    if (j->s < j->end && *j->s == ']') {
        j->s++;
        return i;
    }
    for (;;) {
        int c = tj_value(j, depth + 1);
        if (c < 0)
            return -1;
        tj_link(j, i, &last, c);
        tj_ws(j);
        if (j->s == j->end)
            return tj_fail(j, j->line, "unexpected end of file in an array");
        if (*j->s == ']') {
            j->s++;
            return i;
        }
        if (*j->s != ',')
            return tj_fail(j, j->line, "expected ',' or ']' in an array");
        j->s++;
    }
}

/* The value at j->s, `depth` containers deep (the top-level one is 1). */
static int tj_value(tj_t *j, int depth)
{
    tj_ws(j);
    if (j->s == j->end)
        return tj_fail(j, j->line, "unexpected end of file (expected a value)");
    unsigned char c = (unsigned char)*j->s;
    if ((c == '{' || c == '[') && depth > TJ_MAX_DEPTH)
        return tj_fail(j, j->line, "nesting deeper than %d levels (no tuning field needs more)",
                       TJ_MAX_DEPTH);
    switch (c) {
    case '{':
        return tj_object(j, depth);
    case '[':
        return tj_array(j, depth);
    case '"': {
        int i = tj_new(j, TJ_STR, j->line);
        if (i < 0)
            return -1;
        int s = tj_string(j);
        if (s < 0)
            return -1;
        j->v[i].str = s;
        return i;
    }
    case 't':
        return tj_literal(j, "true", TJ_BOOL, 1);
    case 'f':
        return tj_literal(j, "false", TJ_BOOL, 0);
    case 'n':
        return tj_literal(j, "null", TJ_NULL, 0);
    default:
        if (c == '-' || isdigit(c))
            return tj_number(j);
        if (isprint(c))
            return tj_fail(j, j->line, "unexpected character '%c'", c);
        return tj_fail(j, j->line, "unexpected byte 0x%02x", c);
    }
}

/* ---- the schema ---- */

/* "a string", or a number's value: what the messages say a value is. */
static const char *tj_what(const tj_t *j, int i, char *buf, size_t len)
{
    const tj_val_t *v = &j->v[i];
    switch (v->type) {
    case TJ_NULL:
        return "null";
    case TJ_BOOL:
        return v->num ? "true" : "false";
    case TJ_NUM:
        snprintf(buf, len, "%.9g", v->num);
        return buf;
    case TJ_STR:
        return "a string";
    case TJ_ARR:
        return "an array";
    default:
        return "an object";
    }
}

static const char *tj_keyof(const tj_t *j, int i)
{
    return j->strs + j->v[i].key;
}

enum { TJ_ANY, TJ_GE0, TJ_GT0 };
static const char *const tj_lim_text[] = {"a number", "a number >= 0", "a number > 0"};

static int tj_num_ok(const tj_val_t *v, int lim)
{
    return v->type == TJ_NUM &&
           (lim == TJ_ANY || (lim == TJ_GE0 && v->num >= 0) || (lim == TJ_GT0 && v->num > 0));
}

static int tj_getnum(tj_t *j, int i, const char *path, int lim, double *x)
{
    char buf[40];
    if (!tj_num_ok(&j->v[i], lim))
        return tj_fail(j, j->v[i].line, "\"%s\" must be %s, not %s", path, tj_lim_text[lim],
                       tj_what(j, i, buf, sizeof buf));
    *x = j->v[i].num;
    return 0;
}

static int tj_is_int(const tj_val_t *v, int min)
{
    return v->type == TJ_NUM && v->num == floor(v->num) && v->num >= min && v->num <= INT_MAX;
}

static int tj_getint(tj_t *j, int i, const char *path, int min, int *x)
{
    char buf[40];
    if (!tj_is_int(&j->v[i], min))
        return tj_fail(j, j->v[i].line, "\"%s\" must be an integer from %d to %d, not %s", path,
                       min, INT_MAX, tj_what(j, i, buf, sizeof buf));
    *x = (int)j->v[i].num;
    return 0;
}

static int tj_need(tj_t *j, int i, int type, const char *path)
{
    char buf[40];
    static const char *const names[] = {"null", "a boolean", "a number", "a string", "an array",
                                        "an object"};
    if (j->v[i].type != type)
        return tj_fail(j, j->v[i].line, "\"%s\" must be %s, not %s", path, names[type],
                       tj_what(j, i, buf, sizeof buf));
    return 0;
}

/* How a field's value is stored in kcoll_machine_t. */
enum {
    TJ_US,    /* microseconds -> seconds */
    TJ_GBPS,  /* GB/s -> seconds per byte */
    TJ_BW,    /* GB/s -> bytes per second */
    TJ_PLAIN, /* as it is */
    TJ_INT,   /* an int */
    TJ_SUB,   /* a nested part: its own function */
};

typedef int (*tj_sub_fn)(tj_t *j, int i, const char *path);

typedef struct {
    const char *name;
    int kind, lim;
    size_t off; /* in kcoll_machine_t */
    tj_sub_fn sub;
} tj_field_t;

#define TJ_F(name, kind, lim, member) {name, kind, lim, offsetof(kcoll_machine_t, member), NULL}
#define TJ_S(name, fn) {name, TJ_SUB, 0, 0, fn}

static int tj_store(tj_t *j, int i, const char *path, const tj_field_t *f)
{
    char *m = (char *)&j->out->m;
    double x;
    if (f->kind == TJ_INT)
        return tj_getint(j, i, path, 0, (int *)(void *)(m + f->off));
    if (tj_getnum(j, i, path, f->lim, &x))
        return -1;
    switch (f->kind) {
    case TJ_US:
        x *= US;
        break;
    case TJ_GBPS:
        x = 1.0 / (x * GB);
        break;
    case TJ_BW:
        x *= GB;
        break;
    default:
        break;
    }
    *(double *)(void *)(m + f->off) = x;
    return 0;
}

/* The members of object i (at `path`, "" for the top level), each one of
 * fields[]: stored, or handed to its part's function. */
static int tj_walk(tj_t *j, int i, const char *path, const tj_field_t *fields, int nf)
{
    if (tj_need(j, i, TJ_OBJ, path))
        return -1;
    for (int c = j->v[i].first; c >= 0; c = j->v[c].next) {
        const char *key = tj_keyof(j, c);
        const tj_field_t *f = NULL;
        for (int k = 0; k < nf && !f; k++)
            if (!strcmp(fields[k].name, key))
                f = &fields[k];
        if (!f) {
            char known[256];
            int n = 0;
            for (int k = 0; k < nf && n >= 0 && (size_t)n < sizeof known; k++)
                n += snprintf(known + n, sizeof known - (size_t)n, "%s%s", k ? ", " : "",
                              fields[k].name);
            if (*path)
                return tj_fail(j, j->v[c].kline, "unknown field \"%s\" in \"%s\" (known: %s)", key,
                               path, known);
            return tj_fail(j, j->v[c].kline, "unknown field \"%s\" at the top level (known: %s)",
                           key, known);
        }
        char sub[128];
        snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", key);
        if (f->kind == TJ_SUB ? f->sub(j, c, sub) : tj_store(j, c, sub, f))
            return -1;
    }
    return 0;
}

static int tj_version(tj_t *j, int i, const char *path)
{
    char buf[40];
    if (j->v[i].type != TJ_NUM || j->v[i].num != 1)
        return tj_fail(j, j->v[i].line,
                       "\"kcoll_tuning\" must be 1 (the format version this kcoll reads), not %s",
                       tj_what(j, i, buf, sizeof buf));
    return 0;
}

static int tj_source(tj_t *j, int i, const char *path)
{
    char *src = j->out->m.source;
    if (tj_need(j, i, TJ_STR, path))
        return -1;
    const char *s = j->strs + j->v[i].str;
    if (strlen(s) >= sizeof j->out->m.source)
        return tj_fail(j, j->v[i].line, "\"source\" is longer than %zu bytes",
                       sizeof j->out->m.source - 1);
    strcpy(src, s);
    return 0;
}

static int tj_cma(tj_t *j, int i, const char *path)
{
    static const tj_field_t f[] = {
        TJ_F("alpha_us", TJ_US, TJ_GT0, alpha),       TJ_F("beta_GBps", TJ_GBPS, TJ_GT0, beta),
        TJ_F("write_GBps", TJ_GBPS, TJ_GT0, beta_write),
        TJ_F("l_us", TJ_US, TJ_GE0, l),               TJ_F("page_bytes", TJ_PLAIN, TJ_GT0, page),
        TJ_F("package_cores", TJ_INT, TJ_GE0, pkg_cores),
    };
    return tj_walk(j, i, path, f, (int)(sizeof f / sizeof f[0]));
}

/* A contention curve's "poly" ([g0, g1, g2]) and "measured" (gamma(1),
 * gamma(2), ...): each, when given, replaces the default entirely. */
static int tj_curve(tj_t *j, int i, const char *path, kcoll_gamma_t *g)
{
    if (tj_need(j, i, TJ_OBJ, path))
        return -1;
    for (int c = j->v[i].first; c >= 0; c = j->v[c].next) {
        const char *key = tj_keyof(j, c);
        char sub[128];
        snprintf(sub, sizeof sub, "%s.%s", path, key);
        if (!strcmp(key, "poly")) {
            int ok = j->v[c].type == TJ_ARR && j->v[c].n == 3;
            for (int e = ok ? j->v[c].first : -1; e >= 0; e = j->v[e].next)
                ok = ok && tj_num_ok(&j->v[e], TJ_ANY);
            if (!ok)
                return tj_fail(j, j->v[c].line, "\"%s\" must be an array of 3 numbers [g0, g1, g2]",
                               sub);
            int k = 0;
            for (int e = j->v[c].first; e >= 0; e = j->v[e].next)
                g->poly[k++] = j->v[e].num;
        } else if (!strcmp(key, "measured")) {
            if (tj_need(j, c, TJ_ARR, sub))
                return -1;
            if (j->v[c].n > KCOLL_GAMMA_MAX)
                return tj_fail(j, j->v[c].line, "\"%s\" has %d values, at most %d are allowed", sub,
                               j->v[c].n, KCOLL_GAMMA_MAX);
            memset(g->measured, 0, sizeof g->measured);
            g->nmeasured = 0;
            for (int e = j->v[c].first; e >= 0; e = j->v[e].next) {
                char el[140];
                snprintf(el, sizeof el, "%s[%d]", sub, g->nmeasured);
                if (tj_getnum(j, e, el, TJ_GE0, &g->measured[g->nmeasured++]))
                    return -1;
            }
        } else {
            return tj_fail(j, j->v[c].kline,
                           "unknown field \"%s\" in \"%s\" (known: poly, measured)", key, path);
        }
    }
    return 0;
}

static int tj_intra(tj_t *j, int i, const char *path)
{
    return tj_curve(j, i, path, &j->out->m.gamma_intra);
}

static int tj_inter(tj_t *j, int i, const char *path)
{
    return tj_curve(j, i, path, &j->out->m.gamma_inter);
}

static int tj_gamma(tj_t *j, int i, const char *path)
{
    static const tj_field_t f[] = {TJ_S("intra", tj_intra), TJ_S("inter", tj_inter)};
    return tj_walk(j, i, path, f, 2);
}

static int tj_reduce(tj_t *j, int i, const char *path)
{
    static const tj_field_t f[] = {
        TJ_F("int", TJ_GBPS, TJ_GT0, reduce_beta[KCOLL_RCLASS_INT]),
        TJ_F("float", TJ_GBPS, TJ_GT0, reduce_beta[KCOLL_RCLASS_FLOAT]),
        TJ_F("double", TJ_GBPS, TJ_GT0, reduce_beta[KCOLL_RCLASS_DOUBLE]),
        TJ_F("user", TJ_GBPS, TJ_GT0, reduce_beta[KCOLL_RCLASS_USER]),
    };
    return tj_walk(j, i, path, f, 4);
}

static int tj_memory(tj_t *j, int i, const char *path)
{
    static const tj_field_t f[] = {
        TJ_F("copy_alpha_us", TJ_US, TJ_GE0, copy_alpha),
        TJ_F("copy_GBps", TJ_GBPS, TJ_GT0, copy_beta),
        TJ_F("package_GBps", TJ_BW, TJ_GE0, package_bw),
        TJ_F("link_GBps", TJ_BW, TJ_GE0, link_bw),
        TJ_S("reduce_GBps", tj_reduce),
        TJ_F("stream_GBps", TJ_GBPS, TJ_GT0, stream_beta),
    };
    return tj_walk(j, i, path, f, 6);
}

static int tj_sync(tj_t *j, int i, const char *path)
{
    static const tj_field_t f[] = {TJ_F("flag_us", TJ_US, TJ_GE0, flag),
                                   TJ_F("step_us", TJ_US, TJ_GE0, step),
                                   TJ_F("call_us", TJ_US, TJ_GE0, call),
                                   TJ_F("call_data_us", TJ_US, TJ_GE0, call_data),
                                   TJ_F("handover_us", TJ_US, TJ_GE0, handover)};
    return tj_walk(j, i, path, f, 5);
}

/* The collective a name denotes (all 14, v-variants too), or -1. */
static int tj_coll(const char *name)
{
    for (int c = 0; c < KCOLL_NCOLL; c++)
        if (!strcmp(kcoll_coll_name((kcoll_coll_t)c), name))
            return c;
    return -1;
}

/* "host.times": per collective a list of [p, bytes, us], which replaces
 * that collective's (empty) default list. */
static int tj_times(tj_t *j, int i, const char *path)
{
    kcoll_machine_t *m = &j->out->m;
    if (tj_need(j, i, TJ_OBJ, path))
        return -1;
    for (int c = j->v[i].first; c >= 0; c = j->v[c].next) {
        const char *key = tj_keyof(j, c);
        int coll = tj_coll(key);
        char sub[128];
        if (coll < 0)
            return tj_fail(j, j->v[c].kline, "unknown collective \"%s\" in \"%s\" (MPI_Bcast, "
                           "MPI_Allreduce, ... as kcoll names them)", key, path);
        snprintf(sub, sizeof sub, "%s.%s", path, key);
        if (tj_need(j, c, TJ_ARR, sub))
            return -1;
        if (j->v[c].n > KCOLL_HOST_POINTS)
            return tj_fail(j, j->v[c].line, "\"%s\" has %d points, at most %d are allowed", sub,
                           j->v[c].n, KCOLL_HOST_POINTS);
        memset(m->host[coll], 0, sizeof m->host[coll]);
        m->nhost[coll] = 0;
        for (int e = j->v[c].first; e >= 0; e = j->v[e].next) {
            const tj_val_t *t = &j->v[e];
            int a = t->type == TJ_ARR && t->n == 3 ? t->first : -1;
            int b = a >= 0 ? j->v[a].next : -1, u = b >= 0 ? j->v[b].next : -1;
            if (a < 0 || !tj_is_int(&j->v[a], 1) || !tj_num_ok(&j->v[b], TJ_GE0) ||
                !tj_num_ok(&j->v[u], TJ_GT0))
                return tj_fail(j, t->line, "\"%s[%d]\" must be [p, bytes, us] with p an integer "
                               ">= 1, bytes >= 0 and us > 0", sub, m->nhost[coll]);
            kcoll_hostpt_t *pt = &m->host[coll][m->nhost[coll]++];
            pt->p = (int)j->v[a].num;
            pt->bytes = j->v[b].num;
            pt->t = j->v[u].num * US;
        }
    }
    return 0;
}

static int tj_host(tj_t *j, int i, const char *path)
{
    static const tj_field_t f[] = {
        TJ_F("alpha_us", TJ_US, TJ_GT0, host_alpha),
        TJ_F("beta_GBps", TJ_GBPS, TJ_GT0, host_beta),
        TJ_S("times", tj_times),
    };
    return tj_walk(j, i, path, f, 3);
}

static int tj_engines(tj_t *j, int i, const char *path)
{
    static const tj_field_t f[] = {
        TJ_F("shm_alpha_us", TJ_US, TJ_GT0, shm_alpha),
        TJ_F("shm_GBps", TJ_GBPS, TJ_GT0, shm_beta),
        TJ_F("vmsplice_alpha_us", TJ_US, TJ_GT0, vms_alpha),
        TJ_F("vmsplice_GBps", TJ_GBPS, TJ_GT0, vms_beta),
    };
    return tj_walk(j, i, path, f, 4);
}

static int tj_net(tj_t *j, int i, const char *path)
{
    static const tj_field_t f[] = {
        TJ_F("alpha_us", TJ_US, TJ_GT0, net_alpha),
        TJ_F("GBps", TJ_GBPS, TJ_GT0, net_beta),
    };
    return tj_walk(j, i, path, f, 2);
}

/* One rule (numbered from 1 in messages, as a reader counts them). */
static int tj_rule(tj_t *j, int i, int no, kcoll_trule_t *r)
{
    char buf[40];
    if (j->v[i].type != TJ_OBJ)
        return tj_fail(j, j->v[i].line, "rule %d must be an object, not %s", no,
                       tj_what(j, i, buf, sizeof buf));
    int coll = -1, procs = -1, bytes = -1, algo = -1, cache = -1;
    for (int c = j->v[i].first; c >= 0; c = j->v[c].next) {
        const char *key = tj_keyof(j, c);
        if (!strcmp(key, "collective"))
            coll = c;
        else if (!strcmp(key, "procs"))
            procs = c;
        else if (!strcmp(key, "bytes"))
            bytes = c;
        else if (!strcmp(key, "algorithm"))
            algo = c;
        else if (!strcmp(key, "cache"))
            cache = c;
        else
            return tj_fail(j, j->v[c].kline, "rule %d: unknown field \"%s\" (known: collective, "
                           "procs, bytes, cache, algorithm)", no, key);
    }
    if (coll < 0 || algo < 0)
        return tj_fail(j, j->v[i].line, "rule %d: \"%s\" is missing", no,
                       coll < 0 ? "collective" : "algorithm");

    if (j->v[coll].type != TJ_STR)
        return tj_fail(j, j->v[coll].line, "rule %d: \"collective\" must be a string such as "
                       "\"MPI_Bcast\", not %s", no, tj_what(j, coll, buf, sizeof buf));
    const char *cname = j->strs + j->v[coll].str;
    int c = tj_coll(cname);
    if (c < 0)
        return tj_fail(j, j->v[coll].line, "rule %d: unknown collective \"%s\"", no, cname);
    r->coll = kcoll_coll_family((kcoll_coll_t)c);

    r->pmin = 1;
    r->pmax = 0;
    if (procs >= 0) {
        const tj_val_t *v = &j->v[procs];
        int a = v->type == TJ_ARR && v->n == 2 ? v->first : -1, b = a >= 0 ? j->v[a].next : -1;
        if (a < 0 || !tj_is_int(&j->v[a], 1) || !tj_is_int(&j->v[b], 0) ||
            (j->v[b].num != 0 && j->v[b].num < j->v[a].num))
            return tj_fail(j, v->line, "rule %d: \"procs\" must be [pmin, pmax]: integers, "
                           "pmin >= 1, pmax >= pmin or 0 (no bound)", no);
        r->pmin = (int)j->v[a].num;
        r->pmax = (int)j->v[b].num;
    }
    r->bmin = r->bmax = 0;
    if (bytes >= 0) {
        const tj_val_t *v = &j->v[bytes];
        int a = v->type == TJ_ARR && v->n == 2 ? v->first : -1, b = a >= 0 ? j->v[a].next : -1;
        if (a < 0 || !tj_num_ok(&j->v[a], TJ_GE0) || !tj_num_ok(&j->v[b], TJ_GE0) ||
            (j->v[b].num != 0 && j->v[b].num <= j->v[a].num))
            return tj_fail(j, v->line, "rule %d: \"bytes\" must be [bmin, bmax]: numbers >= 0, "
                           "bmax > bmin or 0 (no bound)", no);
        r->bmin = j->v[a].num;
        r->bmax = j->v[b].num;
    }

    r->cache = KCOLL_CACHE_ANY;
    if (cache >= 0) {
        const char *state = j->v[cache].type == TJ_STR ? j->strs + j->v[cache].str : "";
        if (!strcmp(state, "cold"))
            r->cache = KCOLL_CACHE_COLD;
        else if (!strcmp(state, "hot"))
            r->cache = KCOLL_CACHE_HOT;
        else
            return tj_fail(j, j->v[cache].line, "rule %d: \"cache\" must be \"cold\" or "
                           "\"hot\", not %s", no, tj_what(j, cache, buf, sizeof buf));
    }

    if (j->v[algo].type != TJ_STR)
        return tj_fail(j, j->v[algo].line, "rule %d: \"algorithm\" must be a string such as "
                       "\"knomial:k=4\" or \"host\", not %s",
                       no, tj_what(j, algo, buf, sizeof buf));
    const char *spec = j->strs + j->v[algo].str;
    if (strlen(spec) >= sizeof r->spec)
        return tj_fail(j, j->v[algo].line, "rule %d: algorithm \"%.24s...\" is longer than %zu "
                       "characters", no, spec, sizeof r->spec - 1);
    if (strcmp(spec, "host")) {
        const kcoll_algo_t *a;
        kcoll_aparam_t prm;
        char why[256], aspec[sizeof r->spec];
        if (kcoll_spec_engine(spec, aspec, sizeof aspec) == -2)
            return tj_fail(j, j->v[algo].line,
                           "rule %d: \"%s\" names no engine after '@' "
                           "(cma, shm, vmsplice, direct)",
                           no, spec);
        /* the collective as written, so that the message names it */
        if (kcoll_algo_parse((kcoll_coll_t)c, aspec, &a, &prm, why, sizeof why))
            return tj_fail(j, j->v[algo].line, "rule %d: %s", no, why);
        if (!a)
            return tj_fail(j, j->v[algo].line, "rule %d: \"%s\" is not an algorithm (a rule "
                           "pins one, or \"host\"; without the rule the model chooses)", no, spec);
    }
    strcpy(r->spec, spec);
    return 0;
}

static int tj_rules(tj_t *j, int i, const char *path)
{
    if (tj_need(j, i, TJ_ARR, path))
        return -1;
    if (j->v[i].n > KCOLL_TUNING_RULES)
        return tj_fail(j, j->v[i].line, "\"rules\" has %d rules, at most %d are allowed",
                       j->v[i].n, KCOLL_TUNING_RULES);
    int n = 0;
    for (int c = j->v[i].first; c >= 0; c = j->v[c].next, n++)
        if (tj_rule(j, c, n + 1, &j->out->rules[n]))
            return -1;
    j->out->nrules = n;
    return 0;
}

static int tj_top(tj_t *j, int top)
{
    static const tj_field_t f[] = {
        TJ_S("kcoll_tuning", tj_version), TJ_S("source", tj_source), TJ_S("cma", tj_cma),
        TJ_S("gamma", tj_gamma),          TJ_S("memory", tj_memory), TJ_S("sync", tj_sync),
        TJ_S("host", tj_host),            TJ_S("net", tj_net),
        TJ_S("engines", tj_engines),      TJ_S("rules", tj_rules),
    };
    char buf[40];
    if (j->v[top].type != TJ_OBJ)
        return tj_fail(j, j->v[top].line, "the top level must be an object, not %s",
                       tj_what(j, top, buf, sizeof buf));
    /* the version first: a file of another version is that, not a list of
     * unknown fields */
    int ver = -1;
    for (int c = j->v[top].first; c >= 0 && ver < 0; c = j->v[c].next)
        if (!strcmp(tj_keyof(j, c), "kcoll_tuning"))
            ver = c;
    if (ver < 0)
        return tj_fail(j, j->v[top].line, "\"kcoll_tuning\" (the format version, 1) is missing");
    if (tj_version(j, ver, "kcoll_tuning"))
        return -1;
    return tj_walk(j, top, "", f, (int)(sizeof f / sizeof f[0]));
}

static void tj_reset(kcoll_tuning_t *out)
{
    memset(out, 0, sizeof *out);
    kcoll_machine_defaults(&out->m);
}

/* Run the number conversions of this thread in the "C" locale (restored by
 * tj_locale_pop). Without a locale object the thread's own stands. */
static locale_t tj_locale_push(locale_t *old)
{
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    *old = c ? uselocale(c) : (locale_t)0;
    return c;
}

static void tj_locale_pop(locale_t c, locale_t old)
{
    if (c) {
        uselocale(old);
        freelocale(c);
    }
}

int kcoll_tuning_parse(const char *text, size_t len, const char *file, kcoll_tuning_t *out,
                       char *err, size_t errlen)
{
    tj_t j = {.s = text, .end = text + len, .file = file ? file : "", .line = 1, .err = err,
              .errlen = errlen, .out = out};
    int rc = -1;
    locale_t old, c = tj_locale_push(&old);
    tj_reset(out);
    if (err && errlen)
        err[0] = '\0';
    if (len > TJ_MAX_FILE) {
        tj_fail(&j, 1, "larger than %zu MiB: not a tuning file", TJ_MAX_FILE >> 20);
        goto done;
    }
    j.strs = malloc(len + 1);
    if (!j.strs) {
        tj_fail(&j, 1, "out of memory");
        goto done;
    }
    if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) /* a UTF-8 byte order mark */
        j.s += 3;
    tj_ws(&j);
    if (j.s == j.end) {
        tj_fail(&j, j.line, "empty file (a tuning file is a JSON object)");
        goto done;
    }
    int top = tj_value(&j, 1);
    if (top < 0)
        goto done;
    tj_ws(&j);
    if (j.s != j.end) {
        tj_fail(&j, j.line, "unexpected text after the end of the top-level value");
        goto done;
    }
    if (tj_top(&j, top))
        goto done;
    snprintf(out->file, sizeof out->file, "%s", j.file);
    rc = 0;
done:
    if (rc)
        tj_reset(out);
    free(j.v);
    free(j.strs);
    tj_locale_pop(c, old);
    return rc;
}

int kcoll_tuning_load(const char *file, kcoll_tuning_t *out, char *err, size_t errlen)
{
    FILE *f = fopen(file, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int e = 0;
    if (!f) {
        e = errno;
    } else {
        for (;;) {
            if (len == cap) {
                if (cap > TJ_MAX_FILE)
                    break; /* kcoll_tuning_parse names it */
                cap = cap ? 2 * cap : 64 << 10;
                char *nb = realloc(buf, cap);
                if (!nb) {
                    e = ENOMEM;
                    break;
                }
                buf = nb;
            }
            errno = 0;
            size_t n = fread(buf + len, 1, cap - len, f);
            len += n;
            if (n == 0) {
                if (ferror(f))
                    e = errno ? errno : EIO;
                break;
            }
        }
        fclose(f);
    }
    if (e) {
        free(buf);
        tj_reset(out);
        if (err && errlen)
            snprintf(err, errlen, "%s: cannot read: %s", file, strerror(e));
        return -1;
    }
    int rc = kcoll_tuning_parse(buf ? buf : "", len, file, out, err, errlen);
    free(buf);
    return rc;
}

/* ---- the writer ---- */

typedef struct {
    FILE *f;
    int bad; /* a value JSON cannot hold (not finite) */
} tw_t;

/* Integral values exactly (byte counts, page sizes), others to 9
 * significant digits: within 5e-9 of the value, and free of the noise the
 * unit conversions add (0.45 us stays "0.45"). */
static void tw_num(tw_t *w, double v)
{
    if (!isfinite(v)) {
        w->bad = 1;
        fputs("null", w->f);
    } else if (v == floor(v) && fabs(v) < 1e15) {
        fprintf(w->f, "%.0f", v);
    } else {
        fprintf(w->f, "%.9g", v);
    }
}

static void tw_str(tw_t *w, const char *s)
{
    fputc('"', w->f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(w->f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", w->f);
        else if (c == '\t')
            fputs("\\t", w->f);
        else if (c < 0x20 || c == 0x7f)
            fprintf(w->f, "\\u%04x", c);
        else
            fputc(c, w->f);
    }
    fputc('"', w->f);
}

/* `"name": value` at `ind` spaces; `last` leaves out the comma. */
static void tw_field(tw_t *w, int ind, const char *name, double v, int last)
{
    fprintf(w->f, "%*s\"%s\": ", ind, "", name);
    tw_num(w, v);
    fputs(last ? "\n" : ",\n", w->f);
}

static void tw_curve(tw_t *w, const char *name, const kcoll_gamma_t *g, int last)
{
    fprintf(w->f, "    \"%s\": {\n      \"poly\": [", name);
    for (int i = 0; i < 3; i++) {
        fputs(i ? ", " : "", w->f);
        tw_num(w, g->poly[i]);
    }
    fputs("],\n      \"measured\": [", w->f);
    for (int i = 0; i < g->nmeasured && i < KCOLL_GAMMA_MAX; i++) {
        fputs(i ? ", " : "", w->f);
        tw_num(w, g->measured[i]);
    }
    fprintf(w->f, "]\n    }%s\n", last ? "" : ",");
}

int kcoll_tuning_write(FILE *f, const kcoll_tuning_t *t)
{
    const kcoll_machine_t *m = &t->m;
    tw_t w = {f, 0};
    static const char *const rclass[KCOLL_NRCLASS] = {"int", "float", "double", "user"};
    locale_t old, c = tj_locale_push(&old);

    fputs("{\n  \"kcoll_tuning\": 1,\n  \"source\": ", f);
    tw_str(&w, m->source);
    fputs(",\n  \"cma\": {\n", f);
    tw_field(&w, 4, "alpha_us", m->alpha / US, 0);
    tw_field(&w, 4, "beta_GBps", 1.0 / (m->beta * GB), 0);
    tw_field(&w, 4, "write_GBps", 1.0 / (m->beta_write * GB), 0);
    tw_field(&w, 4, "l_us", m->l / US, 0);
    tw_field(&w, 4, "page_bytes", m->page, 0);
    tw_field(&w, 4, "package_cores", m->pkg_cores, 1);
    fputs("  },\n  \"gamma\": {\n", f);
    tw_curve(&w, "intra", &m->gamma_intra, 0);
    tw_curve(&w, "inter", &m->gamma_inter, 1);
    fputs("  },\n  \"memory\": {\n", f);
    tw_field(&w, 4, "copy_alpha_us", m->copy_alpha / US, 0);
    tw_field(&w, 4, "copy_GBps", 1.0 / (m->copy_beta * GB), 0);
    tw_field(&w, 4, "package_GBps", m->package_bw / GB, 0);
    tw_field(&w, 4, "link_GBps", m->link_bw / GB, 0);
    fputs("    \"reduce_GBps\": {\n", f);
    for (int i = 0; i < KCOLL_NRCLASS; i++)
        tw_field(&w, 6, rclass[i], 1.0 / (m->reduce_beta[i] * GB), i == KCOLL_NRCLASS - 1);
    fputs("    },\n", f);
    tw_field(&w, 4, "stream_GBps", 1.0 / (m->stream_beta * GB), 1);
    fputs("  },\n  \"sync\": {\n", f);
    tw_field(&w, 4, "flag_us", m->flag / US, 0);
    tw_field(&w, 4, "step_us", m->step / US, 0);
    tw_field(&w, 4, "call_us", m->call / US, 0);
    tw_field(&w, 4, "call_data_us", m->call_data / US, 0);
    tw_field(&w, 4, "handover_us", m->handover / US, 1);
    fputs("  },\n  \"host\": {\n", f);
    tw_field(&w, 4, "alpha_us", m->host_alpha / US, 0);
    tw_field(&w, 4, "beta_GBps", 1.0 / (m->host_beta * GB), 0);
    fputs("    \"times\": {\n", f);
    for (int k = 0; k < KCOLL_NCOLL; k++) {
        int n = m->nhost[k] < KCOLL_HOST_POINTS ? m->nhost[k] : KCOLL_HOST_POINTS;
        fprintf(f, "      \"%s\": [", kcoll_coll_name((kcoll_coll_t)k));
        for (int i = 0; i < n; i++) {
            const kcoll_hostpt_t *pt = &m->host[k][i];
            fprintf(f, "%s\n        [%d, ", i ? "," : "", pt->p);
            tw_num(&w, pt->bytes);
            fputs(", ", f);
            tw_num(&w, pt->t / US);
            fputc(']', f);
        }
        fprintf(f, "%s]%s\n", n ? "\n      " : "", k == KCOLL_NCOLL - 1 ? "" : ",");
    }
    fputs("    }\n  },\n  \"net\": {\n", f);
    tw_field(&w, 4, "alpha_us", m->net_alpha / US, 0);
    tw_field(&w, 4, "GBps", 1.0 / (m->net_beta * GB), 1);
    fputs("  },\n  \"engines\": {\n", f);
    tw_field(&w, 4, "shm_alpha_us", m->shm_alpha / US, 0);
    tw_field(&w, 4, "shm_GBps", 1.0 / (m->shm_beta * GB), 0);
    tw_field(&w, 4, "vmsplice_alpha_us", m->vms_alpha / US, 0);
    tw_field(&w, 4, "vmsplice_GBps", 1.0 / (m->vms_beta * GB), 1);
    fputs("  },\n  \"rules\": [", f);
    for (int i = 0; i < t->nrules && i < KCOLL_TUNING_RULES; i++) {
        const kcoll_trule_t *r = &t->rules[i];
        char spec[sizeof r->spec + 1];
        snprintf(spec, sizeof spec, "%.*s", (int)sizeof r->spec - 1, r->spec);
        fprintf(f, "%s\n    {\"collective\": \"%s\", \"procs\": [%d, %d], \"bytes\": [",
                i ? "," : "", kcoll_coll_name((kcoll_coll_t)r->coll), r->pmin, r->pmax);
        tw_num(&w, r->bmin);
        fputs(", ", f);
        tw_num(&w, r->bmax);
        fputs("], ", f);
        if (r->cache != KCOLL_CACHE_ANY)
            fprintf(f, "\"cache\": \"%s\", ", r->cache == KCOLL_CACHE_HOT ? "hot" : "cold");
        fputs("\"algorithm\": ", f);
        tw_str(&w, spec);
        fputc('}', f);
    }
    fprintf(f, "%s]\n}\n", t->nrules > 0 ? "\n  " : "");
    tj_locale_pop(c, old);
    if (w.bad) {
        errno = EINVAL;
        return -1;
    }
    return ferror(f) ? -1 : 0;
}
