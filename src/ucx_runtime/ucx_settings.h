/**
 * @file ucx_settings.h
 * protosel's selection as stock UCX settings: the UCX_* values that bring a
 * stock UCP application closest to a protosel table (thresholds, rendezvous
 * scheme, rails, transports, protocols), and how to read, check and apply
 * them on a UCP configuration. One home for psel_info --ucx-env and
 * --ucx-conf and for the config tier of libprotosel_ucx.so.
 *
 * Deriving the settings is pure. The UCP configuration helpers use only
 * libucs's public config parser and the UCP table that libucp registers in
 * ucs_config_global_list, so they never call libucp; they are compiled
 * against the UCS headers of the UCX release protosel is built for, and
 * libprotosel_ucx.so runs them only in that major.minor
 * (docs/runtime-library.md, "Which UCX it runs in").
 */
#ifndef PSEL_UCX_RUNTIME_UCX_SETTINGS_H_
#define PSEL_UCX_RUNTIME_UCX_SETTINGS_H_

#include <lane_select/lane_engine.h>
#include <lane_select/resource_table.h>
#include <ucp_proto_sel/select.h>

#include <ucs/config/parser.h>
#include <ucs/datastruct/string_buffer.h>
#include <stdio.h>

#define PSEL_UCX_SETTINGS_MAX   16   /**< Settings one derivation gives */
#define PSEL_UCX_VALUE_MAX      512  /**< Bytes of one value */

/** Flags of a setting. */
enum {
    /** It restricts the transports or devices UCP may use (UCX_TLS,
     *  UCX_NET_DEVICES): right for the endpoint it was derived from, able
     *  to cut a process off peers that need other transports. */
    PSEL_UCX_SETTING_RESOURCES = 1u << 0,
    /** It selects protocols by size or kind (thresholds, scheme, rails,
     *  protocol allow-list): what the protocol tier does per endpoint */
    PSEL_UCX_SETTING_SELECTION = 1u << 1
};


/** One UCX setting. */
typedef struct psel_ucx_setting {
    const char *name;                     /**< Without "UCX_": "RNDV_THRESH" */
    char        value[PSEL_UCX_VALUE_MAX];/**< Value in UCX syntax */
    unsigned    flags;                    /**< PSEL_UCX_SETTING_* */
} psel_ucx_setting_t;


/** Settings derived from one selection, with how each was derived. */
typedef struct psel_ucx_settings {
    unsigned            count;    /**< Entries in @a settings */
    psel_ucx_setting_t  settings[PSEL_UCX_SETTINGS_MAX]; /**< In order */
    ucs_string_buffer_t notes;    /**< One line per note, no '#' */
} psel_ucx_settings_t;


/** Initialize empty settings. */
void psel_ucx_settings_init(psel_ucx_settings_t *s);

/** Release the notes. */
void psel_ucx_settings_cleanup(psel_ucx_settings_t *s);

/** Append a note (one line) to @a s. */
void psel_ucx_settings_note(psel_ucx_settings_t *s, const char *fmt, ...)
    UCS_F_PRINTF(2, 3);

/**
 * Derive the UCX settings closest to a selection, from the contiguous
 * tag-send table (what a plain ucp_tag_send of a buffer gets) and the
 * endpoint's lanes:
 *  - RNDV_THRESH, ZCOPY_THRESH: the first size of a rendezvous / eager
 *    zero-copy row, or "inf";
 *  - RNDV_SCHEME: the rendezvous of the largest sizes;
 *  - MAX_EAGER_RAILS, MAX_RNDV_RAILS: the lanes of the eager copies and of
 *    that rendezvous;
 *  - TLS, NET_DEVICES: the transports (plus self) and network devices of the
 *    lanes (PSEL_UCX_SETTING_RESOURCES);
 *  - PROTO_ENABLE=y and PROTOS: ^ the UCX 1.13 tag-send protocols v2 that no
 *    table selects, and those protosel has no model of.
 * What UCX's knobs cannot say (eager after rendezvous, bcopy after zcopy,
 * two rendezvous schemes) is noted.
 *
 * @param [out] s           Initialized settings to fill.
 * @param [in]  local       Local resources (the lanes index them).
 * @param [in]  lanes       The endpoint's lanes.
 * @param [in]  tables      The tables of every buffer type, contig first.
 * @param [in]  count       Number of tables (>= 1).
 * @param [in]  locality    The peer's (PSEL_PEER_*): from UCX 1.17
 *                          UCX_RNDV_THRESH has a value per kind of peer,
 *                          "intra:N,inter:auto" for one on this host.
 * @param [in]  calibrated  Nonzero if the tables were built on measured
 *                          cost lines (for the notes).
 */
