/* Preloaded under valgrind only (Benchmarks/instructions.sh, code-layout.sh). A Swift program with an async main ends its main
 * thread in libdispatch, which calls sigsuspend() on a mask kept in read-only memory; valgrind 3.19 writes to the
 * mask it is given and dies (SIGSEGV inside valgrind). This passes the kernel a writable copy instead. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, _NSIG / 8);
}
