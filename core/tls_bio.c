/*
 * OpenSSL's socket BIO writes with write(2), which raises SIGPIPE when
 * the peer has gone: inside a user's program that would kill it.  This
 * BIO does the same with send(MSG_NOSIGNAL).  The socket is
 * non-blocking; a would-block is a retry, which the transport turns
 * into a poll.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tls_impl.h"

static BIO_METHOD *method;
static pthread_once_t method_once = PTHREAD_ONCE_INIT;

static int bio_fd(BIO *b)
{
    return (int)(intptr_t)BIO_get_data(b);
}

static int would_block(void)
{
    return errno == EAGAIN || errno == EWOULDBLOCK;
}

static int bio_write(BIO *b, const char *p, int n)
{
    BIO_clear_retry_flags(b);
    for (;;) {
        ssize_t w = send(bio_fd(b), p, (size_t)n, MSG_NOSIGNAL);
        if (w >= 0)
            return (int)w;
        if (errno == EINTR)
            continue;
        if (would_block())
            BIO_set_retry_write(b);
        return -1;
    }
}

static int bio_read(BIO *b, char *p, int n)
{
    BIO_clear_retry_flags(b);
    for (;;) {
        ssize_t r = recv(bio_fd(b), p, (size_t)n, 0);
        if (r >= 0)
            return (int)r;
        if (errno == EINTR)
            continue;
        if (would_block())
            BIO_set_retry_read(b);
        return -1;
    }
}

/* Nothing is buffered here: a flush has nothing to do, and no other
 * control applies. */
static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b;
    (void)num;
    (void)ptr;
    return cmd == BIO_CTRL_FLUSH;
}

static int bio_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

static void make_method(void)
{
    BIO_METHOD *m =
        BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "gvs socket");
    if (m != NULL && BIO_meth_set_write(m, bio_write) == 1 &&
        BIO_meth_set_read(m, bio_read) == 1 &&
        BIO_meth_set_ctrl(m, bio_ctrl) == 1 &&
        BIO_meth_set_create(m, bio_create) == 1)
        method = m;
    else
        BIO_meth_free(m);
}

BIO *gvs_tls_bio_new(int fd)
{
    pthread_once(&method_once, make_method);
    BIO *b = method != NULL ? BIO_new(method) : NULL;
    if (b != NULL)
        BIO_set_data(b, (void *)(intptr_t)fd);
    return b;
}
