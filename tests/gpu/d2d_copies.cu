// Device-to-device copies at every alignment and size, posted back to
// back (gvs gathers such runs into launches of its copy kernel, or into
// the driver's batch call): on a stream of the program's own, on the
// legacy stream (cudaMemcpy's too), after a device reset, between pool,
// managed and cudaMalloc memory; copies that depend on one another; and
// copies captured into a graph, whose nodes must be copy nodes.
#include "check.h"

#include <cstring>
#include <vector>

static const size_t BIG = (size_t)48 << 20;
static unsigned char *host_a, *want, *back;

// One copy: len bytes from offset src of a (from_b: of b itself) to
// offset dst of b.
struct copy {
    size_t dst, src, len;
    bool from_b;
};

// The copies, one after the other, as the host makes them.
static void expect(const std::vector<copy> &cs)
{
    memset(want, 0, BIG);
    for (const copy &c : cs)
        memmove(want + c.dst, (c.from_b ? want : host_a) + c.src, c.len);
}

enum how { ON_STREAM, LEGACY_ASYNC, LEGACY_SYNC };

static void run(const char *name, unsigned char *a, unsigned char *b,
                const std::vector<copy> &cs, cudaStream_t s, how h)
{
    CHECK(cudaMemcpy(a, host_a, BIG, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(b, 0, BIG));
    CHECK(cudaDeviceSynchronize());
    for (const copy &c : cs) {
        unsigned char *dst = b + c.dst, *src = (c.from_b ? b : a) + c.src;
        if (h == LEGACY_SYNC)
            CHECK(cudaMemcpy(dst, src, c.len, cudaMemcpyDeviceToDevice));
        else
            CHECK(cudaMemcpyAsync(dst, src, c.len, cudaMemcpyDeviceToDevice,
                                  h == ON_STREAM ? s : 0));
    }
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(back, b, BIG, cudaMemcpyDeviceToHost));
    expect(cs);
    size_t bad = 0;
    for (size_t i = 0; i < BIG; i++)
        bad += back[i] != want[i];
    printf("%s: %s\n", name, bad == 0 ? "ok" : "WRONG");
}

static std::vector<copy> aligned()
{
    std::vector<copy> cs;
    for (size_t i = 0; i < 16; i++)
        cs.push_back({i << 16, (15 - i) << 16, 4096, false});
    return cs;
}

// Sizes around the word and block boundaries, past the copies a batch
// takes (1 MiB), and around the longest the kernel makes (16 MiB), the
// last ones each reading what the one before wrote.
static std::vector<copy> sizes()
{
    const size_t lens[] = {1,     3,     15,         16,
                           17,    255,   4095,       4096,
                           4097,  65535, 65536,      65537,
                           (1 << 20) - 1, 1 << 20, (1 << 20) + 1};
    std::vector<copy> cs;
    size_t at = 0;
    for (size_t len : lens) {
        cs.push_back({at + 5, at + 3, len, false});
        at += (len + 4095) & ~(size_t)4095;
    }
    cs.push_back({5 << 20, 1 << 20, (size_t)3 << 20, false});
    const size_t m = 1 << 20;
    cs.push_back({8 * m + 5, 24 * m + 3, 16 * m - 1, false});
    cs.push_back({24 * m + 16, 8 * m, 16 * m, true});
    cs.push_back({32 * m - 7, 24 * m + 20, 16 * m + 1, true});
    return cs;
}

// Destination and source at every kind of distance: 16-byte words,
// 4-byte ones, bytes.
static std::vector<copy> skews()
{
    const size_t offs[][2] = {{0, 0}, {1, 0}, {0, 1}, {4, 0}, {8, 4},
                              {3, 7}, {15, 1}, {12, 0}, {2, 14}};
    std::vector<copy> cs;
    size_t at = 0;
    for (auto &o : offs) {
        cs.push_back({at + o[0], at + 64 + o[1], 70001, false});
        at += 128 << 10;
    }
    return cs;
}

// Each copy reads what one before it wrote, or writes what one before it
// read; the very same copy twice.
static std::vector<copy> chain()
{
    return {{0, 0, 65536, false},
            {1 << 20, 0, 65536, true},
            {2 << 20, 1 << 20, 65536, true},
            {3 << 20, 0, 4096, false},
            {3 << 20, 0, 4096, false},
            {0, 5, 65536, false},
            {(2 << 20) + 100, (3 << 20) + 8, 1000, true},
            {4 << 20, 2 << 20, 70000, true}};
}

