/*
 * Stream attributes (STREAM_GET_ATTR, STREAM_SET_ATTR, STREAM_COPY_ATTRS):
 * values travel field by field as launch attributes do (launch_attr.c,
 * common/launch_attr_wire.c).
 */
#include "kernels.h"

#include "cudart_fe_gen.h"
#include "cudart_ops.h"
#include "streams.h"

#pragma GCC visibility push(default)
cudaError_t cudaStreamGetAttribute_ptsz(cudaStream_t hStream,
                                        cudaStreamAttrID attr,
                                        cudaStreamAttrValue *value_out);
cudaError_t cudaStreamSetAttribute_ptsz(cudaStream_t hStream,
                                        cudaStreamAttrID attr,
                                        const cudaStreamAttrValue *value);
cudaError_t cudaStreamCopyAttributes_ptsz(cudaStream_t dst, cudaStream_t src);
#pragma GCC visibility pop

static cudaError_t get_attr(cudaStream_t s, cudaStreamAttrID attr,
                            cudaStreamAttrValue *out, int per_thread)
{
    struct apigen_call c;
    cudaLaunchAttributeValue v;
    if (out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_stream_wire(s, per_thread));
    apigen_put_u32(&c, (uint32_t)attr);
    e = cudart_fe_run(&c, CUDART_OP_STREAM_GET_ATTR, APIGEN_DEVICE);
    if (e == cudaSuccess)
        fe_get_launch_attr(&c, attr, &v);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *out = v;
    return e;
}

static cudaError_t set_attr(cudaStream_t s, cudaStreamAttrID attr,
                            const cudaStreamAttrValue *v, int per_thread)
{
    struct apigen_call c;
    if (v == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, fe_stream_wire(s, per_thread));
    fe_put_launch_attr(&c, attr, v);
    e = cudart_fe_run(&c, CUDART_OP_STREAM_SET_ATTR, APIGEN_DEVICE);
    return cudart_fe_end(&c, e);
}

cudaError_t cudaStreamGetAttribute(cudaStream_t hStream, cudaStreamAttrID attr,
                                   cudaStreamAttrValue *value_out)
{
    return cudart_fe_ret(get_attr(hStream, attr, value_out, 0));
}

cudaError_t cudaStreamGetAttribute_ptsz(cudaStream_t hStream,
                                        cudaStreamAttrID attr,
                                        cudaStreamAttrValue *value_out)
{
    return cudart_fe_ret(get_attr(hStream, attr, value_out, 1));
}

cudaError_t cudaStreamSetAttribute(cudaStream_t hStream, cudaStreamAttrID attr,
                                   const cudaStreamAttrValue *value)
{
    return cudart_fe_ret(set_attr(hStream, attr, value, 0));
}

cudaError_t cudaStreamSetAttribute_ptsz(cudaStream_t hStream,
                                        cudaStreamAttrID attr,
                                        const cudaStreamAttrValue *value)
{
    return cudart_fe_ret(set_attr(hStream, attr, value, 1));
}

cudaError_t cudaStreamCopyAttributes(cudaStream_t dst, cudaStream_t src)
{
    return cudart_fe_ret(cudart_rpc_STREAM_COPY_ATTRS(
        fe_stream_wire(dst, 0), fe_stream_wire(src, 0)));
}

cudaError_t cudaStreamCopyAttributes_ptsz(cudaStream_t dst, cudaStream_t src)
{
    return cudart_fe_ret(cudart_rpc_STREAM_COPY_ATTRS(
        fe_stream_wire(dst, 1), fe_stream_wire(src, 1)));
}
