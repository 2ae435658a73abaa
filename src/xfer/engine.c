/* The table of transfer engines (see engine.h). */
#include "xfer/cma.h"
#include "xfer/engine.h"

static const kcoll_engine_t *const kcoll_engines[KCOLL_NENGINES] = {
    [KCOLL_ENGINE_CMA] = &kcoll_engine_cma,
};

const kcoll_engine_t *kcoll_engine(kcoll_engine_id_t id)
{
    return (unsigned)id < KCOLL_NENGINES ? kcoll_engines[id] : NULL;
}