static void run_all(const char *what, unsigned char *a, unsigned char *b,
                    cudaStream_t s)
{
    const struct {
        const char *name;
        std::vector<copy> (*make)();
    } sets[] = {{"aligned", aligned}, {"sizes", sizes}, {"skews", skews},
                {"chain", chain}};
    const struct {
        const char *name;
        how h;
    } hows[] = {{"stream", ON_STREAM},
                {"legacy async", LEGACY_ASYNC},
                {"legacy sync", LEGACY_SYNC}};
    for (auto &st : sets)
        for (auto &hw : hows) {
            char name[96];
            snprintf(name, sizeof(name), "%s, %s, %s", what, st.name, hw.name);
            run(name, a, b, st.make(), s, hw.h);
        }
}

// Copies captured into a graph are copy nodes, and the graph makes them.
static void captured(unsigned char *a, unsigned char *b, cudaStream_t s)
{
    CHECK(cudaMemcpy(a, host_a, BIG, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(b, 0, BIG));
    CHECK(cudaDeviceSynchronize());
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    std::vector<copy> cs = aligned();
    cs.resize(3);
    for (const copy &c : cs)
        CHECK(cudaMemcpyAsync(b + c.dst, a + c.src, c.len,
                              cudaMemcpyDeviceToDevice, s));
    CHECK(cudaStreamEndCapture(s, &g));
    size_t n = 0;
    CHECK(cudaGraphGetNodes(g, NULL, &n));
    std::vector<cudaGraphNode_t> nodes(n);
    CHECK(cudaGraphGetNodes(g, nodes.data(), &n));
    int copies = 0;
    for (size_t i = 0; i < n; i++) {
        cudaGraphNodeType t;
        CHECK(cudaGraphNodeGetType(nodes[i], &t));
        copies += t == cudaGraphNodeTypeMemcpy;
    }
    printf("captured: %zu nodes, %d copies\n", n, copies);
    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiate(&x, g, 0));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(back, b, BIG, cudaMemcpyDeviceToHost));
    expect(cs);
    printf("captured copies: %s\n", memcmp(back, want, BIG) == 0 ? "ok" : "WRONG");
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));
}

int main()
{
    host_a = (unsigned char *)malloc(BIG);
    want = (unsigned char *)malloc(BIG);
    back = (unsigned char *)malloc(BIG);
    if (host_a == NULL || want == NULL || back == NULL)
        return 1;
    for (size_t i = 0; i < BIG; i++)
        host_a[i] = (unsigned char)(i * 131 + (i >> 13) + 7);
    unsigned char *a, *b;
    cudaStream_t s;
    CHECK(cudaMalloc(&a, BIG));
    CHECK(cudaMalloc(&b, BIG));
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    run_all("cudaMalloc", a, b, s);
    captured(a, b, s);

    unsigned char *pa, *pb;
    CHECK(cudaMallocAsync(&pa, BIG, s));
    CHECK(cudaMallocAsync(&pb, BIG, s));
    CHECK(cudaStreamSynchronize(s));
    run("pool to pool", pa, pb, aligned(), s, ON_STREAM);
    run("cudaMalloc to pool", a, pb, sizes(), s, ON_STREAM);
    run("pool to cudaMalloc", pa, b, skews(), s, ON_STREAM);
    CHECK(cudaFreeAsync(pa, s));
    CHECK(cudaFreeAsync(pb, s));
    CHECK(cudaStreamSynchronize(s));

    unsigned char *ma, *mb;
    CHECK(cudaMallocManaged(&ma, BIG));
    CHECK(cudaMallocManaged(&mb, BIG));
    run("managed to managed", ma, mb, aligned(), s, ON_STREAM);
    run("managed to cudaMalloc", ma, b, chain(), s, LEGACY_ASYNC);
    CHECK(cudaFree(ma));
    CHECK(cudaFree(mb));

    CHECK(cudaStreamDestroy(s));
    CHECK(cudaDeviceReset());
    CHECK(cudaMalloc(&a, BIG));
    CHECK(cudaMalloc(&b, BIG));
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    run("after a reset", a, b, aligned(), s, ON_STREAM);
    run("after a reset, legacy", a, b, chain(), s, LEGACY_SYNC);
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    printf("done\n");
    return 0;
}
