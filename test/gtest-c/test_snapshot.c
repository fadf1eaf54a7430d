/*
 * test_snapshot: save/load round trips (the live table of this machine and a
 * synthetic table with IB facts and awkward values), and a table of malformed
 * inputs, each rejected with "<name>:<line>: <what was expected>" and leaving
 * the output table untouched.
 */
#include "test_util.h"

#include <lane_select/snapshot.h>
#include <lane_select/resource_table.h>

#include <infiniband/verbs.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>


/* Bitwise equality, so -0.0 vs 0.0 or a lost last digit is caught */
#define assert_double_bits_equal(_a, _b) \
    assert_memory_equal(&(_a), &(_b), sizeof(double))

static void assert_limits_equal(const psel_op_limits_t *a,
                                const psel_op_limits_t *b)
{
    assert_int_equal(a->max_short, b->max_short);
    assert_int_equal(a->max_bcopy, b->max_bcopy);
    assert_int_equal(a->min_zcopy, b->min_zcopy);
    assert_int_equal(a->max_zcopy, b->max_zcopy);
    assert_int_equal(a->opt_zcopy_align, b->opt_zcopy_align);
    assert_int_equal(a->align_mtu, b->align_mtu);
    assert_int_equal(a->max_iov, b->max_iov);
}

static void assert_resource_equal(const psel_resource_t *a,
                                  const psel_resource_t *b)
{
    assert_string_equal(a->component, b->component);
    assert_string_equal(a->md_name, b->md_name);
    assert_string_equal(a->tl_name, b->tl_name);
    assert_string_equal(a->dev_name, b->dev_name);
    assert_int_equal(a->dev_type, b->dev_type);
    assert_string_equal(a->sys_dev, b->sys_dev);
    assert_double_bits_equal(a->latency.c, b->latency.c);
    assert_double_bits_equal(a->latency.m, b->latency.m);
    assert_double_bits_equal(a->bw_dedicated, b->bw_dedicated);
    assert_double_bits_equal(a->bw_shared, b->bw_shared);
    assert_double_bits_equal(a->bw_advertised, b->bw_advertised);
    assert_double_bits_equal(a->overhead, b->overhead);
    assert_int_equal(a->priority, b->priority);
    assert_int_equal(a->dev_num_paths, b->dev_num_paths);
    assert_int_equal(a->max_num_eps, b->max_num_eps);
    assert_limits_equal(&a->put, &b->put);
    assert_limits_equal(&a->get, &b->get);
    assert_limits_equal(&a->am, &b->am);
    assert_int_equal(a->am_max_hdr, b->am_max_hdr);
    assert_int_equal(a->cap_flags, b->cap_flags);
    assert_int_equal(a->atomic32_ops, b->atomic32_ops);
    assert_int_equal(a->atomic32_fops, b->atomic32_fops);
    assert_int_equal(a->atomic64_ops, b->atomic64_ops);
    assert_int_equal(a->atomic64_fops, b->atomic64_fops);
    assert_int_equal(a->device_addr_len, b->device_addr_len);
    assert_int_equal(a->iface_addr_len, b->iface_addr_len);
    assert_int_equal(a->ep_addr_len, b->ep_addr_len);
    assert_double_bits_equal(a->reg_cost.c, b->reg_cost.c);
    assert_double_bits_equal(a->reg_cost.m, b->reg_cost.m);
    assert_int_equal(a->rkey_size, b->rkey_size);
    assert_int_equal(a->md_flags, b->md_flags);
    assert_int_equal(a->reg_mem_types, b->reg_mem_types);
    assert_int_equal(a->access_mem_types, b->access_mem_types);
    assert_int_equal(a->alloc_mem_types, b->alloc_mem_types);
    assert_int_equal(a->max_reg, b->max_reg);
    assert_int_equal(a->max_alloc, b->max_alloc);
    assert_int_equal(a->ib.valid, b->ib.valid);
    if (a->ib.valid) {
        assert_int_equal(a->ib.port_state, b->ib.port_state);
        assert_int_equal(a->ib.link_layer, b->ib.link_layer);
        assert_int_equal(a->ib.active_mtu, b->ib.active_mtu);
        assert_int_equal(a->ib.active_speed, b->ib.active_speed);
        assert_int_equal(a->ib.active_width, b->ib.active_width);
        assert_double_bits_equal(a->ib.link_rate, b->ib.link_rate);
    }
}

