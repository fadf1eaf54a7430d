/**
 * @file psel_config.h
 * protosel configuration, read from UCX_PSEL_* environment variables by the
 * libucs config parser. `psel_info -c` prints every variable with its doc.
 */
#ifndef PSEL_UCP_PROTO_SEL_PSEL_CONFIG_H_
#define PSEL_UCP_PROTO_SEL_PSEL_CONFIG_H_

#include "perf.h"

#include <lane_select/copy_probe.h>

#include <ucs/config/types.h>
#include <ucs/config/parser.h>
#include <ucs/type/status.h>
#include <stdio.h>

#define PSEL_CONFIG_ENV_PREFIX   "UCX_"   /**< Environment prefix */
#define PSEL_CONFIG_TABLE_PREFIX "PSEL_"  /**< Table prefix: UCX_PSEL_* */

/** Largest number of endpoints per process accepted (UCX_PSEL_NUM_EPS,
 *  psel_info --peers): beyond any job that runs today (64 Mi processes),
 *  and small enough that memory sums stay exact in a double. */
#define PSEL_NUM_EPS_MAX         67108864

/** Values of UCX_PSEL_PROTO_INFO. */
typedef enum {
    PSEL_PROTO_INFO_NO,     /**< Print nothing */
    PSEL_PROTO_INFO_YES,    /**< Print the tables at endpoint init */
    PSEL_PROTO_INFO_USED,   /**< Print which protocols ran, at worker destroy */
    PSEL_PROTO_INFO_LAST
} psel_proto_info_t;


/** Values of UCX_PSEL_TIER: how libprotosel_ucx.so acts in stock UCP. */
typedef enum {
    PSEL_TIER_AUTO,         /**< The protocol tier where it can act, else
                                 the config tier */
    PSEL_TIER_CONFIG,       /**< UCX_* settings only */
    PSEL_TIER_PROTOCOL,     /**< Cost lines per endpoint (warn if it cannot) */
    PSEL_TIER_LAST
} psel_tier_t;


/** Where psel_config_t::copy_bw came from. */
typedef enum {
    PSEL_BCOPY_BW_SOURCE_ESTIMATE, /**< "auto", not measured: UCX's figure */
    PSEL_BCOPY_BW_SOURCE_MEASURED, /**< "auto", measured on this host
                                        (psel_config_measure_copies) */
    PSEL_BCOPY_BW_SOURCE_FILE,     /**< "auto", as timed on the host of a
                                        snapshot (psel_config_copies_of_file) */
    PSEL_BCOPY_BW_SOURCE_SET       /**< UCX_PSEL_BCOPY_BW=<value> */
} psel_copy_bw_source_t;

/** UCX's copy bandwidth estimate for Intel and unknown CPUs
 *  (ucs_cpu_est_bcopy_bw), used for resources read from a file. */
#define PSEL_BCOPY_BW_ESTIMATE  (5800.0 * 1024 * 1024)

/** Longest UCX_PSEL_RX_SLIP, seconds: a wait is meant to let a few
 *  messages land, not to hold a progress call up. */
#define PSEL_RX_SLIP_MAX        100e-6


/** All protosel settings. */
typedef struct psel_config {
    ucs_config_allow_list_t protos;          /**< UCX_PSEL_PROTOS */
    size_t                  rndv_thresh;     /**< Forced rendezvous threshold */
    size_t                  zcopy_thresh;    /**< Forced zero-copy threshold */
    double                  rndv_perf_diff;  /**< Rendezvous bias, percent */
    double                  switch_margin;   /**< UCX_PSEL_SWITCH_MARGIN:
                                                  a fraction, or
                                                  PSEL_SWITCH_MARGIN_AUTO */
    int                     proto_info;      /**< psel_proto_info_t */
    int                     select_perf;     /**< psel_perf_type_t to select on */
    double                  bcopy_bw;        /**< UCX_PSEL_BCOPY_BW as set:
                                                  [B/s] or "auto" (PSEL_UCS_CONFIG_BW_IS_AUTO) */
    double                  copy_bw;         /**< The memcpy bandwidth cost
                                                  lines use [B/s] */
    int                     copy_bw_source;  /**< Where copy_bw came from:
                                                  psel_copy_bw_source_t */
    psel_copy_probe_t       copies;          /**< This host's copies, when
                                                  copy_bw_source is
                                                  PSEL_BCOPY_BW_SOURCE_MEASURED */
    double                  rcache_overhead; /**< Cost of a registration
                                                  found in the cache [s];
                                                  "inf": no cache, pay the
                                                  MD's full cost */
    ucs_config_allow_list_t tls;             /**< UCX_PSEL_TLS */
    ucs_config_allow_list_t net_devices;     /**< UCX_PSEL_NET_DEVICES */
    unsigned long           num_eps;         /**< UCX_PSEL_NUM_EPS: endpoints
                                                  per process, or
                                                  UCS_ULUNITS_AUTO */
    unsigned                max_eager_lanes; /**< Max lanes for eager bw */
    unsigned                max_rndv_lanes;  /**< Max lanes for rendezvous */
    unsigned                max_rma_lanes;   /**< Max lanes for put and get
                                                  zero-copy */
    int                     prefer_offload;  /**< put and get by active
                                                  messages only where no
                                                  offload protocol applies */
    double                  multi_lane_max_ratio; /**< Drop lanes slower than
                                                       best/ratio */
    double                  keepalive_interval; /**< Seconds between
                                                     checks that peers live */
    double                  rx_slip;         /**< UCX_PSEL_RX_SLIP: seconds
                                                  a streaming receiver waits
                                                  once it has caught up */
    ucs_config_names_array_t wireup_p2p_tls; /**< Transports connected
                                                  endpoint to endpoint even
                                                  if they can connect to an
                                                  iface (testing wireup) */
    char                   *calibration;     /**< UCX_PSEL_CALIBRATION:
                                                  FILE, "auto" or "none" */
    int                     enable;          /**< UCX_PSEL_ENABLE: act in
                                                  stock UCP when preloaded */
    int                     tier;            /**< psel_tier_t */
} psel_config_t;


