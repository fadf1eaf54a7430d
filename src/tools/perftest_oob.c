/*
 * Out-of-band TCP channel of psel_perftest. Sockets are non-blocking and
 * every wait goes through poll() against a deadline, so a vanished or silent
 * peer ends in a message rather than a hang.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perftest_oob.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <lane_select/clock.h>
#include <time.h>
#include <unistd.h>

#define PSEL_OOB_BARRIER_MAGIC 0x50534252u /* "PSBR" */

const char *psel_oob_prog = "psel_perftest";

void psel_oob_put_le(uint8_t *p, uint64_t value, unsigned bytes)
{
    unsigned i;

    for (i = 0; i < bytes; ++i) {
        p[i]    = value & 0xff;
        value >>= 8;
    }
}

uint64_t psel_oob_get_le(const uint8_t *p, unsigned bytes)
{
    uint64_t value = 0;

    while (bytes-- > 0) {
        value = (value << 8) | p[bytes];
    }
    return value;
}

double psel_oob_time(void)
{
    return psel_time_sec(); /* the counter, as ucx_perftest times */
}

static int psel_oob_set_nonblock(int fd)
{
    int flags = fcntl(fd, F_GETFL);

    return (flags < 0) ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* Milliseconds left until @a deadline, for poll(); 0 when past it. */
static int psel_oob_ms_left(double deadline)
{
    double left = deadline - psel_oob_time();

    return (left <= 0) ? 0 : (int)(left * 1000.0) + 1;
}

static void psel_oob_addr_str(const struct sockaddr *sa, char *buf,
                              size_t len)
{
    char host[NI_MAXHOST], serv[NI_MAXSERV];

    if (getnameinfo(sa, (sa->sa_family == AF_INET6) ?
                    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in),
                    host, sizeof(host), serv, sizeof(serv),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        snprintf(buf, len, "(unknown address)");
    } else {
        snprintf(buf, len, "%s:%s", host, serv);
    }
}

/* The address to listen on: @a bind_addr (a name or a numeric address),
 * or every local address of @a family */
static ucs_status_t psel_oob_listen_addr(int family, const char *bind_addr,
                                         uint16_t port,
                                         struct sockaddr_storage *ss,
                                         socklen_t *len)
{
    struct addrinfo hints, *res;
    char serv[16];
    int ret;

    memset(ss, 0, sizeof(*ss));
    if (bind_addr == NULL) {
        if (family == AF_INET6) {
            struct sockaddr_in6 *sin6 = (struct sockaddr_in6*)ss;
            sin6->sin6_family = AF_INET6;
            sin6->sin6_addr   = in6addr_any;
            sin6->sin6_port   = htons(port);
            *len              = sizeof(*sin6);
        } else {
            struct sockaddr_in *sin = (struct sockaddr_in*)ss;
            sin->sin_family      = AF_INET;
            sin->sin_addr.s_addr = htonl(INADDR_ANY);
            sin->sin_port        = htons(port);
            *len                 = sizeof(*sin);
        }
        return UCS_OK;
    }

    memset(&hints, 0, sizeof(hints));
    hints.ai_family   = family;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags    = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(serv, sizeof(serv), "%u", port);
    ret = getaddrinfo(bind_addr, serv, &hints, &res);
    if (ret != 0) {
        fprintf(stderr, "%s: cannot listen on '%s': %s (give an "
                "address of this host%s)\n",
                psel_oob_prog, bind_addr, gai_strerror(ret),
                (family == AF_INET6) ? ", IPv6 with -6" : ", IPv4 without -6");
        return UCS_ERR_INVALID_ADDR;
    }
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return UCS_OK;
}

ucs_status_t psel_oob_listen(int family, const char *bind_addr, uint16_t port,
                             int *listen_fd)
{
    struct sockaddr_storage ss;
    char where[NI_MAXHOST + NI_MAXSERV + 2];
    ucs_status_t status;
    socklen_t len;
    int fd, one = 1;

    status = psel_oob_listen_addr(family, bind_addr, port, &ss, &len);
    if (status != UCS_OK) {
        return status;
    }
    family = ss.ss_family;
    psel_oob_addr_str((struct sockaddr*)&ss, where, sizeof(where));

    fd = socket(family, SOCK_STREAM, 0);
    if (fd < 0) {
        fprintf(stderr, "%s: socket() failed: %m\n", psel_oob_prog);
        return UCS_ERR_IO_ERROR;
    }

    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr*)&ss, len) < 0) {
        fprintf(stderr, "%s: cannot listen on %s: bind() "
                "failed: %m\n", psel_oob_prog, where);
        close(fd);
        return UCS_ERR_IO_ERROR;
    }

    if ((listen(fd, 1) < 0) || (psel_oob_set_nonblock(fd) < 0)) {
        fprintf(stderr, "%s: listen() on %s failed: %m\n",
        psel_oob_prog, where);
        close(fd);
        return UCS_ERR_IO_ERROR;
    }

    *listen_fd = fd;
    return UCS_OK;
}