void psel_ucx_settings_derive(psel_ucx_settings_t *s,
                              const psel_resource_table_t *local,
                              const psel_ep_lanes_t *lanes,
                              const psel_select_table_t *const *tables,
                              unsigned count, int locality, int calibrated);

/**
 * Keep in @a s only the selection settings (PSEL_UCX_SETTING_SELECTION)
 * that serve the peers of @a other as well: UCX's knobs are global, one
 * value for every endpoint of the process. A setting with the same value
 * in both stays; UCX_PROTOS keeps the protocols both leave out;
 * UCX_RNDV_THRESH takes @a s's intra-node value and @a other's inter-node
 * one (UCX 1.17 on); any other that differs (or that @a other lacks) is
 * removed, so UCP's own choice per endpoint configuration stays, and a note
 * says why. Settings without PSEL_UCX_SETTING_SELECTION are kept as they
 * are.
 *
 * @param [inout] s            Settings for peers on this host.
 * @param [in]    s_peers      Who they are for ("peers on this host").
 * @param [in]    other        Settings for peers over the network.
 * @param [in]    other_peers  Who those are for ("peers over the network").
 */
void psel_ucx_settings_merge(psel_ucx_settings_t *s, const char *s_peers,
                             const psel_ucx_settings_t *other,
                             const char *other_peers);

/** @return The setting @a name of @a s, or NULL. */
const psel_ucx_setting_t *
psel_ucx_settings_find(const psel_ucx_settings_t *s, const char *name);

/**
 * Write @a s as a ucx.conf for UCX_CONFIG_DIR: a comment header with the
 * notes, then one UCX_NAME=VALUE line per setting. Writes DIR/ucx.conf.XXXXXX
 * and renames it over DIR/ucx.conf (DIR must exist).
 *
 * @param [in] s       Settings.
 * @param [in] dir     Directory.
 * @param [in] origin  What they were derived from, for the header.
 *
 * @return UCS_OK, or UCS_ERR_IO_ERROR with a message naming the file.
 */
ucs_status_t psel_ucx_settings_write_conf(const psel_ucx_settings_t *s,
                                          const char *dir, const char *origin);


/**
 * The UCP context's config table, as libucp registers it in
 * ucs_config_global_list ("UCP context"), found by its RNDV_THRESH field.
 *
 * @param [out] size_p  Size of the config structure, or NULL.
 *
 * @return The table, or NULL if libucp is not loaded or registers none.
 */
ucs_config_field_t *psel_ucx_config_table(size_t *size_p);

/**
 * Value of the UCP setting @a name in @a opts (a ucp_config_t, whose memory
 * the UCP table describes), in the parser's own spelling.
 *
 * @return UCS_OK; UCS_ERR_NO_ELEM if UCP has no such setting.
 */
ucs_status_t psel_ucx_config_get(const void *opts, const char *name,
                                 char *value, size_t max);

/**
 * Whether the user set UCX setting @a name for a configuration read with
 * @a env_prefix: in the environment as UCX_<name> or <env_prefix>_UCX_<name>,
 * or in a UCX configuration file (ucx.conf of UCX's system directory, its
 * library's ../etc, $HOME, UCX_CONFIG_DIR or the working directory), as
 * UCX's own parser read it, whatever the value (the default too).
 *
 * @param [in] name        Setting without "UCX_".
 * @param [in] env_prefix  As given to ucp_config_read(), or NULL.
 * @param [out] source     What set it ("UCX_RNDV_THRESH=16k"), may be NULL.
 * @param [in] max         Size of @a source.
 *
 * @return Nonzero if the user set it.
 */
int psel_ucx_setting_user_set(const char *name, const char *env_prefix,
                              char *source, size_t max);

#endif
