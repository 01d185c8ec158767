#ifndef GVS_TEST_HANG_REPORT_H
#define GVS_TEST_HANG_REPORT_H

#include <sys/types.h>

/* Prints to stderr what every process of process group `group` and each
 * of its threads is waiting for (hang_report.c).  Reads /proc only, and
 * runs gdb when it is installed; never signals anything. */
void hang_report(pid_t group);

#endif
