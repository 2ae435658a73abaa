/* Run-time parameters: the table generated from params.def, parsing, and
 * the environment. A value is kept both as text (what kcoll-info shows)
 * and, for BOOL/INT/SIZE, as a number (what the hot path reads). */
#include <ctype.h>
#include <stdatomic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hot.h"
#include "base/log.h"
#include "base/params.h"

const kcoll_param_desc_t kcoll_param_desc[KCOLL_NPARAMS] = {
#define KCOLL_PARAM(name, type, def, help) {#name, KCOLL_PT_##type, def, help},
#include "base/params.def"
#undef KCOLL_PARAM
};

#define KCOLL_PARAM_TEXT_MAX 256

/* Bumped by every change of a parameter (see kcoll_params_generation),
 * and the second by every change but of an algorithm choice
 * (kcoll_params_generation_model). The first is read by every call the
 * shortcut hands to the host: on the hot page (base/hot.h), as its first. */
KCOLL_HOT_FIRST _Atomic uint64_t kcoll_params_gen = 1;
static _Atomic uint64_t kcoll_params_gen_model = 1;

int64_t kcoll_param_num[KCOLL_NPARAMS];
int kcoll_params_loaded;
static char kcoll_param_text[KCOLL_NPARAMS][KCOLL_PARAM_TEXT_MAX];

int kcoll_parse_size(const char *text, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || errno || v < 0)
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    int64_t mult = 1;
    switch (tolower((unsigned char)*end)) {
    case '\0': break;
    case 'k': mult = 1ll << 10; end++; break;
    case 'm': mult = 1ll << 20; end++; break;
    case 'g': mult = 1ll << 30; end++; break;
    default: return -1;
    }
    /* accept "k", "kb", "kib" (all binary) */
    if (mult > 1 && (tolower((unsigned char)end[0]) == 'i'))
        end++;
    if (mult > 1 && (tolower((unsigned char)end[0]) == 'b'))
        end++;
    if (*end != '\0')
        return -1;
    if (v > INT64_MAX / mult)
        return -1;
    *out = v * mult;
    return 0;
}

int kcoll_parse_bool(const char *text, int *out)
{
    if (!strcmp(text, "1") || !strcasecmp(text, "yes") || !strcasecmp(text, "true") ||
        !strcasecmp(text, "on")) {
        *out = 1;
        return 0;
    }
    if (!strcmp(text, "0") || !strcasecmp(text, "no") || !strcasecmp(text, "false") ||
        !strcasecmp(text, "off") || !strcmp(text, "")) {
        *out = 0;
        return 0;
    }
    return -1;
}

static int kcoll_parse_value(kcoll_ptype_t type, const char *text, int64_t *num)
{
    char *end;
    int b;
    switch (type) {
    case KCOLL_PT_BOOL:
        if (kcoll_parse_bool(text, &b))
            return -1;
        *num = b;
        return 0;
    case KCOLL_PT_INT: {
        errno = 0;
        long long v = strtoll(text, &end, 10);
        if (end == text || *end || errno)
            return -1;
        *num = v;
        return 0;
    }
    case KCOLL_PT_SIZE:
        if (!strcasecmp(text, "auto")) { /* the model decides (where the parameter allows) */
            *num = -1;
            return 0;
        }
        return kcoll_parse_size(text, num);
    case KCOLL_PT_STRING:
        *num = 0;
        return strlen(text) < KCOLL_PARAM_TEXT_MAX ? 0 : -1;
    }
    return -1;
}

static int kcoll_param_store(int id, const char *text)
{
    int64_t num;
    if (kcoll_parse_value(kcoll_param_desc[id].type, text, &num))
        return -1;
    if (kcoll_params_loaded && kcoll_param_num[id] == num &&
        !strcmp(kcoll_param_text[id], text))
        return 0; /* unchanged: what caches derived from it stays valid */
    kcoll_param_num[id] = num;
    snprintf(kcoll_param_text[id], KCOLL_PARAM_TEXT_MAX, "%s", text);
    if (id == KCOLL_P_WARN)
        kcoll_log_set_warnings((int)num);
    /* release: the new value above is written before the generation that
     * tells caches to read it again (pairs with kcoll_params_generation) */
    atomic_fetch_add_explicit(&kcoll_params_gen, 1, memory_order_release);
    const char *name = kcoll_param_desc[id].name;
    const size_t len = strlen(name);
    if (len < 5 || strcmp(name + len - 5, "_ALGO"))
        atomic_fetch_add_explicit(&kcoll_params_gen_model, 1, memory_order_release);
    return 0;
}

void kcoll_params_load(void)
{
    int bad[KCOLL_NPARAMS] = {0};
    /* Defaults first, then the environment, then the warnings: a warning
     * about one variable obeys KCOLL_WARN whatever the order. */
    for (int id = 0; id < KCOLL_NPARAMS; id++)
        kcoll_param_store(id, kcoll_param_desc[id].def);
    kcoll_params_loaded = 1;
    for (int id = 0; id < KCOLL_NPARAMS; id++) {
        char env[64];
        snprintf(env, sizeof env, "KCOLL_%s", kcoll_param_desc[id].name);
        const char *v = getenv(env);
        if (v && kcoll_param_store(id, v))
            bad[id] = 1;
    }
    for (int id = 0; id < KCOLL_NPARAMS; id++)
        if (bad[id])
            kcoll_warn("KCOLL_%s is not a valid %s value; using the default '%s'",
                       kcoll_param_desc[id].name,
                       kcoll_param_desc[id].type == KCOLL_PT_BOOL ? "boolean (0/1)"
                       : kcoll_param_desc[id].type == KCOLL_PT_STRING ? "string"
                                                                      : "numeric",
                       kcoll_param_desc[id].def);
}

static void kcoll_params_ensure(void)
{
    if (!kcoll_params_loaded)
        kcoll_params_load();
}

static int kcoll_param_lookup(const char *name)
{
    if (!strncmp(name, "KCOLL_", 6))
        name += 6;
    for (int id = 0; id < KCOLL_NPARAMS; id++)
        if (!strcasecmp(name, kcoll_param_desc[id].name))
            return id;
    return -1;
}

int kcoll_params_set(const char *name, const char *value)
{
    kcoll_params_ensure();
    int id = kcoll_param_lookup(name);
    if (id < 0 || !value)
        return -1;
    return kcoll_param_store(id, value);
}

const char *kcoll_params_get(const char *name)
{
    kcoll_params_ensure();
    int id = kcoll_param_lookup(name);
    return id < 0 ? NULL : kcoll_param_text[id];
}

int64_t kcoll_param_int_slow(kcoll_param_id_t id)
{
    kcoll_params_ensure();
    return kcoll_param_num[id];
}

const char *kcoll_param_str(kcoll_param_id_t id)
{
    kcoll_params_ensure();
    return kcoll_param_text[id];
}

void kcoll_params_touch(void)
{
    /* release: whatever the caller changed before (a tuning) is written
     * before the generation that tells caches to decide again */
    atomic_fetch_add_explicit(&kcoll_params_gen, 1, memory_order_release);
    atomic_fetch_add_explicit(&kcoll_params_gen_model, 1, memory_order_release);
}

uint64_t kcoll_params_generation_model(void)
{
    /* acquire: as kcoll_params_generation */
    return atomic_load_explicit(&kcoll_params_gen_model, memory_order_acquire);
}
