/* The table of transfer engines (see engine.h). */
#include <string.h>

#include "xfer/chan.h"
#include "xfer/cma.h"
#include "xfer/engine.h"

/* The two-sided engines need no function of their own here: the executor
 * drives their steps through the channel (xfer/chan.h). */
static const kcoll_engine_t kcoll_engine_shm = {
    .id = KCOLL_ENGINE_SHM,
    .name = "shm",
    .read_call = "two-copy read",
    .write_call = "two-copy write",
    .two_sided = 1,
    .path = KCOLL_PATH_RING,
};

static const kcoll_engine_t kcoll_engine_vmsplice = {
    .id = KCOLL_ENGINE_VMSPLICE,
    .name = "vmsplice",
    .read_call = "vmsplice read",
    .write_call = "vmsplice write",
    .two_sided = 1,
    .path = KCOLL_PATH_PIPE,
};

/* direct: steps are loads and stores of the executor on a mapping
 * (xfer/direct.h); the entry names it */
static const kcoll_engine_t kcoll_engine_direct = {
    .id = KCOLL_ENGINE_DIRECT,
    .name = "direct",
    .read_call = "load",
    .write_call = "store",
};

static const kcoll_engine_t *const kcoll_engines[KCOLL_NENGINES] = {
    [KCOLL_ENGINE_CMA] = &kcoll_engine_cma,
    [KCOLL_ENGINE_SHM] = &kcoll_engine_shm,
    [KCOLL_ENGINE_DIRECT] = &kcoll_engine_direct,
    [KCOLL_ENGINE_VMSPLICE] = &kcoll_engine_vmsplice,
};

const kcoll_engine_t *kcoll_engine(kcoll_engine_id_t id)
{
    return (unsigned)id < KCOLL_NENGINES ? kcoll_engines[id] : NULL;
}

int kcoll_engine_by_name(const char *name)
{
    for (int i = 0; i < KCOLL_NENGINES; i++)
        if (name && !strcmp(kcoll_engines[i]->name, name))
            return i;
    return -1;
}
