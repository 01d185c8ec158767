// What the programs of tests/gpu/security share: the lines their driver
// (NAME.py) and they say to each other, and a main that runs the role
// named by the one argument.
#ifndef GVS_GPU_SECURITY_ROLES_H
#define GVS_GPU_SECURITY_ROLES_H

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

// Prints line to the driver at once.
static inline void tell_driver(const char *line)
{
    printf("%s\n", line);
    fflush(stdout);
}

// Waits for the line want from the driver: 0, or 1 after printing FAIL.
static inline int expect_line(const char *want)
{
    std::string line;
    if (!std::getline(std::cin, line) || line != want) {
        printf("FAIL: expected '%s' from the driver, got '%s'\n", want,
               line.c_str());
        return 1;
    }
    return 0;
}

struct role {
    const char *name;
    int (*run)();
};

// Runs the role argv[1] names; 2 with the usage on stderr if none does.
template <size_t N>
static int run_role(int argc, char **argv, const role (&roles)[N])
{
    for (size_t i = 0; i < N; i++)
        if (argc == 2 && strcmp(argv[1], roles[i].name) == 0)
            return roles[i].run();
    fprintf(stderr, "usage: %s ", argv[0]);
    for (size_t i = 0; i < N; i++)
        fprintf(stderr, "%s%s", i > 0 ? "|" : "", roles[i].name);
    fprintf(stderr, "\n");
    return 2;
}

#endif
