// CUDA_VISIBLE_DEVICES of the program honoured as CUDA honours it: this
// program runs itself again under several values (ordinals, duplicates,
// junk, its first device's UUID and a prefix of it) and prints what each
// run sees.  Through gvs every run is a session of its own whose worker
// narrows its devices to the value.
#include "check.h"
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

static int child()
{
    int n = -1;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        printf("%s\n", cudaGetErrorName(e));
        return 0;
    }
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    char uuid[64];
    int k = snprintf(uuid, sizeof(uuid), "GPU-");
    for (int i = 0; i < 16; i++)
        k += snprintf(uuid + k, sizeof(uuid) - k, "%02x%s",
                      (unsigned char)p.uuid.bytes[i],
                      i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
    const char *first = getenv("FIRST_UUID");
    printf("%d device(s), the first %s\n", n,
           first != NULL && strcmp(first, uuid) == 0 ? "is device 0"
                                                     : "is another");
    return 0;
}

static void run(const char *label, const char *value, const char *first)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("CUDA_VISIBLE_DEVICES", value, 1);
        setenv("FIRST_UUID", first, 1);
        execl("/proc/self/exe", "visible_devices", "child", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    printf("%s: ", label);
    fflush(stdout);
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        printf("child failed\n");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    int n = 0;
    CHECK(cudaGetDeviceCount(&n));
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    char uuid[64];
    int k = snprintf(uuid, sizeof(uuid), "GPU-");
    for (int i = 0; i < 16; i++)
        k += snprintf(uuid + k, sizeof(uuid) - k, "%02x%s",
                      (unsigned char)p.uuid.bytes[i],
                      i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
    std::string prefix(uuid, 12);
    std::string past = std::to_string(n);
    std::string last_first = std::to_string(n - 1) + ",0";
    run("0", "0", uuid);
    run("last then 0", last_first.c_str(), uuid);
    run("one past the last", past.c_str(), uuid);
    run("empty", "", uuid);
    run("0,0", "0,0", uuid);
    run("junk", "junk", uuid);
    run("0,junk", "0,junk", uuid);
    run("uuid", uuid, uuid);
    run("uuid prefix", prefix.c_str(), uuid);
    return 0;
}
