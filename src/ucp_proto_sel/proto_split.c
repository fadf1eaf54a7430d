/*
 * Splitting a transfer over lanes (see proto_rndv.h): the one home of the
 * multi-lane split, used by rndv/put, rndv/am and the receiver's rndv/get.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proto_rndv_int.h"

#include <ucs/sys/math.h>
#include <assert.h>
#include <string.h>

static size_t psel_proto_align_down(size_t value, size_t align)
{
    return (align > 1) ? (value - (value % align)) : value;
}

void psel_proto_xfer_init(psel_proto_xfer_t *xfer,
                          const psel_proto_split_lane_t *lanes,
                          unsigned num_lanes, size_t length, size_t min_chunk)
{
    size_t chunk[PSEL_MAX_LANES], least[PSEL_MAX_LANES];
    unsigned i, n;
    size_t start;
    int fits;
    double total;

    assert((num_lanes >= 1) && (num_lanes <= PSEL_MAX_LANES));
    memset(xfer, 0, sizeof(*xfer));

    /* a lane's chunk holds at least min_chunk and its smallest operation */
    for (i = 0; i < num_lanes; ++i) {
        least[i] = ucs_max(min_chunk, lanes[i].min_frag);
    }

    /* at most one lane per min_chunk bytes; then drop the last lane while
     * some lane's chunk (the last one's is the remainder) falls below its
     * least: at most num_lanes rounds */
    n = ucs_min(num_lanes, ucs_max(1, length / ucs_max(min_chunk, 1)));
    while (n > 1) {
        total = 0;
        for (i = 0; i < n; ++i) {
            total += lanes[i].share;
        }
        fits  = 1;
        start = 0;
        for (i = 0; i + 1 < n; ++i) {
            chunk[i] = psel_proto_align_down(
                    (size_t)((double)length * lanes[i].share / total),
                    lanes[i].align);
            start   += chunk[i];
            fits     = fits && (chunk[i] >= least[i]);
        }
        if (fits && (start <= length) && (length - start >= least[n - 1])) {
            break;
        }
        --n;
    }

    start = 0;
    for (i = 0; i < n; ++i) {
        xfer->lanes[i]    = lanes[i].lane;
        xfer->max_frag[i] = (lanes[i].max_frag >= lanes[i].align) ?
                            psel_proto_align_down(lanes[i].max_frag,
                                                  lanes[i].align) :
                            ucs_max(lanes[i].max_frag, 1);
        xfer->min_frag[i] = lanes[i].min_frag;
        xfer->offset[i]   = start;
        /* the last lane takes the remainder (rounding of the others) */
        xfer->end[i]      = (i + 1 < n) ? ucs_min(start + chunk[i], length) :
                                          length;
        start             = xfer->end[i];
    }
    xfer->num_lanes = n;
    xfer->next      = 0;
}

int psel_proto_xfer_next(const psel_proto_xfer_t *xfer, unsigned *index_p,
                         size_t *offset_p, size_t *length_p)
{
    unsigned i, index;
    size_t rest, length;

    for (i = 0; i < xfer->num_lanes; ++i) {
        index = (xfer->next + i) % xfer->num_lanes;
        if (xfer->offset[index] < xfer->end[index]) {
            rest   = xfer->end[index] - xfer->offset[index];
            length = ucs_min(xfer->max_frag[index], rest);
            if ((length < rest) && (rest - length < xfer->min_frag[index])) {
                /* the chunk's last fragment would be below the lane's
                 * smallest operation: leave it exactly that */
                length = rest - xfer->min_frag[index];
            }
            *index_p  = index;
            *offset_p = xfer->offset[index];
            *length_p = length;
            return 1;
        }
    }
    return 0;
}

void psel_proto_xfer_posted(psel_proto_xfer_t *xfer, unsigned index,
                            size_t length)
{
    assert(xfer->offset[index] + length <= xfer->end[index]);
    xfer->offset[index] += length;
    xfer->next           = (index + 1) % xfer->num_lanes;
}

void psel_proto_xfer_lane(const uct_iface_attr_t *attr,
                          psel_proto_xfer_op_t op, uint8_t lane, double share,
                          psel_proto_split_lane_t *out)
{
    size_t hdr = sizeof(psel_rndv_data_hdr_t);
    size_t max, min, align;

    switch (op) {
    case PSEL_PROTO_XFER_PUT:
        max   = attr->cap.put.max_zcopy;
        min   = attr->cap.put.min_zcopy;
        align = ucs_max(attr->cap.put.opt_zcopy_align, attr->cap.put.align_mtu);
        break;
    case PSEL_PROTO_XFER_GET:
        max   = attr->cap.get.max_zcopy;
        min   = attr->cap.get.min_zcopy;
        align = ucs_max(attr->cap.get.opt_zcopy_align, attr->cap.get.align_mtu);
        break;
    case PSEL_PROTO_XFER_AM_ZCOPY:
        max   = (attr->cap.am.max_zcopy > hdr) ? attr->cap.am.max_zcopy - hdr : 1;
        min   = attr->cap.am.min_zcopy;
        align = ucs_max(attr->cap.am.opt_zcopy_align, attr->cap.am.align_mtu);
        break;
    default:
        max   = (attr->cap.am.max_bcopy > hdr) ? attr->cap.am.max_bcopy - hdr : 1;
        min   = 0;
        align = 1;
        break;
    }
    out->lane     = lane;
    out->share    = (share > 0) ? share : 1.0;
    out->max_frag = ucs_max(max, 1);
    out->align    = ucs_max(align, 1);
    out->min_frag = min;
}