static void assert_table_equal(const psel_resource_table_t *a,
                               const psel_resource_table_t *b)
{
    unsigned i;

    assert_string_equal(a->ucx_version, b->ucx_version);
    assert_string_equal(a->host, b->host);
    assert_double_bits_equal(a->copy_bw, b->copy_bw);
    assert_int_equal(a->count, b->count);
    for (i = 0; i < a->count; ++i) {
        assert_resource_equal(&a->resources[i], &b->resources[i]);
    }
}

/* Save to a memory buffer; the caller frees it */
static char *save_to_string(const psel_resource_table_t *table)
{
    FILE *stream = tmpfile();
    char *text;
    long size;

    assert_non_null(stream);
    assert_int_equal(psel_snapshot_save(table, stream), UCS_OK);
    size = ftell(stream);
    text = calloc(1, size + 1);
    assert_non_null(text);
    rewind(stream);
    assert_int_equal(fread(text, 1, size, stream), size);
    fclose(stream);
    return text;
}

static ucs_status_t load_from_string(const char *text,
                                     psel_resource_table_t *table)
{
    FILE *stream = fmemopen((void*)text, strlen(text), "r");
    ucs_status_t status;

    assert_non_null(stream);
    status = psel_snapshot_load(stream, "test", table);
    fclose(stream);
    return status;
}

static void round_trip(const psel_resource_table_t *table)
{
    psel_resource_table_t loaded;
    char *text, *text2;

    text = save_to_string(table);
    if (load_from_string(text, &loaded) != UCS_OK) {
        print_error("failed to load:\n%s\n", text);
        fail();
    }
    assert_string_equal(loaded.origin, "test");
    assert_table_equal(table, &loaded);

    /* saving the loaded table gives the same bytes */
    text2 = save_to_string(&loaded);
    assert_string_equal(text, text2);

    free(text2);
    free(text);
    psel_resource_table_cleanup(&loaded);
}

static void test_round_trip_live_table(void **state)
{
    psel_resource_table_t table;

    assert_int_equal(psel_resource_discover(&table), UCS_OK);
    assert_true(table.count > 0);
    round_trip(&table);
    psel_resource_table_cleanup(&table);
}

