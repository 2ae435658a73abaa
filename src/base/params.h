/* Run-time parameters, generated from params.def. */
#ifndef KCOLL_PARAMS_H
#define KCOLL_PARAMS_H

#include <stdatomic.h>
#include <stdint.h>

typedef enum { KCOLL_PT_BOOL, KCOLL_PT_INT, KCOLL_PT_SIZE, KCOLL_PT_STRING } kcoll_ptype_t;

typedef enum {
#define KCOLL_PARAM(name, type, def, help) KCOLL_P_##name,
#include "base/params.def"
#undef KCOLL_PARAM
    KCOLL_NPARAMS
} kcoll_param_id_t;

typedef struct {
    const char *name;      /* without the KCOLL_ prefix */
    kcoll_ptype_t type;
    const char *def;       /* default, as text */
    const char *help;
} kcoll_param_desc_t;

extern const kcoll_param_desc_t kcoll_param_desc[KCOLL_NPARAMS];

/* (Re)read every parameter from the environment; bad values keep the
 * default and print one warning. Called at MPI_Init. */
void kcoll_params_load(void);
/* Set one parameter by name ("MIN_BYTES" or "KCOLL_MIN_BYTES");
 * returns 0, or -1 for an unknown name or a value that does not parse. */
int kcoll_params_set(const char *name, const char *value);
/* Current text of a parameter by name, or NULL for an unknown name. */
const char *kcoll_params_get(const char *name);

/* The numbers of the parameters (BOOL, INT, SIZE), once loaded: what the
 * hot paths read, through kcoll_param_int. */
extern int64_t kcoll_param_num[KCOLL_NPARAMS];
extern int kcoll_params_loaded;
int64_t kcoll_param_int_slow(kcoll_param_id_t id);
static inline int64_t kcoll_param_int(kcoll_param_id_t id)    /* BOOL, INT, SIZE */
{
    return kcoll_params_loaded ? kcoll_param_num[id] : kcoll_param_int_slow(id);
}
const char *kcoll_param_str(kcoll_param_id_t id);     /* every type: current text */
/* A number that changes whenever a parameter changes (at load and with
 * kcoll_params_set): whatever is derived from parameters and cached (a
 * parsed algorithm spec, a decision) is valid while it stays the same.
 * Inline: the call layer's shortcut (call/shortcut.h) reads it on every
 * call it takes. */
extern _Atomic uint64_t kcoll_params_gen;
static inline uint64_t kcoll_params_generation(void)
{
    /* acquire: a caller that sees a new generation then reads the values
     * stored before it (pairs with the release in kcoll_param_store) */
    return atomic_load_explicit(&kcoll_params_gen, memory_order_acquire);
}
/* The same, but unchanged by the algorithm choices (KCOLL_<FAMILY>_ALGO):
 * the cost model's decisions do not depend on them. */
uint64_t kcoll_params_generation_model(void);
/* A new generation without a parameter change: something else decisions
 * derive from changed (the model's tuning). */
void kcoll_params_touch(void);
/* Parse a size ("16384", "16k", "16KiB", "1M"); returns 0 on success. */
int kcoll_parse_size(const char *text, int64_t *out);
/* A boolean's text as the parameters read it (1/yes/true/on, 0/no/false/off
 * or empty): 0 with *out set, -1 for anything else. */
int kcoll_parse_bool(const char *text, int *out);

#endif
