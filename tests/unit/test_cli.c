/* The gvs command. */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "test_server_harness.h"

struct run_result {
    int status; /* exit code, 128+signal if killed */
    char out[4096];
    char err[4096];
};

static void slurp(int fd, char *buf, size_t len)
{
    size_t got = 0;
    ssize_t r;
    while (got < len - 1 && (r = read(fd, buf + got, len - 1 - got)) > 0)
        got += (size_t)r;
    buf[got] = '\0';
}

/* Runs bin/NAME with args, capturing stdout and stderr (stderr into a
 * file so that neither pipe can fill while the other is drained). */
static int run_bin(const char *name, const char *const *args,
                   struct run_result *r)
{
    char bin[512], errpath[64] = "/tmp/gvs-cli-err-XXXXXX";
    const char *argv[32];
    int n = 0, p[2];
    snprintf(bin, sizeof(bin), "%s/bin/%s", test_build_dir(), name);
    argv[n++] = bin;
    while (*args != NULL && n < 31)
        argv[n++] = *args++;
    argv[n] = NULL;
    int efd = mkstemp(errpath);
    if (efd < 0 || pipe(p) < 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], STDOUT_FILENO);
        dup2(efd, STDERR_FILENO);
        close(p[0]);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(p[1]);
    slurp(p[0], r->out, sizeof(r->out));
    close(p[0]);
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    r->status = WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                    : WEXITSTATUS(status);
    lseek(efd, 0, SEEK_SET);
    slurp(efd, r->err, sizeof(r->err));
    close(efd);
    unlink(errpath);
    return 0;
}

static int run_gvs(const char *const *args, struct run_result *r)
{
    return run_bin("gvs", args, r);
}

/* 1 if some process's command line mentions s. */
static int process_mentions(const char *s)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int found = 0;
    while (d != NULL && !found && (e = readdir(d)) != NULL) {
        char path[300], cmd[4096];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, cmd, sizeof(cmd) - 1);
        close(fd);
        for (ssize_t i = 0; i < n; i++)
            if (cmd[i] == '\0')
                cmd[i] = ' ';
        cmd[n > 0 ? n : 0] = '\0';
        found = strstr(cmd, s) != NULL;
    }
    if (d != NULL)
        closedir(d);
    return found;
}

TEST_IMPL(cli_run_private)
{
    struct run_result r;
    struct stat st;
    char frontend[600];
    const char *const args[] = {
        "run", "--", "/bin/sh", "-c",
        "echo $GVS_SERVER; echo $LD_LIBRARY_PATH; echo $TRITON_LIBCUDA_PATH; "
        "exit 3",
        NULL};
    unsetenv("GVS_FRONTEND_DIR");
    setenv("LD_LIBRARY_PATH", "/old/lib", 1);
    ASSERT_EQ(run_gvs(args, &r), 0);
    ASSERT_EQ(r.status, 3);
    ASSERT(strncmp(r.out, "unix:///", 8) == 0);
    char *nl = strchr(r.out, '\n');
    ASSERT(nl != NULL);
    *nl = '\0';
    ASSERT(strstr(r.out, "/gvsd.sock") != NULL);
    snprintf(frontend, sizeof(frontend),
             "%s/bin/../lib/gvs/frontend:/old/lib\n"
             "%s/bin/../lib/gvs/frontend\n",
             test_build_dir(), test_build_dir());
    ASSERT_STR_EQ(nl + 1, frontend);
    /* The private gvsd shares the terminal: nothing but warnings and
     * errors from it, and here there are none. */
    ASSERT_STR_EQ(r.err, "");
    /* The private directory and the daemon are gone. */
    char *dir = r.out + strlen("unix://");
    *strrchr(dir, '/') = '\0';
    ASSERT(stat(dir, &st) < 0);
    ASSERT(!process_mentions(dir));
    return 0;
}

TEST_IMPL(cli_run_server)
{
    struct run_result r;
    const char *const args[] = {"run", "--server", "tcp://127.0.0.1:1", "/bin/sh",
                                "-c", "echo $GVS_SERVER $LD_LIBRARY_PATH",
                                NULL};
    setenv("GVS_FRONTEND_DIR", "/my/frontend", 1);
    unsetenv("LD_LIBRARY_PATH");
    ASSERT_EQ(run_gvs(args, &r), 0);
    ASSERT_EQ(r.status, 0);
    ASSERT_STR_EQ(r.out, "tcp://127.0.0.1:1 /my/frontend\n");
    return 0;
}

