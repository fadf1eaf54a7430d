/*
 * The reader of UCX's protocols v2 tables of each kind
 * (psel_ucx_table_read_kind, for psel_calibrate --ucp): the tag-send tables
 * of a single and a streaming send, the receiver's rendezvous "data fetch"
 * and the sender's "data send", as UCX 1.13.1 printed them in two
 * ucx_perftest runs of this machine (rendezvous forced: UCX_RNDV_THRESH=0
 * and a scheme), with UCX's log prefix.
 */
#include "../../src/tools/psel_ucx_table.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#define P "[1795545000.000000] [vm:1234 :0]   "

/* tcp/lo, UCX_RNDV_SCHEME=put_zcopy: the receiver asks for put, the sender
 * puts; a first, incomplete table of another endpoint configuration is
 * skipped for the last complete one */
static const char tcp_put[] =
    P "| 0x55d0301485a0 ep_cfg[0] | tagged message by ucp_tag_send*() from host memory    |\n"
    P "+--------------------------+----------------------------------------------------+--+\n"
    P "|                   0..inf | (?) rendezvous no data fetch                       |  |\n"
    P "+--------------------------+----------------------------------------------------+--+\n"
    P "| 0x55d0301485a0 ep_cfg[0] | rendezvous data fetch() into host memory from host    |\n"
    P "+--------------------------+----------------------------------------------+--------+\n"
    P "|                        0 | no data fetch                                |        |\n"
    P "|                   1..99 | (?) zero-copy fenced write to remote         | tcp/lo |\n"
    P "+--------------------------+----------------------------------------------+--------+\n"
    P "| 0x55d0301485a0 ep_cfg[1] | rendezvous data fetch() into host memory from host    |\n"
    P "+--------------------------+----------------------------------------------+--------+\n"
    P "|                        0 | no data fetch                                |        |\n"
    P "|                   1..inf | (?) zero-copy fenced write to remote         | tcp/lo |\n"
    P "+--------------------------+----------------------------------------------+--------+\n"
    P "| 0x55d0301485a0 ep_cfg[1] | rendezvous data send() from host memory to host    |\n"
    P "+--------------------------+-------------------------------------------+--------+\n"
    P "|                   0..inf | zero-copy fenced write to remote          | tcp/lo |\n"
    P "+--------------------------+-------------------------------------------+--------+\n";

/* posix,sysv,cma, stock: the sender expects a get, the receiver sends an
 * RTR (am, then put over cma), the sender after an RTR has only am */
static const char shm_stock[] =
    P "| 0x5632c59055c0 ep_cfg[0] | tagged message by ucp_tag_send*(multi) from host memory    |\n"
    P "+--------------------------+----------------------------------------------+-------------+\n"
    P "|                    0..92 | eager short                                  | sysv/memory |\n"
    P "|                 93..3636 | eager copy-in copy-out                       | sysv/memory |\n"
    P "|               3637..5246 | (?) rendezvous fragmented copy-in copy-out   | sysv/memory |\n"
    P "|               5247..8248 | eager copy-in copy-out                       | sysv/memory |\n"
    P "|              8249..10214 | multi-frag eager copy-in copy-out            | sysv/memory |\n"
    P "|               10215..inf | (?) rendezvous zero-copy read from remote    | cma/memory  |\n"
    P "+--------------------------+----------------------------------------------+-------------+\n"
    P "| 0x5632c59055c0 ep_cfg[0] | rendezvous data fetch() into host memory            |\n"
    P "+--------------------------+---------------------------------------+-------------+\n"
    P "|                        0 | no data fetch                         |             |\n"
    P "|                  1..5514 | (?) fragmented copy-in copy-out       | sysv/memory |\n"
    P "|                5515..inf | (?) zero-copy flushed write to remote | cma/memory  |\n"
    P "+--------------------------+---------------------------------------+-------------+\n"
    P "| 0x5632c59055c0 ep_cfg[0] | rendezvous data send() from host memory    |\n"
    P "+--------------------------+------------------------------+-------------+\n"
    P "|                   0..inf | fragmented copy-in copy-out  | sysv/memory |\n"
    P "+--------------------------+------------------------------+-------------+\n";

static int read_kind(const char *text, psel_ucx_table_kind_t kind,
                     psel_cmp_ucx_t *ucx)
{
    FILE *f = fmemopen((void*)text, strlen(text), "r");
    int ret;

    assert_non_null(f);
    ret = psel_ucx_table_read_kind(f, "test", kind, ucx);
    fclose(f);
    return ret;
}

