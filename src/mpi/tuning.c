/* The tuning file at MPI_Init: rank 0 of MPI_COMM_WORLD reads it (where
 * there is none, the quick calibration's: mpi/quick.c) and every rank
 * receives the same bytes, so every rank prices and decides alike
 * (a file that differs between nodes, or is missing on some, cannot split
 * a job's decisions). Which file: KCOLL_TUNING, else KCOLL_TUNING_DEFAULT
 * if it exists, else none (the built-in defaults). A file that cannot be
 * used gives one warning naming the file, the line and what is wrong, and
 * kcoll goes on with the built-in defaults. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/params.h"
#include "model/tuning.h"
#include "mpi/host.h"

#define KCOLL_TUNING_DEFAULT "/etc/kcoll/tuning.json"

/* Read the file this process would use into t: 0 (t set, or the defaults
 * where no file is named), -1 with err (t: the defaults). */
static int kcoll_tuning_read(kcoll_tuning_t *t, char *err, size_t errlen)
{
    const char *file = kcoll_param_str(KCOLL_P_TUNING);
    kcoll_tuning_defaults(t);
    if (!file || !*file) {
        if (access(KCOLL_TUNING_DEFAULT, R_OK) != 0)
            return 0;
        file = KCOLL_TUNING_DEFAULT;
    }
    if (kcoll_tuning_load(file, t, err, errlen) == 0)
        return 0;
    kcoll_tuning_defaults(t); /* the file's half-read values are not used */
    return -1;
}

void kcoll_tuning_startup(int collective)
{
    static kcoll_tuning_t t; /* large: not on the stack */
    char err[512] = "";
    int rc = 0, quick = 0;
    if (!collective || kcoll_world_rank == 0) {
        rc = kcoll_tuning_read(&t, err, sizeof err);
        /* no file named and none in the default place: the quick
         * calibration of this machine (mpi/quick.c) */
        quick = collective && rc == 0 && !t.file[0] && kcoll_param_int(KCOLL_P_QUICK_CALIBRATE);
    }
    if (rc && kcoll_world_rank <= 0)
        kcoll_warn("tuning file not used: %s; kcoll prices with its built-in defaults", err);
    if (collective) {
        PMPI_Bcast(&quick, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (quick)
            kcoll_quick_startup(&t);
        PMPI_Bcast(&t, (int)sizeof t, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
    kcoll_tuning_set(&t);
}