TEST_IMPL(cli_run_status)
{
    struct run_result r;
    const char *const killed[] = {"run", "--", "/bin/sh", "-c", "kill -9 $$",
                                  NULL};
    ASSERT_EQ(run_gvs(killed, &r), 0);
    ASSERT_EQ(r.status, 128 + 9);
    const char *const missing[] = {"run", "--", "/nonexistent/prog", NULL};
    ASSERT_EQ(run_gvs(missing, &r), 0);
    ASSERT_EQ(r.status, 127);
    ASSERT(strstr(r.err, "cannot run /nonexistent/prog") != NULL);
    /* Found, but not executable: 126, as env says it. */
    char plain[] = "/tmp/gvs-cli-plain-XXXXXX";
    int fd = mkstemp(plain);
    ASSERT(fd >= 0);
    close(fd);
    const char *const denied[] = {"run", "--", plain, NULL};
    ASSERT_EQ(run_gvs(denied, &r), 0);
    unlink(plain);
    ASSERT_EQ(r.status, 126);
    ASSERT(strstr(r.err, "Permission denied") != NULL);
    return 0;
}

TEST_IMPL(cli_run_gvsd_fails)
{
    struct run_result r;
    const char *const args[] = {"run", "--gvsd", "/bin/false", "--", "/bin/true",
                                NULL};
    ASSERT_EQ(run_gvs(args, &r), 0);
    ASSERT_EQ(r.status, 125);
    ASSERT(strstr(r.err, "gvs: /bin/false exited with status 1 before it was "
                         "ready") != NULL);
    return 0;
}

TEST_IMPL(cli_usage)
{
    struct run_result r;
    const char *const help[] = {"help", NULL};
    ASSERT_EQ(run_gvs(help, &r), 0);
    ASSERT_EQ(r.status, 0);
    ASSERT(strstr(r.out, "usage: gvs") != NULL);
    const char *const version[] = {"version", NULL};
    ASSERT_EQ(run_gvs(version, &r), 0);
    ASSERT_EQ(r.status, 0);
    ASSERT(strncmp(r.out, "gvs ", 4) == 0);
    const char *const bogus[] = {"bogus", NULL};
    ASSERT_EQ(run_gvs(bogus, &r), 0);
    ASSERT_EQ(r.status, 2);
    const char *const noprog[] = {"run", "--", NULL};
    ASSERT_EQ(run_gvs(noprog, &r), 0);
    ASSERT_EQ(r.status, 125);
    ASSERT(strstr(r.err, "no program given") != NULL);
    return 0;
}

/* -h and --help of gvs, of each subcommand and of gvsd: the usage on
 * stdout, nothing on stderr, status 0. */
TEST_IMPL(cli_help)
{
    static const struct {
        const char *bin, *args[3];
    } cases[] = {
        {"gvs", {"-h"}},           {"gvs", {"--help"}},
        {"gvs", {"help"}},         {"gvs", {"run", "-h"}},
        {"gvs", {"run", "--help"}}, {"gvs", {"status", "-h"}},
        {"gvs", {"status", "--help"}}, {"gvsd", {"-h"}},
        {"gvsd", {"--help"}},
    };
    struct run_result r;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ASSERT_EQ(run_bin(cases[i].bin, cases[i].args, &r), 0);
        if (r.status != 0 || strncmp(r.out, "usage: ", 7) != 0 ||
            r.err[0] != '\0')
            TEST_FAIL_AT("%s %s %s: status %d, stdout \"%.40s\", stderr "
                         "\"%s\"",
                         cases[i].bin, cases[i].args[0],
                         cases[i].args[1] ? cases[i].args[1] : "", r.status,
                         r.out, r.err);
    }
    /* gvs run's statuses are told where its options are. */
    const char *const run_help[] = {"run", "--help", NULL};
    ASSERT_EQ(run_gvs(run_help, &r), 0);
    ASSERT(strstr(r.out, "125") != NULL && strstr(r.out, "126") != NULL &&
           strstr(r.out, "127") != NULL);
    return 0;
}

