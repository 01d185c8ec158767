/* CUDA graphs and stream capture (cuda.api, "CUDA graphs"): lifetime,
 * topology, instantiation and capture; launches and the rest are
 * generated. */
#include "graph.h"

#include <pthread.h>

#include "cuda_fe_gen.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs_remote.h"

CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    uint64_t id = 0;
    if (phGraph == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_create(CUDA_OP_GRAPH_CREATE, flags, 0, 0, &id);
    if (r == CUDA_SUCCESS)
        *phGraph = (CUgraph)(uintptr_t)id;
    return r;
}

CUresult cuGraphDestroy(CUgraph hGraph)
{
    const uint64_t in[] = {cuda_fe_id(hGraph)};
    CUresult r = cuda_fe_call_ids(CUDA_OP_GRAPH_DESTROY, in, 1, NULL);
    if (r == CUDA_SUCCESS)
        gvs_remote_ghost_forget(cuda_fe_id(hGraph));
    return r;
}

/* A node's counterpart in a clone, for graph_host.c (0 when not found). */
static uint64_t node_in_clone(uint64_t node, uint64_t clone)
{
    CUgraphNode n = NULL;
    if (cuGraphNodeFindInClone(&n, (CUgraphNode)(uintptr_t)node,
                               (CUgraph)(uintptr_t)clone) != CUDA_SUCCESS)
        return 0;
    return cuda_fe_id(n);
}

CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
    const uint64_t in[] = {cuda_fe_id(originalGraph)};
    uint64_t id = 0;
    if (phGraphClone == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_call_ids(CUDA_OP_GRAPH_CLONE, in, 1, &id);
    if (r == CUDA_SUCCESS) {
        gvs_remote_ghost_copy(cuda_fe_id(originalGraph), id, 0, node_in_clone);
        *phGraphClone = (CUgraph)(uintptr_t)id;
    }
    return r;
}

CUresult cuGraphNodeFindInClone(CUgraphNode *phNode, CUgraphNode hOriginalNode,
                                CUgraph hClonedGraph)
{
    const uint64_t in[] = {cuda_fe_id(hOriginalNode),
                           cuda_fe_id(hClonedGraph)};
    uint64_t id = 0;
    if (phNode == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_call_ids(CUDA_OP_NODE_FIND_IN_CLONE, in, 2, &id);
    if (r == CUDA_SUCCESS)
        *phNode = (CUgraphNode)(uintptr_t)id;
    return r;
}

CUresult cuGraphDestroyNode(CUgraphNode hNode)
{
    const uint64_t in[] = {cuda_fe_id(hNode)};
    CUresult r = cuda_fe_call_ids(CUDA_OP_NODE_DESTROY, in, 1, NULL);
    if (r == CUDA_SUCCESS)
        gvs_remote_ghost_forget_node(cuda_fe_id(hNode));
    return r;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                     unsigned long long flags)
{
    const uint64_t in[] = {cuda_fe_id(hGraph), flags};
    uint64_t id = 0;
    if (phGraphExec == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_call_ids(CUDA_OP_GRAPH_INSTANTIATE, in, 2, &id);
    if (r == CUDA_SUCCESS) {
        gvs_remote_ghost_copy(cuda_fe_id(hGraph), id, 1, NULL);
        *phGraphExec = (CUgraphExec)(uintptr_t)id;
    }
    return r;
}

/* An upload asked for is the stream's next work, as the driver does it. */
static CUresult instantiate_params(CUgraphExec *x, CUgraph g,
                                   CUDA_GRAPH_INSTANTIATE_PARAMS *p,
                                   int per_thread)
{
    if (x == NULL || p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    p->hErrNode_out = NULL;
    CUresult r = cuGraphInstantiateWithFlags(
        x, g, p->flags & ~(cuuint64_t)CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD);
    if (r == CUDA_SUCCESS && (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)) {
        r = per_thread ? cuGraphUpload_ptsz(*x, p->hUploadStream)
                       : cuGraphUpload(*x, p->hUploadStream);
        /* The instantiation fails as a whole. */
        if (r != CUDA_SUCCESS)
            (void)cuGraphExecDestroy(*x);
    }
    p->result_out = r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS
                                      : CUDA_GRAPH_INSTANTIATE_ERROR;
    return r;
}

CUresult cuGraphInstantiateWithParams(
    CUgraphExec *phGraphExec, CUgraph hGraph,
    CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    return instantiate_params(phGraphExec, hGraph, instantiateParams, 0);
}

CUresult cuGraphInstantiateWithParams_ptsz(
    CUgraphExec *phGraphExec, CUgraph hGraph,
    CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    return instantiate_params(phGraphExec, hGraph, instantiateParams, 1);
}

/* The first form: no error node, an empty log. */
CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph,
                               CUgraphNode *phErrorNode, char *logBuffer,
                               size_t bufferSize)
{
    if (phErrorNode != NULL)
        *phErrorNode = NULL;
    if (logBuffer != NULL && bufferSize > 0)
        logBuffer[0] = '\0';
    return cuGraphInstantiateWithFlags(phGraphExec, hGraph, 0);
}

CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph,
                            CUgraphNode *phErrorNode, char *logBuffer,
                            size_t bufferSize)
{
    return cuGraphInstantiate_v2(phGraphExec, hGraph, phErrorNode, logBuffer,
                                 bufferSize);
}

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    const uint64_t in[] = {cuda_fe_id(hGraphExec)};
    CUresult r = cuda_fe_call_ids(CUDA_OP_GRAPH_EXEC_DESTROY, in, 1, NULL);
    if (r == CUDA_SUCCESS)
        gvs_remote_ghost_forget(cuda_fe_id(hGraphExec));
    return r;
}

