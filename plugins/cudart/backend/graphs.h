/*
 * Graphs on the backend side: graphs, executable graphs and nodes as ids
 * of the session's table (backend/objects.h), shared by graphs.c
 * (lifetime, queries, launches), graph_nodes.c (adding nodes, setting
 * their parameters) and capture.c (stream capture).
 *
 * Every graph the session names is the layer's struct gvs_remote_graph
 * (remote_be.h), so that the driver plugin knows it by the same id.
 */
#ifndef CUDART_BE_GRAPHS_H
#define CUDART_BE_GRAPHS_H

#include "be.h"

#include "apigen_rt.h"
#include "gvs/u64map.h"

/* The graphs, nodes and executable graphs are the layer's (remote_be.h,
 * "Graphs"), through be_remote; callers hold its graphs_lock for the
 * graph and node functions below. */

/* Decodes u32 n, n x u64 node ids into an array the caller frees with
 * gvs_free (NULL when n is 0).  Malformed: c->rc; ids that are not nodes
 * of g: *e = cudaErrorInvalidValue (decoding goes on). */
cudaGraphNode_t *be_get_nodes(struct apigen_call *c,
                              struct gvs_remote_graph *g, uint32_t *n,
                              cudaError_t *e);

/* Decodes dependencies with edge data (u32 n, n x (u64 node, u8 from
 * port, u8 to port, u8 type)) into arrays the caller frees with gvs_free
 * (NULL when n is 0), as be_get_nodes. */
cudaGraphNode_t *be_get_deps_edges(struct apigen_call *c,
                                   struct gvs_remote_graph *g, uint32_t *n,
                                   cudaGraphEdgeData **edges, cudaError_t *e);

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
                struct gvs_remote_graph *g, const cudaGraphNode_t *deps,
                uint32_t ndeps, cudaGraphNode_t *out, cudaError_t *e);
int be_set_node_params(struct gvs_call *call, struct apigen_call *c,
                       cudaGraphExec_t exec, struct gvs_remote_node *node,
                       cudaError_t *e);

/* callbacks.c: host node parameters that run the client's host callback
 * id every time the node runs (CALLBACK_RUN with keep set).  Once CUDA
 * took them for a node of g, be_callback_give hands the record to g (NULL:
 * an executable graph's node, whose record stays until the worker exits);
 * be_callback_drop frees one CUDA did not take.  Both clear userData. */
cudaError_t be_callback_node(struct gvs_call *call, uint64_t id,
                             struct cudaHostNodeParams *out);
void be_callback_give(struct cudaHostNodeParams *p, cudaGraph_t g);
void be_callback_drop(struct cudaHostNodeParams *p);
/* The client's callback id of host node parameters made by
 * be_callback_node, or 0 for any other. */
uint64_t be_callback_node_id(const struct cudaHostNodeParams *p);

#endif