/* An option that cannot be read is named, with what is wrong, and the
 * user is sent to --help: status 2, or 125 for `gvs run`, whose statuses
 * below 125 are the program's. */
TEST_IMPL(cli_option_errors)
{
    static const struct {
        const char *bin, *args[4];
        int status;
        const char *said, *hint;
    } cases[] = {
        {"gvs", {"run", "--bogus", "/bin/true"}, 125,
         "gvs run: unknown option --bogus\n", "(try gvs run --help)\n"},
        {"gvs", {"run", "--server"}, 125,
         "gvs run: option --server needs a value\n", "(try gvs run --help)\n"},
        {"gvs", {"run", "--help=yes"}, 125,
         "gvs run: option --help takes no value\n", "(try gvs run --help)\n"},
        {"gvs", {"run", "-x", "/bin/true"}, 125,
         "gvs run: unknown option -x\n", "(try gvs run --help)\n"},
        {"gvs", {"status", "--bogus=1"}, 2,
         "gvs status: unknown option --bogus\n",
         "(try gvs status --help)\n"},
        {"gvs", {"status", "--server"}, 2,
         "gvs status: option --server needs a value\n",
         "(try gvs status --help)\n"},
        {"gvs", {"status", "--bytes=1"}, 2,
         "gvs status: option --bytes takes no value\n",
         "(try gvs status --help)\n"},
        {"gvs", {"status", "extra"}, 2,
         "gvs status: unexpected argument extra\n",
         "(try gvs status --help)\n"},
        {"gvs", {"--bogus"}, 2, "gvs: unknown option --bogus\n",
         "(try gvs --help)\n"},
        {"gvs", {"bogus"}, 2, "gvs: unknown command bogus\n",
         "(try gvs --help)\n"},
        {"gvsd", {"--bogus"}, 2, "gvsd: unknown option --bogus\n",
         "(try gvsd --help)\n"},
        {"gvsd", {"--listen"}, 2, "gvsd: option --listen needs a value\n",
         "(try gvsd --help)\n"},
        {"gvsd", {"--insecure=1"}, 2,
         "gvsd: option --insecure takes no value\n", "(try gvsd --help)\n"},
        {"gvsd", {"-x"}, 2, "gvsd: unknown option -x\n",
         "(try gvsd --help)\n"},
    };
    struct run_result r;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ASSERT_EQ(run_bin(cases[i].bin, cases[i].args, &r), 0);
        if (r.status != cases[i].status || r.out[0] != '\0' ||
            strstr(r.err, cases[i].said) == NULL ||
            strstr(r.err, cases[i].hint) == NULL)
            TEST_FAIL_AT("%s %s: status %d (want %d), stdout \"%.40s\", "
                         "stderr \"%s\"",
                         cases[i].bin, cases[i].args[0], r.status,
                         cases[i].status, r.out, r.err);
    }
    return 0;
}

static int read_text(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    slurp(fd, buf, len);
    close(fd);
    return 0;
}

/* Every long option in text (a --help) is in the man page as roff
 * writes it, each '-' a "\-"; 0, or 1 after naming the first missing. */
static int page_has_options(const char *page, const char *text,
                            const char *what)
{
    for (const char *p = strstr(text, "--"); p != NULL;
         p = strstr(p + 2, "--")) {
        char roff[128];
        size_t n = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz-"), o = 0;
        if (n == 0 || (p > text && p[-1] != ' ' && p[-1] != '['))
            continue;
        for (size_t i = 0; i < n + 2 && o + 3 < sizeof(roff); i++) {
            if (p[i] == '-')
                roff[o++] = '\\';
            roff[o++] = p[i];
        }
        roff[o] = '\0';
        if (strstr(page, roff) == NULL) {
            fprintf(stderr, "%s: --%.*s missing from the man page\n", what,
                    (int)n, p + 2);
            return 1;
        }
    }
    return 0;
}

/* The man pages install with `cmake --install`, are well-formed roff
 * (groff warns of nothing, where it is installed), and describe every
 * option that --help shows. */
