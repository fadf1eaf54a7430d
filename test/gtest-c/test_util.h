/**
 * @file test_util.h
 * Helpers shared by the cmocka tests: capture of UCX log messages, so a test
 * can assert that bad input was rejected with a message saying what and where.
 */
#ifndef PSEL_TEST_UTIL_H_
#define PSEL_TEST_UTIL_H_

#include <core/psel_core.h>
#include <ucs/debug/log_def.h>
#include <stddef.h>
#include <sys/types.h>

/** Start capturing warnings and errors; they are no longer printed. */
void psel_test_log_capture_start(void);

/** Stop capturing; messages print as usual again. */
void psel_test_log_capture_stop(void);

/** @return All captured messages so far, one per line ("" if none). */
const char *psel_test_log_captured(void);

/** @return Number of messages captured at warning level or above. */
unsigned psel_test_log_count(void);

/** Forget the captured messages. */
void psel_test_log_clear(void);

/** Fail the current test unless the captured text contains @a needle. */
#define psel_assert_log_contains(_needle) \
    psel_test_assert_log_contains(_needle, __FILE__, __LINE__)

void psel_test_assert_log_contains(const char *needle, const char *file,
                                   int line);

/** Path of a fixture file from test/fixtures (copied from ../shared/fixtures) (env PSEL_FIXTURES_DIR). */
const char *psel_test_fixture_path(const char *name);

/* Helpers of the two-process tests (test_tag_live, test_rndv_live). */

/** Monotonic time in seconds. */
double psel_test_now(void);

/** Write or read all @a len bytes (retrying on EINTR); 0 or -1. */
int psel_test_write_all(int fd, const void *buf, size_t len);
int psel_test_read_all(int fd, void *buf, size_t len);

/** Read a worker address sent as its size_t length then its bytes (at most
 *  1 MiB); @return it (free() it) with its length in @a len_p, or NULL. */
void *psel_test_read_address(int fd, size_t *len_p);

/** Does @a sock have data (or EOF) to read now? */
int psel_test_sock_readable(int sock);

/** Does this machine's UCT offer transport @a tl_name (live discovery)? */
int psel_test_has_transport(const char *tl_name);

/**
 * Wait up to @a timeout_sec for the child @a pid to exit; kill it
 * (SIGKILL) after that. Says on stderr why it failed.
 *
 * @return its exit status, or -1 if it was killed by a signal or timed out.
 */
int psel_test_wait_child(pid_t pid, double timeout_sec);

/**
 * fork() for a test's peer process: the child gets SIGKILL when the test
 * process ends, so that a failed assertion (which skips the test's own
 * kill and wait) never leaves a peer behind.
 */
pid_t psel_test_fork(void);

/**
 * Close @a ep with a flush, progressing @a worker up to 30 s.
 * @return the close request's status (UCS_ERR_TIMED_OUT if it did not end).
 */
ucs_status_t psel_test_close_ep(psel_worker_h worker, psel_ep_h ep);

/**
 * Check the protocols that really ran (UCX_PSEL_PROTO_INFO=used): every
 * one of @a num_msgs messages counted once, and, with @a protos (the
 * UCX_PSEL_PROTOS value, or NULL), only those protocols. Prints what is
 * wrong. @return 0 or -1.
 */
int psel_test_check_used(psel_worker_h worker, const char *protos,
                         unsigned num_msgs);

/** Messages protocol @a proto ran (UCX_PSEL_PROTO_INFO=used), or -1. */
long psel_test_used_count(psel_worker_h worker, const char *proto);

#endif