/* u64 exec, u64 stream -> i32 (the stream a handle, a per-thread
 * launch's default stream CU_STREAM_PER_THREAD). */
static int32_t launch(uint64_t exec, uint64_t stream)
{
    const uint64_t in[] = {exec,
                           cuda_fe_stream_wire((CUstream)(uintptr_t)stream, 0)};
    return cuda_fe_call_ids(CUDA_OP_cuGraphLaunch, in, 2, NULL);
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    return cuda_fe_ghost_launch(cuda_fe_id(hGraphExec), hStream, 0, launch);
}

CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    return cuda_fe_ghost_launch(cuda_fe_id(hGraphExec), hStream, 1, launch);
}

CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                              CUgraphExecUpdateResultInfo *resultInfo)
{
    struct apigen_call c;
    int32_t result = 0;
    uint64_t err = 0, from = 0;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (resultInfo == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, cuda_fe_id(hGraphExec));
    apigen_put_u64(&c, cuda_fe_id(hGraph));
    r = cuda_fe_run(&c, CUDA_OP_GRAPH_EXEC_UPDATE, APIGEN_DEVICE);
    /* The result info comes with a failed update too. */
    if (c.rc == 0 && c.get != NULL && gvs_buf_len(c.get) > 0) {
        apigen_get_i32(&c, &result);
        apigen_get_u64(&c, &err);
        apigen_get_u64(&c, &from);
    }
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS) {
        gvs_remote_ghost_forget(cuda_fe_id(hGraphExec));
        gvs_remote_ghost_copy(cuda_fe_id(hGraph), cuda_fe_id(hGraphExec), 1,
                              NULL);
    }
    resultInfo->result = (CUgraphExecUpdateResult)result;
    resultInfo->errorNode = (CUgraphNode)(uintptr_t)err;
    resultInfo->errorFromNode = (CUgraphNode)(uintptr_t)from;
    return r;
}

CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph,
                           CUgraphNode *hErrorNode_out,
                           CUgraphExecUpdateResult *updateResult_out)
{
    CUgraphExecUpdateResultInfo info;
    if (hErrorNode_out == NULL || updateResult_out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuGraphExecUpdate_v2(hGraphExec, hGraph, &info);
    *hErrorNode_out = info.errorNode;
    *updateResult_out = info.result;
    return r;
}

static CUresult end_capture(CUstream s, CUgraph *g, int per_thread)
{
    struct apigen_call c;
    uint64_t id = 0;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (g == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, cuda_fe_stream_wire(s, per_thread));
    r = cuda_fe_run(&c, CUDA_OP_STREAM_END_CAPTURE, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_u64(&c, &id);
    r = cuda_fe_end(&c, r);
    /* An invalidated capture ends too; over-counting the captures under
     * way only costs round trips. */
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
        gvs_remote_capture_ends();
    if (r == CUDA_SUCCESS)
        *g = (CUgraph)(uintptr_t)id;
    return r;
}

CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    return end_capture(hStream, phGraph, 0);
}

CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    return end_capture(hStream, phGraph, 1);
}