static void assert_row(const psel_cmp_row_t *row, size_t start, size_t end,
                       const char *proto, const char *lanes)
{
    assert_int_equal(row->start, start);
    assert_int_equal(row->end, end);
    assert_string_equal(row->proto, proto);
    assert_string_equal(row->lanes, lanes);
}

static void test_rendezvous_tables_tcp_put(void **state)
{
    psel_cmp_ucx_t ucx;

    assert_int_equal(read_kind(tcp_put, PSEL_UCX_TABLE_TAG_SEND, &ucx), 0);
    assert_int_equal(ucx.num_rows, 1);
    assert_int_equal(strncmp(ucx.rows[0].proto, "rndv/", 5), 0);

    /* the last complete table: ep_cfg[1]'s, with its row of one size */
    assert_int_equal(read_kind(tcp_put, PSEL_UCX_TABLE_RNDV_FETCH, &ucx), 0);
    assert_int_equal(ucx.num_rows, 2);
    assert_row(&ucx.rows[0], 0, 0, "none", "");
    assert_row(&ucx.rows[1], 1, SIZE_MAX, "rndv/put", "tcp/lo");
    assert_string_equal(ucx.title,
                        "rendezvous data fetch() into host memory from host");

    assert_int_equal(read_kind(tcp_put, PSEL_UCX_TABLE_RNDV_SEND, &ucx), 0);
    assert_int_equal(ucx.num_rows, 1);
    assert_row(&ucx.rows[0], 0, SIZE_MAX, "rndv/put", "tcp/lo");

    /* no streaming table there */
    assert_int_equal(read_kind(tcp_put, PSEL_UCX_TABLE_TAG_SEND_MULTI, &ucx),
                     -1);
}

static void test_rendezvous_tables_shm_stock(void **state)
{
    psel_cmp_ucx_t ucx;

    assert_int_equal(read_kind(shm_stock, PSEL_UCX_TABLE_TAG_SEND_MULTI,
                               &ucx), 0);
    assert_int_equal(ucx.num_rows, 6);
    assert_row(&ucx.rows[0], 0, 92, "egr/short", "sysv/memory");
    assert_row(&ucx.rows[2], 3637, 5246, "rndv/am", "sysv/memory");
    assert_row(&ucx.rows[4], 8249, 10214, "egr/bcopy", "sysv/memory");
    assert_row(&ucx.rows[5], 10215, SIZE_MAX, "rndv/get", "cma/memory");
    assert_int_equal(ucx.num_lanes, 2);

    assert_int_equal(read_kind(shm_stock, PSEL_UCX_TABLE_RNDV_FETCH, &ucx), 0);
    assert_int_equal(ucx.num_rows, 3);
    assert_row(&ucx.rows[1], 1, 5514, "rndv/am", "sysv/memory");
    assert_row(&ucx.rows[2], 5515, SIZE_MAX, "rndv/put", "cma/memory");

    assert_int_equal(read_kind(shm_stock, PSEL_UCX_TABLE_RNDV_SEND, &ucx), 0);
    assert_row(&ucx.rows[0], 0, SIZE_MAX, "rndv/am", "sysv/memory");

    /* no single-send table there */
    assert_int_equal(read_kind(shm_stock, PSEL_UCX_TABLE_TAG_SEND, &ucx), -1);
}

/* UCX 1.22.0 titles a table on two lines of one cell each and heads its
 * rows with "Range | Description | Config"; an operation without flags has
 * no "()". Printed by ucx_perftest over tcp/lo, UCX_RNDV_THRESH=0 and
 * UCX_RNDV_SCHEME=put_zcopy (tag_lat), and over posix,sysv,cma, tag_bw */
