/*
 * Between the driver backend's graph files (cuda.api, "CUDA graphs"):
 * graphs.c (lifetime, topology, instantiation, capture) and
 * graph_nodes.c (node parameters).  Graphs, nodes and executable graphs
 * are the layer's (remote_be.h, "Graphs").
 */
#ifndef CUDA_BE_GRAPH_H
#define CUDA_BE_GRAPH_H

#include "be.h"

struct apigen_call;

/* What a node's decoded parameters point into, for as long as the call
 * that hands them to the driver. */
/* Most access descriptors of a memory alloc node (CUDA takes one a
 * GPU), and most bodies of a conditional node. */
#define CUDA_BE_MAX_ACCESS 64u
#define CUDA_BE_COND_SIZE_MAX 1024u

struct cuda_be_node_buf {
    _Alignas(16) uint8_t block[CUDA_BE_PARAM_MAX + 1];
    size_t size;
    void **args;
    void *extra[5];
    CUmemAccessDesc access[CUDA_BE_MAX_ACCESS];
    CUgraph *bodies; /* a conditional node's, as CUDA fills them */
    /* A host node's record of the client's callback, freed with the
     * buffer unless CUDA took it (the caller then gives it to the graph,
     * cuda_be_host_give). */
    struct gvs_remote_callback *host;
    CUstreamBatchMemOpParams *memops; /* a batch memory operation node's */
};

/* Caller holds the layer's graphs lock.  Decodes a node's parameters
 * (cuda.api) into p, pointing into nb: the first failure CUDA would
 * report, or CUDA_SUCCESS; malformed: c->rc.  nb is released with
 * cuda_be_node_buf_free whatever the answer. */
CUresult cuda_be_get_node_params(struct apigen_call *c,
                                 struct cuda_be_node_buf *nb,
                                 CUgraphNodeParams *p);
void cuda_be_node_buf_free(struct cuda_be_node_buf *nb);

/* graph_nodes.c: GRAPH_ADD_NODE's reply (cuda.api) for result r and
 * node id nid, with what it adds for a node of p's type; the caller
 * holds the graphs lock. */
void cuda_be_node_reply(struct apigen_call *c, CUresult r, uint64_t nid,
                        const CUgraphNodeParams *p);
/* Before CUDA is asked to make a node of p: a memory alloc node's bytes
 * taken from the quota (CUDA_ERROR_OUT_OF_MEMORY when past it). */
CUresult cuda_be_graph_mem_take(const CUgraphNodeParams *p);
/* After: what cuda_be_graph_mem_take took settled as graph g's (cg),
 * whether CUDA made the node (r). */
void cuda_be_graph_mem_settle(const CUgraphNodeParams *p, CUresult r,
                              void *cg);

#endif
