#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "test_util.h"

#include <core/psel_core.h>
#include <lane_select/resource_table.h>

#include <stdarg.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define PSEL_TEST_LOG_MAX 16384

static char     captured[PSEL_TEST_LOG_MAX];
static size_t   captured_len;
static unsigned captured_count;
static int      capturing;

static ucs_log_func_rc_t
capture_handler(const char *file, unsigned line, const char *function,
                ucs_log_level_t level,
                const ucs_log_component_config_t *comp_conf,
                const char *message, va_list ap)
{
    int n;

    if (!capturing || (level > UCS_LOG_LEVEL_WARN)) {
        return UCS_LOG_FUNC_RC_CONTINUE;
    }

    if (captured_len < sizeof(captured) - 1) {
        n = vsnprintf(captured + captured_len, sizeof(captured) - captured_len,
                      message, ap);
        if (n > 0) {
            captured_len += n;
            if (captured_len > sizeof(captured) - 2) {
                captured_len = sizeof(captured) - 2;
            }
            captured[captured_len++] = '\n';
            captured[captured_len]   = '\0';
        }
    }
    ++captured_count;
    return UCS_LOG_FUNC_RC_STOP;
}

void psel_test_log_capture_start(void)
{
    psel_test_log_clear();
    if (!capturing) {
        ucs_log_push_handler(capture_handler);
        capturing = 1;
    }
}

void psel_test_log_capture_stop(void)
{
    if (capturing) {
        ucs_log_pop_handler();
        capturing = 0;
    }
}

const char *psel_test_log_captured(void)
{
    return captured;
}

unsigned psel_test_log_count(void)
{
    return captured_count;
}

void psel_test_log_clear(void)
{
    captured[0]    = '\0';
    captured_len   = 0;
    captured_count = 0;
}

void psel_test_assert_log_contains(const char *needle, const char *file,
                                   int line)
{
    if (strstr(captured, needle) == NULL) {
        print_error("expected a log message containing '%s', got:\n%s\n",
                    needle, captured[0] ? captured : "(nothing)\n");
        _fail(file, line);
    }
}

const char *psel_test_fixture_path(const char *name)
{
    static char path[4096];
    const char *dir = getenv("PSEL_FIXTURES_DIR");

    snprintf(path, sizeof(path), "%s/%s", dir ? dir : "test/fixtures",
             name);
    return path;
}

/* ---- two-process tests ---- */

double psel_test_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int psel_test_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    ssize_t n;

    while (len > 0) {
        n = write(fd, p, len);
        if ((n < 0) && (errno == EINTR)) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        p   += n;
        len -= n;
    }
    return 0;
}

int psel_test_read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    ssize_t n;

    while (len > 0) {
        n = read(fd, p, len);
        if ((n < 0) && (errno == EINTR)) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        p   += n;
        len -= n;
    }
    return 0;
}

void *psel_test_read_address(int fd, size_t *len_p)
{
    void *address;

    if (psel_test_read_all(fd, len_p, sizeof(*len_p)) ||
        (*len_p == 0) || (*len_p > (1u << 20)) ||
        ((address = malloc(*len_p)) == NULL)) {
        return NULL;
    }
    if (psel_test_read_all(fd, address, *len_p)) {
        free(address);
        return NULL;
    }
    return address;
}

int psel_test_sock_readable(int sock)
{
    struct timeval tv = {0, 0};
    fd_set fds;

    FD_ZERO(&fds);
    FD_SET(sock, &fds);
    return select(sock + 1, &fds, NULL, NULL, &tv) > 0;
}

int psel_test_has_transport(const char *tl_name)
{
    psel_resource_table_t table;
    int found = 0;
    unsigned i;

    psel_resource_table_init(&table);
    if (psel_resource_discover(&table) == UCS_OK) {
        for (i = 0; i < table.count; ++i) {
            found |= !strcmp(table.resources[i].tl_name, tl_name);
        }
    }
    psel_resource_table_cleanup(&table);
    return found;
}

pid_t psel_test_fork(void)
{
    pid_t parent = getpid();
    pid_t pid    = fork();

    if (pid == 0) {
        /* the parent may have gone between fork() and prctl() */
        if ((prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) ||
            (getppid() != parent)) {
            _exit(127);
        }
    }
    return pid;
}