#define P22 "[1796637901.781273] [vm:4126 :0]   "
static const char ucx122[] =
    P22 "+--------+-------------------------------------------------+-----------------------------------+\n"
    P22 "| perftest intra-node cfg#0                                                                    |\n"
    P22 "| tagged message by ucp_tag_send* from host memory                                             |\n"
    P22 "+--------+-------------------------------------------------+-----------------------------------+\n"
    P22 "| Range  |                   Description                   |              Config               |\n"
    P22 "+--------+-------------------------------------------------+-----------------------------------+\n"
    P22 "|      0 | (?) rendezvous no data fetch                    |                                   |\n"
    P22 "| 1..inf | (?) rendezvous zero-copy fenced write to remote | 52% on tcp/lo and 48% on tcp/eth0 |\n"
    P22 "+--------+-------------------------------------------------+-----------------------------------+\n"
    P22 "+--------+----------------------------------+-----------------------------------+\n"
    P22 "| perftest intra-node cfg#0                                                     |\n"
    P22 "| rendezvous data send from host memory to host                                 |\n"
    P22 "+--------+----------------------------------+-----------------------------------+\n"
    P22 "| Range  |           Description            |              Config               |\n"
    P22 "+--------+----------------------------------+-----------------------------------+\n"
    P22 "| 0..inf | zero-copy fenced write to remote | 52% on tcp/lo and 48% on tcp/eth0 |\n"
    P22 "+--------+----------------------------------+-----------------------------------+\n"
    P22 "+-----------+--------------------------------------------+-------------+\n"
    P22 "| perftest intra-node cfg#0                                            |\n"
    P22 "| tagged message by ucp_tag_send*(multi) from host memory              |\n"
    P22 "+-----------+--------------------------------------------+-------------+\n"
    P22 "|   Range   |                Description                 |   Config    |\n"
    P22 "+-----------+--------------------------------------------+-------------+\n"
    P22 "|         0 | (?) rendezvous no data fetch               |             |\n"
    P22 "|   1..1727 | (?) rendezvous zero-copy                   | tcp/lo      |\n"
    P22 "|   1728..3597 | (?) rendezvous fragmented copy-in copy-out | sysv/memory |\n"
    P22 "| 3598..inf | (?) rendezvous zero-copy read from remote  | cma/memory  |\n"
    P22 "+-----------+--------------------------------------------+-------------+\n";

static void test_tables_of_ucx_1_22(void **state)
{
    psel_cmp_ucx_t ucx;

    assert_int_equal(read_kind(ucx122, PSEL_UCX_TABLE_TAG_SEND, &ucx), 0);
    assert_int_equal(ucx.num_rows, 2);
    assert_row(&ucx.rows[1], 1, SIZE_MAX, "rndv/put",
               "52% on tcp/lo and 48% on tcp/eth0");
    assert_string_equal(ucx.title,
                        "tagged message by ucp_tag_send* from host memory");
    assert_int_equal(ucx.num_lanes, 2);

    assert_int_equal(read_kind(ucx122, PSEL_UCX_TABLE_RNDV_SEND, &ucx), 0);
    assert_int_equal(ucx.num_rows, 1);
    assert_row(&ucx.rows[0], 0, SIZE_MAX, "rndv/put",
               "52% on tcp/lo and 48% on tcp/eth0");

    /* rndv/am/zcopy ("rendezvous zero-copy") is protosel's rndv/am */
    assert_int_equal(read_kind(ucx122, PSEL_UCX_TABLE_TAG_SEND_MULTI, &ucx),
                     0);
    assert_int_equal(ucx.num_rows, 4);
    assert_row(&ucx.rows[1], 1, 1727, "rndv/am", "tcp/lo");
    assert_row(&ucx.rows[2], 1728, 3597, "rndv/am", "sysv/memory");
    assert_row(&ucx.rows[3], 3598, SIZE_MAX, "rndv/get", "cma/memory");

    assert_int_equal(read_kind(ucx122, PSEL_UCX_TABLE_RNDV_FETCH, &ucx), -1);
}

/* rows that leave a gap, or end before inf, make no table */
static void test_incomplete_tables_refused(void **state)
{
    static const char gap[] =
        "| 0x1 ep_cfg[0] | rendezvous data send() from host memory |\n"
        "+---+---+---+\n"
        "| 0..10 | fragmented copy-in copy-out | sysv/memory |\n"
        "| 12..inf | fragmented copy-in copy-out | sysv/memory |\n"
        "+---+---+---+\n";
    static const char short_end[] =
        "| 0x1 ep_cfg[0] | rendezvous data send() from host memory |\n"
        "+---+---+---+\n"
        "| 0..10 | fragmented copy-in copy-out | sysv/memory |\n"
        "+---+---+---+\n";
    psel_cmp_ucx_t ucx;

    assert_int_equal(read_kind(gap, PSEL_UCX_TABLE_RNDV_SEND, &ucx), -1);
    assert_int_equal(read_kind(short_end, PSEL_UCX_TABLE_RNDV_SEND, &ucx), -1);
}

/* A row that starts like a title but has no second cell (a cut or mangled
 * log line) is no title: it is skipped, and the complete table after it is
 * read. It used to be read past the end of its text (found by libFuzzer). */
static void test_title_without_second_cell_skipped(void **state)
{
    static const char cut[] =
        "| rendezvous data send() from host memory to host\n"
        "| 0x1 ep_cfg[0] | rendezvous data send() from host memory |\n"
        "+---+---+---+\n"
        "| 0..inf | fragmented copy-in copy-out | sysv/memory |\n"
        "+---+---+---+\n";
    psel_cmp_ucx_t ucx;

    assert_int_equal(read_kind(cut, PSEL_UCX_TABLE_RNDV_SEND, &ucx), 0);
    assert_int_equal(ucx.num_rows, 1);
    assert_string_equal(ucx.title, "rendezvous data send() from host memory");
    assert_int_equal(read_kind("| rendezvous data send() from host memory\n",
                               PSEL_UCX_TABLE_RNDV_SEND, &ucx), -1);
}

