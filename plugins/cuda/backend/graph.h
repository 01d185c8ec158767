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
struct cuda_be_node_buf {
    _Alignas(16) uint8_t block[CUDA_BE_PARAM_MAX + 1];
    size_t size;
    void **args;
    void *extra[5];
};

/* Caller holds the layer's graphs lock.  Decodes a node's parameters
 * (cuda.api) into p, pointing into nb: the first failure CUDA would
 * report, or CUDA_SUCCESS; malformed: c->rc.  nb is released with
 * cuda_be_node_buf_free whatever the answer. */
CUresult cuda_be_get_node_params(struct apigen_call *c,
                                 struct cuda_be_node_buf *nb,
                                 CUgraphNodeParams *p);
void cuda_be_node_buf_free(struct cuda_be_node_buf *nb);

#endif