static void psel_oob_init(psel_oob_t *oob, int fd, double timeout)
{
    int one = 1;

    /* barriers and small messages must not wait for Nagle */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    oob->fd           = fd;
    oob->timeout      = timeout;
    oob->progress     = NULL;
    oob->progress_arg = NULL;
}

ucs_status_t psel_oob_accept(int listen_fd, double timeout, psel_oob_t *oob,
                             char *peer, size_t peer_len)
{
    double deadline = psel_oob_time() + timeout;
    struct sockaddr_storage ss;
    struct pollfd pfd;
    socklen_t len;
    int fd, ret;

    for (;;) {
        pfd.fd     = listen_fd;
        pfd.events = POLLIN;
        ret        = poll(&pfd, 1, psel_oob_ms_left(deadline));
        if ((ret < 0) && (errno != EINTR)) {
            fprintf(stderr, "%s: poll() on the listening socket "
                    "failed: %m\n", psel_oob_prog);
            goto err;
        }

        if (ret > 0) {
            len = sizeof(ss);
            fd  = accept(listen_fd, (struct sockaddr*)&ss, &len);
            if (fd >= 0) {
                break;
            }
            if ((errno != EAGAIN) && (errno != EINTR) &&
                (errno != ECONNABORTED)) {
                fprintf(stderr, "%s: accept() failed: %m\n", psel_oob_prog);
                goto err;
            }
        }

        if (psel_oob_time() >= deadline) {
            fprintf(stderr, "%s: no client connected within %.0f "
                    "seconds; giving up\n", psel_oob_prog, timeout);
            close(listen_fd);
            return UCS_ERR_TIMED_OUT;
        }
    }

    close(listen_fd);
    if (psel_oob_set_nonblock(fd) < 0) {
        fprintf(stderr, "%s: fcntl() failed: %m\n", psel_oob_prog);
        close(fd);
        return UCS_ERR_IO_ERROR;
    }

    psel_oob_addr_str((struct sockaddr*)&ss, peer, peer_len);
    psel_oob_init(oob, fd, timeout);
    return UCS_OK;

err:
    close(listen_fd);
    return UCS_ERR_IO_ERROR;
}

/* One non-blocking connect() attempt bounded by @a deadline. */
static int psel_oob_connect_one(const struct addrinfo *ai, double deadline,
                                int *err)
{
    struct pollfd pfd;
    socklen_t len;
    int fd, ret;

    fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if ((fd < 0) || (psel_oob_set_nonblock(fd) < 0)) {
        *err = errno;
        goto err_close;
    }

    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
        return fd;
    }
    if (errno != EINPROGRESS) {
        *err = errno;
        goto err_close;
    }

    do {
        pfd.fd     = fd;
        pfd.events = POLLOUT;
        ret        = poll(&pfd, 1, psel_oob_ms_left(deadline));
    } while ((ret < 0) && (errno == EINTR));

    if (ret == 0) {
        *err = ETIMEDOUT;
        goto err_close;
    } else if (ret < 0) {
        *err = errno;
        goto err_close;
    }

    len = sizeof(*err);
    if ((getsockopt(fd, SOL_SOCKET, SO_ERROR, err, &len) < 0) || (*err != 0)) {
        goto err_close;
    }
    return fd;