int psel_test_wait_child(pid_t pid, double timeout_sec)
{
    double deadline = psel_test_now() + timeout_sec;
    int status;
    pid_t ret;

    while ((ret = waitpid(pid, &status, WNOHANG)) == 0) {
        if (psel_test_now() > deadline) {
            fprintf(stderr, "child %d did not exit within %.0f s; killed\n",
                    (int)pid, timeout_sec);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        usleep(1000);
    }
    if (ret != pid) {
        fprintf(stderr, "waitpid(%d): %m\n", (int)pid);
        return -1;
    }
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "child %d was killed by signal %d (%s)\n", (int)pid,
                WTERMSIG(status), strsignal(WTERMSIG(status)));
        return -1;
    }
    if (WEXITSTATUS(status) != 0) {
        fprintf(stderr, "child %d exited with status %d\n", (int)pid,
                WEXITSTATUS(status));
    }
    return WEXITSTATUS(status);
}

ucs_status_t psel_test_close_ep(psel_worker_h worker, psel_ep_h ep)
{
    double deadline = psel_test_now() + 30;
    psel_request_t *req;
    ucs_status_t status;

    req = psel_ep_close_nb(ep, PSEL_EP_CLOSE_FLUSH, NULL, NULL);
    if (req == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    while ((psel_request_test(req, NULL) == UCS_INPROGRESS) &&
           (psel_test_now() < deadline)) {
        psel_worker_progress(worker);
    }
    status = psel_request_test(req, NULL);
    if (status == UCS_INPROGRESS) {
        return UCS_ERR_TIMED_OUT; /* the request stays: a leak, not a crash */
    }
    psel_request_free(req);
    return status;
}

/* The rows of the worker's used-protocols table: each protocol name and its
 * message count, to @a row; returns the text (to free) or NULL */
static char *psel_test_used_rows(psel_worker_h worker,
                                 void (*row)(const char *name,
                                             unsigned long count, void *arg),
                                 void *arg)
{
    char *text = NULL, *copy, *line, *save = NULL;
    unsigned long count;
    char name[32];
    size_t len = 0;
    FILE *stream;

    stream = open_memstream(&text, &len);
    if (stream == NULL) {
        return NULL;
    }
    psel_worker_print_used(worker, stream);
    fclose(stream);
    copy = strdup(text);
    if (copy == NULL) {
        free(text);
        return NULL;
    }
    for (line = strtok_r(copy, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        if ((sscanf(line, "| %31s | %*s | %*s | %lu |", name, &count) == 2) &&
            (!strncmp(name, "egr/", 4) || !strncmp(name, "rndv/", 5))) {
            row(name, count, arg);
        }
    }
    free(copy);
    return text;
}

typedef struct {
    char          allowed[128]; /* ",a,b," or "" */
    const char   *protos;
    unsigned long total;
    int           ret;
} psel_test_used_check_t;

static void psel_test_used_check_row(const char *name, unsigned long count,
                                     void *arg)
{
    psel_test_used_check_t *check = arg;

    check->total += count;
    if ((check->protos != NULL) && (strstr(check->allowed, name) == NULL)) {
        fprintf(stderr, "%s ran although UCX_PSEL_PROTOS=%s\n", name,
                check->protos);
        check->ret = -1;
    }
}

int psel_test_check_used(psel_worker_h worker, const char *protos,
                         unsigned num_msgs)
{
    psel_test_used_check_t check = {.protos = protos};
    char *text;

    snprintf(check.allowed, sizeof(check.allowed), ",%s,",
             (protos != NULL) ? protos : "");
    text = psel_test_used_rows(worker, psel_test_used_check_row, &check);
    if (text == NULL) {
        return -1;
    }
    if (check.total != num_msgs) {
        fprintf(stderr, "protocol usage counts %lu messages, sent %u:\n%s",
                check.total, num_msgs, text);
        check.ret = -1;
    }
    free(text);
    return check.ret;
}

typedef struct {
    const char   *name;
    unsigned long count;
} psel_test_used_count_t;

static void psel_test_used_count_row(const char *name, unsigned long count,
                                     void *arg)
{
    psel_test_used_count_t *c = arg;

    c->count += !strcmp(name, c->name) ? count : 0;
}

long psel_test_used_count(psel_worker_h worker, const char *proto)
{
    psel_test_used_count_t c = {.name = proto};
    char *text;

    text = psel_test_used_rows(worker, psel_test_used_count_row, &c);
    if (text == NULL) {
        return -1;
    }
    free(text);
    return (long)c.count;
}
