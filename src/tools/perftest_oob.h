/**
 * @file perftest_oob.h
 * Out-of-band channel of psel_perftest: one TCP connection between the
 * server and the client, as ucx_perftest uses, to pass the test parameters
 * and the worker addresses and to hold barriers. Every wait is bounded in
 * time; reads and writes are complete or fail with a message on stderr.
 */
#ifndef PSEL_TOOLS_PERFTEST_OOB_H_
#define PSEL_TOOLS_PERFTEST_OOB_H_

#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

/** Program name that messages start with ("psel_perftest"). */
extern const char *psel_oob_prog;

/** Called while waiting on the socket, e.g. to progress a worker. */
typedef void (*psel_oob_progress_cb_t)(void *arg);

/** A connected out-of-band channel. */
typedef struct psel_oob {
    int                     fd;          /**< Connected socket, or -1 */
    double                  timeout;     /**< Bound of every wait, seconds */
    psel_oob_progress_cb_t  progress;    /**< Called while waiting, or NULL */
    void                   *progress_arg; /**< Argument of @a progress */
} psel_oob_t;


/**
 * Bind and listen on @a port of @a bind_addr, or of every local address.
 *
 * @param [in]  family    AF_INET or AF_INET6.
 * @param [in]  bind_addr Address or host name to listen on (of @a family),
 *                        or NULL for every local address.
 * @param [in]  port      TCP port.
 * @param [out] listen_fd The listening socket.
 *
 * @return UCS_OK; UCS_ERR_INVALID_ADDR if @a bind_addr does not resolve;
 *         UCS_ERR_IO_ERROR if the socket cannot be bound (both with a
 *         message).
 */
ucs_status_t psel_oob_listen(int family, const char *bind_addr, uint16_t port,
                             int *listen_fd);

/**
 * Accept one connection on @a listen_fd within @a timeout seconds, then
 * close @a listen_fd (the server serves one client).
 *
 * @param [in]  listen_fd From psel_oob_listen().
 * @param [in]  timeout   Seconds to wait for a client.
 * @param [out] oob       The connected channel (no progress callback).
 * @param [out] peer      Text "address:port" of the client.
 * @param [in]  peer_len  Size of @a peer.
 */
ucs_status_t psel_oob_accept(int listen_fd, double timeout, psel_oob_t *oob,
                             char *peer, size_t peer_len);

/**
 * Connect to @a host:@a port within @a timeout seconds. A refused
 * connection fails at once (no server there).
 */
ucs_status_t psel_oob_connect(const char *host, int family, uint16_t port,
                              double timeout, psel_oob_t *oob);

/** Close the channel (idempotent). */
void psel_oob_close(psel_oob_t *oob);

/** Send exactly @a length bytes. */
ucs_status_t psel_oob_send(psel_oob_t *oob, const void *buffer, size_t length);

/**
 * Receive exactly @a length bytes.
 * @return UCS_ERR_CONNECTION_RESET if the peer closed the connection,
 *         UCS_ERR_TIMED_OUT after oob->timeout seconds.
 */
ucs_status_t psel_oob_recv(psel_oob_t *oob, void *buffer, size_t length);

/** Send a blob as a 32-bit little-endian length and its bytes. */
ucs_status_t psel_oob_send_blob(psel_oob_t *oob, const void *buffer,
                                size_t length);

/**
 * Receive a blob sent by psel_oob_send_blob().
 *
 * @param [in]  what       What it is, for messages ("worker address").
 * @param [in]  max_length Longer blobs are rejected as invalid.
 * @param [out] buffer_p   The bytes, followed by a NUL (so text can be
 *                         used as a string); release with free().
 * @param [out] length_p   Their count (may be 0).
 */
ucs_status_t psel_oob_recv_blob(psel_oob_t *oob, const char *what,
                                size_t max_length, void **buffer_p,
                                size_t *length_p);

/** Both sides meet: each sends a token and waits for the other's. */
ucs_status_t psel_oob_barrier(psel_oob_t *oob);

/**
 * @return Nonzero if the peer has closed the connection (or it failed);
 *         never blocks. Pending unread bytes do not count as closed.
 */
int psel_oob_peer_closed(psel_oob_t *oob);

/** Store @a bytes (up to 8) of @a value little-endian, as every protosel
 *  wire format (docs/wire-formats.md). */
void psel_oob_put_le(uint8_t *p, uint64_t value, unsigned bytes);

/** Load @a bytes (up to 8) of a little-endian integer. */
uint64_t psel_oob_get_le(const uint8_t *p, unsigned bytes);

/** Seconds of a monotonic clock. */
double psel_oob_time(void);

#endif
