/*
 * The built-in protocols, listed once. To add a protocol, define its
 * psel_proto_t in a new file and add one line here; the order is the
 * tie-break order of selection.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proto.h"

#include <string.h>

#define PSEL_FOREACH_BUILTIN_PROTO(_X) \
    _X(egr_short) \
    _X(egr_bcopy) \
    _X(egr_zcopy) \
    _X(rndv_am) \
    _X(rndv_get) \
    _X(rndv_put) \
    _X(rndv_mtype) \
    _X(put_short) \
    _X(put_bcopy) \
    _X(put_zcopy) \
    _X(put_am) \
    _X(get_bcopy) \
    _X(get_zcopy) \
    _X(get_am) \
    _X(am_egr_short) \
    _X(am_egr_bcopy) \
    _X(am_egr_zcopy) \
    _X(am_rndv_am) \
    _X(am_rndv_get) \
    _X(am_rndv_put)

#define PSEL_PROTO_DECLARE(_name) extern const psel_proto_t psel_proto_##_name;
#define PSEL_PROTO_ENTRY(_name)   &psel_proto_##_name,

PSEL_FOREACH_BUILTIN_PROTO(PSEL_PROTO_DECLARE)

const psel_proto_t *const psel_builtin_protos[] = {
    PSEL_FOREACH_BUILTIN_PROTO(PSEL_PROTO_ENTRY)
};

const unsigned psel_num_builtin_protos = sizeof(psel_builtin_protos) /
                                         sizeof(psel_builtin_protos[0]);

const psel_proto_t *psel_proto_by_name(const char *name)
{
    unsigned i;

    for (i = 0; i < psel_num_builtin_protos; ++i) {
        if (!strcmp(psel_builtin_protos[i]->name, name)) {
            return psel_builtin_protos[i];
        }
    }
    return NULL;
}
