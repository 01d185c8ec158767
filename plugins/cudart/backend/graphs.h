/*
 * Graphs on the backend side: graphs, executable graphs and nodes as ids
 * of the session's table (backend/objects.h), shared by graphs.c
 * (lifetime, queries, launches), graph_nodes.c (adding nodes, setting
 * their parameters) and capture.c (stream capture).
 *
 * Every graph the session names is a struct be_graph, keyed also by
 * CUDA's handle so that a graph CUDA hands out twice (a capture's graph
 * seen in flight, then ended) keeps one id.  A graph's nodes get ids on
 * first mention and keep them until the node or its graph is destroyed.
 * All of it is guarded by one lock: graph calls are short and never wait
 * for the GPU.
 */
#ifndef CUDART_BE_GRAPHS_H
#define CUDART_BE_GRAPHS_H

#include "be.h"

#include "apigen_rt.h"
#include "gvs/u64map.h"

struct be_graph {
    cudaGraph_t g;
    uint64_t id;
    /* Destroyed with cudaGraphDestroy by the session; 0 for a capture's
     * graph still in flight, or a child graph owned by its node. */
    int owned;
    struct gvs_u64map nodes; /* cudaGraphNode_t -> struct be_node */
};

struct be_node {
    cudaGraphNode_t n;
    uint64_t id;
    struct be_graph *graph;
};

void be_graphs_lock(void);
void be_graphs_unlock(void);

/* Callers hold the lock for everything below. ---------------------------- */

/* The graph of an id, or NULL. */
struct be_graph *be_graph_get(uint64_t id);
/* The graph of a CUDA handle if it has an id, else NULL. */
struct be_graph *be_graph_known(cudaGraph_t g);
/* The graph of a CUDA handle, registered (with owned as given) on first
 * mention; NULL only when out of memory. */
struct be_graph *be_graph_of(cudaGraph_t g, int owned);
/* Forgets a graph and its nodes' ids (the CUDA graph is the caller's). */
void be_graph_forget(struct be_graph *g);

/* The node of an id, or NULL. */
struct be_node *be_node_get(uint64_t id);
/* The id of a node of g, registered on first mention; 0 when out of
 * memory (or n is NULL). */
uint64_t be_node_id(struct be_graph *g, cudaGraphNode_t n);
/* Forgets one node's id. */
void be_node_forget(struct be_node *n);

/* Decodes u32 n, n x u64 node ids into an array the caller frees with
 * gvs_free (NULL when n is 0).  Malformed: c->rc; ids that are not nodes
 * of g: *e = cudaErrorInvalidValue (decoding goes on). */
cudaGraphNode_t *be_get_nodes(struct apigen_call *c, struct be_graph *g,
                              uint32_t *n, cudaError_t *e);

/* Decodes dependencies with edge data (u32 n, n x (u64 node, u8 from
 * port, u8 to port, u8 type)) into arrays the caller frees with gvs_free
 * (NULL when n is 0), as be_get_nodes. */
cudaGraphNode_t *be_get_deps_edges(struct apigen_call *c, struct be_graph *g,
                                   uint32_t *n, cudaGraphEdgeData **edges,
                                   cudaError_t *e);

/* The executable graph of a BE_H_GRAPH_EXEC id, or NULL. */
cudaGraphExec_t be_exec_get(uint64_t id);

/* graph_mem.c: alloc parameters (40-graphs.api) off the wire into p, its
 * access descriptors into acc (room for BE_MAX_ACCESS); malformed:
 * negative GVS_E_*.  be_put_mem_alloc appends them. */
#define BE_MAX_ACCESS 1024u
int be_get_mem_alloc(struct apigen_call *c, struct cudaMemAllocNodeParams *p,
                     struct cudaMemAccessDesc *acc);
void be_put_mem_alloc(struct apigen_call *c,
                      const struct cudaMemAllocNodeParams *p);

/* graph_nodes.c: decodes a node's parameters (40-graphs.api) and adds
 * the node to g after deps, or sets them on a node (in exec, or in its
 * graph when exec is NULL).  The type must match the node's. */
int be_add_node(struct gvs_call *call, struct apigen_call *c,
                struct be_graph *g, const cudaGraphNode_t *deps,
                uint32_t ndeps, cudaGraphNode_t *out, cudaError_t *e);
int be_set_node_params(struct gvs_call *call, struct apigen_call *c,
                       cudaGraphExec_t exec, struct be_node *node,
                       cudaError_t *e);

/* callbacks.c: host node parameters that run the client's host callback
 * id every time the node runs (CALLBACK_RUN with keep set); the record
 * stays until the session ends. */
cudaError_t be_callback_node(struct gvs_call *call, uint64_t id,
                             struct cudaHostNodeParams *out);
/* The client's callback id of host node parameters made by
 * be_callback_node, or 0 for any other. */
uint64_t be_callback_node_id(const struct cudaHostNodeParams *p);

#endif