static void make_synthetic(psel_resource_table_t *table)
{
    struct ibv_port_attr attr;
    psel_resource_t res;

    psel_resource_table_init(table);
    snprintf(table->ucx_version, sizeof(table->ucx_version), "1.17.0");
    snprintf(table->host, sizeof(table->host), "hbv3-node 7");

    memset(&res, 0, sizeof(res));
    snprintf(res.component, sizeof(res.component), "ib");
    snprintf(res.md_name, sizeof(res.md_name), "mlx5_0");
    snprintf(res.tl_name, sizeof(res.tl_name), "rc_mlx5");
    snprintf(res.dev_name, sizeof(res.dev_name), "mlx5_0:1");
    snprintf(res.sys_dev, sizeof(res.sys_dev), "0000:81:00.0");
    res.dev_type         = UCT_DEVICE_TYPE_NET;
    res.latency.c        = 600e-9;
    res.latency.m        = 1.0 / 3.0 * 1e-9;
    res.bw_dedicated     = 0.1 + 0.2; /* not exactly representable */
    res.bw_shared        = 24386.17 * 1048576.0;
    res.overhead         = 4.9406564584124654e-324; /* denormal */
    res.priority         = 255;
    res.dev_num_paths    = 2;
    res.max_num_eps      = PSEL_SIZE_UNLIMITED;
    res.put.max_short    = 220;
    res.put.max_bcopy    = 8256;
    res.put.min_zcopy    = 0;
    res.put.max_zcopy    = 1073741824;
    res.put.opt_zcopy_align = 512;
    res.put.align_mtu    = 4096;
    res.put.max_iov      = 8;
    res.get              = res.put;
    res.get.max_short    = 0;
    res.am               = res.put;
    res.am.max_zcopy     = PSEL_SIZE_UNLIMITED;
    res.am_max_hdr       = 187;
    res.cap_flags        = UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_ZCOPY |
                           UCT_IFACE_FLAG_GET_ZCOPY |
                           UCT_IFACE_FLAG_CONNECT_TO_EP |
                           UCT_IFACE_FLAG_ATOMIC_DEVICE |
                           UCS_BIT(63); /* no name: saved as bit63 */
    res.atomic32_ops     = UCS_BIT(UCT_ATOMIC_OP_ADD);
    res.atomic64_fops    = UCS_BIT(UCT_ATOMIC_OP_ADD) |
                           UCS_BIT(UCT_ATOMIC_OP_CSWAP);
    res.device_addr_len  = 3;
    res.iface_addr_len   = 0;
    res.ep_addr_len      = 7;
    res.reg_cost.c       = 16000e-9;
    res.reg_cost.m       = 0.06e-9;
    res.rkey_size        = 18;
    res.md_flags         = UCT_MD_FLAG_REG | UCT_MD_FLAG_NEED_RKEY |
                           UCT_MD_FLAG_INVALIDATE;
    res.reg_mem_types    = UCS_BIT(UCS_MEMORY_TYPE_HOST) |
                           UCS_BIT(UCS_MEMORY_TYPE_CUDA);
    res.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    res.alloc_mem_types  = UCS_BIT(62);
    res.max_reg          = PSEL_SIZE_UNLIMITED;
    res.max_alloc        = 0;

    memset(&attr, 0, sizeof(attr));
    attr.state        = IBV_PORT_ACTIVE;
    attr.active_speed = 16; /* FDR: link_rate has a long expansion */
    attr.active_width = 2;
    attr.active_mtu   = IBV_MTU_4096;
    attr.link_layer   = IBV_LINK_LAYER_INFINIBAND;
    assert_int_equal(psel_ib_port_info_from_attr(&attr, &res.ib), UCS_OK);
    assert_int_equal(psel_resource_table_append(table, &res), UCS_OK);

    /* a second port, RoCE, and a resource without ib facts */
    snprintf(res.dev_name, sizeof(res.dev_name), "mlx5_0:2");
    res.ib.link_layer = IBV_LINK_LAYER_ETHERNET;
    res.ib.port_state = IBV_PORT_DOWN;
    assert_int_equal(psel_resource_table_append(table, &res), UCS_OK);

    memset(&res.ib, 0, sizeof(res.ib));
    snprintf(res.tl_name, sizeof(res.tl_name), "ud_verbs");
    res.sys_dev[0] = '\0';
    res.dev_type   = UCT_DEVICE_TYPE_ACC;
    res.latency.c  = DBL_MAX;
    res.cap_flags  = 0;
    assert_int_equal(psel_resource_table_append(table, &res), UCS_OK);
}

static void test_round_trip_synthetic_ib_table(void **state)
{
    psel_resource_table_t table;
    char *text;

    make_synthetic(&table);
    round_trip(&table);

    /* flags and enums are saved by name */
    text = save_to_string(&table);
    assert_non_null(strstr(text, "\ncap_flags = am_short am_zcopy get_zcopy "
                                 "atomic_device connect_to_ep bit63\n"));
    assert_non_null(strstr(text, "\natomic64_fops = add cswap\n"));
    assert_non_null(strstr(text, "\nreg_mem_types = host cuda\n"));
    assert_non_null(strstr(text, "\nib.port_state = active\n"));
    assert_non_null(strstr(text, "\nib.link_layer = ethernet\n"));
    assert_non_null(strstr(text, "\nmax_num_eps = unlimited\n"));
    assert_non_null(strstr(text, "\nsys_dev = \n"));
    assert_true(strncmp(text, "protosel-snapshot 1\n", 20) == 0);
    free(text);
    psel_resource_table_cleanup(&table);
}

/* A live table whose copies were timed (copy_probe.h) keeps the timed
 * figure in the header and UCT's beside each timed bandwidth; a table
 * without them writes neither key, as files did before them */
static void test_round_trip_timed_copies(void **state)
{
    psel_resource_table_t table;
    char *text;

    make_synthetic(&table);
    text = save_to_string(&table);
    assert_null(strstr(text, "copy_bw"));
    assert_null(strstr(text, "bw_advertised"));
    free(text);

    table.copy_bw                    = 61042.13 * 1048576.0;
    table.resources[1].bw_advertised = 12179.0 * 1048576.0;
    table.resources[1].bw_dedicated  = table.copy_bw;
    round_trip(&table);
    text = save_to_string(&table);
    assert_non_null(strstr(text, "\nhost = hbv3-node 7\ncopy_bw = "
                                 "64007312506.879997\n"));
    assert_non_null(strstr(text, "\nbw_advertised = 12770607104\n"));
    /* only the resource whose figure was timed has it */
    assert_null(strstr(strstr(text, "bw_advertised") + 1, "bw_advertised"));
    free(text);
    psel_resource_table_cleanup(&table);
}

