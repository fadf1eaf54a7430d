/**
 * @file psel_ucx_table.h
 * Read the tables UCX printed for a machine. Tag send: a protocols v2 table
 * (UCX_PROTO_INFO=y, or `ucx_info -e` of UCX 1.13 to 1.20; with or without
 * UCX's log prefix or ucx_info's '#') or the protocols v1 line of `ucx_info
 * -e` ("tag_send: 0..<egr/short>..93..<egr/bcopy>..8256..<rndv>..(inf)"),
 * with the lanes it names, the UCX version and UCX's copy-bandwidth
 * estimate when the text says them. Used by psel_info --compare-ucx;
 * test/fuzz/fuzz_ucx_table.c fuzzes it.
 */
#ifndef PSEL_TOOLS_PSEL_UCX_TABLE_H_
#define PSEL_TOOLS_PSEL_UCX_TABLE_H_

#include <lane_select/resource.h>
#include <ucp_proto_sel/perf.h>
#include <ucs/memory/memory_type.h>

#include <stddef.h>
#include <stdio.h>

#define PSEL_CMP_MAX_ROWS   64
#define PSEL_CMP_MAX_LANES  16
#define PSEL_CMP_TEXT_MAX   256
#define PSEL_CMP_MAX_REASONS 8

/** One row of UCX's table */
typedef struct psel_cmp_row {
    size_t start, end;                 /* end SIZE_MAX: inf */
    char   desc[PSEL_CMP_TEXT_MAX];    /* as UCX printed it */
    char   proto[32];                  /* protosel's name of it, or "?" */
    char   lanes[PSEL_CMP_TEXT_MAX];   /* as UCX printed them, "" in v1 */
} psel_cmp_row_t;

/** What UCX printed */
typedef struct psel_cmp_ucx {
    int            version;           /* 2: v2 table; 1: v1 lines */
    char           title[PSEL_CMP_TEXT_MAX];
    ucs_memory_type_t mem_type;
    unsigned       num_rows;
    psel_cmp_row_t rows[PSEL_CMP_MAX_ROWS];
    unsigned       num_lanes;          /* transport/device pairs seen */
    char           lanes[PSEL_CMP_MAX_LANES][PSEL_NAME_MAX * 2];
    int            streamed;           /* the table of streamed operations
                                          ("(multi)"): the multi cost's */
    char           ucx_version[32];    /* "" if the file does not say */
    double         bcopy_bw;           /* UCX's estimate [B/s], 0 if unknown */
    int            locality;           /* what the file suggests, or -1 */
} psel_cmp_ucx_t;


/**
 * Read UCX's first tag-send table (not the sync one) from @a stream: the v2
 * table if there is one, else the v1 line.
 *
 * @param [in]  stream  Text to read.
 * @param [in]  name    Name for messages.
 * @param [out] ucx     The table; rows cover 0..inf on success.
 *
 * @return 0, or -1 with a message saying what the text is instead.
 */
int psel_ucx_table_read(FILE *stream, const char *name, psel_cmp_ucx_t *ucx);

/** The tables of UCX_PROTO_INFO=y that psel_ucx_table_read_kind() reads */
typedef enum {
    PSEL_UCX_TABLE_TAG_SEND,        /**< "ucp_tag_send*()": a single send */
    PSEL_UCX_TABLE_TAG_SEND_MULTI,  /**< "ucp_tag_send*(multi)": streaming */
    PSEL_UCX_TABLE_RNDV_FETCH,      /**< "rendezvous data fetch()": the
                                         receiver's choice (get, or an RTR) */
    PSEL_UCX_TABLE_RNDV_SEND,       /**< "rendezvous data send()": the
                                         sender's after an RTR (put, am) */
    PSEL_UCX_TABLE_PUT,             /**< "ucp_put*()" */
    PSEL_UCX_TABLE_PUT_MULTI,       /**< "ucp_put*(multi)" */
    PSEL_UCX_TABLE_GET,             /**< "ucp_get*()" */
    PSEL_UCX_TABLE_GET_MULTI,       /**< "ucp_get*(multi)" */
    PSEL_UCX_TABLE_AM_SEND,         /**< "ucp_am_send*()" */
    PSEL_UCX_TABLE_AM_SEND_MULTI,   /**< "ucp_am_send*(multi)" */
    PSEL_UCX_TABLE_LAST
} psel_ucx_table_kind_t;


/**
 * Read the last complete table of @a kind for host memory that UCX printed
 * (UCX_PROTO_INFO=y, with or without its log prefix): rows cover 0..inf
 * one after the other; a row of one size ("0") is that size alone. Rows of
 * the rendezvous tables are named by how the data moves (rndv/get,
 * rndv/put, rndv/am, "none" for no data); rows of the put, get and
 * active-message tables as protosel's protocols of that operation
 * ("put/offload/short", "am/rndv/get").
 *
 * @return 0, or -1 when @a f holds no such table (a debug message).
 */
int psel_ucx_table_read_kind(FILE *f, const char *path,
                             psel_ucx_table_kind_t kind, psel_cmp_ucx_t *ucx);


/**
 * Read UCX's table of operation @a op: tag send as psel_ucx_table_read();
 * put, get and active messages as psel_ucx_table_read_kind(), the table of
 * single operations, else the streamed one (ucx_perftest's ucp_get prints
 * only that; @a ucx->streamed says which), with rows named as protosel's
 * protocols of that operation ("put/offload/short", "am/rndv/get").
 *
 * @return 0, or -1 with a message saying what to print instead.
 */
int psel_ucx_table_read_op(FILE *stream, const char *name, psel_op_t op,
                           psel_cmp_ucx_t *ucx);


/**
 * Add the "tl/dev" names found in a lanes cell ("cma/memory 32% +
 * rc_mlx5/mlx5_0:1 68%", "rc_mlx5/mlx5_bond_1:1 7% on path0, ...", v1's
 * "cma/memory.0") to @a ucx->lanes, once each.
 */
void psel_ucx_table_add_lanes(psel_cmp_ucx_t *ucx, const char *cell);

#endif
