/* What the plugin keeps per lane (be.h), in the layer's lane slot. */
#include "be.h"

#include "cuda_ops.h"
#include "gvs/mem.h"

struct cuda_be_lane *cuda_be_lane(struct gvs_call *call)
{
    struct gvs_remote_lane *l = cuda_be_remote->lane(call);
    if (l == NULL)
        return NULL;
    if (l->slot[CUDA_PLUGIN_ID] == NULL)
        l->slot[CUDA_PLUGIN_ID] = gvs_calloc(1, sizeof(struct cuda_be_lane));
    return l->slot[CUDA_PLUGIN_ID];
}

static void lane_free(struct gvs_remote_lane *rl, void *arg)
{
    struct cuda_be_lane *l = rl->slot[CUDA_PLUGIN_ID];
    (void)arg;
    if (l == NULL)
        return;
    gvs_free(l);
    rl->slot[CUDA_PLUGIN_ID] = NULL;
}

void cuda_be_lanes_free(void)
{
    cuda_be_remote->lanes_each(lane_free, NULL);
}