/* Lists a graph's nodes (which 0) or root nodes (1): the count where
 * nodes is NULL, else at most *n of them and the count written. */
static CUresult list(CUgraph g, uint8_t which, CUgraphNode *nodes, size_t *n)
{
    struct apigen_call c;
    uint64_t total = 0;
    uint32_t got = 0;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (n == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, cuda_fe_id(g));
    apigen_put_u8(&c, which);
    apigen_put_u64(&c, nodes != NULL ? *n : 0);
    r = cuda_fe_run(&c, CUDA_OP_GRAPH_NODES, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS) {
        apigen_get_u64(&c, &total);
        apigen_get_u32(&c, &got);
        if (nodes != NULL && got > *n)
            c.rc = GVS_E_PROTO;
        for (uint32_t i = 0; i < got && c.rc == 0; i++) {
            uint64_t id;
            apigen_get_u64(&c, &id);
            nodes[i] = (CUgraphNode)(uintptr_t)id;
        }
    }
    r = cuda_fe_end(&c, r);
    if (r != CUDA_SUCCESS)
        return r;
    /* The driver clears the rest of a longer array and writes the count
     * it filled. */
    for (size_t i = got; nodes != NULL && i < *n; i++)
        nodes[i] = NULL;
    *n = nodes != NULL ? got : total;
    return CUDA_SUCCESS;
}

CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    return list(hGraph, 0, nodes, numNodes);
}

CUresult cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode *rootNodes,
                             size_t *numRootNodes)
{
    return list(hGraph, 1, rootNodes, numRootNodes);
}

static CUresult edit_edges(CUgraph g, uint8_t remove, const CUgraphNode *from,
                           const CUgraphNode *to, size_t n)
{
    struct apigen_call c;
    if (!cuda_fe_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, cuda_fe_id(g));
    apigen_put_u8(&c, remove);
    r = cuda_fe_put_nodes(&c, from, n);
    if (r == CUDA_SUCCESS)
        r = cuda_fe_put_nodes(&c, to, n);
    if (r == CUDA_SUCCESS)
        r = cuda_fe_run(&c, CUDA_OP_GRAPH_EDIT_EDGES, APIGEN_DEVICE);
    return cuda_fe_end(&c, r);
}

/* The _v2 forms: edge data, the default only. */
static CUresult edit_edges_v2(CUgraph g, uint8_t remove,
                              const CUgraphNode *from, const CUgraphNode *to,
                              const CUgraphEdgeData *e, size_t n)
{
    CUresult r = cuda_fe_default_edges(e, n);
    return r != CUDA_SUCCESS ? r : edit_edges(g, remove, from, to, n);
}

CUresult cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from,
                                const CUgraphNode *to,
                                size_t numDependencies)
{
    return edit_edges(hGraph, 0, from, to, numDependencies);
}

CUresult cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode *from,
                                   const CUgraphNode *to,
                                   const CUgraphEdgeData *edgeData,
                                   size_t numDependencies)
{
    return edit_edges_v2(hGraph, 0, from, to, edgeData, numDependencies);
}

CUresult cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode *from,
                                   const CUgraphNode *to,
                                   size_t numDependencies)
{
    return edit_edges(hGraph, 1, from, to, numDependencies);
}

CUresult cuGraphRemoveDependencies_v2(CUgraph hGraph, const CUgraphNode *from,
                                      const CUgraphNode *to,
                                      const CUgraphEdgeData *edgeData,
                                      size_t numDependencies)
{
    return edit_edges_v2(hGraph, 1, from, to, edgeData, numDependencies);
}

/* The dependencies of a thread's last capture query, which the caller
 * reads until its next (the driver's stay valid as long at least). */
struct deps_buf {
    CUgraphNode *nodes;
    CUgraphEdgeData *edges;
    uint32_t room;
};

static pthread_key_t deps_key;
static pthread_once_t deps_once = PTHREAD_ONCE_INIT;

static void deps_free(void *p)
{
    struct deps_buf *b = p;
    gvs_free(b->nodes);
    gvs_free(b->edges);
    gvs_free(b);
}

static void deps_init(void)
{
    (void)pthread_key_create(&deps_key, deps_free);
}