/* A file written before the op.* keys: the costs are derived with UCX's
 * rules of the snapshot's version (1.17: the IB WQE fetch and doorbell) */
static void test_load_without_op_costs_derives_them(void **state)
{
    psel_resource_table_t table, loaded;
    const psel_resource_t *r;
    char *text, *line, *next;

    (void)state;
    make_synthetic(&table);
    text = save_to_string(&table);
    psel_resource_table_cleanup(&table);
    for (line = strstr(text, "\nop."); line != NULL;
         line = strstr(line, "\nop.")) {
        next = strchr(line + 1, '\n');
        memmove(line, next, strlen(next) + 1);
    }
    assert_null(strstr(text, "op.source"));

    assert_int_equal(load_from_string(text, &loaded), UCS_OK);
    r = &loaded.resources[0];
    assert_int_equal(r->op_cost_source, PSEL_OP_COST_DERIVED);
    /* rc_mlx5 at UCX 1.17: bcopy/zcopy fetch their WQE (+350 ns) */
    assert_true(r->op_cost[PSEL_OP_CLASS_SHORT].latency == r->latency.c);
    assert_true(fabs(r->op_cost[PSEL_OP_CLASS_ZCOPY].latency -
                     (r->latency.c + 350e-9)) < 1e-15);
    assert_true(fabs(r->op_cost[PSEL_OP_CLASS_ZCOPY].send_post - 60e-9) <
                1e-15);
    psel_resource_table_cleanup(&loaded);
    free(text);
}

static void test_round_trip_empty_table(void **state)
{
    psel_resource_table_t table;

    psel_resource_table_init(&table);
    round_trip(&table);
}

static void test_load_path_and_missing_file(void **state)
{
    char path[] = "/tmp/psel_snapshot_XXXXXX";
    psel_resource_table_t table, loaded;
    int fd;

    fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);

    make_synthetic(&table);
    assert_int_equal(psel_snapshot_save_path(&table, path), UCS_OK);
    assert_int_equal(psel_snapshot_load_path(path, &loaded), UCS_OK);
    assert_string_equal(loaded.origin, path);
    assert_table_equal(&table, &loaded);
    psel_resource_table_cleanup(&loaded);
    unlink(path);

    psel_test_log_capture_start();
    assert_int_equal(psel_snapshot_load_path(path, &loaded), UCS_ERR_IO_ERROR);
    psel_test_log_capture_stop();
    psel_assert_log_contains(path);
    psel_resource_table_cleanup(&table);
}

static void test_save_rejects_unrepresentable_names(void **state)
{
    psel_resource_table_t table;
    FILE *stream = tmpfile();

    make_synthetic(&table);
    snprintf(table.resources[1].dev_name, PSEL_NAME_MAX, "mlx5\n[resource]");
    psel_test_log_capture_start();
    assert_int_equal(psel_snapshot_save(&table, stream), UCS_ERR_INVALID_PARAM);
    psel_test_log_capture_stop();
    psel_assert_log_contains("dev_name cannot be saved");
    fclose(stream);
    psel_resource_table_cleanup(&table);
}


/*
 * Malformed inputs. Each case edits the saved synthetic table: the
 * (@a skip + 1)-th line starting with the word @a key is replaced by
 * @a replace (NULL deletes it). The load must fail at @a line with a message
 * containing @a what.
 */
enum {
    AT_EDIT      = 0,  /* the edited line */
    AT_NEXT      = 1,  /* the line after it (second line of the replacement) */
    AT_EOF       = -1, /* the last line */
    AT_END_SECTION = -2 /* the next "[resource]" line, or the last line */
};

typedef struct {
    const char *key;
    const char *replace;
    int        line;
    const char *what;
    unsigned   skip;
} bad_case_t;