TEST_IMPL(cli_man_pages)
{
    static const struct {
        const char *file, *th, *bin, *cmds[3];
    } pages[] = {
        {"man1/gvs.1", ".TH \"GVS\" \"1\"", "gvs", {"", "run", "status"}},
        {"man8/gvsd.8", ".TH \"GVSD\" \"8\"", "gvsd", {""}},
        {"man5/gvs.conf.5", ".TH \"GVS.CONF\" \"5\"", NULL, {NULL}},
    };
    static char page[1 << 16];
    char prefix[] = "/tmp/gvs-man-XXXXXX", cmd[2048], path[600];
    const char *cmake = getenv("GVS_CMAKE");
    struct run_result r;
    ASSERT(cmake != NULL);
    ASSERT(mkdtemp(prefix) != NULL);
    snprintf(cmd, sizeof(cmd), "'%s' --install '%s' --prefix '%s' >/dev/null",
             cmake, test_build_dir(), prefix);
    int installed = system(cmd);
    int groff = system("command -v groff >/dev/null") == 0;
    if (!groff)
        fprintf(stderr, "no groff: the pages' roff is not checked\n");
    for (size_t i = 0; installed == 0 && i < sizeof(pages) / sizeof(pages[0]);
         i++) {
        snprintf(path, sizeof(path), "%s/share/man/%s", prefix, pages[i].file);
        ASSERT_EQ(read_text(path, page, sizeof(page)), 0);
        ASSERT(strncmp(page, pages[i].th, strlen(pages[i].th)) == 0);
        ASSERT(strstr(page, "\n.SH NAME\n") != NULL);
        if (groff) {
            char warnings[4096];
            snprintf(cmd, sizeof(cmd),
                     "groff -man -Tutf8 -ww -z '%s' 2>&1", path);
            FILE *f = popen(cmd, "r");
            ASSERT(f != NULL);
            size_t n = fread(warnings, 1, sizeof(warnings) - 1, f);
            warnings[n] = '\0';
            ASSERT_EQ(pclose(f), 0);
            ASSERT_STR_EQ(warnings, "");
        }
        for (int c = 0; pages[i].bin != NULL && c < 3 && pages[i].cmds[c];
             c++) {
            const char *const sub[] = {pages[i].cmds[c], "--help", NULL};
            const char *const top[] = {"--help", NULL};
            ASSERT_EQ(run_bin(pages[i].bin, pages[i].cmds[c][0] ? sub : top,
                              &r),
                      0);
            ASSERT_EQ(page_has_options(page, r.out, pages[i].file), 0);
        }
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", prefix);
    ASSERT_EQ(system(cmd), 0);
    ASSERT_EQ(installed, 0);
    /* gvs(1) tells gvs run's statuses. */
    snprintf(path, sizeof(path), "%s/share/man/man1/gvs.1", test_build_dir());
    ASSERT_EQ(read_text(path, page, sizeof(page)), 0);
    const char *exits = strstr(page, "\n.SH \"EXIT STATUS\"\n");
    ASSERT(exits != NULL);
    ASSERT(strstr(exits, "\n125\n") != NULL &&
           strstr(exits, "\n126\n") != NULL &&
           strstr(exits, "\n127\n") != NULL);
    return 0;
}

/* A statically linked program is refused before any gvsd starts, found
 * by its path or through PATH. */
TEST_IMPL(cli_run_static)
{
    struct run_result r;
    char dir[512], prog[600];
    snprintf(dir, sizeof(dir), "%s/tests/cli", test_build_dir());
    snprintf(prog, sizeof(prog), "%s/gvs-static-true", dir);
    const char *const by_path[] = {"run", "--", prog, NULL};
    ASSERT_EQ(run_gvs(by_path, &r), 0);
    ASSERT_EQ(r.status, 125);
    ASSERT(strstr(r.err, "gvs run: ") != NULL);
    ASSERT(strstr(r.err, "gvs-static-true is statically linked") != NULL);
    ASSERT(strstr(r.err, "gvsd[") == NULL);
    setenv("PATH", dir, 1);
    const char *const by_name[] = {"run", "gvs-static-true", NULL};
    ASSERT_EQ(run_gvs(by_name, &r), 0);
    ASSERT_EQ(r.status, 125);
    ASSERT(strstr(r.err, "statically linked") != NULL);
    return 0;
}

/* A copy of /bin/true at dir/name, owned by uid:gid, with mode (the
 * owner set first: chown clears the setuid bits).  0 or -1. */
static int copy_true(const char *dir, const char *name, uid_t uid, gid_t gid,
                     mode_t mode, char *out, size_t len)
{
    static char image[1 << 20];
    int in = open("/bin/true", O_RDONLY);
    ssize_t n = in >= 0 ? read(in, image, sizeof(image)) : -1;
    if (in >= 0)
        close(in);
    snprintf(out, len, "%s/%s", dir, name);
    int fd = open(out, O_WRONLY | O_CREAT | O_EXCL, 0700);
    int ok = n > 0 && (size_t)n < sizeof(image) && fd >= 0 &&
             write(fd, image, (size_t)n) == n && fchown(fd, uid, gid) == 0 &&
             fchmod(fd, mode) == 0;
    if (fd >= 0)
        close(fd);
    return ok ? 0 : -1;
}

static int run_status(const char *prog, struct run_result *r)
{
    const char *const args[] = {"run", "--", prog, NULL};
    return run_gvs(args, r) == 0 ? r->status : -1;
}

/* As root: files of another owner, refused; on a nosuid mount, run. */
static int other_owner(const char *dir)
{
    struct run_result r;
    char prog[700];
    const uid_t other = 65534; /* nobody */
    ASSERT_EQ(copy_true(dir, "setuid", other, getgid(), 04755, prog,
                        sizeof(prog)),
              0);
    ASSERT_EQ(run_status(prog, &r), 125);
    ASSERT(strstr(r.err, "/setuid is setuid: the dynamic loader ignores "
                         "LD_LIBRARY_PATH") != NULL);
    ASSERT_EQ(copy_true(dir, "setgid", getuid(), other, 02755, prog,
                        sizeof(prog)),
              0);
    ASSERT_EQ(run_status(prog, &r), 125);
    ASSERT(strstr(r.err, "/setgid is setgid") != NULL);
    /* Without the group's execute bit, S_ISGID is no setgid. */
    ASSERT_EQ(copy_true(dir, "locking", getuid(), other, 02745, prog,
                        sizeof(prog)),
              0);
    ASSERT_EQ(run_status(prog, &r), 0);
    /* In a mount namespace of this test's own, a nosuid tmpfs over dir. */
    if (unshare(CLONE_NEWNS) < 0 ||
        mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("tmpfs", dir, "tmpfs", MS_NOSUID, "size=8m") < 0) {
        fprintf(stderr, "no mount namespace: nosuid not checked\n");
        return 0;
    }
    ASSERT_EQ(copy_true(dir, "nosuid", other, getgid(), 04755, prog,
                        sizeof(prog)),
              0);
    int status = run_status(prog, &r);
    ASSERT_EQ(umount2(dir, MNT_DETACH), 0);
    ASSERT_EQ(status, 0);
    return 0;
}

/* A program whose setuid or setgid bit changes who runs it (where the
 * loader ignores LD_LIBRARY_PATH) is refused; one whose bits change
 * nothing runs.  Files of another owner need root: without it only the
 * latter is checked. */
TEST_IMPL(cli_run_setuid)
{
    struct run_result r;
    char dir[600], prog[700], rm[700];
    struct statvfs fs;
    snprintf(dir, sizeof(dir), "%s/tests/cli/setuid-XXXXXX", test_build_dir());
    ASSERT(mkdtemp(dir) != NULL);
    ASSERT_EQ(statvfs(dir, &fs), 0);
    ASSERT(!(fs.f_flag & ST_NOSUID));
    ASSERT_EQ(copy_true(dir, "own-setuid", getuid(), getgid(), 04755, prog,
                        sizeof(prog)),
              0);
    ASSERT_EQ(run_status(prog, &r), 0);
    ASSERT_EQ(copy_true(dir, "own-setgid", getuid(), getgid(), 02755, prog,
                        sizeof(prog)),
              0);
    ASSERT_EQ(run_status(prog, &r), 0);
    int failed = 0;
    if (geteuid() == 0)
        failed = other_owner(dir);
    else
        fprintf(stderr, "not root: programs of another owner not checked\n");
    snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
    ASSERT_EQ(system(rm), 0);
    return failed;
}