/*
 * Put, get and active-message tables (psel_ucx_table_read_op): rows named
 * as protosel's protocols of the operation; a get table of streamed
 * operations only is read as such. Rows as UCX 1.13.1 words them
 * (ucp_proto_single_query / ucp_proto_multi_query); the rma_bw rows made
 * up over an rc_mlx5 lane.
 */
static const char ops[] =
    P "| 0x5600 ep_cfg[0] | remote memory write by ucp_put*() from host memory to host    |\n"
    P "+------------------+------------------------------------+------------------+\n"
    P "|           0..220 | short                              | rc_mlx5/mlx5_0:1 |\n"
    P "|        221..8192 | copy-in                            | rc_mlx5/mlx5_0:1 |\n"
    P "|       8193..inf  | zero-copy                          | rc_mlx5/mlx5_0:1 |\n"
    P "+------------------+------------------------------------+------------------+\n"
    P "| 0x5600 ep_cfg[0] | remote memory read by ucp_get*(multi) into host memory from host    |\n"
    P "+------------------+------------------------------------+------------------+\n"
    P "|           0..512 | copy-out                           | rc_mlx5/mlx5_0:1 |\n"
    P "|          513..inf | zero-copy                         | rc_mlx5/mlx5_0:1 |\n"
    P "+------------------+------------------------------------+------------------+\n"
    P "| 0x5600 ep_cfg[0] | active message by ucp_am_send*() from host memory    |\n"
    P "+------------------+-------------------------------------------+-------------+\n"
    P "|            0..92 | short                                     | sysv/memory |\n"
    P "|         93..6237 | copy-in                                   | sysv/memory |\n"
    P "|        6238..inf | (?) rendezvous zero-copy read from remote | cma/memory  |\n"
    P "+------------------+-------------------------------------------+-------------+\n";

static int read_op(const char *text, psel_op_t op, psel_cmp_ucx_t *ucx)
{
    FILE *f = fmemopen((void*)text, strlen(text), "r");
    int ret;

    assert_non_null(f);
    ret = psel_ucx_table_read_op(f, "test", op, ucx);
    fclose(f);
    return ret;
}

static void test_put_get_am_tables(void **state)
{
    static const struct {
        psel_op_t   op;
        int         streamed;
        unsigned    rows;
        const char *names[3];
    } expect[] = {
        {PSEL_OP_PUT, 0, 3, {"put/offload/short", "put/offload/bcopy",
                             "put/offload/zcopy"}},
        {PSEL_OP_GET, 1, 2, {"get/bcopy", "get/zcopy"}},
        {PSEL_OP_AM_SEND, 0, 3, {"am/egr/short", "am/egr/bcopy",
                                 "am/rndv/get"}}
    };
    psel_cmp_ucx_t ucx;
    unsigned i, r;

    for (i = 0; i < sizeof(expect) / sizeof(expect[0]); ++i) {
        assert_int_equal(read_op(ops, expect[i].op, &ucx), 0);
        assert_int_equal(ucx.streamed, expect[i].streamed);
        assert_int_equal(ucx.num_rows, expect[i].rows);
        for (r = 0; r < expect[i].rows; ++r) {
            assert_string_equal(ucx.rows[r].proto, expect[i].names[r]);
        }
        assert_true(ucx.rows[expect[i].rows - 1].end == SIZE_MAX);
    }

    /* "software emulation": put and get by active messages */
    assert_int_equal(read_op(
        P "| 0x5600 ep_cfg[0] | remote memory write by ucp_put*() from host memory to host    |\n"
        P "+------------------+--------------------+--------+\n"
        P "|           0..inf | software emulation | tcp/lo |\n"
        P "+------------------+--------------------+--------+\n",
        PSEL_OP_PUT, &ucx), 0);
    assert_string_equal(ucx.rows[0].proto, "put/am/bcopy");

    /* no get table at all: refused */
    assert_int_equal(read_op(shm_stock, PSEL_OP_GET, &ucx), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rendezvous_tables_tcp_put),
        cmocka_unit_test(test_rendezvous_tables_shm_stock),
        cmocka_unit_test(test_incomplete_tables_refused),
        cmocka_unit_test(test_title_without_second_cell_skipped),
        cmocka_unit_test(test_tables_of_ucx_1_22),
        cmocka_unit_test(test_put_get_am_tables),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