static const bad_case_t bad_cases[] = {
    {"protosel-snapshot", "protosel-snapshot 2", AT_EDIT,
     "unsupported snapshot version 2, expected 1"},
    {"protosel-snapshot", "hello", AT_EDIT, "expected 'protosel-snapshot 1'"},
    {"protosel-snapshot", "protosel-snapshot 1 x", AT_EDIT,
     "expected 'protosel-snapshot 1'"},
    {"resources", "resources = x", AT_EDIT, "expected a decimal integer"},
    {"resources", "resources = 4", AT_EOF,
     "end of file after 3 resource sections, expected 4"},
    {"resources", "resources = 0", AT_END_SECTION,
     "more resource sections than the 0 declared by 'resources' at line 5"},
    {"resources", "resources = 99999999", AT_EDIT, "expected a decimal integer"},
    {"resources", "resources = 3\nresources = 3", AT_NEXT,
     "duplicate key 'resources', first at line 5"},
    {"host", NULL, AT_END_SECTION, "missing header key 'host'"},
    {"host", "colour = blue", AT_EDIT, "unknown header key 'colour'"},
    {"resources", "copy_bw = fast\nresources = 3", AT_EDIT,
     "expected a finite non-negative number for copy_bw, found 'fast'"},
    {"resources", "copy_bw = -5e9\nresources = 3", AT_EDIT,
     "expected a finite non-negative number for copy_bw, found '-5e9'"},
    {"resources", "copy_bw = 1e9\ncopy_bw = 2e9\nresources = 3", AT_NEXT,
     "duplicate key 'copy_bw', first at line 5"},
    {"latency.c", "latency.c = abc", AT_EDIT,
     ":13: expected a finite non-negative number for latency.c, found "
     "'abc'"},
    {"latency.c", "latency.c = 1,5e-6", AT_EDIT,
     ":13: expected a finite non-negative number for latency.c, found "
     "'1,5e-6'"},
    {"latency.c", "latency.c = 0x1p-20", AT_EDIT,
     "expected a finite non-negative number"},
    {"latency.c", "latency.c = nan", AT_EDIT, "expected a finite non-negative"},
    {"latency.c", "latency.c = inf", AT_EDIT, "expected a finite non-negative"},
    {"latency.c", "latency.c = -1e-6", AT_EDIT, "expected a finite non-negative"},
    {"latency.c", "latency.c = 1e999", AT_EDIT, "expected a finite non-negative"},
    {"latency.c", "latency.c = 1.5x", AT_EDIT, "found '1.5x'"},
    {"latency.c", "latency.c =", AT_EDIT, "expected a finite non-negative"},
    {"am.max_short", "am.max_short = -5", AT_EDIT,
     ":16: expected a decimal integer <= 18446744073709551615 or "
     "'unlimited' for am.max_short, found '-5'"},
    {"am.max_short", "am.max_short = 0x10", AT_EDIT, "found '0x10'"},
    {"am.max_short", "am.max_short = 99999999999999999999999", AT_EDIT,
     "expected a decimal integer"},
    {"am.max_short", "am.max_short = +5", AT_EDIT, "expected a decimal integer"},
    {"priority", "priority = 4294967296", AT_EDIT,
     "expected a decimal integer <= 4294967295 for priority"},
    {"priority", "priority = unlimited", AT_EDIT, "expected a decimal integer"},
    {"cap_flags", "cap_flags = am_short bogus_flag", AT_EDIT,
     "cap_flags: unknown flag 'bogus_flag'"},
    {"cap_flags", "cap_flags = bit64", AT_EDIT, "unknown flag 'bit64'"},
    {"cap_flags", "cap_flags = none am_short", AT_EDIT, "unknown flag 'none'"},
    {"cap_flags", "cap_flags =", AT_EDIT, "expected flag names or 'none'"},
    {"md_flags", "md_flags = am_short", AT_EDIT, "md_flags: unknown flag"},
    {"dev_type", "dev_type = wire", AT_EDIT,
     ":12: expected net, shm, acc or self for dev_type, found 'wire'"},
    {"ib.port_state", "ib.port_state = sleeping", AT_EDIT,
     "expected one of nop, down, init, armed, active, active_defer for "
     "ib.port_state, found 'sleeping'"},
    {"ib.link_rate", NULL, AT_END_SECTION,
     "missing key 'ib.link_rate' (ib.* keys come all or none)"},
    {"op.zcopy.recv", NULL, AT_END_SECTION,
     "missing key 'op.zcopy.recv' (op.* keys come all or none)"},
    {"op.source", "op.source = guessed", AT_EDIT,
     "expected one of none, derived, live for op.source, found 'guessed'"},
    {"overhead", NULL, AT_END_SECTION, "missing key 'overhead'"},
    {"overhead", NULL, AT_END_SECTION, "missing key 'overhead'", 2},
    {"overhead", "overhead = 1\noverhead = 2", AT_NEXT,
     "duplicate key 'overhead', first at line"},
    {"overhead", "colour = blue", AT_EDIT, "unknown key 'colour' in [resource]"},
    {"overhead", "host = x", AT_EDIT, "unknown key 'host' in [resource]"},
    {"[resource]", "[resources]", AT_EDIT, "unknown section '[resources]'"},
    {"overhead", "just some words", AT_EDIT, "expected 'key = value'"},
    {"overhead", "= 5", AT_EDIT, "expected a key before '='"},
    {"tl_name", "tl_name = "
     "a_transport_name_that_is_much_longer_than_sixty_three_characters_x",
     AT_EDIT, "tl_name: expected at most 63 characters"},
    {"tl_name", "tl_name = rc/x", AT_EDIT, "'/' is not allowed"},
    {"component", "component =", AT_EDIT, "component: expected a name"},
    {"dev_name", "dev_name = mlx5_0:1", AT_END_SECTION,
     "duplicate resource rc_mlx5/mlx5_0:1, first defined at line 7", 1},
    {"sys_dev", "sys_dev = a\001b", AT_EDIT, "control characters"},
};