/* The thread's buffer with room for n, or NULL. */
static struct deps_buf *deps_room(uint32_t n)
{
    pthread_once(&deps_once, deps_init);
    struct deps_buf *b = pthread_getspecific(deps_key);
    if (b == NULL) {
        if ((b = gvs_calloc(1, sizeof(*b))) == NULL)
            return NULL;
        if (pthread_setspecific(deps_key, b) != 0) {
            gvs_free(b);
            return NULL;
        }
    }
    if (n <= b->room)
        return b;
    CUgraphNode *nodes = gvs_realloc(b->nodes, n * sizeof(*nodes));
    if (nodes != NULL)
        b->nodes = nodes;
    CUgraphEdgeData *edges = gvs_realloc(b->edges, n * sizeof(*edges));
    if (edges != NULL)
        b->edges = edges;
    if (nodes == NULL || edges == NULL)
        return NULL;
    b->room = n;
    return b;
}

CUresult cuda_fe_capture_graph(uint64_t stream, CUstreamCaptureStatus *status,
                               cuuint64_t *id, CUgraph *graph,
                               const CUgraphNode **deps,
                               const CUgraphEdgeData **edges, size_t *ndeps)
{
    struct apigen_call c;
    int32_t st = 0;
    uint64_t cid = 0, gid = 0;
    uint32_t n = 0;
    struct deps_buf *b = NULL;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, stream);
    r = cuda_fe_run(&c, CUDA_OP_CAPTURE_GRAPH, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS) {
        apigen_get_i32(&c, &st);
        apigen_get_u64(&c, &cid);
        apigen_get_u64(&c, &gid);
        apigen_get_u32(&c, &n);
        if (c.rc == 0 && (b = deps_room(n)) == NULL) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
            c.get = NULL; /* the rest of the reply is dropped */
        }
    }
    for (uint32_t i = 0; b != NULL && i < n && c.rc == 0; i++) {
        uint64_t node;
        apigen_get_u64(&c, &node);
        b->nodes[i] = (CUgraphNode)(uintptr_t)node;
        apigen_get_u8(&c, &b->edges[i].from_port);
        apigen_get_u8(&c, &b->edges[i].to_port);
        apigen_get_u8(&c, &b->edges[i].type);
    }
    r = cuda_fe_end(&c, r);
    if (r != CUDA_SUCCESS)
        return r;
    *status = (CUstreamCaptureStatus)st;
    if (id != NULL)
        *id = cid;
    if (graph != NULL)
        *graph = (CUgraph)(uintptr_t)gid;
    if (deps != NULL)
        *deps = n > 0 ? b->nodes : NULL;
    if (edges != NULL)
        *edges = n > 0 ? b->edges : NULL;
    if (ndeps != NULL)
        *ndeps = n;
    return CUDA_SUCCESS;
}

/* Lists which (cuda.api, GRAPH_EDGES: 0 a graph's edges, 1 a node's
 * dependencies, 2 its dependents) of id: the count in *n where the
 * listed end's array is NULL, else at most *n edges, the rest of the
 * arrays cleared as the driver clears them, and the count written in
 * *n.  Without edge data (the first forms), an edge that has some is
 * CUDA_ERROR_LOSSY_QUERY, as the driver answers. */
static CUresult get_edges(uint8_t which, uint64_t id, CUgraphNode *from,
                          CUgraphNode *to, CUgraphEdgeData *ed, size_t *n,
                          int lossy)
{
    struct apigen_call c;
    uint64_t total = 0;
    uint32_t got = 0;
    CUgraphNode *listed = which == 2 ? to : from;
    if (n == NULL || (listed == NULL && ed != NULL) ||
        (which == 0 && (from == NULL) != (to == NULL)))
        return CUDA_ERROR_INVALID_VALUE;
    size_t room = listed != NULL ? *n : 0;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, id);
    apigen_put_u8(&c, which);
    apigen_put_u64(&c, room);
    r = cuda_fe_run(&c, CUDA_OP_GRAPH_EDGES, APIGEN_DEVICE);
    int lost = 0;
    if (r == CUDA_SUCCESS) {
        apigen_get_u64(&c, &total);
        apigen_get_u32(&c, &got);
        if (got > room)
            c.rc = GVS_E_PROTO;
    }
    for (uint32_t i = 0; r == CUDA_SUCCESS && i < got && c.rc == 0; i++) {
        uint64_t f, t;
        CUgraphEdgeData e = {0};
        apigen_get_u64(&c, &f);
        apigen_get_u64(&c, &t);
        apigen_get_u8(&c, &e.from_port);
        apigen_get_u8(&c, &e.to_port);
        apigen_get_u8(&c, &e.type);
        if (from != NULL)
            from[i] = (CUgraphNode)(uintptr_t)f;
        if (to != NULL)
            to[i] = (CUgraphNode)(uintptr_t)t;
        if (ed != NULL)
            ed[i] = e;
        lost |= e.from_port != 0 || e.to_port != 0 || e.type != 0;
    }
    r = cuda_fe_end(&c, r);
    if (r != CUDA_SUCCESS)
        return r;
    for (size_t i = got; i < room; i++) {
        if (from != NULL)
            from[i] = NULL;
        if (to != NULL)
            to[i] = NULL;
        if (ed != NULL)
            ed[i] = (CUgraphEdgeData){0};
    }
    *n = listed != NULL ? got : total;
    return lossy && lost ? CUDA_ERROR_LOSSY_QUERY : CUDA_SUCCESS;
}

CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to,
                         size_t *numEdges)
{
    return get_edges(0, cuda_fe_id(hGraph), from, to, NULL, numEdges, 1);
}

CUresult cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode *from,
                            CUgraphNode *to, CUgraphEdgeData *edgeData,
                            size_t *numEdges)
{
    return get_edges(0, cuda_fe_id(hGraph), from, to, edgeData, numEdges, 0);
}

CUresult cuGraphNodeGetDependencies(CUgraphNode hNode,
                                    CUgraphNode *dependencies,
                                    size_t *numDependencies)
{
    return get_edges(1, cuda_fe_id(hNode), dependencies, NULL, NULL,
                     numDependencies, 1);
}

CUresult cuGraphNodeGetDependencies_v2(CUgraphNode hNode,
                                       CUgraphNode *dependencies,
                                       CUgraphEdgeData *edgeData,
                                       size_t *numDependencies)
{
    return get_edges(1, cuda_fe_id(hNode), dependencies, NULL, edgeData,
                     numDependencies, 0);
}

CUresult cuGraphNodeGetDependentNodes(CUgraphNode hNode,
                                      CUgraphNode *dependentNodes,
                                      size_t *numDependentNodes)
{
    return get_edges(2, cuda_fe_id(hNode), NULL, dependentNodes, NULL,
                     numDependentNodes, 1);
}

CUresult cuGraphNodeGetDependentNodes_v2(CUgraphNode hNode,
                                         CUgraphNode *dependentNodes,
                                         CUgraphEdgeData *edgeData,
                                         size_t *numDependentNodes)
{
    return get_edges(2, cuda_fe_id(hNode), NULL, dependentNodes, edgeData,
                     numDependentNodes, 0);
}

/* A capture request of stream s whose n dependencies have edge data
 * edges (the default only): begun, the stream put. */
static CUresult begin_capture_call(struct apigen_call *c, CUstream s,
                                  int per_thread,
                                  const CUgraphEdgeData *edges, size_t n)
{
    CUresult r = cuda_fe_default_edges(edges, n);
    if (r == CUDA_SUCCESS)
        r = cuda_fe_begin(c);
    if (r == CUDA_SUCCESS)
        apigen_put_u64(c, cuda_fe_stream_wire(s, per_thread));
    return r;
}

static CUresult begin_to_graph(CUstream s, CUgraph g, const CUgraphNode *deps,
                               const CUgraphEdgeData *edges, size_t n,
                               CUstreamCaptureMode mode, int per_thread)
{
    struct apigen_call c;
    CUresult r = begin_capture_call(&c, s, per_thread, edges, n);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, cuda_fe_id(g));
    r = cuda_fe_put_nodes(&c, deps, n);
    apigen_put_i32(&c, (int32_t)mode);
    /* Counted before the request leaves: no call of another thread is
     * posted into the capture meanwhile. */
    gvs_remote_capture_begins();
    if (r == CUDA_SUCCESS)
        r = cuda_fe_run(&c, CUDA_OP_STREAM_BEGIN_CAPTURE_TO_GRAPH,
                        APIGEN_DEVICE);
    r = cuda_fe_end(&c, r);
    if (r != CUDA_SUCCESS)
        gvs_remote_capture_ends();
    return r;
}

static CUresult begin_capture(CUstream s, CUstreamCaptureMode mode,
                              int per_thread)
{
    gvs_remote_capture_begins();
    CUresult r = cuda_rpc_cuStreamBeginCapture_v2(s, mode, per_thread);
    if (r != CUDA_SUCCESS)
        gvs_remote_capture_ends();
    return r;
}

CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    return begin_capture(hStream, mode, 0);
}

CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream,
                                      CUstreamCaptureMode mode)
{
    return begin_capture(hStream, mode, 1);
}

/* CUDA 10.0's form, before capture modes: a global capture. */
CUresult cuStreamBeginCapture(CUstream hStream)
{
    return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, 0);
}

CUresult cuStreamBeginCapture_ptsz(CUstream hStream)
{
    return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, 1);
}

CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
                                     const CUgraphNode *dependencies,
                                     const CUgraphEdgeData *dependencyData,
                                     size_t numDependencies,
                                     CUstreamCaptureMode mode)
{
    return begin_to_graph(hStream, hGraph, dependencies, dependencyData,
                          numDependencies, mode, 0);
}

CUresult cuStreamBeginCaptureToGraph_ptsz(
    CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
    const CUgraphEdgeData *dependencyData, size_t numDependencies,
    CUstreamCaptureMode mode)
{
    return begin_to_graph(hStream, hGraph, dependencies, dependencyData,
                          numDependencies, mode, 1);
}

static CUresult update_deps(CUstream s, const CUgraphNode *deps,
                            const CUgraphEdgeData *edges, size_t n,
                            unsigned int flags, int per_thread)
{
    struct apigen_call c;
    CUresult r = begin_capture_call(&c, s, per_thread, edges, n);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u32(&c, flags);
    r = cuda_fe_put_nodes(&c, deps, n);
    if (r == CUDA_SUCCESS)
        r = cuda_fe_run(&c, CUDA_OP_STREAM_UPDATE_CAPTURE_DEPS,
                        APIGEN_DEVICE);
    return cuda_fe_end(&c, r);
}

CUresult cuStreamUpdateCaptureDependencies(CUstream hStream,
                                           CUgraphNode *dependencies,
                                           size_t numDependencies,
                                           unsigned int flags)
{
    return update_deps(hStream, dependencies, NULL, numDependencies, flags,
                       0);
}

CUresult cuStreamUpdateCaptureDependencies_ptsz(CUstream hStream,
                                                CUgraphNode *dependencies,
                                                size_t numDependencies,
                                                unsigned int flags)
{
    return update_deps(hStream, dependencies, NULL, numDependencies, flags,
                       1);
}

CUresult cuStreamUpdateCaptureDependencies_v2(
    CUstream hStream, CUgraphNode *dependencies,
    const CUgraphEdgeData *dependencyData, size_t numDependencies,
    unsigned int flags)
{
    return update_deps(hStream, dependencies, dependencyData,
                       numDependencies, flags, 0);
}

CUresult cuStreamUpdateCaptureDependencies_v2_ptsz(
    CUstream hStream, CUgraphNode *dependencies,
    const CUgraphEdgeData *dependencyData, size_t numDependencies,
    unsigned int flags)
{
    return update_deps(hStream, dependencies, dependencyData,
                       numDependencies, flags, 1);
}

/* The mode is the client thread's (the layer's, one for both APIs),
 * posted to its lane when it changes. */
CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    if (mode == NULL || *mode < CU_STREAM_CAPTURE_MODE_GLOBAL ||
        *mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode old = (CUstreamCaptureMode)gvs_remote_capture_mode();
    if (*mode != old) {
        CUresult r = cuda_rpc_THREAD_CAPTURE_MODE(*mode);
        if (r != CUDA_SUCCESS)
            return r;
        gvs_remote_set_capture_mode(*mode);
    }
    *mode = old;
    return CUDA_SUCCESS;
}

/* The driver writes the description on the backend; the text comes back
 * and is written here, to the program's path. */
CUresult cuGraphDebugDotPrint(CUgraph hGraph, const char *path,
                              unsigned int flags)
{
    struct apigen_call c;
    const uint8_t *text = NULL;
    size_t len = 0;
    if (path == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, cuda_fe_id(hGraph));
    apigen_put_u32(&c, flags);
    r = cuda_fe_run(&c, CUDA_OP_GRAPH_DOT_PRINT, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_blob(&c, &text, &len);
    if (r == CUDA_SUCCESS && c.rc == 0 &&
        gvs_remote_write_file(path, text, len) < 0)
        r = CUDA_ERROR_OPERATING_SYSTEM;
    return cuda_fe_end(&c, r);
}