/** The config table, for printing and for tests. */
extern ucs_config_field_t psel_config_table[];


/**
 * Read the configuration from the environment (UCX_PSEL_*).
 * A bad value is reported with the variable name and the accepted forms.
 *
 * @param [out] config  Filled on success; release with psel_config_release().
 *
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM for a bad value.
 */
ucs_status_t psel_config_read(psel_config_t *config);

struct psel_calib;

/**
 * Load the measured cost lines that UCX_PSEL_CALIBRATION names.
 *  - "none", or "auto" without a default file: no lines (NULL), quietly;
 *  - a named file that is missing, or a file of another host or UCX
 *    version: a warning that says what to do, and NULL;
 *  - a malformed file: an error naming the line, UCS_ERR_INVALID_PARAM.
 *
 * @param [in]  config   Settings.
 * @param [out] calib_p  The lines, or NULL; release with
 *                       psel_config_calibration_release().
 */
ucs_status_t psel_config_calibration_load(const psel_config_t *config,
                                          struct psel_calib **calib_p);

/** Release what psel_config_calibration_load() returned (NULL is fine). */
void psel_config_calibration_release(struct psel_calib *calib);

/**
 * With UCX_PSEL_BCOPY_BW=auto, time this host's copies (copy_probe.h): the
 * measured memcpy bandwidth becomes the copy bandwidth of every cost line,
 * and the figures are kept for psel_config_apply_copies(). Call once, where
 * protosel reads its own host's resources. A set UCX_PSEL_BCOPY_BW, or a
 * failed measurement (a warning), changes nothing.
 */
void psel_config_measure_copies(psel_config_t *config);

/**
 * Give the live resources of @a table (just read from UCT: never a table
 * read from a file, which is another host's) the bandwidths measured by
 * psel_config_measure_copies(), where they stand for a shared-memory
 * transport's data path.
 *
 * @return How many resources took a measured bandwidth.
 */
unsigned psel_config_apply_copies(const psel_config_t *config,
                                  struct psel_resource_table *table);

/**
 * With UCX_PSEL_BCOPY_BW=auto and resources read from a snapshot that
 * carries its host's timed copy bandwidth (copy_bw), use that figure: the
 * snapshot's shared-memory transports already hold their host's measured
 * bandwidths, so its tables are that host's.
 */
void psel_config_copies_of_file(psel_config_t *config,
                                const struct psel_resource_table *table);

/** Where the copy bandwidth of @a config came from, for the dumps: "timed
 *  on this host at start, ...", "UCX_PSEL_BCOPY_BW", ... */
const char *psel_config_copy_source_str(const psel_config_t *config);

/** Release what psel_config_read() allocated. */
void psel_config_release(psel_config_t *config);

/**
 * Print every UCX_PSEL_* variable with its value and documentation.
 *
 * @param [in] stream  Output.
 * @param [in] config  Values to print.
 */
void psel_config_print(FILE *stream, const psel_config_t *config);


/**
 * Print every UCX_PSEL_* variable as a JSON array of {"name", "value",
 * "default", "syntax", "doc"} objects (psel_info -c -j), numbers in the
 * C locale.
 */
void psel_config_print_json(FILE *stream, const psel_config_t *config);

/**
 * The number of endpoints selection assumes, as UCP's est_num_eps:
 * UCX_PSEL_NUM_EPS when set, else the application's @a estimate (1 if 0),
 * the way UCX_NUM_EPS overrides ucp_params.estimated_num_eps.
 */
size_t psel_config_num_eps(const psel_config_t *config, size_t estimate);

/** UCX_PSEL_SWITCH_MARGIN=auto: twice the run spread the calibration
 *  recorded (two lines measured apart each move by it), within
 *  PSEL_SWITCH_MARGIN_MIN..MAX; PSEL_SWITCH_MARGIN_ATTR on attribute
 *  lines. */
#define PSEL_SWITCH_MARGIN_AUTO  (-1.0)
#define PSEL_SWITCH_MARGIN_MIN   0.01
#define PSEL_SWITCH_MARGIN_MAX   0.25

/** The switch margin on lines from the transports' attributes: what the
 *  model cannot tell apart (UCX 1.20's tcp has egr/short and egr/zcopy 0.2%
 *  apart per byte, and the same at 0). */
#define PSEL_SWITCH_MARGIN_ATTR  0.02

/** @return The rendezvous bias factor d = 1 - rndv_perf_diff/100. */
double psel_config_rndv_bias(const psel_config_t *config);

/**
 * @return Nonzero if the protocol @a name passes the allow-list @a list
 *         (entries may be fnmatch(3) globs, such as "rndv/\*").
 */
int psel_config_allow_list_match(const ucs_config_allow_list_t *list,
                                 const char *name);

#endif