static unsigned line_of(const char *text, const char *pos)
{
    unsigned n = 1;

    for (; text < pos; ++text) {
        n += (*text == '\n');
    }
    return n;
}

static char *apply_case(const char *base, const bad_case_t *bc,
                        unsigned *line)
{
    size_t keylen = strlen(bc->key);
    unsigned skip = bc->skip;
    const char *pos, *eol, *next;
    char *text;

    for (pos = base; ; pos = strchr(pos, '\n') + 1) {
        assert_true(pos != (const char*)1);
        if (!strncmp(pos, bc->key, keylen) &&
            ((pos[keylen] == ' ') || (pos[keylen] == '\n')) && (skip-- == 0)) {
            break;
        }
    }

    eol  = strchr(pos, '\n');
    text = calloc(1, strlen(base) + (bc->replace ? strlen(bc->replace) : 0) +
                     2);
    assert_non_null(text);
    memcpy(text, base, pos - base);
    if (bc->replace != NULL) {
        strcat(text, bc->replace);
        strcat(text, "\n");
    }
    strcat(text, eol + 1);

    pos = text + (pos - base);
    switch (bc->line) {
    case AT_EDIT:
        *line = line_of(text, pos);
        break;
    case AT_NEXT:
        *line = line_of(text, pos) + 1;
        break;
    case AT_EOF:
        *line = line_of(text, text + strlen(text) - 1);
        break;
    default:
        next  = strstr(pos, "\n[resource]");
        *line = (next != NULL) ? line_of(text, next + 1) :
                                 line_of(text, text + strlen(text) - 1);
        break;
    }
    return text;
}

static void expect_rejected(const char *text, unsigned line, const char *what)
{
    psel_resource_table_t table, sentinel;
    char where[32];

    memset(&table, 0x5a, sizeof(table));
    memcpy(&sentinel, &table, sizeof(table));

    psel_test_log_capture_start();
    if (load_from_string(text, &table) != UCS_ERR_INVALID_PARAM) {
        psel_test_log_capture_stop();
        print_error("accepted:\n%s\n", text);
        fail();
    }
    psel_test_log_capture_stop();

    /* the output is untouched on error */
    assert_memory_equal(&table, &sentinel, sizeof(table));
    /* "test:LINE: " or, where a value is at fault, "test:LINE:COLUMN: " */
    snprintf(where, sizeof(where), "test:%u:", line);
    if ((strstr(psel_test_log_captured(), where) == NULL) ||
        (strstr(psel_test_log_captured(), what) == NULL)) {
        print_error("expected '%s' and '%s' in the error, got:\n%s\ninput:\n"
                    "%s\n", where, what, psel_test_log_captured(), text);
        fail();
    }
}