err_close:
    if (fd >= 0) {
        close(fd);
    }
    return -1;
}

ucs_status_t psel_oob_connect(const char *host, int family, uint16_t port,
                              double timeout, psel_oob_t *oob)
{
    double deadline = psel_oob_time() + timeout;
    struct addrinfo hints, *res, *ai;
    char service[8];
    int fd = -1, err = 0, ret;

    snprintf(service, sizeof(service), "%u", port);
    memset(&hints, 0, sizeof(hints));
    hints.ai_family   = family;
    hints.ai_socktype = SOCK_STREAM;
    ret = getaddrinfo(host, service, &hints, &res);
    if (ret != 0) {
        fprintf(stderr, "%s: cannot resolve server '%s': %s\n", psel_oob_prog,
                host, gai_strerror(ret));
        return UCS_ERR_INVALID_ADDR;
    }

    for (ai = res; (ai != NULL) && (fd < 0); ai = ai->ai_next) {
        fd = psel_oob_connect_one(ai, deadline, &err);
    }
    freeaddrinfo(res);

    if (fd < 0) {
        if (err == ETIMEDOUT) {
            fprintf(stderr, "%s: cannot connect to %s:%u: no answer "
                    "within %.0f seconds\n",
                    psel_oob_prog, host, port, timeout);
            return UCS_ERR_TIMED_OUT;
        }
        fprintf(stderr, "%s: cannot connect to %s:%u: %s (is a "
                "psel_perftest server running there, with the same -p?)\n",
                psel_oob_prog,
                host, port, strerror(err));
        return UCS_ERR_UNREACHABLE;
    }

    psel_oob_init(oob, fd, timeout);
    return UCS_OK;
}

void psel_oob_close(psel_oob_t *oob)
{
    if (oob->fd >= 0) {
        close(oob->fd);
        oob->fd = -1;
    }
}

/*
 * Move @a length bytes in or out. With a progress callback the socket is
 * polled without sleeping, so a peer that needs this side's progress (e.g.
 * endpoint wireup) is served while we wait.
 */
static ucs_status_t psel_oob_io(psel_oob_t *oob, void *buffer, size_t length,
                                int is_send)
{
    double deadline = psel_oob_time() + oob->timeout;
    size_t done     = 0;
    struct pollfd pfd;
    ssize_t ret;

    if (oob->fd < 0) {
        return UCS_ERR_NOT_CONNECTED;
    }

    while (done < length) {
        if (is_send) {
            ret = send(oob->fd, (char*)buffer + done, length - done,
                       MSG_NOSIGNAL);
        } else {
            ret = recv(oob->fd, (char*)buffer + done, length - done, 0);
        }

        if (ret > 0) {
            done += ret;
            continue;
        }

        if ((ret == 0) && !is_send) {
            fprintf(stderr, "%s: the peer closed the connection "
                    "(received %zu of %zu bytes)\n",
                    psel_oob_prog, done, length);
            return UCS_ERR_CONNECTION_RESET;
        }

        if ((ret < 0) && (errno != EAGAIN) && (errno != EWOULDBLOCK) &&
            (errno != EINTR)) {
            fprintf(stderr, "%s: %s() on the control connection "
                    "failed: %m\n", psel_oob_prog, is_send ? "send" : "recv");
            return UCS_ERR_IO_ERROR;
        }

        if (psel_oob_time() >= deadline) {
            fprintf(stderr, "%s: the peer did not %s within %.0f "
                    "seconds on the control connection\n", psel_oob_prog,
                    is_send ? "read" : "answer", oob->timeout);
            return UCS_ERR_TIMED_OUT;
        }

        pfd.fd     = oob->fd;
        pfd.events = is_send ? POLLOUT : POLLIN;
        if (oob->progress != NULL) {
            oob->progress(oob->progress_arg);
            poll(&pfd, 1, 0);
        } else {
            poll(&pfd, 1, psel_oob_ms_left(deadline));
        }
    }

    return UCS_OK;
}

