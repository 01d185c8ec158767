/* The notify thread: runs plugins' notification handlers one at a time,
 * in arrival order, off the receiver thread so that a handler may make
 * calls of its own. */
#include <pthread.h>

#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/thread.h"
#include "internal.h"

struct note {
    struct note *next;
    uint16_t plugin;
    uint16_t op;
    struct gvs_buf *body;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static struct note *head, *tail;
static int started;

int client_notify_push(uint16_t plugin, uint16_t op, struct gvs_buf *body)
{
    struct note *n = gvs_calloc(1, sizeof(*n));
    if (n == NULL) {
        gvs_buf_free(body);
        return GVS_E_NOMEM;
    }
    n->plugin = plugin;
    n->op = op;
    n->body = body;
    pthread_mutex_lock(&lock);
    if (tail != NULL)
        tail->next = n;
    else
        head = n;
    tail = n;
    pthread_cond_signal(&ready);
    pthread_mutex_unlock(&lock);
    return 0;
}

static void *notify_main(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&lock);
        while (head == NULL)
            pthread_cond_wait(&ready, &lock);
        struct note *n = head;
        head = n->next;
        if (head == NULL)
            tail = NULL;
        pthread_mutex_unlock(&lock);
        gvs_notify_fn fn;
        void *fn_arg;
        if (client_registry_notify(n->plugin, &fn, &fn_arg))
            fn(n->op, n->body, fn_arg);
        gvs_buf_free(n->body);
        gvs_free(n);
    }
    return NULL;
}

int client_notify_start(void)
{
    pthread_mutex_lock(&lock);
    int rc = started ? 0 : gvs_thread_start(notify_main, NULL, "gvs-notify");
    if (rc == 0)
        started = 1;
    pthread_mutex_unlock(&lock);
    return rc;
}

void client_notify_fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

void client_notify_fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

void client_notify_fork_child(void)
{
    while (head != NULL) {
        struct note *n = head;
        head = n->next;
        gvs_buf_free(n->body);
        gvs_free(n);
    }
    tail = NULL;
    started = 0;
    /* The parent's thread may have been waiting on the condition. */
    pthread_cond_init(&ready, NULL);
    pthread_mutex_unlock(&lock);
}