static void test_malformed_inputs_name_line_and_expectation(void **state)
{
    psel_resource_table_t table;
    unsigned i, line;
    char *base, *text;

    make_synthetic(&table);
    base = save_to_string(&table);
    psel_resource_table_cleanup(&table);

    for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); ++i) {
        text = apply_case(base, &bad_cases[i], &line);
        expect_rejected(text, line, bad_cases[i].what);
        free(text);
    }
    free(base);
}

/* A resource that moves nothing: bw_dedicated + bw_shared = 0 is refused
 * at the later of the two lines; and saving one is refused too (what is
 * saved must load) */
static void test_zero_bandwidth_rejected(void **state)
{
    static const bad_case_t dedicated = {"bw_dedicated", "bw_dedicated = 0",
                                         AT_EDIT, NULL, 0};
    static const bad_case_t shared    = {"bw_shared", "bw_shared = 0.0",
                                         AT_EDIT, NULL, 0};
    psel_resource_table_t table;
    char *base, *once, *twice;
    unsigned line;
    FILE *stream;

    make_synthetic(&table);
    base = save_to_string(&table);
    psel_resource_table_cleanup(&table);
    once = apply_case(base, &dedicated, &line);
    /* 0 + 24386.17 MB/s: fine */
    assert_int_equal(load_from_string(once, &table), UCS_OK);
    psel_resource_table_cleanup(&table);
    twice = apply_case(once, &shared, &line);
    expect_rejected(twice, line, "resource section at line 7: bw_dedicated + "
                    "bw_shared is 0, expected above 0");
    free(twice);
    free(once);
    free(base);

    make_synthetic(&table);
    table.resources[2].bw_dedicated = table.resources[2].bw_shared = 0;
    stream = tmpfile();
    psel_test_log_capture_start();
    assert_int_equal(psel_snapshot_save(&table, stream), UCS_ERR_INVALID_PARAM);
    psel_test_log_capture_stop();
    psel_assert_log_contains("cannot be saved (expected above 0)");
    fclose(stream);
    psel_resource_table_cleanup(&table);
}

static void test_malformed_whole_files(void **state)
{
    static char nul_text[] = "protosel-snapshot 1\nucx_version = 1\0x\n";
    psel_resource_table_t table;
    char *long_line;
    FILE *stream;

    expect_rejected("", 1, "empty file, expected 'protosel-snapshot 1'");
    expect_rejected("protosel-snapshot 1\n", 1, "missing header key "
                    "'ucx_version'");
    expect_rejected("protosel-snapshot 1\nucx_version = 1\nhost = h\n"
                    "resources = 1\n", 4, "end of file after 0 resource "
                    "sections, expected 1");
    expect_rejected("protosel-snapshot 1\nucx_version = 1\nhost = h\n"
                    "resources = 1\n\n[resource]\ncomponent = self\n", 7,
                    "resource section at line 6: missing key 'md_name'");
    expect_rejected("# comment first\nprotosel-snapshot 1\n", 1,
                    "expected 'protosel-snapshot 1' on the first line");

    long_line = calloc(1, 8192);
    strcpy(long_line, "protosel-snapshot 1\nhost = ");
    memset(long_line + strlen(long_line), 'h', 5000);
    expect_rejected(long_line, 2, "line longer than 4096");
    free(long_line);

    psel_test_log_capture_start();
    stream = fmemopen(nul_text, sizeof(nul_text) - 1, "r");
    assert_int_equal(psel_snapshot_load(stream, "test", &table),
                     UCS_ERR_INVALID_PARAM);
    fclose(stream);
    psel_test_log_capture_stop();
    psel_assert_log_contains("test:2: unexpected NUL character");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_live_table),
        cmocka_unit_test(test_round_trip_synthetic_ib_table),
        cmocka_unit_test(test_round_trip_timed_copies),
        cmocka_unit_test(test_round_trip_empty_table),
        cmocka_unit_test(test_load_without_op_costs_derives_them),
        cmocka_unit_test(test_load_path_and_missing_file),
        cmocka_unit_test(test_save_rejects_unrepresentable_names),
        cmocka_unit_test(test_malformed_inputs_name_line_and_expectation),
        cmocka_unit_test(test_malformed_whole_files),
        cmocka_unit_test(test_zero_bandwidth_rejected),
    };

    return cmocka_run_group_tests_name("snapshot", tests, NULL, NULL);
}