ucs_status_t psel_oob_send(psel_oob_t *oob, const void *buffer, size_t length)
{
    return psel_oob_io(oob, (void*)buffer, length, 1);
}

ucs_status_t psel_oob_recv(psel_oob_t *oob, void *buffer, size_t length)
{
    return psel_oob_io(oob, buffer, length, 0);
}

ucs_status_t psel_oob_send_blob(psel_oob_t *oob, const void *buffer,
                                size_t length)
{
    uint8_t hdr[4];
    ucs_status_t status;

    if (length > UINT32_MAX) {
        return UCS_ERR_INVALID_PARAM;
    }

    psel_oob_put_le(hdr, length, sizeof(hdr));
    status = psel_oob_send(oob, hdr, sizeof(hdr));
    if (status != UCS_OK) {
        return status;
    }

    return psel_oob_send(oob, buffer, length);
}

ucs_status_t psel_oob_recv_blob(psel_oob_t *oob, const char *what,
                                size_t max_length, void **buffer_p,
                                size_t *length_p)
{
    ucs_status_t status;
    uint8_t hdr[4];
    size_t length;
    void *buffer;

    status = psel_oob_recv(oob, hdr, sizeof(hdr));
    if (status != UCS_OK) {
        return status;
    }

    length = psel_oob_get_le(hdr, sizeof(hdr));
    if (length > max_length) {
        fprintf(stderr, "%s: the peer announced a %s of %zu bytes; "
                "at most %zu are accepted\n",
                psel_oob_prog, what, length, max_length);
        return UCS_ERR_INVALID_PARAM;
    }

    buffer = malloc(length + 1); /* NUL after the bytes, for text */
    if (buffer == NULL) {
        fprintf(stderr, "%s: out of memory for a %s of %zu bytes\n",
                psel_oob_prog, what, length);
        return UCS_ERR_NO_MEMORY;
    }

    status = psel_oob_recv(oob, buffer, length);
    if (status != UCS_OK) {
        free(buffer);
        return status;
    }

    ((char*)buffer)[length] = '\0';
    *buffer_p = buffer;
    *length_p = length;
    return UCS_OK;
}

ucs_status_t psel_oob_barrier(psel_oob_t *oob)
{
    uint8_t token[4];
    ucs_status_t status;

    psel_oob_put_le(token, PSEL_OOB_BARRIER_MAGIC, sizeof(token));
    status = psel_oob_send(oob, token, sizeof(token));
    if (status != UCS_OK) {
        return status;
    }

    status = psel_oob_recv(oob, token, sizeof(token));
    if (status != UCS_OK) {
        return status;
    }

    if (psel_oob_get_le(token, sizeof(token)) != PSEL_OOB_BARRIER_MAGIC) {
        fprintf(stderr, "%s: the peer is out of step on the control "
                "connection (barrier token 0x%08x)\n", psel_oob_prog,
                (unsigned)psel_oob_get_le(token, sizeof(token)));
        return UCS_ERR_INVALID_PARAM;
    }

    return UCS_OK;
}

int psel_oob_peer_closed(psel_oob_t *oob)
{
    char c;
    ssize_t ret;

    if (oob->fd < 0) {
        return 1;
    }

    ret = recv(oob->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (ret == 0) {
        return 1;
    }

    return (ret < 0) && (errno != EAGAIN) && (errno != EWOULDBLOCK) &&
           (errno != EINTR);
}
